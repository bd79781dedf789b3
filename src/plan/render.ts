// The plan as a person reads it (like `terraform plan`) and as data (--json).
import { forTerminal, visible } from '../report/terminal.js'
import { kubeTargetLine } from '../context/kube-target.js'
import { planCounts } from './plan.js'
import { changeText, redactedStep } from './shown.js'
import type { Plan, Step } from './types.js'

export interface RenderOptions {
  color: boolean
  showDocuments?: boolean
}

const SIGN = { create: '+', update: '~', unchanged: '=', delete: '-' } as const
const COLOR = { create: 32, update: 33, unchanged: 2, delete: 31 } as const

/** What a step shows of itself (its kind, name, group, verdict and documents), redacted and made visible. */
export function printable(rawStep: Step): Step {
  const step = redactedStep(rawStep)
  const { kind, name, group, documents } = step.resource
  return {
    ...step,
    resource: { ...step.resource, ...forTerminal({ kind, name, group, documents }) },
    verdict: forTerminal(step.verdict),
  }
}

function stepLines(step: Step, o: RenderOptions): string[] {
  const { action, changes, note, blocked } = step.verdict
  const paint = (s: string) => (o.color ? `\u001b[${COLOR[action]}m${s}\u001b[0m` : s)
  const lines = [
    `  ${paint(`${SIGN[action]} ${action.padEnd(9)}`)} ${step.resource.kind} ${step.resource.name}`,
  ]
  if (action !== 'unchanged') for (const c of changes) lines.push(`        ${changeText(c, action)}`)
  if (note) lines.push(`        note: ${note}`)
  if (blocked) lines.push(`        ${o.color ? '\u001b[31mblocked\u001b[0m' : 'blocked'}: ${blocked}`)
  if (o.showDocuments && step.resource.documents && action !== 'unchanged')
    for (const [name, doc] of Object.entries(step.resource.documents)) {
      lines.push(`        ${name}:`)
      for (const l of JSON.stringify(doc, null, 2).split('\n')) lines.push(`          ${l}`)
    }
  return lines
}

export function renderPlan(rawPlan: Plan, o: RenderOptions): string {
  // Names, notes and documents come from AWS and the cluster: made visible before colours are added.
  const plan = { title: visible(rawPlan.title), steps: rawPlan.steps.map(printable) }
  const out = [plan.title]
  if (rawPlan.kubeTarget) out.push(visible(kubeTargetLine(rawPlan.kubeTarget)))
  out.push('')
  const groups = new Map<string, Step[]>()
  for (const s of plan.steps) groups.set(s.resource.group, [...(groups.get(s.resource.group) ?? []), s])
  for (const [group, steps] of groups) {
    out.push(group)
    for (const s of steps) out.push(...stepLines(s, o))
    out.push('')
  }
  const c = planCounts(plan)
  const parts = [`${c.create} to create`, `${c.update} to update`]
  if (c.delete) parts.push(`${c.delete} to delete`)
  parts.push(`${c.unchanged} unchanged`)
  out.push(`Plan: ${parts.join(', ')}.`)
  return out.join('\n')
}

/** The plan as data: every change carries `from` and `to` (null where a side is absent), redacted. */
export function planJson(plan: Plan) {
  return {
    title: plan.title,
    ...(plan.kubeTarget ? { kubeContext: plan.kubeTarget } : {}),
    summary: planCounts(plan),
    steps: plan.steps.map(redactedStep).map((s) => ({
      address: s.resource.address,
      kind: s.resource.kind,
      name: s.resource.name,
      group: s.resource.group,
      action: s.verdict.action,
      changes: s.verdict.changes.map((c) => ({
        field: c.field,
        from: c.from ?? null,
        to: c.to ?? null,
        ...(c.event ? { event: true } : {}),
      })),
      ...(s.verdict.note ? { note: s.verdict.note } : {}),
      ...(s.verdict.blocked ? { blocked: s.verdict.blocked } : {}),
      dependsOn: s.resource.dependsOn,
      desired: s.resource.desired,
      ...(s.resource.documents ? { documents: s.resource.documents } : {}),
    })),
  }
}
