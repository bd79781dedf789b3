import type { EC2NodeClass, Facts, KmsKey, RoleFacts } from '../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { keyUse, type KeyUse } from '../iam/key-policy.js'
import { need, nodeClassRoleName, shellQuote, skip } from './lib/facts.js'
import { readOr } from './lib/read.js'
import { identityOf } from './lib/role-policies.js'
import type { Check, Finding, Fix } from './types.js'

/** What launching an instance with a volume encrypted by a customer managed key asks of the launcher. */
export const KMS_ACTIONS = ['kms:CreateGrant', 'kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt']

const FIX_POLICY_NAME = 'KarpenterEbsKmsKey'

export const ebsKmsKey: Check = {
  meta: {
    id: 'ebs-kms-key',
    title:
      'The KMS keys of EC2NodeClass EBS volumes exist, are enabled and may be used by the controller and the nodes',
    category: 'iam',
    severity: 'error',
    docs: 'For every blockDeviceMappings[].ebs.kmsKeyID of an EC2NodeClass: the key (id, ARN, alias or alias ARN, resolved by kms:DescribeKey) must exist and be Enabled, and — for a customer managed key — its key policy must let the controller role (which launches the instances: a denial terminates each one at launch) and the node role use it through EC2 for kms:CreateGrant, kms:GenerateDataKeyWithoutPlaintext and kms:Decrypt. The key policy decides; IAM policies count only when the key policy allows the account root. AWS managed keys (aws/ebs) pass.',
  },
  run(facts) {
    const nodeClasses = need(facts.kube.nodeClasses)
    const classesById = new Map<string, string[]>()
    for (const nc of nodeClasses)
      for (const id of keyIdsOf(nc)) classesById.set(id, [...(classesById.get(id) ?? []), nc.metadata.name])
    if (classesById.size === 0)
      skip('no EC2NodeClass sets blockDeviceMappings[].ebs.kmsKeyID: volumes use the account default EBS key')
    if (!facts.kms)
      return [
        {
          status: 'unknown',
          message:
            'KMS keys were not collected (a snapshot saved before karpctl read them): run doctor against the cluster',
        },
      ]
    const findings: Finding[] = []
    // Two spellings of one key (an alias and its ARN) are judged once, for every NodeClass using either.
    const byArn = new Map<string, { key: KmsKey; ids: string[]; classes: string[] }>()
    for (const [id, classes] of classesById) {
      const key = readOr(facts.kms.keys[id], findings, id, `KMS key ${id}`)
      if (key === undefined) continue
      if (key === null) {
        findings.push(missingKey(facts, id, classes))
        continue
      }
      const entry = byArn.get(key.arn) ?? { key, ids: [], classes: [] }
      entry.ids.push(id)
      entry.classes.push(...classes.filter((c) => !entry.classes.includes(c)))
      byArn.set(key.arn, entry)
    }
    for (const { key, ids, classes } of byArn.values())
      findings.push(...judgeKey(facts, key, ids, classes, nodeClasses))
    return findings
  },
}

function keyIdsOf(nc: EC2NodeClass): string[] {
  return [
    ...new Set((nc.spec.blockDeviceMappings ?? []).flatMap((b) => (b.ebs?.kmsKeyID ? [b.ebs.kmsKeyID] : []))),
  ]
}

const regionOf = (facts: Facts, arn: string) => arn.split(':')[3] || facts.meta.region

function missingKey(facts: Facts, id: string, classes: string[]): Finding {
  return {
    status: 'fail',
    subject: id,
    message: `KMS key ${id} (kmsKeyID of EC2NodeClass ${classes.join(', ')}) does not exist in ${facts.meta.region}: every instance launched with it is terminated at once (Client.InvalidKMSKey.InvalidState)`,
    evidence: { kmsKeyID: id, nodeClasses: classes },
    fix: {
      summary: `set kmsKeyID to a key that exists (a key id, key ARN, alias/… or alias ARN), or remove it to use the account default EBS key`,
      commands: [`aws kms list-aliases --region ${facts.meta.region}`],
    },
  }
}

