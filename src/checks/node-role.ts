import type {
  AttachedPolicy,
  AwsAuthMapping,
  EC2NodeClass,
  Facts,
  IamRole,
  Read,
  ReadFailure,
} from '../facts/types.js'
import type { PolicyDocument } from '../policy/types.js'
import {
  EC2_SERVICES,
  NODE_ADVISED_POLICIES,
  NODE_ECR_POLICIES,
  NODE_MANAGED_POLICIES,
} from '../desired/controller-policy.js'
import {
  describeFailure,
  need,
  nodeClassRoleName,
  partitionOf,
  roleNameFromArn,
  shellQuote,
  skip,
} from './lib/facts.js'
import {
  awsAuthUsernameCommands,
  NODE_GROUPS,
  NODE_USERNAME,
  withMappingAlternative,
} from './lib/node-access.js'
import { inStack, ownership } from './lib/owners.js'
import {
  AWS_NODE_NAMESPACE,
  AWS_NODE_SERVICE_ACCOUNT,
  awsNodeIdentity,
  type AwsNodeIdentity,
} from '../facts/aws-node.js'
import { missingServiceTrust } from './lib/policy.js'
import { readOr } from './lib/read.js'
import type { Check, Finding, Fix } from './types.js'

const NODE_ENTRY_TYPES = ['EC2_LINUX', 'EC2_WINDOWS']
const CNI_POLICY = 'AmazonEKS_CNI_Policy'

export const nodeRole: Check = {
  meta: {
    id: 'node-role',
    title: 'Node roles can be assumed by EC2, carry the node policies and may join the cluster',
    category: 'iam',
    severity: 'error',
    docs: 'Every node role an EC2NodeClass uses (spec.role, or the role its spec.instanceProfile holds) must trust ec2.amazonaws.com, have AmazonEKSWorkerNodePolicy and an ECR pull policy attached (AmazonSSMManagedInstanceCore is advised), and be granted cluster access: an EC2_LINUX access entry, or an aws-auth mapping to system:bootstrappers and system:nodes. AmazonEKS_CNI_Policy belongs on the node role unless aws-node (the VPC CNI) has its own role (IRSA annotation on kube-system/aws-node, or an EKS Pod Identity association): then that role must have it.',
  },
  run(facts) {
    const nodeClasses = need(facts.kube.nodeClasses)
    if (nodeClasses.length === 0) skip('no EC2NodeClass found: no node role to check')
    const findings: Finding[] = []
    const roles = new Map<string, string[]>()
    for (const nc of nodeClasses) {
      const name = nodeRoleName(facts, nc, nodeClasses, findings)
      // Through a profile, the role is named with it: the profile is what the EC2NodeClass says.
      const use = nc.spec.role
        ? nc.metadata.name
        : `${nc.metadata.name} (through instance profile ${nc.spec.instanceProfile})`
      if (name) roles.set(name, [...(roles.get(name) ?? []), use])
    }
    for (const [roleName, classes] of roles) findings.push(...checkRole(facts, roleName, classes))
    if (roles.size > 0) findings.push(...cniFindings(facts))
    return findings
  },
}

/**
 * The role an EC2NodeClass launches nodes with: spec.role, or the role its spec.instanceProfile holds
 * (then judged as any node role). A profile that is missing or empty is this check's failure.
 */
function nodeRoleName(
  facts: Facts,
  nc: EC2NodeClass,
  nodeClasses: EC2NodeClass[],
  findings: Finding[],
): string | undefined {
  const subject = `EC2NodeClass/${nc.metadata.name}`
  if (nc.spec.role) return nodeClassRoleName(facts, nc)
  const profileName = nc.spec.instanceProfile
  if (!profileName) {
    findings.push({
      status: 'unknown',
      subject,
      message: `${subject} names neither spec.role nor spec.instanceProfile`,
    })
    return undefined
  }
  const profile = readOr(
    facts.iam.instanceProfiles[profileName],
    findings,
    profileName,
    `instance profile ${profileName}`,
  )
  if (profile === undefined) return undefined
  if (profile === null || profile.roles.length === 0) {
    findings.push(emptyProfile(facts, nc, profileName, profile === null, nodeClasses))
    return undefined
  }
  return profile.roles[0]
}

