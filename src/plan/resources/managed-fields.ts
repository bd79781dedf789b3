// The fields a server-side apply as field manager `karpctl` removes from an object: the ones karpctl
// applied before and no longer applies, unless another manager owns them too (the API server then keeps
// them). Read from the object's metadata.managedFields, so a plan shows exactly what the apply will
// remove — a tenant's weight or memory limit no longer asked for — instead of "unchanged".
import type { FieldChange } from '../types.js'

interface ManagedFieldsEntry {
  manager?: string
  operation?: string
  subresource?: string
  fieldsV1?: unknown
}

type Path = string[]

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** The leaf paths of a fieldsV1 tree through its `f:` keys; a list's items (`k:`, `v:`, `i:`) stay with the list. */
function leaves(tree: unknown, prefix: Path = []): Path[] {
  const keys = isMap(tree) ? Object.keys(tree).filter((k) => k.startsWith('f:')) : []
  if (!keys.length) return prefix.length ? [prefix] : []
  return keys.flatMap((k) => leaves((tree as Record<string, unknown>)[k], [...prefix, k.slice(2)]))
}

const at = (o: unknown, p: Path): unknown => p.reduce<unknown>((v, k) => (isMap(v) ? v[k] : undefined), o)

const overlaps = (a: Path, b: Path) => a.slice(0, b.length).every((k, i) => k === b[i])

/** Each field `manager` applied to `live` and `want` no longer sets: `from` its live value `→ (removed)`. */
export function droppedFields(live: unknown, want: unknown, manager = 'karpctl'): FieldChange[] {
  const entries = (at(live, ['metadata', 'managedFields']) ?? []) as ManagedFieldsEntry[]
  if (!Array.isArray(entries)) return []
  const mine = (e: ManagedFieldsEntry) => e.manager === manager && e.operation === 'Apply' && !e.subresource
  const others = entries.filter((e) => !mine(e)).flatMap((e) => leaves(e.fieldsV1))
  return entries
    .filter(mine)
    .flatMap((e) => leaves(e.fieldsV1))
    .filter((p) => at(want, p) === undefined && at(live, p) !== undefined)
    .filter((p) => !others.some((q) => overlaps(p, q) || overlaps(q, p)))
    .map((p) => ({ field: p.join('.'), from: at(live, p), to: undefined }))
}