function judgeKey(
  facts: Facts,
  key: KmsKey,
  ids: string[],
  classes: string[],
  nodeClasses: EC2NodeClass[],
): Finding[] {
  const used = `kmsKeyID ${ids.join(', ')} of EC2NodeClass ${classes.join(', ')}`
  const region = regionOf(facts, key.arn)
  if (key.keyState !== 'Enabled') {
    const commands =
      key.keyState === 'Disabled'
        ? [`aws kms enable-key --key-id ${key.arn} --region ${region}`]
        : key.keyState === 'PendingDeletion'
          ? [
              `aws kms cancel-key-deletion --key-id ${key.arn} --region ${region}`,
              `aws kms enable-key --key-id ${key.arn} --region ${region}`,
            ]
          : []
    return [
      {
        status: 'fail',
        subject: key.arn,
        message: `KMS key ${key.arn} (${used}) is ${key.keyState}, not Enabled: EBS cannot encrypt with it and every instance launched with it is terminated at once`,
        evidence: { keyState: key.keyState, kmsKeyIDs: ids },
        fix: {
          summary:
            commands.length > 0
              ? `enable the key${key.keyState === 'PendingDeletion' ? ' (cancelling its scheduled deletion)' : ''}`
              : `a key in state ${key.keyState} cannot be enabled from here: point kmsKeyID at an Enabled key`,
          ...(commands.length > 0 ? { commands } : {}),
        },
      },
    ]
  }
  if (key.keyManager === 'AWS') {
    return [
      {
        status: 'pass',
        subject: key.arn,
        message: `${key.arn} (${used}) is an AWS managed key: its policy lets every principal of the account use it through EC2`,
      },
    ]
  }
  const findings: Finding[] = []
  const policy = readOr(key.policy, findings, key.arn, `key policy of ${key.arn}`)
  if (policy === undefined) return findings

  const principals: { roleName: string; kind: 'controller' | 'node'; classes: string[] }[] = []
  const controller = facts.iam.controllerRoleName
  if (controller) principals.push({ roleName: controller, kind: 'controller', classes })
  else
    findings.push({
      status: 'unknown',
      subject: key.arn,
      message: `the controller role was not discovered (no IRSA annotation or Pod Identity association), so whether it may use ${key.arn} is not known`,
    })
  for (const nc of nodeClasses) {
    if (!classes.includes(nc.metadata.name)) continue
    const role = nodeClassRoleName(facts, nc)
    if (!role) continue // node-role says why the NodeClass has no usable role
    const seen = principals.find((p) => p.kind === 'node' && p.roleName === role)
    if (seen) seen.classes.push(nc.metadata.name)
    else principals.push({ roleName: role, kind: 'node', classes: [nc.metadata.name] })
  }

  const judged = principals.flatMap((p) => {
    const role = readOr(facts.iam.roles[p.roleName], findings, p.roleName, `IAM role ${p.roleName}`)
    if (role === undefined) return []
    if (role === null) {
      findings.push({
        status: 'unknown',
        subject: p.roleName,
        message: `${p.kind === 'controller' ? 'controller' : 'node'} role ${p.roleName} does not exist, so its use of ${key.arn} cannot be judged (${p.kind === 'controller' ? 'controller-policy' : 'node-role'} reports the missing role)`,
      })
      return []
    }
    return [{ ...p, role, results: judgePrincipal(facts, key, policy, role) }]
  })
  const lacking = judged.filter((j) => j.results.some((r) => isDenied(r.use)))
  for (const j of judged) findings.push(principalFinding(facts, key, used, policy, j, lacking))
  return findings
}

const isDenied = (u: KeyUse) => u.decision === 'implicitDeny' || u.decision === 'explicitDeny'

/** The request EC2 makes to KMS for the launcher while it creates an encrypted volume. */
function launchContext(facts: Facts, principalArn: string, account: string, action: string) {
  return {
    'kms:ViaService': `ec2.${facts.meta.region}.amazonaws.com`,
    'kms:CallerAccount': account,
    'aws:PrincipalAccount': account,
    'aws:PrincipalArn': principalArn,
    ...(action === 'kms:CreateGrant' ? { 'kms:GrantIsForAWSResource': 'true' } : {}),
  }
}

