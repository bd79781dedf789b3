// Desired state diffed against what exists: every resource observes itself concurrently (reads are
// memoized by the run context, so two resources reading the same thing cost one call).
import { KarpctlError } from '../errors.js'
import { failureOf } from '../facts/read.js'
import type { ApplyEnv, Plan, Resource, Step } from './types.js'

export class PlanError extends KarpctlError {
  constructor(message: string, code = 'PLAN_FAILED') {
    super(message, code)
  }
}

/** Dependencies must name resources of the same plan, without cycles: a defect otherwise. */
export function orderResources(resources: Resource[]): Resource[] {
  const byAddress = new Map(resources.map((r) => [r.address, r]))
  if (byAddress.size !== resources.length) throw new Error('duplicate resource address in plan')
  const out: Resource[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (r: Resource, path: string[]) => {
    const s = state.get(r.address)
    if (s === 'done') return
    if (s === 'visiting') throw new Error(`dependency cycle: ${[...path, r.address].join(' → ')}`)
    state.set(r.address, 'visiting')
    for (const d of r.dependsOn) {
      const dep = byAddress.get(d)
      if (!dep) throw new Error(`${r.address} depends on unknown ${d}`)
      visit(dep, [...path, r.address])
    }
    state.set(r.address, 'done')
    out.push(r)
  }
  for (const r of resources) visit(r, [])
  return out
}

export async function buildPlan(title: string, resources: Resource[], env: ApplyEnv): Promise<Plan> {
  const ordered = orderResources(resources)
  const steps = await Promise.all(
    ordered.map(async (resource): Promise<Step> => {
      let current: unknown
      try {
        current = await resource.observe(env)
      } catch (err) {
        if (err instanceof KarpctlError) throw err
        const f = failureOf(err, `${resource.kind} ${resource.name}`)
        throw new PlanError(
          `cannot read ${resource.kind} ${resource.name} (${f.code}: ${f.message}): ` +
            (f.kind === 'denied'
              ? 'grant the read permissions listed in the README and run again'
              : 'check the network and credentials, and run again'),
          f.kind === 'denied' ? 'ACCESS_DENIED' : 'READ_FAILED',
        )
      }
      return { resource, current, verdict: resource.verdict(current) }
    }),
  )
  return { title, steps, ...(env.kubeTarget ? { kubeTarget: env.kubeTarget } : {}) }
}

/** Every blocked step, as one error listing them all (so the user fixes them in one go). */
export function assertNotBlocked(plan: Plan): void {
  const blocked = plan.steps.filter((s) => s.verdict.blocked)
  if (blocked.length === 0) return
  const lines = blocked.map((s) => `${s.resource.kind} ${s.resource.name}: ${s.verdict.blocked}`)
  throw new PlanError(
    blocked.length === 1
      ? (lines[0] as string)
      : `${blocked.length} resources block the plan: ${lines.join('; ')}`,
    'BLOCKED',
  )
}

export function planCounts(plan: Plan): Record<'create' | 'update' | 'unchanged' | 'delete', number> {
  const c = { create: 0, update: 0, unchanged: 0, delete: 0 }
  for (const s of plan.steps) c[s.verdict.action]++
  return c
}
