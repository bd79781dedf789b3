import type { EC2NodeClass, Facts, PermissionEvaluation } from '../facts/types.js'
import type { PolicyDocument } from '../policy/types.js'
import { describeFailure, need, needRelease, partitionOf, roleNameFromArn, skip } from './lib/facts.js'
import { inStack, ownership } from './lib/owners.js'
import { PASS_NODE_ROLES_POLICY, passRolePolicy } from '../desired/controller-policy.js'
import { boundaryRepair } from './controller-policy.js'
import type { Check, Finding, Fix } from './types.js'

/** A node role and the EC2NodeClasses that launch nodes with it. */
interface NodeRoleUse {
  arn: string
  nodeClasses: string[]
}

export const passroleNodeRole: Check = {
  meta: {
    id: 'passrole-node-role',
    title: 'The controller may pass every node role to EC2',
    category: 'iam',
    severity: 'error',
    docs: "Launching a node hands its role to EC2, which needs iam:PassRole on that role with iam:PassedToService = ec2.amazonaws.com (statement AllowPassingInstanceRole), allowed by the role's policies and by its permissions boundary. Decided by IAM's policy simulator when allowed, else by karpctl's local evaluator (identity policies ∩ permissions boundary; SCPs and session policies unseen, and said so).",
  },
  run(facts) {
    needRelease(facts)
    const nodeClasses = need(facts.kube.nodeClasses)
    if (nodeClasses.length === 0) skip('no EC2NodeClass exists: there is no node role to pass')
    const findings: Finding[] = []
    const uses = nodeRoleUses(facts, nodeClasses, findings)
    const controllerRole = facts.iam.controllerRoleName
    const evaluations = uses.map((use) => ({ use, read: lookup(facts, use.arn) }))
    const deniedBy = (e: PermissionEvaluation) =>
      e.decision === 'allowed' || unconfirmed(e) ? null : boundaryDenies(e) ? 'boundary' : 'identity'
    const denied = (by: 'boundary' | 'identity') =>
      evaluations.filter((e) => e.read?.ok && deniedBy(e.read.value) === by).map((e) => e.use)
    const identityDenied = denied('identity')
    const boundaryDenied = denied('boundary')
    const fixes = {
      identity:
        identityDenied.length > 0
          ? inStack(
              passRoleFix(facts, controllerRole, uses, identityDenied),
              controllerRole
                ? ownership(facts, controllerRole, roleTags(facts, controllerRole))
                : { kind: 'none' },
              `controller role ${controllerRole}`,
            )
          : undefined,
      boundary: boundaryDenied.length > 0 ? boundaryFix(facts, controllerRole, boundaryDenied) : undefined,
    }
    for (const { use, read } of evaluations) {
      const by = read?.ok ? deniedBy(read.value) : null
      findings.push(
        judge(use, read, controllerRole, by ? fixes[by] : undefined, boundaryOf(facts, controllerRole)),
      )
    }
    return findings
  },
}

/**
 * Every node role the EC2NodeClasses launch nodes with, sorted: the grant doctor's fix writes names
 * them all, since put-role-policy replaces the policy and a grant of only today's failing roles
 * would take PassRole away from the roles an earlier fix granted.
 */
export function nodeRoleArnsInUse(facts: Facts): string[] {
  const nodeClasses = facts.kube.nodeClasses.ok ? facts.kube.nodeClasses.value : []
  return nodeRoleUses(facts, nodeClasses, [])
    .map((u) => u.arn)
    .sort()
}

/** Node roles from spec.role (a name) and from spec.instanceProfile (the profile's roles). */
function nodeRoleUses(facts: Facts, nodeClasses: EC2NodeClass[], findings: Finding[]): NodeRoleUse[] {
  const byArn = new Map<string, NodeRoleUse>()
  const add = (roleRef: string, nodeClass: string) => {
    const arn = roleArn(facts, roleRef)
    const use = byArn.get(arn) ?? { arn, nodeClasses: [] }
    use.nodeClasses.push(nodeClass)
    byArn.set(arn, use)
  }
  for (const nc of nodeClasses) {
    const name = nc.metadata.name
    if (nc.spec.role) add(nc.spec.role, name)
    else if (nc.spec.instanceProfile)
      profileRoles(facts, nc.spec.instanceProfile, name, findings).forEach((r) => add(r, name))
    else
      findings.push({
        status: 'unknown',
        subject: name,
        message: `EC2NodeClass ${name} names neither spec.role nor spec.instanceProfile: no node role to evaluate`,
      })
  }
  return [...byArn.values()]
}

