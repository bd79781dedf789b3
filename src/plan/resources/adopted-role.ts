// What karpctl may do to an IAM role it adopted (--adopt on a role another tool made), and how teardown
// gives it back. Only changes that can be named and taken back are made, and each is recorded on the role
// before it is made (a run killed in between leaves a record of a change not made — giving it back is then
// a no-op — never a change without a record):
//   trust     — missing statements are added with a `KarpctlAdopted…` Sid (the Sid is the record);
//   managed   — missing AWS managed policies attached, listed in karpctl.io/attached-policies;
//   inline    — karpctl's inline policies added, listed in karpctl.io/added-inline-policies.
// The role's own statements, policies and tags are never rewritten: an inline policy of the role's own
// that bears one of karpctl's names blocks the plan rather than being overwritten.
import type { PolicyDocument, PolicyStatement } from '../../policy/types.js'
import {
  ADOPTED_BY,
  readRecord,
  recordKeys,
  recordTags,
  REPAIRED_INLINE,
  REPAIRED_POLICIES,
} from '../../desired/ownership.js'
import { canonical, sameDocument } from '../compare.js'
import type { FieldChange } from '../types.js'
import { leafChanges, tagChanges } from '../diff.js'
import { ATTACHED_POLICIES } from './attached-policies.js'
import type { ManagedPolicyWant } from './managed-policy.js'
import { missingPolicies } from './attached-policies.js'

export const ADDED_INLINE = 'karpctl.io/added-inline-policies'
export const ADOPTED_SID = 'KarpctlAdopted'

export interface AdoptedRoleState {
  trust: PolicyDocument
  attached: string[]
  inline: Record<string, PolicyDocument>
  tags: Record<string, string>
}

export interface AdoptedRoleWant {
  name: string
  clusterName: string
  trust: PolicyDocument
  managed: ManagedPolicyWant[]
  inline: { name: string; document: PolicyDocument }[]
}

export const nameOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1)
const withoutSid = (s: PolicyStatement) => {
  const { Sid: _sid, ...rest } = s
  return JSON.stringify(canonical(rest))
}

/** Statements of the desired trust the role's trust lacks (compared without their Sids). */
export function missingTrust(have: PolicyDocument, want: PolicyDocument): PolicyStatement[] {
  const present = new Set(have.Statement.map(withoutSid))
  return want.Statement.filter((s) => !present.has(withoutSid(s)))
}

/** The trust with karpctl's missing statements added after the role's own. */
export function adoptedTrust(have: PolicyDocument, want: PolicyDocument): PolicyDocument {
  const missing = missingTrust(have, want)
  return {
    ...have,
    Statement: [...have.Statement, ...missing.map((s, i) => ({ ...s, Sid: `${ADOPTED_SID}${i}` }))],
  }
}

/** The trust with every statement karpctl added removed (what teardown writes back). */
export function givenBackTrust(have: PolicyDocument): PolicyDocument | null {
  const kept = have.Statement.filter((s) => !(s.Sid ?? '').startsWith(ADOPTED_SID))
  return kept.length === have.Statement.length ? null : { ...have, Statement: kept }
}

/** Inline policies of karpctl's that are missing or differ; `blocked` names those the role owns itself. */
export function inlineGaps(w: AdoptedRoleWant, cur: AdoptedRoleState) {
  const ours = new Set(readRecord(cur.tags, ADDED_INLINE))
  const put: string[] = []
  const blocked: string[] = []
  for (const p of w.inline) {
    const have = cur.inline[p.name]
    if (have && sameDocument(have, p.document)) continue
    if (have && !ours.has(p.name)) blocked.push(p.name)
    else put.push(p.name)
  }
  return { put, blocked }
}

export function adoptedChanges(w: AdoptedRoleWant, cur: AdoptedRoleState): FieldChange[] {
  const c: FieldChange[] = []
  for (const s of missingTrust(cur.trust, w.trust)) c.push({ field: 'trust statement', to: s })
  for (const p of missingPolicies(w.managed, cur.attached))
    c.push({ field: 'attached policy', to: nameOf(p.arn) })
  for (const name of inlineGaps(w, cur).put) c.push(...inlineChanges(w, cur, name))
  // The mark goes with a change: a role that already is what karpctl needs is used as it is, untouched.
  if (c.length) c.push(...tagChanges(cur.tags, { [ADOPTED_BY]: w.clusterName }))
  return c
}

/** karpctl's inline policy `name` against the role's: its name when absent, else each value that differs. */
export function inlineChanges(w: AdoptedRoleWant, cur: AdoptedRoleState, name: string): FieldChange[] {
  const have = cur.inline[name]
  const want = w.inline.find((p) => p.name === name)?.document
  return have ? leafChanges(have, want, `inline policy ${name}`) : [{ field: 'inline policy', to: name }]
}

/** The tags that record the adoption and the changes about to be made (written before them). */
export function adoptionRecord(w: AdoptedRoleWant, cur: AdoptedRoleState): Record<string, string> {
  const attach = missingPolicies(w.managed, cur.attached).flatMap((p) => [
    p.arn,
    ...(p.orElse ? [p.orElse] : []),
  ])
  return {
    [ADOPTED_BY]: w.clusterName,
    ...recordTags(ATTACHED_POLICIES, [...readRecord(cur.tags, ATTACHED_POLICIES), ...attach.map(nameOf)]),
    ...recordTags(ADDED_INLINE, [...readRecord(cur.tags, ADDED_INLINE), ...inlineGaps(w, cur).put]),
  }
}

/** What teardown gives back on a role: karpctl's recorded policies and trust statements, then the records. */
export interface GiveBack {
  detach: string[]
  deleteInline: string[]
  trust: PolicyDocument | null
  untag: string[]
}

/**
 * With `repairs` (the install doctor --fix repaired goes too), what its repairs recorded on the role
 * (karpctl.io/repaired-policies, -inline-policies) goes as well; else they stay, records and all.
 */
export function giveBack(cur: AdoptedRoleState, repairs = false): GiveBack {
  const attachedKeys = [ATTACHED_POLICIES, ...(repairs ? [REPAIRED_POLICIES] : [])]
  const inlineKeys = [ADDED_INLINE, ...(repairs ? [REPAIRED_INLINE] : [])]
  const attachedNames = attachedKeys.flatMap((k) => readRecord(cur.tags, k))
  const added = inlineKeys.flatMap((k) => readRecord(cur.tags, k))
  return {
    detach: cur.attached.filter((arn) => attachedNames.includes(nameOf(arn))),
    deleteInline: [...new Set(added)].filter((n) => cur.inline[n] !== undefined),
    trust: givenBackTrust(cur.trust),
    untag: [
      ...(cur.tags[ADOPTED_BY] !== undefined ? [ADOPTED_BY] : []),
      ...[...attachedKeys, ...inlineKeys].flatMap((k) => recordKeys(cur.tags, k)),
    ],
  }
}

export const nothingToGiveBack = (g: GiveBack) =>
  g.detach.length + g.deleteInline.length + g.untag.length === 0 && !g.trust