/** Why doctor --fix leaves an unusable profile to a human (doctor prints the commands). */
const PROFILE_WHY =
  'which role an instance profile holds is a choice (the role printed is a guess: one another EC2NodeClass uses, else the one install creates), and so is setting spec.role instead'

/**
 * A profile that does not exist or holds no role: EC2 launches the instance without credentials, so
 * its node never joins. The role to put in it is one another EC2NodeClass already uses (it exists),
 * else the role install creates.
 */
function emptyProfile(
  facts: Facts,
  nc: EC2NodeClass,
  profileName: string,
  missing: boolean,
  nodeClasses: EC2NodeClass[],
): Finding {
  const subject = `EC2NodeClass/${nc.metadata.name}`
  const existing = nodeClasses
    .flatMap((c) => (c.spec.role ? [nodeClassRoleName(facts, c) as string] : []))
    .find((r) => {
      const read = facts.iam.roles[r]
      return read?.ok && read.value !== null
    })
  const role = existing ?? `KarpenterNodeRole-${facts.meta.clusterName}`
  const which = existing
    ? `${role} (the node role another EC2NodeClass uses)`
    : `${role} (the node role karpctl install creates; name yours if it differs)`
  return {
    status: 'fail',
    subject: profileName,
    message: `instance profile ${profileName} used by ${subject} ${missing ? 'does not exist' : 'holds no role'}: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)`,
    evidence: { nodeClass: nc.metadata.name, instanceProfile: profileName, role, manualBecause: PROFILE_WHY },
    code: missing ? 'instance-profile-missing' : 'instance-profile-empty',
    fix: {
      summary: `${missing ? 'create the instance profile and add' : 'add'} node role ${which} to it; or set spec.role of ${subject} instead of spec.instanceProfile (Karpenter then creates and manages the instance profile)`,
      commands: [
        ...(missing ? [`aws iam create-instance-profile --instance-profile-name ${profileName}`] : []),
        `aws iam add-role-to-instance-profile --instance-profile-name ${profileName} --role-name ${role}`,
      ],
      // The CRD allows exactly one of role and instanceProfile: the patch removes the profile (null).
      alternative: {
        label: `or let Karpenter manage the instance profile: set spec.role of ${subject} (removing spec.instanceProfile)`,
        commands: [
          `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type merge -p ${shellQuote(JSON.stringify({ spec: { role, instanceProfile: null } }))}`,
        ],
      },
    },
  }
}

function checkRole(facts: Facts, roleName: string, classes: string[]): Finding[] {
  const findings: Finding[] = []
  const used = `used by EC2NodeClass ${classes.join(', ')}`
  const read = readOr(facts.iam.roles[roleName], findings, roleName, `IAM role ${roleName}`)
  if (read === undefined) return findings
  if (read === null) return [nearMiss(facts, roleName, classes, used) ?? missingRole(facts, roleName, used)]
  const role = read.role
  findings.push(trustFinding(role, used))
  findings.push(...policyFindings(facts, roleName, read.attached, used))
  findings.push(...accessFindings(facts, role, used))
  return findings
}

const ec2Trust = (existing: PolicyDocument['Statement'] = []): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [
    ...existing,
    { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
  ],
})

const managedArn = (facts: Facts, name: string) => `arn:${partitionOf(facts)}:iam::aws:policy/${name}`

/**
 * The roles this cluster lets nodes in with: EC2_LINUX/WINDOWS access entries and aws-auth entries
 * with the node groups, by role name (only this account's).
 */
