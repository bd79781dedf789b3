// An IAM role karpctl owns: its trust, the AWS managed policies attached to it, its inline policies
// and karpctl's ownership tags. A same-named role that karpctl did not tag is never taken over silently:
// with --adopt it is adopted (adopted-role.ts), never marked as karpctl's.
import type { Aws } from '../../context/aws.js'
import { roleFacts } from '../../facts/collect-iam.js'
import type { IamRole } from '../../facts/types.js'
import type { PolicyDocument } from '../../policy/types.js'
import { isOwned, missingTags, sameDocument } from '../compare.js'
import type { FieldChange, Resource } from '../types.js'
import { leafChanges, tagChanges } from '../diff.js'
import { OWNERSHIP, ADOPTED_BY, ownershipOf } from '../../desired/ownership.js'
import { notCreatedVerdict } from './not-created.js'
import { ATTACHED_POLICIES, attachMissing, missingPolicies } from './attached-policies.js'
import type { ManagedPolicyWant } from './managed-policy.js'
import { askedGap, askedRecord, type Asked, type AskedGap } from './asked-extras.js'
import {
  ADDED_INLINE,
  adoptedChanges,
  adoptedTrust,
  adoptionRecord,
  inlineChanges,
  inlineGaps,
  missingTrust,
  type AdoptedRoleState,
  type AdoptedRoleWant,
} from './adopted-role.js'

export type { ManagedPolicyWant } from './managed-policy.js'

export interface RoleWant {
  address: string
  name: string
  arn: string
  description: string
  trust: PolicyDocument
  managed: ManagedPolicyWant[]
  inline: { name: string; document: PolicyDocument }[]
  tags: Record<string, string>
  ownership: Record<string, string>
  adopt: boolean
  /**
   * Of `managed` and `tags`, what the user asked for (a tenant's --policy-arn and --tag): recorded on the
   * role, and what an earlier run recorded and this one no longer asks is removed (asked-extras.ts).
   * Only ever on a role karpctl created.
   */
  asked?: Asked
  dependsOn?: string[]
  /** Said when the role exists but is not karpctl's. */
  notOursHint: string
}

export interface RoleState {
  role: IamRole
  attached: string[]
  inline: Record<string, PolicyDocument>
}

async function observeRole(aws: Aws, name: string): Promise<RoleState | null> {
  const r = await roleFacts(aws, name, false)
  if (!r.ok) throw Object.assign(new Error(r.error.message), { name: r.error.code })
  if (!r.value) return null
  const { attached, inline } = r.value
  if (!attached.ok) throw Object.assign(new Error(attached.error.message), { name: attached.error.code })
  if (!inline.ok) throw Object.assign(new Error(inline.error.message), { name: inline.error.code })
  return {
    role: r.value.role,
    attached: attached.value.map((p) => p.arn),
    inline: Object.fromEntries(inline.value.map((p) => [p.name, p.document])),
  }
}

function roleChanges(w: RoleWant, cur: RoleState | null): FieldChange[] {
  const changes: FieldChange[] = []
  // A new role says who may assume it; a role that exists shows each trust value that changes.
  if (!cur) changes.push({ field: 'trust', to: principalsOf(w.trust) })
  else if (!sameDocument(cur.role.trust, w.trust))
    changes.push(...leafChanges(cur.role.trust, w.trust, 'trust'))
  for (const p of missingPolicies(w.managed, cur?.attached ?? []))
    changes.push({ field: 'attached policy', to: p.arn.slice(p.arn.lastIndexOf('/') + 1) })
  for (const p of w.inline) {
    const have = cur?.inline[p.name]
    if (!have) changes.push({ field: 'inline policy', to: p.name })
    else if (!sameDocument(have, p.document))
      changes.push(...leafChanges(have, p.document, `inline policy ${p.name}`))
  }
  if (cur && w.asked) return [...changes, ...askedGap({ ...w, asked: w.asked }, stateTags(cur)).changes]
  if (cur) changes.push(...tagChanges(cur.role.tags, w.tags))
  return changes
}

/** Detaches and untags what was asked before and is no more, then leaves the record as this run's. */
async function removeUnasked(aws: Aws, roleName: string, gap: AskedGap) {
  for (const arn of gap.detach)
    await aws.write('iam', 'DetachRolePolicy', { RoleName: roleName, PolicyArn: arn })
  if (gap.untag.length) await aws.write('iam', 'UntagRole', { RoleName: roleName, TagKeys: gap.untag })
  if (gap.last.length)
    await aws.write('iam', 'TagRole', {
      RoleName: roleName,
      Tags: gap.last.map(([Key, Value]) => ({ Key, Value })),
    })
}

const stateTags = (cur: RoleState) => ({ tags: cur.role.tags, attached: cur.attached })

function principalsOf(doc: PolicyDocument): string {
  return doc.Statement.flatMap((s) =>
    s.Principal && s.Principal !== '*' ? Object.values(s.Principal).flat() : ['*'],
  ).join(', ')
}