function profileRoles(facts: Facts, profile: string, nodeClass: string, findings: Finding[]): string[] {
  const read = facts.iam.instanceProfiles[profile]
  if (!read) {
    findings.push({
      status: 'unknown',
      subject: profile,
      message: `instance profile ${profile} (EC2NodeClass ${nodeClass}) was not collected`,
    })
    return []
  }
  if (!read.ok) {
    findings.push({
      status: 'unknown',
      subject: profile,
      message: `instance profile ${profile} (EC2NodeClass ${nodeClass}): ${describeFailure(read.error)}`,
      evidence: { read: read.error.read },
    })
    return []
  }
  if (!read.value || read.value.roles.length === 0) {
    // A missing or empty profile breaks the launch for another reason: node-role reports it.
    findings.push({
      status: 'unknown',
      subject: profile,
      message: `instance profile ${profile} (EC2NodeClass ${nodeClass}) ${read.value ? 'holds no role' : 'does not exist'}: no node role to evaluate (see node-role)`,
    })
    return []
  }
  return read.value.roles
}

/** spec.role is a name; the collected role (when read) knows its real ARN, path included. */
function roleArn(facts: Facts, ref: string): string {
  if (ref.startsWith('arn:')) return ref
  const role = facts.iam.roles[ref]
  if (role?.ok && role.value) return role.value.role.arn
  return `arn:${partitionOf(facts)}:iam::${facts.meta.accountId ?? '<account-id>'}:role/${ref}`
}

/** The evaluation for a role ARN; collectors may key it with or without the role's path. */
function lookup(facts: Facts, arn: string) {
  const direct = facts.iam.passRole[arn]
  if (direct) return direct
  const name = roleNameFromArn(arn)
  const key = Object.keys(facts.iam.passRole).find((k) => roleNameFromArn(k) === name)
  return key ? facts.iam.passRole[key] : undefined
}

export function methodText(e: PermissionEvaluation): string {
  if (e.method === 'simulator') return 'IAM policy simulator'
  return `local evaluator (simulator unavailable: ${e.simulatorUnavailable ?? 'reason not recorded'})`
}

/** What a local evaluation cannot see: said with every verdict it gives, a pass included. */
export const LOCAL_CAVEAT =
  "karpctl's local evaluator does not see service control policies (SCPs) or session policies: an SCP can still deny what it allows"

/** Every caveat of an evaluation: what the method cannot see, and what it could not judge exactly. */
export function evaluationCaveats(e: PermissionEvaluation): string[] {
  if (e.method === 'simulator') return []
  return [LOCAL_CAVEAT, ...(e.notes ?? [])]
}

/** The local evaluator allowed by the identity policies but could not read the boundary. */
const unconfirmed = (e: PermissionEvaluation) =>
  e.method === 'local' && e.permissionsBoundary?.decision === 'unreadable' && e.identityDecision === 'allowed'

/** The identity policies allow it; the permissions boundary does not. */
const boundaryDenies = (e: PermissionEvaluation) =>
  e.identityDecision === 'allowed' &&
  (e.permissionsBoundary?.decision === 'implicitDeny' || e.permissionsBoundary?.decision === 'explicitDeny')

interface Boundary {
  arn: string
  document: PolicyDocument | null
}

/** The controller role's permissions boundary, as collected. */
function boundaryOf(facts: Facts, controllerRole: string | null): Boundary | undefined {
  const read = controllerRole ? facts.iam.roles[controllerRole] : undefined
  const role = read?.ok ? read.value : null
  const arn = role?.role.permissionsBoundaryArn
  return arn ? { arn, document: role.boundary?.document ?? null } : undefined
}