function nodeAccessRoles(facts: Facts): string[] {
  const account = facts.meta.accountId
  const mine = (arn: string) => !account || arn.split(':')[4] === account
  const entries = facts.eks.accessEntries.ok ? facts.eks.accessEntries.value : []
  const mappings = facts.kube.awsAuth.ok ? (facts.kube.awsAuth.value ?? []) : []
  return [
    ...new Set([
      ...entries
        .filter((e) => NODE_ENTRY_TYPES.includes(e.type ?? '') && mine(e.principalArn))
        .map((e) => roleNameFromArn(e.principalArn)),
      ...mappings
        .filter((m) => NODE_GROUPS.every((g) => m.groups.includes(g)) && mine(m.rolearn))
        .map((m) => roleNameFromArn(m.rolearn)),
    ]),
  ]
}

/**
 * A node role that does not exist, where exactly one role with node access to this cluster has its
 * name as a prefix (`Karpenter-demo` for terraform-aws-eks's `Karpenter-demo-<suffix>`) or differs
 * only in case: that is the role meant. The EC2NodeClass is fixed to name it; no second role (without
 * cluster access) is created, and no PassRole is granted on a role that does not exist.
 */
function nearMiss(facts: Facts, roleName: string, classes: string[], used: string): Finding | null {
  const want = roleName.toLowerCase()
  const near = nodeAccessRoles(facts).filter((n) => {
    const have = n.toLowerCase()
    return (
      have !== want &&
      (have.startsWith(`${want}-`) || have === want || have.replace(/-/g, '') === want.replace(/-/g, ''))
    )
  })
  if (near.length !== 1) return null
  const meant = near[0]!
  return {
    status: 'fail',
    subject: roleName,
    message: `node role ${roleName} (${used}) does not exist; ${meant} has node access to this cluster: the EC2NodeClass should name it`,
    code: 'role-misnamed',
    evidence: { role: roleName, meant, nodeClasses: classes },
    fix: {
      summary: `set spec.role of EC2NodeClass ${classes.join(', ')} to ${meant} (no new role: ${meant} already has cluster access)`,
      commands: classes.map(
        (nc) =>
          `kubectl patch ec2nodeclass ${shellQuote(nc)} --type merge -p ${shellQuote(JSON.stringify({ spec: { role: meant } }))}`,
      ),
    },
  }
}

function missingRole(facts: Facts, roleName: string, used: string): Finding {
  const required = [...NODE_MANAGED_POLICIES, NODE_ECR_POLICIES[0], ...NODE_ADVISED_POLICIES]
  return {
    status: 'fail',
    subject: roleName,
    message: `node role ${roleName} (${used}) does not exist: Karpenter cannot launch nodes with it`,
    fix: {
      summary: `create ${roleName} with the node policies, then grant it cluster access`,
      commands: [
        `aws iam create-role --role-name ${roleName} --assume-role-policy-document ${shellQuote(JSON.stringify(ec2Trust()))}`,
        ...required.map(
          (p) => `aws iam attach-role-policy --role-name ${roleName} --policy-arn ${managedArn(facts, p)}`,
        ),
      ],
    },
  }
}

function trustFinding(role: IamRole, used: string): Finding {
  const missing = missingServiceTrust(role.trust, EC2_SERVICES, ['sts:AssumeRole'])
  if (missing.length === 0) {
    return { status: 'pass', subject: role.arn, message: `${role.name} trusts ec2.amazonaws.com (${used})` }
  }
  return {
    status: 'fail',
    subject: role.arn,
    message: `trust policy of node role ${role.name} (${used}) does not let ec2.amazonaws.com assume it: instances get no credentials`,
    evidence: { trust: role.trust },
    fix: {
      summary: `let EC2 assume ${role.name} (other trust statements are kept)`,
      commands: [
        `aws iam update-assume-role-policy --role-name ${role.name} --policy-document ${shellQuote(JSON.stringify(ec2Trust(role.trust.Statement)))}`,
      ],
    },
  }
}

