// IAM first: the controller role gets the target version's permissions before the new controller starts
// (it would call what it may not). On a role karpctl created, karpctl's own inline controller policies
// become the target's reference policies, as an install of the target makes them. On a role karpctl did
// not make, what it lacks (judged with controller-policy's own coverage: a grant it already has in any
// form counts) is added as the template scopes it, in one inline policy of karpctl's named for the
// target minor — never a rewrite of the role's own policies — recorded on the role as a repair is
// (karpctl.io/repaired-inline-policies): teardown gives it back only when the upgraded install goes. Where CloudFormation holds the policies or the role, the step blocks with the stack's way.
import { INLINE_LIMIT, referenceGaps } from '../checks/controller-policy.js'
import { roleNameFromArn, shellQuote } from '../checks/lib/facts.js'
import {
  editStack,
  fixBlocked,
  gettingStartedUpdate,
  ownership,
  policyStacks,
  stackManagedPolicies,
} from '../checks/lib/owners.js'
import { asList } from '../checks/lib/policy.js'
import type { Facts } from '../facts/types.js'
import type { PolicyDocument } from '../policy/types.js'
import { iamRole } from '../plan/resources/iam-role.js'
import { inlinePolicy, inlinePolicyAbsent } from '../plan/resources/inline-policy.js'
import type { Resource } from '../plan/types.js'
import { ownershipOf, ownershipTags, REPAIRED_INLINE } from '../desired/ownership.js'
import {
  NEWEST_REFERENCE,
  referenceFor,
  referencePolicies,
  type ReferenceParams,
} from '../desired/reference-policy.js'
import {
  carryDocument,
  carryPolicyName,
  ownControllerRole,
  supersededPolicies,
  targetInlinePolicies,
} from './own-role.js'
import { precondition, withNote } from './preconditions.js'

export const IAM_ADDRESS = 'iam-role.controller'

/** The reference template that stands for a version (its minor's, or the newest for a newer one). */
export const referenceOf = (version: string) => referenceFor(version)?.version ?? NEWEST_REFERENCE

/** karpctl's inline policy for what an upgrade to `target` added: one per target minor, never rewritten by the next. */
export const upgradePolicyName = (target: string) =>
  `KarpctlUpgrade-${referenceOf(target).split('.').slice(0, 2).join('.')}`

/** Actions the template of `from` grants and that of `to` no longer does: left, and named as removable. */
export function obsoleteActions(from: string, to: string): string[] {
  // The actions alone do not depend on the names filled in.
  const p: ReferenceParams = {
    partition: 'aws',
    region: 'r',
    accountId: '0',
    clusterName: 'c',
    nodeRoleArns: ['n'],
    queueArn: 'q',
  }
  const actions = (v: string) =>
    new Set(
      referencePolicies(referenceOf(v), p).flatMap((d) =>
        d.document.Statement.flatMap((s) => asList(s.Action)),
      ),
    )
  const after = actions(to)
  return [...actions(from)].filter((a) => !after.has(a)).sort()
}

export interface IamStep {
  resource: Resource
  /** Actions of the old template only: could be removed once the upgrade is done. */
  removable: string[]
  /** Steps after the controller's: what the old controller needed until it was replaced, taken away. */
  after?: (controllerAddress: string) => Resource[]
}

