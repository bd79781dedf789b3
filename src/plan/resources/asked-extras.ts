// What a user asked for on a role karpctl created (a tenant's --policy-arn and --tag), recorded on the
// role itself so that a later run which no longer asks for it removes exactly that: `tenant add` states
// the tenant's whole desired state. Why a record and not "every policy and non-karpctl tag on the role is
// the user's": people and tagging automation attach and tag roles too, and karpctl never removes what it
// did not set. The record lives on the role, so a re-run from any machine finds it.
import { tagChanges } from '../diff.js'
import type { FieldChange } from '../types.js'
import { missingTags } from '../compare.js'
import { readRecord, recordKeys, recordTags } from '../../desired/ownership.js'
import type { ManagedPolicyWant } from './managed-policy.js'

/** The policies attached because the user asked (ARNs without `arn:<partition>:iam::`). */
export const ASKED_POLICIES = 'karpctl.io/asked-policies'
/** The keys of the tags set because the user asked. */
export const ASKED_TAGS = 'karpctl.io/asked-tags'

export interface Asked {
  policyArns: string[]
  tags: Record<string, string>
}

/** Keys never removed as a user's tag: karpctl's own marks and AWS's. */
export const isProtectedTag = (key: string) => key.startsWith('karpctl.io/') || key.startsWith('aws:')

// Short enough that several fit one 256-character tag value; the partition is the role's own.
const short = (arn: string) => arn.replace(/^arn:[^:]+:iam::/, '')
const partitionOf = (roleArn: string) => roleArn.split(':')[1] ?? 'aws'
const nameOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1)

function record(policyArns: string[], tagKeys: string[]): Record<string, string> {
  return {
    ...recordTags(ASKED_POLICIES, policyArns.map(short)),
    ...recordTags(
      ASKED_TAGS,
      tagKeys.filter((k) => !isProtectedTag(k)),
    ),
  }
}

/** The record a role carries once this run is applied. */
export const askedRecord = (a: Asked) => record(a.policyArns, Object.keys(a.tags))

export interface AskedGap {
  /** Tags to set before any policy is attached: the role's tags, and a record that covers both runs. */
  first: [string, string][]
  /** Policies an earlier run was asked for, still attached and asked no more. */
  detach: string[]
  /** Tag keys to remove: the user's tags asked no more, and record keys this run no longer needs. */
  untag: string[]
  /** The record as this run leaves it, where it differs from `first`'s. */
  last: [string, string][]
  /** What the plan shows: every removal as `from → (removed)`, the tags to set as the update shows them. */
  changes: FieldChange[]
}

/**
 * The gap between a karpctl-created role and what this run asks. Ordered so that a run killed half-way
 * leaves a record naming at least every policy and tag it set (a name too many is harmless: removing
 * what is already gone is a no-op), and never one karpctl set without a record.
 */
export function askedGap(
  w: { arn: string; managed: ManagedPolicyWant[]; tags: Record<string, string>; asked: Asked },
  cur: { tags: Record<string, string>; attached: string[] },
): AskedGap {
  const partition = partitionOf(w.arn)
  const recordedPolicies = readRecord(cur.tags, ASKED_POLICIES).map((s) => `arn:${partition}:iam::${s}`)
  const recordedTags = readRecord(cur.tags, ASKED_TAGS)
  const wanted = new Set(w.managed.flatMap((p) => [p.arn, ...(p.orElse ? [p.orElse] : [])]))
  const detach = cur.attached.filter((a) => recordedPolicies.includes(a) && !wanted.has(a))
  const staleTags = recordedTags.filter((k) => !isProtectedTag(k) && k in cur.tags && !(k in w.tags))
  const final = askedRecord(w.asked)
  // Until the removing is done, the record still names what is being removed.
  const covering = record(
    [...new Set([...w.asked.policyArns, ...detach])],
    [...new Set([...Object.keys(w.asked.tags), ...staleTags])],
  )
  const first = missingTags(cur.tags, { ...w.tags, ...covering })
  const afterFirst = { ...cur.tags, ...Object.fromEntries(first) }
  const staleKeys = [ASKED_POLICIES, ASKED_TAGS]
    .flatMap((k) => recordKeys(afterFirst, k))
    .filter((k) => !(k in final))
  const untag = [...staleTags, ...staleKeys]
  const shown = missingTags(cur.tags, { ...w.tags, ...final })
  return {
    first,
    detach,
    untag,
    last: missingTags(afterFirst, final),
    changes: [
      ...detach.map((a) => ({ field: 'attached policy', from: nameOf(a), to: undefined })),
      ...untag
        .filter((k) => k in cur.tags)
        .map((k) => ({ field: `tags.${k}`, from: cur.tags[k], to: undefined })),
      ...tagChanges(cur.tags, Object.fromEntries(shown)),
    ],
  }
}