function policyFindings(
  facts: Facts,
  roleName: string,
  attachedRead: Read<AttachedPolicy[]>,
  used: string,
): Finding[] {
  const findings: Finding[] = []
  const attached = readOr(attachedRead, findings, roleName, `attached policies of ${roleName}`)
  if (attached === undefined) return findings
  // Match AWS managed policies by ARN so a customer policy that merely shares the name does not count.
  const has = (name: string) =>
    attached.some((p) => p.arn === managedArn(facts, name) || p.arn.endsWith(`:iam::aws:policy/${name}`))
  // The VPC CNI may get its permissions from its own role instead (EKS best practice): then the node
  // role needs no CNI policy, and cniFindings judges that role.
  const cni = cniSource(facts)
  const missing: string[] = NODE_MANAGED_POLICIES.filter(
    (p) => !has(p) && !(p === CNI_POLICY && cni.kind !== 'node'),
  )
  if (!NODE_ECR_POLICIES.some(has)) missing.push(NODE_ECR_POLICIES[0])
  // The getting-started stack declares its node role's managed policies: attach them there.
  const role = facts.iam.roles[roleName]
  const owner = ownership(facts, roleName, role?.ok && role.value ? role.value.role.tags : {})
  const attachFix = (names: string[]): Fix =>
    inStack(
      {
        summary: `attach ${names.join(', ')} to ${roleName}`,
        commands: names.map(
          (p) => `aws iam attach-role-policy --role-name ${roleName} --policy-arn ${managedArn(facts, p)}`,
        ),
      },
      owner,
      `node role ${roleName}`,
    )
  const evidence = { attached: attached.map((p) => p.arn) }
  if (missing.length > 0) {
    findings.push({
      status: 'fail',
      subject: roleName,
      message: `node role ${roleName} (${used}) lacks ${missing.join(', ')}${missing.includes(NODE_ECR_POLICIES[0]) ? ` (or ${NODE_ECR_POLICIES[1]})` : ''}: nodes fail to join, get no pod IPs or cannot pull images`,
      evidence: { ...evidence, missing },
      code: 'missing-policies',
      fix: attachFix(missing),
    })
  } else {
    findings.push({
      status: 'pass',
      subject: roleName,
      message:
        cni.kind === 'own'
          ? `${roleName} has the worker node and ECR pull policies; the VPC CNI's permissions come from aws-node's own role (see below)`
          : `${roleName} has the CNI, worker node and ECR pull policies`,
      evidence,
    })
  }
  if (cni.kind === 'unknown' && !has(CNI_POLICY)) {
    findings.push({
      status: 'unknown',
      subject: roleName,
      message: `node role ${roleName} (${used}) lacks ${CNI_POLICY}, and whether aws-node (the VPC CNI) has its own role is not known: ${cni.reason}`,
      evidence: { ...evidence, missing: [CNI_POLICY] },
    })
  }
  const advised = NODE_ADVISED_POLICIES.filter((p) => !has(p))
  if (advised.length > 0) {
    findings.push({
      status: 'warn',
      subject: roleName,
      message: `node role ${roleName} lacks ${advised.join(', ')}: nodes join, but Session Manager access to them will not work`,
      evidence: { ...evidence, missing: advised },
      code: 'missing-policies',
      fix: attachFix(advised),
    })
  }
  return findings
}

type CniSource =
  { kind: 'node' } | { kind: 'own'; identity: AwsNodeIdentity } | { kind: 'unknown'; reason: string }

/** Where the VPC CNI's permissions come from: aws-node's own role, or the node role. */
function cniSource(facts: Facts): CniSource {
  const sa = facts.kube.awsNodeServiceAccount
  if (sa && !sa.ok) return { kind: 'unknown', reason: describeFailure(sa.error) }
  const irsa = awsNodeIdentity(sa?.value ?? null, [])
  if (irsa) return { kind: 'own', identity: irsa }
  const assoc = facts.eks.podIdentityAssociations
  if (!assoc.ok) return { kind: 'unknown', reason: describeFailure(assoc.error) }
  const pod = awsNodeIdentity(null, assoc.value)
  return pod ? { kind: 'own', identity: pod } : { kind: 'node' }
}