/** The controller role's step of the upgrade plan (blocked when CloudFormation or a Deny holds it). */
export function controllerIamStep(facts: Facts, installed: string, target: string): IamStep {
  const removable = obsoleteActions(installed, target)
  const ref = referenceOf(target)
  const roleName = facts.iam.controllerRoleName
  const blocked = (name: string, why: string, documents?: Record<string, unknown>): IamStep => ({
    resource: {
      ...precondition({
        key: 'iam',
        address: IAM_ADDRESS,
        kind: 'IAM role',
        group: 'IAM',
        name,
        judge: () => ({ ok: false, blocked: why }),
      }),
      // What to add where karpctl may not (--show-policies prints it).
      ...(documents ? { documents } : {}),
    },
    removable,
  })
  if (!roleName)
    return blocked(
      'controller role',
      'the controller role was not found (no IRSA annotation, no Pod Identity association): run `karpctl doctor` to see why',
    )
  const read = facts.iam.roles[roleName]
  const role = read?.ok ? read.value : null
  const gaps = referenceGaps(facts, ref)
  if (!role || !gaps)
    return blocked(
      roleName,
      `the policies of ${roleName} could not be read, so what it lacks of Karpenter ${ref}'s reference is not known: allow iam:GetRole, iam:ListRolePolicies, iam:GetRolePolicy, iam:ListAttachedRolePolicies and iam:GetPolicyVersion, and run again`,
    )
  const lacks = gaps.actions.length > 0
  if (lacks && gaps.unreadable.length)
    return blocked(
      roleName,
      `${roleName} lacks ${gaps.actions.join(', ')} in the policies karpctl could read, and ${gaps.unreadable.map(roleNameFromArn).join(', ')} could not be read: allow iam:GetPolicyVersion on them and run again`,
    )
  if (lacks && gaps.deniedBy.length)
    return blocked(
      roleName,
      `${gaps.deniedBy.join(', ')} on ${roleName} explicitly denies ${gaps.actions.join(', ')}, which Karpenter ${target} needs: an Allow beside it cannot help; remove the Deny, then run again`,
    )
  const stackWay = lacks ? stackBlock(facts, roleName, role.role.tags, target) : null
  if (stackWay) return blocked(roleName, stackWay, { [upgradePolicyName(target)]: gaps.document })
  const cluster = facts.meta.clusterName
  const iamWant = {
    address: IAM_ADDRESS,
    name: roleName,
    arn: role.role.arn,
    // Only ever used to create a role, which this step never does (the role exists).
    description: '',
    // The role's own trust and tags: the step only ever changes inline policies.
    trust: role.role.trust,
    managed: [],
    tags: ownershipTags(cluster),
    ownership: ownershipTags(cluster),
    notOursHint: '',
  }
  if (ownershipOf(role.role.tags, cluster) === 'created' && role.inline.ok) {
    const inline = targetInlinePolicies(facts, role.inline.value, ref)
    if (!inline)
      return blocked(
        roleName,
        `${roleName} is karpctl's, but none of karpctl's inline controller policies on it grants iam:PassRole on a node role, so Karpenter ${ref}'s cannot be filled in as install fills them: run \`karpctl doctor\` (or \`karpctl install\` of the installed version) to restore them, then run again`,
      )
    const superseded = supersededPolicies(facts, role.inline.value, inline)
    const carryName = carryPolicyName(cluster)
    const carried = carryDocument(
      role.inline.value,
      [...superseded, ...inline.map((p) => p.name)],
      inline,
      facts.meta.accountId ?? role.role.arn.split(':')[4] ?? '',
    )
    return {
      resource: withNote(
        ownControllerRole(
          iamWant,
          inline,
          superseded,
          carried ? { name: carryName, document: carried } : undefined,
        ),
        createdNote(superseded, carried, installed, target, carryName),
      ) as Resource,
      // Gone with karpctl's old policies: nothing is left to remove by hand.
      removable: [],
      // Always planned on karpctl's role: a re-run after a stop between the steps still removes it.
      after: (controllerAddress) => {
        const absent = inlinePolicyAbsent({
          address: 'iam-inline-policy.upgrade-carry',
          roleName,
          policyName: carryName,
          dependsOn: [controllerAddress],
        })
        // Planned before the IAM step puts it: a delete already when this run will carry something.
        const willCarry = carried !== null
        return [
          {
            ...absent,
            verdict: (cur: Parameters<typeof absent.verdict>[0]) =>
              willCarry && !cur?.document
                ? { action: 'delete', changes: [], note: 'carried for the old controller by the IAM step' }
                : absent.verdict(cur),
          } as Resource,
        ]
      },
    }
  }
  if (JSON.stringify(gaps.document).length > INLINE_LIMIT)
    return blocked(
      roleName,
      `what ${roleName} lacks of Karpenter ${ref}'s reference is larger than IAM's inline policy limit: attach the template's managed policies to it (see \`karpctl doctor\`), then run again`,
    )
  const name = upgradePolicyName(target)
  // The addition is what the upgraded controller needs to run: recorded like a doctor --fix repair, it
  // stays while that install runs (a teardown that keeps the upgraded release keeps it too) and is given
  // back only when the install goes. Nothing lacking: the role as it is, unchanged.
  const resource: Resource = lacks
    ? inlinePolicy({
        address: IAM_ADDRESS,
        roleName,
        roleArn: role.role.arn,
        policyName: name,
        document: gaps.document,
        dependsOn: [],
        record: REPAIRED_INLINE,
      })
    : iamRole({ ...iamWant, inline: [], adopt: true })
  return { resource: withNote(resource, removableNote(removable, installed, target)), removable }
}

/** On karpctl's own role: its controller policies are the target's, the old template's go. */
function createdNote(
  superseded: string[],
  carried: PolicyDocument | null,
  installed: string,
  target: string,
  carryName: string,
): string {
  const ref = referenceOf(target)
  const put = `karpctl's inline controller policies set to Karpenter ${ref}'s reference policies, as an install of ${target} makes them`
  const gone = superseded.length
    ? `; ${superseded.join(', ')} (karpctl's, of an older template) deleted last, once every new policy is in place (where IAM's inline budget needs its room, first rewritten to what no other policy grants yet)`
    : ''
  const actions = [...new Set(carried?.Statement.flatMap((st) => asList(st.Action)) ?? [])]
  const dropped = actions.length
    ? `; ${actions.join(', ')} as only Karpenter ${referenceOf(installed)}'s template grants them: kept apart in ${carryName} for the running controller, removed once the new one runs`
    : ''
  return `${put}${gone}${dropped}`
}

function removableNote(removable: string[], installed: string, target: string): string | undefined {
  if (!removable.length) return undefined
  return `left as they are: ${removable.join(', ')} only Karpenter ${referenceOf(installed)}'s template grants; they could be removed once ${target} runs`
}

