// One ownership model for every command that changes a cluster (DESIGN: "Three states, one model"):
//   created — karpctl made it, and marked it in the same call (karpctl.io/managed-by + karpctl.io/cluster);
//             teardown deletes it;
//   adopted — it existed; karpctl changed it on request (--adopt) and recorded each change on it
//             (karpctl.io/adopted-by + one record per change); teardown gives the changes back and keeps it;
//   foreign — anything else (another tool, another cluster): never repaired, retargeted or deleted.
// An adopted resource never carries the created marks, so no later run can mistake it for karpctl's own.

export const OWNERSHIP = { managedBy: 'karpctl.io/managed-by', cluster: 'karpctl.io/cluster' } as const

/** Put on a resource karpctl adopted; its value is the cluster whose install adopted it. */
export const ADOPTED_BY = 'karpctl.io/adopted-by'

/** The plan's note for another tool's resource that already is what karpctl needs. */
export const USED_AS_IT_IS =
  "not karpctl's: already what karpctl needs, so used as it is (never changed or deleted)"

export type OwnershipState = 'created' | 'adopted' | 'foreign'

export function ownershipTags(clusterName: string): Record<string, string> {
  return { [OWNERSHIP.managedBy]: 'karpctl', [OWNERSHIP.cluster]: clusterName }
}

export const adoptionTags = (clusterName: string): Record<string, string> => ({ [ADOPTED_BY]: clusterName })

/** The state of a resource with these tags (or labels), from the point of view of `clusterName`. */
export function ownershipOf(tags: Record<string, string> | undefined, clusterName: string): OwnershipState {
  const t = tags ?? {}
  if (t[OWNERSHIP.managedBy] === 'karpctl' && t[OWNERSHIP.cluster] === clusterName) return 'created'
  if (t[ADOPTED_BY] === clusterName) return 'adopted'
  return 'foreign'
}

// AWS tag values hold 256 characters: a record that lists more (the inline policies karpctl added to
// an adopted role) continues in `<key>-2`, `<key>-3`, … so nothing is cut off.
const TAG_VALUE_MAX = 256

/** `names` as tags under `key` (space-separated, split over numbered keys when longer than a tag). */
export function recordTags(key: string, names: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  let part = ''
  let n = 1
  const flush = () => {
    if (!part) return
    out[n === 1 ? key : `${key}-${n}`] = part
    n++
    part = ''
  }
  for (const name of [...new Set(names)]) {
    if (part && part.length + 1 + name.length > TAG_VALUE_MAX) flush()
    part = part ? `${part} ${name}` : name
  }
  flush()
  return out
}

/** The names a record holds, across its numbered keys. */
export function readRecord(tags: Record<string, string> | undefined, key: string): string[] {
  const t = tags ?? {}
  const out: string[] = []
  for (let n = 1; ; n++) {
    const v = t[n === 1 ? key : `${key}-${n}`]
    if (v === undefined) break
    out.push(...v.split(' ').filter(Boolean))
  }
  return out
}

/** Every key a record occupies (to remove it whole). */
export function recordKeys(tags: Record<string, string> | undefined, key: string): string[] {
  const t = tags ?? {}
  const out: string[] = []
  for (let n = 1; t[n === 1 ? key : `${key}-${n}`] !== undefined; n++) out.push(n === 1 ? key : `${key}-${n}`)
  return out
}

/** On a cluster-autoscaler Deployment install scaled to 0: its replicas before, for teardown to give back. */
export const SCALED_FROM = 'karpctl.io/scaled-down-from-replicas'

/** karpctl's convention: a tenant's NodePool, its nodes' label and its taint all carry this key. */
export const TENANT_KEY = 'karpctl.io/tenant'

// What doctor --fix records on a resource karpctl did not create, apart from what an adoption records:
// a repair stays while the install it repaired runs (undoing it would break that install), and teardown
// gives it back only when that install goes too. Separate keys keep the two apart.
/** AWS managed policies --fix attached to a role (a node role lacking the node policies). */
export const REPAIRED_POLICIES = 'karpctl.io/repaired-policies'
/** karpctl's inline policies --fix put on a role (missing controller statements, the PassRole grant). */
export const REPAIRED_INLINE = 'karpctl.io/repaired-inline-policies'
/** The reference statements --fix added to a queue's policy (`send`, `DenyHTTP`). */
export const REPAIRED_STATEMENTS = 'karpctl.io/repaired-policy-statements'
