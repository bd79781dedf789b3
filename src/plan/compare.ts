// Equality as AWS and Kubernetes mean it: key order never matters, a one-element list equals its
// element (IAM returns either), and the desired object need only be contained in the live one.

export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical)
    return items.length === 1 ? items[0] : items
  }
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    )
  }
  return v
}

export const sameDocument = (a: unknown, b: unknown) =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

/** Every field of `want` is in `have` with the same value (lists compared whole). */
export function contains(have: unknown, want: unknown): boolean {
  if (want && typeof want === 'object' && !Array.isArray(want)) {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false
    return Object.entries(want).every(([k, v]) => contains((have as Record<string, unknown>)[k], v))
  }
  return JSON.stringify(canonical(have)) === JSON.stringify(canonical(want))
}

/** Top-level paths of `want` whose values `have` lacks or differs on: the changed fields a plan shows. */
export function changedFields(have: unknown, want: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(want)) {
    const h = have && typeof have === 'object' ? (have as Record<string, unknown>)[k] : undefined
    if (contains(h, v)) continue
    if (v && typeof v === 'object' && !Array.isArray(v) && h && typeof h === 'object' && !Array.isArray(h))
      out.push(...changedFields(h, v as Record<string, unknown>, `${prefix}${k}.`))
    else out.push(`${prefix}${k}`)
  }
  return out
}

export const missingTags = (have: Record<string, string>, want: Record<string, string>) =>
  Object.entries(want).filter(([k, v]) => have[k] !== v)

export const isOwned = (tags: Record<string, string>, ownership: Record<string, string>) =>
  Object.entries(ownership).every(([k, v]) => tags[k] === v)