function judge(
  use: NodeRoleUse,
  read: ReturnType<typeof lookup>,
  controllerRole: string | null,
  fix: Fix | undefined,
  boundary: Boundary | undefined,
): Finding {
  const roleName = roleNameFromArn(use.arn)
  const classes = `EC2NodeClass ${use.nodeClasses.join(', ')}`
  const controller = controllerRole ?? 'the controller role'
  if (!read) {
    return {
      status: 'unknown',
      subject: use.arn,
      message: `iam:PassRole on ${roleName} (${classes}) was not evaluated${controllerRole ? '' : ': the controller role is not known'}`,
      evidence: { roleArn: use.arn, nodeClasses: use.nodeClasses, controllerRole },
    }
  }
  if (!read.ok) {
    return {
      status: 'unknown',
      subject: use.arn,
      message: `iam:PassRole on ${roleName} (${classes}): ${describeFailure(read.error)}`,
      evidence: { roleArn: use.arn, read: read.error.read },
    }
  }
  const e = read.value
  const method = methodText(e)
  const pb = e.permissionsBoundary
  const pbName = pb ? roleNameFromArn(pb.arn) : undefined
  const caveats = evaluationCaveats(e)
  const evidence = {
    roleArn: use.arn,
    nodeClasses: use.nodeClasses,
    controllerRole,
    decision: e.decision,
    method,
    matchedStatements: e.matchedStatements,
    context: e.context,
    ...(pb ? { permissionsBoundary: pb, identityDecision: e.identityDecision } : {}),
    ...(e.notes && e.notes.length > 0 ? { notes: e.notes } : {}),
  }
  // What the verdict took into account, said in the message: the caveats say what it did not.
  const scope =
    e.method === 'simulator'
      ? ''
      : pb
        ? `; identity policies ∩ permissions boundary ${pbName}`
        : '; identity policies, no permissions boundary'
  if (unconfirmed(e) && pb) {
    return {
      status: 'unknown',
      subject: use.arn,
      message: `the policies of ${controller} allow passing ${roleName} to EC2 (${classes}), but its permissions boundary ${pbName} could not be read, so the allow is not confirmed: ${pb.error ? describeFailure(pb.error) : 'no document'}`,
      evidence,
      caveats,
    }
  }
  if (e.decision === 'allowed') {
    return {
      status: 'pass',
      subject: use.arn,
      message: `${controller} may pass ${roleName} to ec2.amazonaws.com (${classes}; decided by ${method}${scope}${e.method === 'local' ? '; SCPs and session policies not seen' : ''})`,
      evidence,
      ...(caveats.length > 0 ? { caveats } : {}),
    }
  }
  let why: string
  if (boundaryDenies(e) && pb) {
    why =
      pb.decision === 'explicitDeny'
        ? `an explicit Deny in its permissions boundary ${pbName} (${pb.matchedStatements.join(', ') || 'statement not named'}) forbids it, though its policies allow it`
        : `its permissions boundary ${pbName} does not allow iam:PassRole on it, though its policies do`
  } else {
    why =
      e.decision === 'explicitDeny'
        ? `an explicit Deny (${e.matchedStatements.join(', ') || 'statement not named'}) forbids it`
        : 'no statement allows it'
  }
  const simulatedBoundary =
    e.method === 'simulator' && boundary
      ? ` (the role has permissions boundary ${roleNameFromArn(boundary.arn)}: it must allow iam:PassRole too)`
      : ''
  const denyStatements = boundaryDenies(e) && pb ? pb.matchedStatements : e.matchedStatements
  return {
    status: 'fail',
    subject: use.arn,
    message: `${controller} may not pass ${roleName} to EC2: ${why}; nodes of ${classes} cannot launch (decided by ${method}${scope})`,
    evidence,
    ...(fix
      ? {
          fix:
            e.decision === 'explicitDeny'
              ? withDenyAdvice(fix, denyStatements)
              : simulatedBoundary
                ? { ...fix, summary: `${fix.summary}${simulatedBoundary}` }
                : fix,
        }
      : {}),
  }
}

/**
 * One inline policy naming every node role in use: put-role-policy replaces a policy of the same
 * name, so a per-role command would drop the roles granted by the previous run.
 */
function passRoleFix(
  facts: Facts,
  controllerRole: string | null,
  uses: NodeRoleUse[],
  denied: NodeRoleUse[],
): Fix {
  const role = controllerRole ?? `KarpenterControllerRole-${facts.meta.clusterName}`
  const document = passRolePolicy(uses.map((u) => u.arn).sort())
  const names = denied.map((u) => roleNameFromArn(u.arn)).join(', ')
  return {
    summary: `let ${role} pass ${names} to EC2${controllerRole ? '' : ` (the controller role was not discovered: ${role} is the getting-started name, adjust it)`}`,
    commands: [
      `aws iam put-role-policy --role-name ${role} --policy-name ${PASS_NODE_ROLES_POLICY} --policy-document '${JSON.stringify(document)}'`,
    ],
    snippet: { language: 'json', text: JSON.stringify(document, null, 2) },
  }
}

/**
 * The boundary limits what the role's policies grant: it must allow iam:PassRole on the node roles
 * too. The command is controller-policy's boundary repair (one new version allowing everything the
 * boundary lacks), so the two checks never print versions that undo each other.
 */
function boundaryFix(facts: Facts, controllerRole: string | null, denied: NodeRoleUse[]): Fix {
  const repair = boundaryRepair(facts)
  if (repair) return repair.fix
  const names = denied.map((u) => roleNameFromArn(u.arn)).join(', ')
  const resources = denied.map((u) => u.arn)
  const statement = {
    Sid: 'AllowPassingKarpenterNodeRoles',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: resources.length === 1 ? resources[0] : resources,
  }
  return {
    summary: `add a statement allowing iam:PassRole on ${names} to the permissions boundary of ${controllerRole ?? 'the controller role'}`,
    snippet: { language: 'json', text: JSON.stringify(statement, null, 2) },
  }
}

function withDenyAdvice(fix: Fix, statements: string[]): Fix {
  return {
    ...fix,
    summary: `remove or narrow the Deny statement${statements.length === 1 ? '' : 's'} ${statements.join(', ')} (an Allow cannot override it; an SCP or permission boundary can also deny), then: ${fix.summary}`,
  }
}

/** The controller role's tags, when it was read (ownership also reads CloudFormation's answer). */
function roleTags(facts: Facts, name: string): Record<string, string> {
  const r = facts.iam.roles[name]
  return r?.ok && r.value ? r.value.role.tags : {}
}