function judgePrincipal(facts: Facts, key: KmsKey, policy: PolicyDocument, r: RoleFacts) {
  const account = r.role.arn.split(':')[4] ?? ''
  const identity = identityOf(r)
  return KMS_ACTIONS.map((action) => ({
    action,
    use: keyUse(policy, identity, {
      action,
      keyArn: key.arn,
      principalArn: r.role.arn,
      principalAccount: account,
      context: launchContext(facts, r.role.arn, account, action),
    }),
  }))
}

interface Judged {
  roleName: string
  kind: 'controller' | 'node'
  classes: string[]
  role: RoleFacts
  results: { action: string; use: KeyUse }[]
}

function principalFinding(
  facts: Facts,
  key: KmsKey,
  used: string,
  policy: PolicyDocument,
  j: Judged,
  lacking: Judged[],
): Finding {
  const who =
    j.kind === 'controller'
      ? `controller role ${j.roleName}`
      : `node role ${j.roleName} (EC2NodeClass ${j.classes.join(', ')})`
  const denied = j.results.filter((r) => isDenied(r.use))
  const uncertain = j.results.filter((r) => r.use.decision === 'uncertain')
  const notes = [...new Set(j.results.flatMap((r) => r.use.notes))]
  const caveats = [
    `judged for the requests EC2 makes to KMS while launching (kms:ViaService ec2.${facts.meta.region}.amazonaws.com, kms:CallerAccount, kms:GrantIsForAWSResource true for CreateGrant); a condition on any other key is not judged`,
    'grants on the key (aws kms list-grants) are not read: a grant can allow what the policies do not',
    'service control policies, resource control policies and session policies are not seen',
    // Spot launches from an AMI or snapshot encrypted with this key also use the Spot service-linked role.
    'AWSServiceRoleForEC2Spot is not judged: spot capacity from an AMI or snapshot encrypted with this key needs it to have the key too',
    ...notes,
  ]
  const evidence = {
    key: key.arn,
    role: j.role.role.arn,
    decisions: Object.fromEntries(
      j.results.map((r) => [
        r.action,
        { decision: r.use.decision, via: r.use.via ?? null, statements: r.use.matchedStatements },
      ]),
    ),
    iamPoliciesCount: j.results.some((r) => r.use.iamEnabled),
  }
  if (denied.length > 0) {
    const actions = denied.map((r) => r.action).join(', ')
    const explicit = denied
      .filter((r) => r.use.decision === 'explicitDeny')
      .flatMap((r) => r.use.matchedStatements)
    const why =
      explicit.length > 0
        ? `explicitly denied by ${[...new Set(explicit)].join(', ')}`
        : j.results.some((r) => r.use.iamEnabled)
          ? 'neither the key policy nor its IAM policies allow it'
          : 'the key policy does not allow it and does not let IAM policies grant it'
    const message =
      j.kind === 'controller'
        ? `${who} may not use KMS key ${key.arn} (${used}) for ${actions}: ${why}; EC2 cannot encrypt the volumes of the instances Karpenter launches, and terminates each one at launch`
        : `${who} may not use KMS key ${key.arn} (${used}) for ${actions}: ${why}; the controller's grant covers the volumes at launch, but whatever the nodes do under their own role with volumes encrypted by this key (attach, snapshot, the EBS CSI driver on node credentials) is denied`
    return {
      status: j.kind === 'controller' ? 'fail' : 'warn',
      subject: j.role.role.arn,
      message,
      evidence,
      caveats,
      ...(explicit.length > 0 ? {} : { fix: keyFix(facts, key, policy, j, lacking) }),
    }
  }
  if (uncertain.length > 0) {
    return {
      status: 'unknown',
      subject: j.role.role.arn,
      message: `whether ${who} may use KMS key ${key.arn} (${used}) for ${uncertain.map((r) => r.action).join(', ')} hangs on statements karpctl cannot evaluate locally: ${notes.join('; ') || 'see evidence'}`,
      evidence,
      caveats,
    }
  }
  const via = [
    ...new Set(
      j.results.map((r) =>
        r.use.via === 'iam' ? 'its IAM policies (the key policy defers to IAM)' : 'the key policy',
      ),
    ),
  ]
  return {
    status: 'pass',
    subject: j.role.role.arn,
    message: `${who} may use KMS key ${key.arn} for ${KMS_ACTIONS.join(', ')} through EC2, allowed by ${via.join(' and ')}`,
    evidence,
    caveats,
  }
}