/**
 * aws-node's own role, judged once for the cluster: with it, the CNI uses that role's credentials and
 * never the node role's, so it must carry AmazonEKS_CNI_Policy itself.
 */
function cniFindings(facts: Facts): Finding[] {
  const cni = cniSource(facts)
  if (cni.kind !== 'own') return []
  const how = cni.identity.via === 'irsa' ? 'IRSA annotation' : 'EKS Pod Identity association'
  const sa = `${AWS_NODE_NAMESPACE}/${AWS_NODE_SERVICE_ACCOUNT}`
  const arn = cni.identity.arn
  if (!arn) {
    return [
      {
        status: 'unknown',
        subject: sa,
        message: `aws-node (the VPC CNI) has an ${how} whose role was not described, so whether it has ${CNI_POLICY} is not known`,
      },
    ]
  }
  const name = roleNameFromArn(arn)
  const account = arn.split(':')[4]
  const evidence = { awsNodeRole: arn, via: cni.identity.via }
  if (facts.meta.accountId && account !== facts.meta.accountId) {
    return [
      {
        status: 'unknown',
        subject: arn,
        message: `aws-node (the VPC CNI) uses role ${arn} of account ${account} (${how}): its policies cannot be read from account ${facts.meta.accountId}, so whether it has ${CNI_POLICY} is not known`,
        evidence,
      },
    ]
  }
  const findings: Finding[] = []
  const read = readOr(facts.iam.roles[name], findings, name, `IAM role ${name} of aws-node`)
  if (read === undefined) return findings
  if (read === null) {
    return [
      {
        status: 'fail',
        subject: arn,
        message: `aws-node (the VPC CNI) uses role ${name} (${how}), which does not exist: the CNI gets no AWS credentials and pods on new nodes get no IP addresses`,
        evidence,
        code: 'cni-role-missing',
        fix: {
          summary: `create ${name} (trusting ${sa} the way its ${how} needs) with ${CNI_POLICY} attached, or remove aws-node's own identity so the node roles' ${CNI_POLICY} applies`,
        },
      },
    ]
  }
  const attached = readOr(read.attached, findings, name, `attached policies of ${name}`)
  if (attached === undefined) return findings
  if (attached.some((p) => p.arn === managedArn(facts, CNI_POLICY))) {
    return [
      {
        status: 'pass',
        subject: read.role.arn,
        message: `the VPC CNI (${sa}) gets its permissions from its own role ${name} (${how}), which has ${CNI_POLICY}: the node roles need not carry it`,
        evidence,
      },
    ]
  }
  return [
    {
      status: 'fail',
      subject: name,
      message: `aws-node (the VPC CNI) uses its own role ${name} (${how}), which lacks ${CNI_POLICY}: the CNI cannot assign IP addresses, so pods on new nodes get none (the node role's policies do not apply to it)`,
      evidence: { ...evidence, attached: attached.map((p) => p.arn), missing: [CNI_POLICY] },
      code: 'missing-policies',
      fix: inStack(
        {
          summary: `attach ${CNI_POLICY} to aws-node's role ${name} (not to the node role: that would undo the separation)`,
          commands: [
            `aws iam attach-role-policy --role-name ${name} --policy-arn ${managedArn(facts, CNI_POLICY)}`,
          ],
        },
        ownership(facts, name, read.role.tags),
        `aws-node role ${name}`,
      ),
    },
  ]
}

/** Same account and role name: aws-auth wants the ARN without the role path, access entries may carry it. */
function sameRole(arn: string, role: IamRole): boolean {
  return arn.split(':')[4] === role.arn.split(':')[4] && roleNameFromArn(arn) === role.name
}

