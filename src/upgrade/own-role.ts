// The controller role karpctl created, moved to the target version: its inline controller policies
// become the target's reference policies as an install of the target names and fills them, and
// karpctl's policies of the old template that the target no longer names are deleted (kept beside the
// new ones they would take the role past IAM's inline budget: 1.0's one policy and 1.14's six together
// are ~11,400 characters of 10,240). The role's other inline policies (a tenant's, the user's) are
// never touched.
import { INLINE_LIMIT } from '../checks/controller-policy.js'
import { asList } from '../checks/lib/policy.js'
import type { Facts, InlinePolicy, PolicyDocument } from '../facts/types.js'
import { sameDocument } from '../plan/compare.js'
import { iamRole, type RoleState, type RoleWant } from '../plan/resources/iam-role.js'
import type { Resource } from '../plan/types.js'
import { REFERENCE_VERSION_LIST, referencePolicies, type ReferenceParams } from '../spec/reference-policy.js'

export interface NamedDocument {
  name: string
  document: PolicyDocument
}

/**
 * The target's reference policies as karpctl's install fills them in: the node roles it may pass and
 * the queue, as the role's current inline policies name them (what install put there); no queue there,
 * no interruption policy (install leaves it out when interruption handling is off).
 */
export function targetInlinePolicies(
  facts: Facts,
  inline: InlinePolicy[],
  ref: string,
): NamedDocument[] | null {
  // Only karpctl's controller policies: a tenant's PassRole policy beside them names its own node role,
  // which must stay in the tenant's policy (tenant remove takes it away with it).
  const own = controllerPolicyNames(facts)
  const statements = inline.filter((p) => own.has(p.name)).flatMap((p) => p.document.Statement)
  const resourcesOf = (grants: (action: string) => boolean) =>
    statements
      .filter((s) => s.Effect === 'Allow' && asList(s.Action).some((a) => grants(a.toLowerCase())))
      .flatMap((s) => asList(s.Resource))
  const queueArn = resourcesOf((a) => a.startsWith('sqs:'))[0]
  const nodeRoleArns = [...new Set(resourcesOf((a) => a === 'iam:passrole'))]
  // No node role to pass: not what karpctl's install made, and a PassRole on nothing is no policy.
  if (!nodeRoleArns.length) return null
  return referencePolicies(ref, {
    ...paramsOf(facts),
    nodeRoleArns,
    queueArn: queueArn ?? '',
  })
    .filter((p) => queueArn || p.key !== 'InterruptionPolicy')
    .map((p) => ({ name: p.name, document: p.document }))
}

const paramsOf = (facts: Facts): Omit<ReferenceParams, 'nodeRoleArns' | 'queueArn'> => ({
  partition: facts.meta.partition || 'aws',
  region: facts.meta.region,
  accountId: facts.meta.accountId ?? '',
  clusterName: facts.meta.clusterName,
})

/**
 * Of the role's inline policies, karpctl's controller policies the target does not name: those of any
 * reference template (as install names them for this cluster), and an earlier upgrade's KarpctlUpgrade-*.
 */
export function supersededPolicies(facts: Facts, inline: InlinePolicy[], target: NamedDocument[]): string[] {
  const own = controllerPolicyNames(facts)
  return inline
    .map((x) => x.name)
    .filter((n) => own.has(n) && !target.some((t) => t.name === n))
    .sort()
}

/** The names karpctl's controller policies may have: any reference template's for this cluster, an upgrade's. */
function controllerPolicyNames(facts: Facts): { has(name: string): boolean } {
  const p = { ...paramsOf(facts), nodeRoleArns: [], queueArn: '' }
  const templates = new Set(REFERENCE_VERSION_LIST.flatMap((v) => referencePolicies(v, p).map((x) => x.name)))
  return { has: (n) => templates.has(n) || n.startsWith('KarpctlUpgrade-') }
}

const size = (d: PolicyDocument) => JSON.stringify(d).length

/**
 * The inline policy that carries, across the upgrade, the grants only the old template had: the old
 * controller keeps running (and calling them) until the new one replaces it, so they go with a step
 * after the controller's, not with the old policies. Not one of karpctl's controller policy names, so
 * a re-run between the two steps leaves it for the later step.
 */
export const carryPolicyName = (clusterName: string) => `KarpctlUpgradeCarry-${clusterName}`

/** The statements of the policies about to be deleted, narrowed to the actions the target no longer grants. */
export function carryDocument(
  inline: InlinePolicy[],
  superseded: string[],
  obsolete: string[],
): PolicyDocument | null {
  const gone = new Set(obsolete.map((a) => a.toLowerCase()))
  const Statement = inline
    .filter((p) => superseded.includes(p.name))
    .flatMap((p) => p.document.Statement)
    .flatMap((st) => {
      if (st.Effect !== 'Allow') return []
      const actions = asList(st.Action).filter((a) => gone.has(a.toLowerCase()))
      return actions.length ? [{ ...st, Action: actions }] : []
    })
  return Statement.length ? { Version: '2012-10-17', Statement } : null
}

/** The step: iamRole's verdict plus the deletions, applied so the role is never without a grant it fits. */
export function ownControllerRole(
  w: Omit<RoleWant, 'inline' | 'adopt'>,
  target: NamedDocument[],
  superseded: string[],
  carry?: NamedDocument,
): Resource<RoleState> {
  const role = iamRole({ ...w, inline: target, adopt: false })
  return {
    ...role,
    desired: { ...role.desired, removedInlinePolicies: superseded },
    permissions: [
      ...role.permissions,
      ...(superseded.length ? [{ action: 'iam:DeleteRolePolicy', resource: w.arn }] : []),
    ],
    verdict(cur) {
      const v = role.verdict(cur)
      const gone = superseded.filter((n) => cur?.inline[n] !== undefined)
      if (!gone.length || v.blocked) return v
      const carried =
        carry && cur?.inline[carry.name] === undefined ? [{ field: 'inline policy', to: carry.name }] : []
      return {
        ...v,
        action: 'update',
        changes: [...v.changes, ...carried, ...gone.map((n) => ({ field: 'inline policy', from: n }))],
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      const have = cur.inline
      let used = Object.values(have).reduce((n, d) => n + size(d), 0)
      const put = async (p: NamedDocument) => {
        await aws.write('iam', 'PutRolePolicy', {
          RoleName: w.name,
          PolicyName: p.name,
          PolicyDocument: JSON.stringify(p.document),
        })
        used += size(p.document) - (have[p.name] ? size(have[p.name] as PolicyDocument) : 0)
      }
      const changed = target.filter((p) => !have[p.name] || !sameDocument(have[p.name], p.document))
      const gone = superseded.filter((x) => have[x] !== undefined)
      // What only the old template grants stays granted, apart, until the old controller is gone: its
      // room is kept in the budget before any new grant takes it.
      const carrying = gone.length > 0 && carry !== undefined && !have[carry.name]
      const reserve = carrying ? size(carry.document) : 0
      // The new grants first, while they fit beside the old ones: the running controller keeps what it
      // calls; the old policies go once the budget needs their room, the rest of the new follow.
      const later: NamedDocument[] = []
      for (const p of changed)
        if (
          used + reserve + size(p.document) - (have[p.name] ? size(have[p.name] as PolicyDocument) : 0) <=
          INLINE_LIMIT
        )
          await put(p)
        else later.push(p)
      if (carrying) await put(carry)
      for (const n of gone) {
        await aws.write('iam', 'DeleteRolePolicy', { RoleName: w.name, PolicyName: n })
        used -= size(have[n] as PolicyDocument)
      }
      for (const p of later) await put(p)
    },
  }
}
