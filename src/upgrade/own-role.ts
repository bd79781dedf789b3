// The controller role karpctl created, moved to the target version: its inline controller policies
// become the target's reference policies as an install of the target names and fills them, and
// karpctl's policies of the old template that the target no longer names are deleted (kept beside the
// new ones they would take the role past IAM's inline budget: 1.0's one policy and 1.14's six together
// are ~11,400 characters of 10,240). The role's other inline policies (a tenant's, the user's) are
// never touched.
import { INLINE_LIMIT } from '../checks/controller-policy.js'
import { asList } from '../checks/lib/policy.js'
import type { Facts, InlinePolicy } from '../facts/types.js'
import type { PolicyDocument } from '../policy/types.js'
import type { EvaluationRequest } from '../policy/evaluate.js'
import { needsOf, requestsOf, unmet } from '../iam/needs.js'
import { sameDocument } from '../plan/compare.js'
import { iamRole, type RoleState, type RoleWant } from '../plan/resources/iam-role.js'
import type { Resource } from '../plan/types.js'
import {
  REFERENCE_VERSION_LIST,
  referencePolicies,
  type ReferenceParams,
} from '../desired/reference-policy.js'

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

/**
 * The inline policy that carries, across the upgrade, the grants only the old template had: the old
 * controller keeps running (and calling them) until the new one replaces it, so they go with a step
 * after the controller's, not with the old policies. Not one of karpctl's controller policy names, so
 * a re-run between the two steps leaves it for the later step.
 */
export const carryPolicyName = (clusterName: string) => `KarpctlUpgradeCarry-${clusterName}`

/**
 * The statements of the policies about to be replaced or deleted that the target's do not stand in for,
 * narrowed to those actions: what the old controller may call (as its template scopes and conditions
 * it) and the target does not allow — judged by the evaluator, request by request, so a grant the
 * target conditions otherwise (1.14's `eks:eks-cluster-name` request tag on RunInstances) is carried too.
 */
export function carryDocument(
  inline: InlinePolicy[],
  replaced: string[],
  target: NamedDocument[],
  accountId: string,
): PolicyDocument | null {
  const docs = target.map((t) => t.document)
  const Statement = inline
    .filter((p) => replaced.includes(p.name))
    .flatMap((p) => p.document.Statement)
    .flatMap((st) => {
      const actions = asList(st.Action).filter(
        (a) => unmet(docs, requestsOf({ ...st, Action: a }, accountId)).length > 0,
      )
      return actions.length ? [{ ...st, Action: actions }] : []
    })
  return Statement.length ? { Version: '2012-10-17', Statement } : null
}

/**
 * A policy about to be deleted, narrowed to the grants no other policy of the role stands in for:
 * a (statement, action) stays when it allows a request of `needs` that the others do not. Putting it
 * takes away nothing either controller needs; it frees the inline budget for the target's last policies
 * before anything is deleted.
 */
export function narrowedDocument(
  doc: PolicyDocument,
  others: PolicyDocument[],
  needs: EvaluationRequest[],
): PolicyDocument {
  const open = unmet(others, needs)
  const Statement = doc.Statement.flatMap((st) => {
    const actions = asList(st.Action).filter(
      (a) => unmet([{ Statement: [{ ...st, Action: a }] }], open).length < open.length,
    )
    return actions.length ? [{ ...st, Action: actions }] : []
  })
  return { ...doc, Statement }
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
      if (v.blocked || !cur) return v
      const gone = superseded.filter((n) => cur.inline[n] !== undefined)
      const carried =
        carry && cur.inline[carry.name] === undefined && (gone.length || v.action !== 'unchanged')
          ? [{ field: 'inline policy', to: carry.name }]
          : []
      if (!gone.length && !carried.length) return v
      return {
        ...v,
        action: 'update',
        changes: [...v.changes, ...carried, ...gone.map((n) => ({ field: 'inline policy', from: n }))],
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      // The role as each write leaves it: every later choice is judged against what is there now.
      const have: Record<string, PolicyDocument> = { ...cur.inline }
      const changed = target.filter((p) => !have[p.name] || !sameDocument(have[p.name], p.document))
      const gone = superseded.filter((x) => have[x] !== undefined)
      if (!changed.length && !gone.length) return
      // What either controller may call: the target's grants and those of the policies it replaces.
      const replaced = [...target.map((p) => p.name), ...gone].flatMap((n) => (have[n] ? [have[n]] : []))
      const needs = needsOf([...replaced, ...target.map((p) => p.document)], accountOf(w.arn))
      const others = (name: string) => Object.entries(have).flatMap(([k, d]) => (k === name ? [] : [d]))
      const size = (d: PolicyDocument) => JSON.stringify(d).length
      const fits = (p: NamedDocument) =>
        Object.values(have).reduce((n, d) => n + size(d), 0) +
          size(p.document) -
          (have[p.name] ? size(have[p.name] as PolicyDocument) : 0) <=
        INLINE_LIMIT
      const put = async (p: NamedDocument) => {
        await aws.write('iam', 'PutRolePolicy', {
          RoleName: w.name,
          PolicyName: p.name,
          PolicyDocument: JSON.stringify(p.document),
        })
        have[p.name] = p.document
      }
      // Rewritten to what nothing else grants yet: a put that takes away only what others already grant.
      const narrow = async (name: string) => {
        const narrowed = narrowedDocument(have[name] as PolicyDocument, others(name), needs)
        if (narrowed.Statement.length && !sameDocument(narrowed, have[name]))
          await put({ name, document: narrowed })
      }
      // A target policy over an older one of the same name keeps, beside its own statements, those of the
      // older it replaces that nothing else grants yet; the bare target goes in once everything else is.
      const bridged = (p: NamedDocument): NamedDocument => {
        const old = have[p.name]
        if (!old) return p
        const extra = narrowedDocument(old, [...others(p.name), p.document], needs).Statement
        return extra.length
          ? { name: p.name, document: { ...p.document, Statement: [...p.document.Statement, ...extra] } }
          : p
      }
      // Every grant either controller needs holds at every write: all puts first, deletes last. What only
      // the old template grants is put apart first (the old controller runs until the new one replaces it).
      if (carry && !have[carry.name]) await put(carry)
      const later: NamedDocument[] = []
      for (const p of changed) {
        const next = bridged(p)
        if (fits(next)) await put(next)
        else later.push(p)
      }
      // The old policies and the new ones together pass IAM's inline budget (1.0's one and 1.14's six are
      // ~11,400 characters): where the next new one does not fit, the old ones are narrowed first.
      for (const p of later) {
        if (!fits(bridged(p))) for (const n of gone) await narrow(n)
        await put(bridged(p))
      }
      for (const p of changed) if (!sameDocument(have[p.name], p.document)) await put(p)
      for (const n of gone) {
        await aws.write('iam', 'DeleteRolePolicy', { RoleName: w.name, PolicyName: n })
        delete have[n]
      }
    },
  }
}

const accountOf = (arn: string) => arn.split(':')[4] ?? ''
