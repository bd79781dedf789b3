// Repairs of the controller's and the nodes' IAM: PassRole, the IRSA trust, missing reference
// statements, node-role policies and cluster access, the spot service-linked role.
import type { Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { awsAuthEntry } from '../plan/resources/aws-auth.js'
import { accessEntry } from '../plan/resources/eks-access.js'
import { inlinePolicy } from '../plan/resources/inline-policy.js'
import { roleTrust } from '../plan/resources/role-trust.js'
import { spotRole } from '../plan/resources/spot-role.js'
import { attachedPolicies } from '../plan/resources/attached-policies.js'
import { INLINE_LIMIT } from '../checks/controller-policy.js'
import { nodeRolePolicies } from '../plan/resources/node-role-policies.js'
import { ownershipTags } from '../desired/install.js'
import { REPAIRED_INLINE } from '../desired/ownership.js'
import { MANAGED_LABEL } from '../desired/karpenter.js'
import { PASS_NODE_ROLES_POLICY, passRolePolicy } from '../desired/controller-policy.js'
import { nodeRoleArnsInUse } from '../checks/passrole-node-role.js'
import { Builder, arn, group, manualAll, naming, roleHeld, roleOwnership } from './builder.js'

export const passRole: Builder = (facts, failing, check) => {
  const controller = facts.iam.controllerRoleName
  // The grant is an inline policy on the controller role: a stack's role gets it in the stack.
  const held = controller ? roleHeld(facts, controller, `controller role ${controller}`) : null
  if (controller && held)
    return manualAll(
      failing.map((f) => naming(f, roleOwnership(facts, controller), 'grant it there')),
      held,
    )
  // A permissions boundary that denies PassRole is another policy's decision: an inline grant cannot help.
  const boundaryDenies = (f: Finding) => {
    const d = (f.evidence as { permissionsBoundary?: { decision?: string } } | undefined)?.permissionsBoundary
      ?.decision
    return d !== undefined && d !== 'allowed'
  }
  // PassRole only on a role proven to exist: a misnamed one is the EC2NodeClass's to fix (node-role).
  const exists = (f: Facts, subject: string) => {
    const read = f.iam.roles[subject.slice(subject.lastIndexOf('/') + 1)]
    return read?.ok === true && read.value !== null
  }
  const grantable = failing.filter(
    (f) => f.subject?.startsWith('arn:') && !boundaryDenies(f) && exists(facts, f.subject),
  )
  const why = new Map<Finding, string>()
  for (const f of failing)
    if (f.subject?.startsWith('arn:') && !exists(facts, f.subject))
      why.set(
        f,
        `role ${f.subject} is not proven to exist: fix the EC2NodeClass or create the role first (see node-role)`,
      )
  const roles = grantable.map((f) => f.subject as string)
  if (!controller || roles.length === 0)
    return { resources: [], manual: failing, ...(why.size ? { why } : {}) }
  return {
    resources: [
      inlinePolicy({
        address: 'iam-policy.passrole-fix',
        roleName: controller,
        roleArn: arn(facts, 'iam', `role/${controller}`, ''),
        policyName: PASS_NODE_ROLES_POLICY,
        // Every role in use, not only the failing ones: see nodeRoleArnsInUse.
        document: passRolePolicy([...new Set([...nodeRoleArnsInUse(facts), ...roles])].sort()),
        dependsOn: [],
        record: REPAIRED_INLINE,
      }),
    ].map((r) => ({ ...r, group: group(check) })),
    manual: failing.filter((f) => !grantable.includes(f)),
    ...(why.size ? { why } : {}),
  }
}
/** The IRSA statement narrowed to the running service account: exact :sub and :aud, StringEquals. */
export function narrowTrust(
  trust: PolicyDocument,
  statement: PolicyStatement,
  issuer: string,
  expectedSub: string,
): PolicyDocument {
  const host = issuer.replace(/^https:\/\//, '')
  const fixed: PolicyStatement = { ...statement, Condition: {} }
  for (const [op, kv] of Object.entries(statement.Condition ?? {})) {
    const rest = Object.fromEntries(
      Object.entries(kv).filter(([k]) => k !== `${host}:sub` && k !== `${host}:aud`),
    )
    if (Object.keys(rest).length) fixed.Condition![op] = rest
  }
  fixed.Condition!.StringEquals = {
    ...(fixed.Condition!.StringEquals ?? {}),
    [`${host}:aud`]: 'sts.amazonaws.com',
    [`${host}:sub`]: expectedSub,
  }
  return {
    ...trust,
    Statement: trust.Statement.map((s) => (JSON.stringify(s) === JSON.stringify(statement) ? fixed : s)),
  }
}
export const irsaTrust: Builder = (facts, failing, check) => {
  const name = facts.iam.controllerRoleName
  const role = name ? facts.iam.roles[name] : undefined
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const issuer = cluster?.oidcIssuer?.replace(/^https:\/\//, '')
  if (!name || !role?.ok || !role.value || !issuer) return { resources: [], manual: failing }
  // The trust is the role's own document: a stack's role has it changed in the stack.
  const held = roleHeld(facts, name, `controller role ${name}`)
  if (held)
    return manualAll(
      failing.map((f) => naming(f, roleOwnership(facts, name))),
      held,
    )
  let trust = role.value.role.trust
  const auto: Finding[] = []
  for (const f of failing) {
    const e = f.evidence as
      { statement?: PolicyStatement; expectedSub?: string; trust?: PolicyDocument } | undefined
    if (!e?.expectedSub) continue
    const stmt =
      e.statement ??
      trust.Statement.find((s) => JSON.stringify(s.Principal ?? '').includes(`oidc-provider/${issuer}`))
    if (!stmt) continue
    trust = narrowTrust(trust, stmt, issuer, e.expectedSub)
    auto.push(f)
  }
  const manual = failing.filter((f) => !auto.includes(f))
  if (!auto.length) return { resources: [], manual }
  const expected = (auto[0]!.evidence as { expectedSub: string }).expectedSub
  return {
    resources: [
      roleTrust({
        address: 'iam-trust.controller',
        roleName: name,
        roleArn: role.value.role.arn,
        trust,
        why: `irsa :sub narrowed to ${expected}`,
        group: group(check),
      }),
    ],
    manual,
  }
}
/**
 * Missing reference statements as one inline policy (the name doctor's printed command uses). Not
 * when an explicit Deny or a permissions boundary takes them away (an Allow cannot help), nor on a role
 * a CloudFormation stack owns (the stack is where it belongs: an inline policy is drift it fights),
 * nor when a stack's own managed policies hold them (re-attached, or the stack updated: the check
 * prints how), nor past IAM's inline size limit.
 */
export const controllerPolicy: Builder = (facts, failing, check) => {
  const name = facts.iam.controllerRoleName
  const role = name ? facts.iam.roles[name] : undefined
  const viaStack = (f: Finding) => {
    const e = f.evidence as { reattach?: string[]; updateStacks?: string[] } | undefined
    return (e?.reattach?.length ?? 0) + (e?.updateStacks?.length ?? 0) > 0
  }
  // Re-attaching a stack's own detached policy restores what the stack declares: not drift. That reason
  // comes first; only the rest is held for the role's stack.
  const stackWay =
    "the actions are in a CloudFormation stack's own managed policies: re-attach them or update the stack (below), not a copy beside them"
  if (name) {
    const held = roleHeld(facts, name, `controller role ${name}`)
    if (held) {
      const rest = failing.filter((f) => !viaStack(f))
      const out = manualAll(
        rest.map((f) => naming(f, roleOwnership(facts, name), 'add them there')),
        held,
      )
      const owner = roleOwnership(facts, name)
      const stackFixed = failing
        .filter(viaStack)
        .map((f) => naming(f, owner, 're-attach its policies as printed'))
      const of =
        owner.kind === 'stack'
          ? `controller role ${name} belongs to CloudFormation stack ${owner.owner.stackName}: `
          : ''
      const why = new Map(out.why)
      for (const f of stackFixed) why.set(f, `${of}${stackWay} (what the stack declares: not drift)`)
      return { ...out, manual: [...stackFixed, ...out.manual], why }
    }
  }
  const fixable = (f: Finding) => {
    const e = f.evidence as { document?: PolicyDocument; missing?: { deniedBy?: string }[] } | undefined
    return (
      !!e?.document &&
      !viaStack(f) &&
      !e.missing?.some((m) => m.deniedBy) &&
      JSON.stringify(e.document).length <= INLINE_LIMIT
    )
  }
  const auto = failing.filter(fixable)
  const why = new Map(failing.filter(viaStack).map((f) => [f, stackWay]))
  if (!name || !role?.ok || !role.value || auto.length === 0) return { resources: [], manual: failing, why }
  const doc = (auto[0]!.evidence as { document: PolicyDocument }).document
  return {
    resources: [
      {
        ...inlinePolicy({
          address: 'iam-policy.controller-missing',
          roleName: name,
          roleArn: role.value.role.arn,
          policyName: `KarpenterControllerMissing-${facts.meta.clusterName}`,
          document: doc,
          record: REPAIRED_INLINE,
          dependsOn: [],
        }),
        group: group(check),
      },
    ],
    manual: failing.filter((f) => !auto.includes(f)),
    why,
  }
}
/** A node role without cluster access gets it the way the cluster's authentication mode allows. */
const nodeAccess: Builder = (facts, failing, check) => {
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const entries =
    cluster?.authenticationMode === 'API' || cluster?.authenticationMode === 'API_AND_CONFIG_MAP'
  const noAccess = failing.filter((f) => f.code === 'no-cluster-access' && f.subject?.startsWith('arn:'))
  const tags = ownershipTags(facts.meta.clusterName)
  const clusterArn = arn(facts, 'eks', `cluster/${facts.meta.clusterName}`)
  return {
    resources: noAccess.map((f, i) => {
      const roleArn = f.subject as string
      const r = entries
        ? accessEntry({
            clusterName: facts.meta.clusterName,
            principalArn: roleArn,
            clusterArn,
            tags,
            dependsOn: [],
          })
        : awsAuthEntry({
            roleArn: roleArn.replace(/:role\/.*\//, ':role/'),
            dependsOn: [],
            managedLabel: [MANAGED_LABEL, 'karpctl'],
          })
      return { ...r, address: `${r.address}.${i}`, group: group(check) }
    }),
    manual: failing.filter((f) => !noAccess.includes(f)),
  }
}
/** A node role without cluster access gets it the way the cluster's authentication mode allows; one
 * without the node policies gets the missing ones attached (recorded on the role). */
export const nodeRole: Builder = (facts, failing, check, opts) => {
  const access = nodeAccess(facts, failing, check, opts)
  const lacking = access.manual.filter(
    (f) => f.code === 'missing-policies' && Array.isArray((f.evidence as { missing?: unknown })?.missing),
  )
  const why = new Map<Finding, string>()
  const resources = lacking.flatMap((f) => {
    const roleName = f.subject as string
    const role = facts.iam.roles[roleName]
    if (!role?.ok || !role.value) return []
    // The getting-started stack declares its node role's managed policies: attach them in the stack.
    const held = roleHeld(facts, roleName, `node role ${roleName}`)
    if (held) {
      why.set(f, held)
      return []
    }
    const missing = (f.evidence as { missing: string[] }).missing
    const managed = nodeRolePolicies(facts.meta.partition).filter((p) =>
      missing.some((m) => p.arn.endsWith(`/${m}`)),
    )
    if (managed.length === 0) return []
    return [
      attachedPolicies({
        address: `iam-role-policies.${roleName}`,
        roleName,
        roleArn: role.value.role.arn,
        managed,
        group: group(check),
      }),
    ]
  })
  const fixed = new Set(resources.map((r) => r.name))
  return {
    resources: [...access.resources, ...resources],
    manual: access.manual.filter((f) => !(lacking.includes(f) && fixed.has(f.subject as string))),
    why,
  }
}
export const spot: Builder = (facts, _failing, check) => ({
  resources: [{ ...spotRole(facts.meta.accountId ?? '', facts.meta.partition), group: group(check) }],
  manual: [],
})