/** Least privilege for an encrypted launch: data keys and decrypt only through EC2, grants only for AWS resources. */
function fixStatements(facts: Facts, keyArn: string, principals?: string[]): PolicyStatement[] {
  const principal = principals
    ? { Principal: { AWS: principals.length === 1 ? (principals[0] as string) : principals } }
    : {}
  return [
    {
      Sid: 'KarpenterEbsEncryption',
      Effect: 'Allow',
      ...principal,
      Action: ['kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt'],
      Resource: keyArn,
      Condition: { StringEquals: { 'kms:ViaService': `ec2.${facts.meta.region}.amazonaws.com` } },
    },
    {
      Sid: 'KarpenterEbsGrants',
      Effect: 'Allow',
      ...principal,
      Action: 'kms:CreateGrant',
      Resource: keyArn,
      Condition: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
    },
  ]
}

const principalsOf = (s: PolicyStatement | undefined): string[] => {
  const aws = s && s.Principal && s.Principal !== '*' ? s.Principal.AWS : undefined
  return aws === undefined ? [] : Array.isArray(aws) ? aws : [aws]
}

/**
 * When the key policy lets IAM decide, an inline policy on the role (the key policy stays as it is);
 * otherwise the key policy with two statements added for every role that lacks access — the same
 * command on each of those findings, so running one or all ends with the same policy.
 */
function keyFix(facts: Facts, key: KmsKey, policy: PolicyDocument, j: Judged, lacking: Judged[]): Fix {
  const sameAccount = key.accountId === (j.role.role.arn.split(':')[4] ?? '')
  if (sameAccount && j.results.every((r) => r.use.iamEnabled)) {
    const doc = { Version: '2012-10-17', Statement: fixStatements(facts, key.arn) }
    return {
      summary: `the key policy lets IAM policies grant use of the key: allow ${j.roleName} to use it through EC2 (an inline policy)`,
      commands: [
        `aws iam put-role-policy --role-name ${j.roleName} --policy-name ${FIX_POLICY_NAME}-${key.keyId.slice(0, 8)} --policy-document ${shellQuote(JSON.stringify(doc))}`,
      ],
    }
  }
  const added = fixStatements(facts, key.arn)
  const sids = added.map((s) => s.Sid)
  const existing = policy.Statement.filter((s) => sids.includes(s.Sid))
  const arns = [...new Set([...existing.flatMap(principalsOf), ...lacking.map((l) => l.role.role.arn)])]
  const merged: PolicyDocument = {
    Version: policy.Version ?? '2012-10-17',
    ...(policy.Id ? { Id: policy.Id } : {}),
    Statement: [
      ...policy.Statement.filter((s) => !sids.includes(s.Sid)),
      ...fixStatements(facts, key.arn, arns),
    ],
  }
  return {
    summary: `add statements for ${lacking.map((l) => l.roleName).join(', ')} to the key policy of ${key.arn} (put-key-policy replaces the whole policy: the command keeps every existing statement)${sameAccount ? '' : `; the key is in account ${key.accountId}, so the role's IAM policies must allow the same actions on it too`}`,
    commands: [
      `aws kms put-key-policy --key-id ${key.arn} --policy-name default --policy ${shellQuote(JSON.stringify(merged))} --region ${regionOf(facts, key.arn)}`,
    ],
  }
}