function accessFindings(facts: Facts, role: IamRole, used: string): Finding[] {
  const findings: Finding[] = []
  const cluster = readOr(
    facts.eks.cluster,
    findings,
    facts.meta.clusterName,
    `EKS cluster ${facts.meta.clusterName}`,
  )
  if (cluster === undefined) return findings
  // Clusters that do not report a mode predate access entries: the ConfigMap is the only way.
  const mode = cluster?.authenticationMode ?? 'CONFIG_MAP'
  const entriesHonoured = mode === 'API' || mode === 'API_AND_CONFIG_MAP'
  const awsAuthHonoured = mode !== 'API'
  let entriesUnreadable: ReadFailure | undefined

  if (entriesHonoured) {
    const entries = facts.eks.accessEntries
    if (!entries.ok) {
      entriesUnreadable = entries.error
    } else {
      const entry = entries.value.find((e) => sameRole(e.principalArn, role))
      if (entry && NODE_ENTRY_TYPES.includes(entry.type ?? '')) {
        return [
          {
            status: 'pass',
            subject: role.arn,
            message: `${role.name} has an ${entry.type} access entry (mode ${mode})`,
          },
        ]
      }
      if (entry) return [wrongEntryType(facts, role, entry.type ?? 'STANDARD', used)]
    }
  }

  let mapping: AwsAuthMapping | undefined
  let awsAuthUnreadable: ReadFailure | undefined
  if (awsAuthHonoured) {
    const awsAuth = facts.kube.awsAuth
    if (!awsAuth.ok) awsAuthUnreadable = awsAuth.error
    const mappings = awsAuth.ok ? (awsAuth.value ?? []).filter((m) => sameRole(m.rolearn, role)) : []
    if (mappings.some((m) => mappingProblems(m).length === 0)) {
      return [
        {
          status: 'pass',
          subject: role.arn,
          message: `aws-auth maps ${role.name} to ${NODE_GROUPS.join(' + ')} (mode ${mode})`,
        },
      ]
    }
    mapping = mappings[0]
    if (mapping && !entriesUnreadable) return [mappingFinding(facts, role, mapping)]
  }

  const unreadable = [entriesUnreadable, awsAuthUnreadable].filter((f): f is ReadFailure => f !== undefined)
  if (unreadable.length > 0) {
    return [
      {
        status: 'unknown',
        subject: role.arn,
        message: `cannot verify that nodes with ${role.name} may join (mode ${mode}): ${unreadable.map(describeFailure).join('; ')}${awsAuthHonoured && !awsAuthUnreadable ? '; aws-auth does not map the role' : ''}`,
        evidence: { authenticationMode: mode, reads: unreadable.map((f) => f.read) },
      },
    ]
  }
  return [
    {
      status: 'fail',
      subject: role.arn,
      message: `node role ${role.name} (${used}) has no cluster access: ${entriesHonoured ? 'no EC2_LINUX access entry' : ''}${entriesHonoured && awsAuthHonoured ? ' and ' : ''}${awsAuthHonoured ? 'no aws-auth mapping' : ''} (authentication mode ${mode}); its nodes never become Ready`,
      evidence: { authenticationMode: mode, roleArn: role.arn },
      code: 'no-cluster-access',
      fix: entriesHonoured ? accessEntryFix(facts, role) : awsAuthFix(facts, role),
    },
  ]
}

/**
 * What keeps nodes of an aws-auth entry out: a missing group; the role's IAM path in rolearn (the
 * authenticator matches path-less ARNs only: kubernetes-sigs/aws-iam-authenticator#153,
 * terraform-aws-eks#893, #2221); a username other than the node one (the Node authorizer admits only
 * `system:node:<name>`: aws/karpenter-provider-aws#7508).
 */