/**
 * Where a stack declares the controller's policies (the getting-started stack) or the role itself, the
 * addition belongs there: a copy beside them is drift the stack fights. Null when karpctl may add it.
 */
function stackBlock(
  facts: Facts,
  roleName: string,
  tags: Record<string, string>,
  target: string,
): string | null {
  const stack = policyStacks(facts)[0]
  const ref = referenceOf(target)
  if (stack) {
    const partition = facts.meta.partition || 'aws'
    const account = facts.meta.accountId ?? '<account-id>'
    const template = referencePolicies(ref, {
      partition,
      region: facts.meta.region,
      accountId: account,
      clusterName: facts.meta.clusterName,
      nodeRoleArns: [],
      queueArn: '',
    })
    const declared = stackManagedPolicies(facts, stack)
    const read = facts.iam.roles[roleName]
    const attached = new Set(
      read?.ok && read.value?.attached.ok ? read.value.attached.value.map((p) => p.arn) : [],
    )
    // The target template's policies the role does not have attached (those the stack update adds).
    const added = template
      .map((p) => declared.get(p.key) ?? `arn:${partition}:iam::${account}:policy/${p.name}`)
      .filter((arn) => !attached.has(arn))
    // The stack's policies of the old template the new one no longer declares (1.0's one policy).
    const targetKeys = new Set(template.map((p) => p.key))
    const old = [...declared].filter(([key]) => !targetKeys.has(key)).map(([, arn]) => arn)
    const update = `the controller's policies come from CloudFormation stack ${stack}: update it to the getting-started template of Karpenter ${ref} (${gettingStartedUpdate(stack, ref).join(' && ')})`
    const attachCmds = added.map(
      (arn) => `aws iam attach-role-policy --role-name ${shellQuote(roleName)} --policy-arn ${arn}`,
    )
    const eksctlStack = eksctlOwner(facts, roleName, tags)
    const detach = old.length
      ? `; once the upgraded controller runs, detach the old template's ${old.map(roleNameFromArn).join(', ')} from ${roleName}${eksctlStack ? ' (and take it out of the eksctl config)' : ''} (${old.map((arn) => `aws iam detach-role-policy --role-name ${shellQuote(roleName)} --policy-arn ${arn}`).join(' && ')})`
      : ''
    if (!added.length) return `${update}, then run the upgrade again${detach}`
    if (eksctlStack)
      return `${update}, then attach its new policies to ${roleName} the way eksctl does, since eksctl's stack ${eksctlStack} made the role: ${eksctlWay(facts, eksctlStack, added)} (or, without eksctl: ${attachCmds.join(' && ')}; eksctl keeps an attachment it did not declare until its next update); then run the upgrade again${detach}`
    return `${update}, attach its new policies to ${roleName} (${attachCmds.join(' && ')}), then run the upgrade again${detach}`
  }
  const owner = ownership(facts, roleName, tags)
  const held = fixBlocked(owner, `controller role ${roleName}`)
  if (!held) return null
  return owner.kind === 'stack'
    ? `${held}: add the statements \`karpctl upgrade --dry-run --show-policies\` shows to the role in stack ${owner.owner.stackName} (${editStack(owner.owner.stackName).join(' && ')}), then run the upgrade again`
    : held
}

/** The eksctl stack that made the role (eksctl-<cluster>-addon-iamserviceaccount-… or …-podidentityrole-…). */
function eksctlOwner(facts: Facts, roleName: string, tags: Record<string, string>): string | null {
  const o = ownership(facts, roleName, tags)
  return o.kind === 'stack' && o.owner.stackName.startsWith('eksctl-') ? o.owner.stackName : null
}

/** eksctl's own update of the role's policies: the config's attachPolicyARNs, then its update command. */
function eksctlWay(facts: Facts, stack: string, arns: string[]): string {
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  const ns = sa?.metadata.namespace ?? 'kube-system'
  const name = sa?.metadata.name ?? 'karpenter'
  const c = `--cluster ${shellQuote(facts.meta.clusterName)} --region ${facts.meta.region}`
  const list = arns.join(',')
  return stack.includes('-podidentityrole-')
    ? `add ${arns.join(', ')} to permissionPolicyARNs of the ${ns}/${name} entry under iam.podIdentityAssociations in your eksctl config and run \`eksctl update podidentityassociation --config-file <your config>\` (or \`eksctl update podidentityassociation ${c} --namespace ${ns} --service-account-name ${name} --permission-policy-arns ${list}\`, which replaces the list: include the policies it keeps)`
    : `add ${arns.join(', ')} to attachPolicyARNs of the ${ns}/${name} entry under iam.serviceAccounts in your eksctl config and run \`eksctl update iamserviceaccount --config-file <your config> --approve\` (or \`eksctl update iamserviceaccount ${c} --namespace ${ns} --name ${name} --attach-policy-arn ${list} --approve\`, which replaces the list: include the policies it keeps)`
}