export function iamRole(w: RoleWant): Resource<RoleState> {
  const cluster = w.ownership[OWNERSHIP.cluster] ?? ''
  const adoptedWant: AdoptedRoleWant = {
    name: w.name,
    clusterName: cluster,
    trust: w.trust,
    managed: w.managed,
    inline: w.inline,
  }
  const adoptedState = (cur: RoleState): AdoptedRoleState => ({
    trust: cur.role.trust,
    attached: cur.attached,
    inline: cur.inline,
    tags: cur.role.tags,
  })
  // Created means every mark of this want (a tenant's role carries its tenant too).
  const stateOf = (cur: RoleState) =>
    isOwned(cur.role.tags, w.ownership)
      ? 'created'
      : ownershipOf(cur.role.tags, cluster) === 'adopted'
        ? 'adopted'
        : 'foreign'
  async function applyAdopted(aws: Aws, cur: RoleState) {
    const a = adoptedState(cur)
    if (adoptedChanges(adoptedWant, a).length === 0) return
    const record = adoptionRecord(adoptedWant, a)
    await aws.write('iam', 'TagRole', {
      RoleName: w.name,
      Tags: Object.entries(record).map(([Key, Value]) => ({ Key, Value })),
    })
    if (missingTrust(a.trust, w.trust).length)
      await aws.write('iam', 'UpdateAssumeRolePolicy', {
        RoleName: w.name,
        PolicyDocument: JSON.stringify(adoptedTrust(a.trust, w.trust)),
      })
    await attachMissing(aws, w.name, w.managed, cur.attached)
    for (const name of inlineGaps(adoptedWant, a).put)
      await aws.write('iam', 'PutRolePolicy', {
        RoleName: w.name,
        PolicyName: name,
        PolicyDocument: JSON.stringify(w.inline.find((p) => p.name === name)?.document),
      })
  }
  return {
    address: w.address,
    kind: 'IAM role',
    name: w.name,
    group: 'IAM',
    dependsOn: w.dependsOn ?? [],
    desired: {
      name: w.name,
      trustedBy: principalsOf(w.trust),
      managedPolicies: w.managed.map((p) => p.arn),
      inlinePolicies: w.inline.map((p) => p.name),
      tags: w.tags,
    },
    documents: {
      trust: w.trust,
      ...Object.fromEntries(w.inline.map((p) => [`inline ${p.name}`, p.document])),
    },
    permissions: [
      'CreateRole',
      'TagRole',
      'UpdateAssumeRolePolicy',
      'AttachRolePolicy',
      'PutRolePolicy',
      ...(w.asked ? ['DetachRolePolicy', 'UntagRole'] : []),
    ].map((a) => ({ action: `iam:${a}`, resource: w.arn })),
    observe: ({ aws }) => observeRole(aws, w.name),
    verdict(cur) {
      const state = cur ? stateOf(cur) : null
      if (cur && state && state !== 'created') {
        // A role another tool made: only on request, and only changes karpctl can give back.
        const a = adoptedState(cur)
        const own = inlineGaps(adoptedWant, a).blocked
        // An inline policy of its own under one of karpctl's names holds other statements: the role is
        // not what karpctl needs, so never "used as it is".
        return notCreatedVerdict({
          state,
          changes: [
            ...adoptedChanges(adoptedWant, a),
            // What karpctl's policy of that name would overwrite (the refusal says why it will not).
            ...own.flatMap((name) => inlineChanges(adoptedWant, a, name)),
          ],
          adopt: w.adopt,
          notOurs: `exists and was not made by karpctl (no ${Object.keys(w.ownership)[0]} tag): ${w.notOursHint}`,
          refuse: own.length
            ? `has inline policies of its own named as karpctl's (${own.join(', ')}): karpctl would overwrite them; rename them, or let karpctl make its own role`
            : undefined,
          adoptedNote: `adopted (not karpctl's): only additions, recorded as ${ADOPTED_BY} and the ${ADDED_INLINE} / ${ATTACHED_POLICIES} tags; teardown takes them back and keeps the role`,
        })
      }
      const changes = roleChanges(w, cur)
      if (!cur) return { action: 'create', changes }
      return { action: changes.length ? 'update' : 'unchanged', changes }
    },
    async apply({ aws }, cur) {
      if (cur && stateOf(cur) !== 'created') return applyAdopted(aws, cur)
      const tagList = Object.entries({ ...w.tags, ...(w.asked ? askedRecord(w.asked) : {}) }).map(
        ([Key, Value]) => ({ Key, Value }),
      )
      const gap = cur && w.asked ? askedGap({ ...w, asked: w.asked }, stateTags(cur)) : null
      if (!cur) {
        await aws.write('iam', 'CreateRole', {
          RoleName: w.name,
          Path: '/',
          Description: w.description,
          AssumeRolePolicyDocument: JSON.stringify(w.trust),
          Tags: tagList,
        })
      } else {
        if (!sameDocument(cur.role.trust, w.trust))
          await aws.write('iam', 'UpdateAssumeRolePolicy', {
            RoleName: w.name,
            PolicyDocument: JSON.stringify(w.trust),
          })
        const tags = gap ? gap.first : missingTags(cur.role.tags, w.tags)
        if (tags.length)
          await aws.write('iam', 'TagRole', {
            RoleName: w.name,
            Tags: tags.map(([Key, Value]) => ({ Key, Value })),
          })
      }
      await attachMissing(aws, w.name, w.managed, cur?.attached ?? [])
      if (gap) await removeUnasked(aws, w.name, gap)
      for (const p of w.inline) {
        const have = cur?.inline[p.name]
        if (have && sameDocument(have, p.document)) continue
        await aws.write('iam', 'PutRolePolicy', {
          RoleName: w.name,
          PolicyName: p.name,
          PolicyDocument: JSON.stringify(p.document),
        })
      }
    },
  }
}
