// What changed between two documents, leaf by leaf: a reviewer sees each value a step overwrites
// (`values.controller.resources.requests.cpu: 1 → 500m`), never just "differs".
import { canonical } from './compare.js'
import type { FieldChange } from './types.js'

type Obj = Record<string, unknown>
const isMap = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const key = (v: unknown) => JSON.stringify(canonical(v))
const same = (a: unknown, b: unknown) => key(a) === key(b)
const objects = (v: unknown): v is Obj[] => Array.isArray(v) && v.length > 0 && v.every(isMap)
const sidOf = (s: Obj) => (typeof s.Sid === 'string' && s.Sid ? s.Sid : undefined)

interface Side {
  real: unknown
  shown: unknown
}

/**
 * Every leaf that differs between `from` and `to`, as `prefix.path: old → new`; a leaf only in `from`
 * has `to` undefined (removed), one only in `to` has `from` undefined (not set before). `shown` gives
 * what the lines carry in place of the values, in the same shape (the redacted documents: the diff
 * must see the real values, the plan must not).
 */
export function leafChanges(
  from: unknown,
  to: unknown,
  prefix: string,
  shown: { from: unknown; to: unknown } = { from, to },
): FieldChange[] {
  return walk({ real: from, shown: shown.from }, { real: to, shown: shown.to }, prefix)
}

const at = (s: Side, k: string | number): Side => ({
  real: (s.real as Record<string | number, unknown> | undefined)?.[k],
  shown: (s.shown as Record<string | number, unknown> | undefined)?.[k],
})
const join = (prefix: string, k: string | number) => (prefix ? `${prefix}.${k}` : String(k))

function walk(f: Side, t: Side, prefix: string): FieldChange[] {
  if (same(f.real, t.real)) return []
  // IAM answers a one-item list as the item: a lone object facing a list of objects is that list.
  const asList = (s: Side, other: Side): Side =>
    isMap(s.real) && objects(other.real) ? { real: [s.real], shown: [s.shown] } : s
  const [lf, lt] = [asList(f, t), asList(t, f)]
  if ((objects(lf.real) || lf.real === undefined) && (objects(lt.real) || lt.real === undefined))
    return listChanges(lf, lt, prefix)
  const walkable = (v: unknown) => v === undefined || isMap(v)
  if (!walkable(f.real) || !walkable(t.real)) return [{ field: prefix, from: f.shown, to: t.shown }]
  const keys = new Set([
    ...Object.keys((f.real as Obj | undefined) ?? {}),
    ...Object.keys((t.real as Obj | undefined) ?? {}),
  ])
  return [...keys].flatMap((k) => walk(at(f, k), at(t, k), join(prefix, k)))
}

/**
 * A list of objects (IAM statements, tolerations): an item is paired with its namesake (same Sid) or
 * its equal; what is left is paired in order when as many are left on each side (one statement edited),
 * else shown whole as removed and added. Named by Sid where it has one, else by position.
 */
function listChanges(f: Side, t: Side, prefix: string): FieldChange[] {
  const items = (s: Side) =>
    ((s.real as Obj[] | undefined) ?? []).map((real, i) => ({
      real,
      shown: (s.shown as unknown[] | undefined)?.[i],
      i,
    }))
  const left = items(f)
  const out: FieldChange[] = []
  const unpaired: typeof left = []
  for (const item of items(t)) {
    const sid = sidOf(item.real)
    const j = left.findIndex((x) => (sid !== undefined && sidOf(x.real) === sid) || same(x.real, item.real))
    const name = join(prefix, sid ?? item.i)
    if (j < 0) unpaired.push(item)
    else out.push(...walk(left.splice(j, 1)[0] as Side, item, name))
  }
  const inOrder = unpaired.length === left.length
  unpaired.forEach((item, n) => {
    const name = join(prefix, sidOf(item.real) ?? item.i)
    if (inOrder) out.push(...walk(left[n] as Side, item, name))
    else out.push({ field: name, from: undefined, to: item.shown })
  })
  if (!inOrder)
    for (const x of left)
      out.push({ field: join(prefix, sidOf(x.real) ?? x.i), from: x.shown, to: undefined })
  return out
}

/** The tags `want` adds or sets otherwise, one change each (other tags are left as they are). */
export const tagChanges = (have: Record<string, string>, want: Record<string, string>): FieldChange[] =>
  Object.entries(want)
    .filter(([k, v]) => have[k] !== v)
    .map(([k, v]) => ({ field: `tags.${k}`, from: have[k], to: v }))
