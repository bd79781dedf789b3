// What a plan shows of a value, in every form it takes (the human plan, --show-policies, --json): each
// value through the snapshot redactor first, since a plan is pasted into tickets as snapshots are, and
// Helm values (the user's --values) may hold a password. The resources keep the real values: only
// what is shown is redacted, never what helm or AWS receives.
import { redact } from '../redact/redact.js'
import type { Action, FieldChange, Step } from './types.js'

/** A change's wording, one for every plan: what was not there before, and what a step takes away. */
export const NOT_SET = '(not set)'
export const REMOVED = '(removed)'

/**
 * A value redacted as the key path it sits under says (`values.db.password`, `env.API_TOKEN`): the
 * field is the value's place in its document, so the redactor's by-key rule applies to a leaf too.
 */
export function redactAt(field: string, value: unknown): unknown {
  if (value === undefined) return undefined
  const path = field.split('.')
  const nested = path.reduceRight<unknown>((v, k) => ({ [k]: v }), value)
  return path.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], redact(nested))
}

const redactChange = (c: FieldChange): FieldChange => ({
  ...c,
  from: redactAt(c.field, c.from),
  to: redactAt(c.field, c.to),
})

/** The step as every plan form shows it: changes, desired state, documents and notes redacted. */
export function redactedStep(step: Step): Step {
  const { desired, documents } = step.resource
  const { changes, note, blocked } = step.verdict
  return {
    ...step,
    resource: { ...step.resource, desired: redact(desired), documents: documents && redact(documents) },
    verdict: {
      ...step.verdict,
      changes: changes.map(redactChange),
      note: redact(note),
      blocked: redact(blocked),
    },
  }
}

/** A node selector requirement as Kubernetes people say it: `kubernetes.io/arch In [amd64]`. */
function requirement(v: Record<string, unknown>): string | null {
  const keys = Object.keys(v)
  if (typeof v.key !== 'string' || typeof v.operator !== 'string') return null
  if (!keys.every((k) => ['key', 'operator', 'values', 'minValues'].includes(k))) return null
  const values = Array.isArray(v.values) ? ` ${valueText(v.values)}` : ''
  const min = v.minValues === undefined ? '' : ` (min ${valueText(v.minValues)})`
  return `${v.key} ${v.operator}${values}${min}`
}

/** A value on one plan line: text as it is, data in a compact flow form (`{cpu: 1000}`, `[c, m, r]`). */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v === '' ? '""' : v
  if (Array.isArray(v)) return `[${v.map(valueText).join(', ')}]`
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return (
      requirement(o) ??
      `{${Object.entries(o)
        .map(([k, x]) => `${k}: ${valueText(x)}`)
        .join(', ')}}`
    )
  }
  return String(v)
}

const MAX = 300
const clip = (s: string) => (s.length > MAX ? `${s.slice(0, MAX - 3)}...` : s)

/**
 * One change as its plan line says it. A created resource lists the settings it gets (`limits: {cpu:
 * 1000}`); anything else says both sides, `(not set) → new` and `old → (removed)` when one is absent.
 */
export function changeText(c: FieldChange, action: Action): string {
  if (c.from === undefined && (action === 'create' || c.event)) return `${c.field}: ${clip(valueText(c.to))}`
  const from = c.from === undefined ? NOT_SET : clip(valueText(c.from))
  const to = c.to === undefined ? REMOVED : clip(valueText(c.to))
  return `${c.field}: ${from} → ${to}`
}