function mappingProblems(m: AwsAuthMapping): string[] {
  const missingGroups = NODE_GROUPS.filter((g) => !m.groups.includes(g))
  return [
    ...(missingGroups.length > 0
      ? [`without group${missingGroups.length > 1 ? 's' : ''} ${missingGroups.join(', ')}`]
      : []),
    ...(hasPath(m.rolearn)
      ? [`with the role's path in rolearn (${m.rolearn}), which the authenticator never matches`]
      : []),
    ...(wrongUsername(m) ? [`with username ${m.username} instead of ${NODE_USERNAME}`] : []),
  ]
}

/** A username other than the node one; none written is left to the authenticator's default. */
const wrongUsername = (m: AwsAuthMapping) => m.username !== undefined && m.username !== NODE_USERNAME

/** `…:role/karpenter/Name`: anything between `role/` and the name is an IAM path. */
const hasPath = (arn: string) => arn.slice(arn.indexOf(':role/') + ':role/'.length).includes('/')

function mappingFinding(facts: Facts, role: IamRole, mapping: AwsAuthMapping): Finding {
  const problems = mappingProblems(mapping)
  // A path-less entry is added (the path one matches nothing, so it is harmless); a wrong username is
  // corrected in place (a second entry for the same ARN would leave which one wins to the authenticator).
  const fix = hasPath(mapping.rolearn)
    ? awsAuthFix(facts, role)
    : wrongUsername(mapping) && NODE_GROUPS.every((g) => mapping.groups.includes(g))
      ? {
          summary: `set the username of the aws-auth entry for ${role.name} to ${NODE_USERNAME}`,
          commands: awsAuthUsernameCommands(mapping.rolearn),
        }
      : awsAuthFix(facts, role)
  return {
    status: 'fail',
    subject: role.arn,
    message: `aws-auth maps node role ${role.name} ${problems.join(' and ')}: its nodes cannot register`,
    code: 'aws-auth-mapping',
    evidence: { mapping },
    fix,
  }
}

const pathlessArn = (role: IamRole) =>
  `arn:${role.arn.split(':')[1]}:iam::${role.arn.split(':')[4]}:role/${role.name}`

function accessEntryFix(facts: Facts, role: IamRole): Fix {
  const { clusterName, region } = facts.meta
  return {
    summary: `grant ${role.name} node access with an EC2_LINUX access entry`,
    commands: [
      `aws eks create-access-entry --cluster-name ${clusterName} --principal-arn ${pathlessArn(role)} --type EC2_LINUX --region ${region}`,
    ],
  }
}

function wrongEntryType(facts: Facts, role: IamRole, type: string, used: string): Finding {
  const { clusterName, region } = facts.meta
  return {
    status: 'fail',
    subject: role.arn,
    message: `node role ${role.name} (${used}) has a ${type} access entry, not EC2_LINUX: nodes are not put in system:nodes and cannot register`,
    evidence: { type },
    fix: {
      summary: 'an access entry type cannot be changed: replace it',
      commands: [
        `aws eks delete-access-entry --cluster-name ${clusterName} --principal-arn ${pathlessArn(role)} --region ${region}`,
        `aws eks create-access-entry --cluster-name ${clusterName} --principal-arn ${pathlessArn(role)} --type EC2_LINUX --region ${region}`,
      ],
    },
  }
}

function awsAuthFix(facts: Facts, role: IamRole): Fix {
  const arn = pathlessArn(role)
  return {
    ...withMappingAlternative(
      `map ${role.name} in the aws-auth ConfigMap (kube-system) under data.mapRoles, with eksctl or without it (below); the ARN must not include the role path`,
      (access) => access,
      facts,
      [arn],
    ),
    snippet: {
      language: 'yaml',
      text: [
        `# kubectl -n kube-system edit configmap aws-auth — add to data.mapRoles:`,
        `- rolearn: ${arn}`,
        `  username: ${NODE_USERNAME}`,
        `  groups:`,
        ...NODE_GROUPS.map((g) => `    - ${g}`),
      ].join('\n'),
    },
  }
}
