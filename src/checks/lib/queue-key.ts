// The interruption queue's SSE-KMS key. EventBridge delivers to such a queue only when the key policy
// lets events.amazonaws.com use the key (a service principal has no IAM policies: only the key policy
// counts), and the controller receives only with kms:Decrypt on it (the key policy itself, or IAM where
// the key policy defers to the account). interruption-queue judges the first, controller-policy the
// second; both print the same key policy command, so applying either or both ends with one policy.
import type { Facts, KmsKey, QueueFacts, RoleFacts } from '../../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../policy/types.js'
import { keyUse, serviceKeyUse, type KeyUse } from '../../iam/key-policy.js'
import type { Finding, Fix } from '../types.js'
import { shellQuote } from './facts.js'
import { inStack, ownership } from './owners.js'
import { readOr } from './read.js'
import { identityOf } from './role-policies.js'

const EVENTS = 'events.amazonaws.com'
/** What SQS asks of KMS for EventBridge's SendMessage: a data key to encrypt with (and to reuse it). */
export const EVENTS_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt']
const EVENTS_SID = 'KarpenterInterruptionEventBridge'
const CONTROLLER_SID = 'KarpenterInterruptionQueueDecrypt'
const INLINE_POLICY = 'KarpenterInterruptionQueueKey'

const CAVEATS = [
  'grants on the key (aws kms list-grants) are not read: a grant can allow what the key policy does not',
  'service control policies, resource control policies and session policies are not seen',
]

type QueueKey =
  | { kind: 'none' }
  | { kind: 'unknown' }
  | { kind: 'missing'; id: string }
  | { kind: 'key'; id: string; key: KmsKey }

/** The queue's SSE-KMS key as collected; an unreadable one pushes an unknown finding that says why. */
function queueKey(facts: Facts, queue: QueueFacts, findings: Finding[]): QueueKey {
  const id = queue.kmsMasterKeyId
  if (!id) return { kind: 'none' }
  if (!facts.kms) {
    findings.push({
      status: 'unknown',
      subject: queue.arn,
      message: `queue ${queue.name} is encrypted with KMS key ${id}, which was not collected (a snapshot saved before karpctl read it): run doctor against the cluster`,
    })
    return { kind: 'unknown' }
  }
  const key = readOr(facts.kms.keys[id], findings, id, `KMS key ${id} of queue ${queue.name}`)
  if (key === undefined) return { kind: 'unknown' }
  return key === null ? { kind: 'missing', id } : { kind: 'key', id, key }
}

const regionOf = (facts: Facts, arn: string) => arn.split(':')[3] || facts.meta.region
const accountOf = (arn: string) => arn.split(':')[4] ?? ''
const isDenied = (u: KeyUse) => u.decision === 'implicitDeny' || u.decision === 'explicitDeny'
const RANK: Record<KeyUse['decision'], number> = {
  explicitDeny: 3,
  implicitDeny: 2,
  uncertain: 1,
  allowed: 0,
}

/** The rules that deliver to the queue: a key policy may allow EventBridge for some rules only (aws:SourceArn). */
function ruleArns(facts: Facts, queue: QueueFacts): string[] {
  const rules = facts.events.rules
  return rules.ok ? rules.value.filter((r) => r.targetArns.includes(queue.arn)).map((r) => r.arn) : []
}

/** EventBridge's use of the key for each action: the worst answer over the rules that deliver to the queue. */
function eventsUse(facts: Facts, key: KmsKey, policy: PolicyDocument, queue: QueueFacts) {
  const account = facts.meta.accountId ?? accountOf(queue.arn)
  const base = { 'aws:SourceAccount': account, 'kms:EncryptionContext:aws:sqs:arn': queue.arn }
  const sources = ruleArns(facts, queue)
  const contexts = sources.length > 0 ? sources.map((arn) => ({ ...base, 'aws:SourceArn': arn })) : [base]
  return EVENTS_KEY_ACTIONS.map((action) => {
    const uses = contexts.map((context) =>
      serviceKeyUse(policy, { action, keyArn: key.arn, service: EVENTS, context }),
    )
    const worst = uses.reduce((a, b) => (RANK[b.decision] > RANK[a.decision] ? b : a))
    return { action, use: { ...worst, notes: [...new Set(uses.flatMap((u) => u.notes))] } }
  })
}

/** The controller's kms:Decrypt through SQS (ReceiveMessage of an SSE-KMS queue). */
function controllerUse(
  facts: Facts,
  key: KmsKey,
  policy: PolicyDocument,
  role: RoleFacts,
  queue: QueueFacts,
) {
  const account = accountOf(role.role.arn)
  return keyUse(policy, identityOf(role), {
    action: 'kms:Decrypt',
    keyArn: key.arn,
    principalArn: role.role.arn,
    principalAccount: account,
    context: {
      'kms:ViaService': `sqs.${regionOf(facts, key.arn)}.amazonaws.com`,
      'kms:CallerAccount': account,
      'aws:PrincipalAccount': account,
      'aws:PrincipalArn': role.role.arn,
      'kms:EncryptionContext:aws:sqs:arn': queue.arn,
    },
  })
}

const controllerRole = (facts: Facts): RoleFacts | null => {
  const name = facts.iam.controllerRoleName
  const read = name ? facts.iam.roles[name] : undefined
  return read?.ok ? read.value : null
}

/** IAM can grant the controller the key only when the key policy defers to its account (the same one). */
const iamRoute = (key: KmsKey, role: RoleFacts, use: KeyUse) =>
  use.iamEnabled && key.accountId === accountOf(role.role.arn)

function eventsStatement(facts: Facts, queue: QueueFacts): PolicyStatement {
  return {
    Sid: EVENTS_SID,
    Effect: 'Allow',
    Principal: { Service: EVENTS },
    Action: EVENTS_KEY_ACTIONS,
    Resource: '*',
    // Confused-deputy protection: only EventBridge rules of this account.
    Condition: { StringEquals: { 'aws:SourceAccount': facts.meta.accountId ?? accountOf(queue.arn) } },
  }
}

const viaSqs = (facts: Facts, key: KmsKey) => ({
  StringEquals: { 'kms:ViaService': `sqs.${regionOf(facts, key.arn)}.amazonaws.com` },
})

/**
 * The key policy with the statements EventBridge and the controller lack (where only the key policy
 * can grant them): put-key-policy replaces the whole policy, so the command carries every statement
 * it has. Computed from the facts alone, so both checks print the same command. Null when nothing is
 * to add or a Deny decides (an Allow cannot override it).
 */
function keyPolicyRepair(
  facts: Facts,
  queue: QueueFacts,
  key: KmsKey,
  policy: PolicyDocument,
): { fix: Fix; added: PolicyStatement[] } | null {
  const added: PolicyStatement[] = []
  const events = eventsUse(facts, key, policy, queue).map((r) => r.use)
  if (events.some((u) => u.decision === 'implicitDeny') && !events.some((u) => u.decision === 'explicitDeny'))
    added.push(eventsStatement(facts, queue))
  const role = controllerRole(facts)
  const controller = role ? controllerUse(facts, key, policy, role, queue) : null
  if (role && controller?.decision === 'implicitDeny' && !iamRoute(key, role, controller))
    added.push({
      Sid: CONTROLLER_SID,
      Effect: 'Allow',
      Principal: { AWS: role.role.arn },
      Action: 'kms:Decrypt',
      Resource: '*',
      Condition: viaSqs(facts, key),
    })
  if (added.length === 0) return null
  const sids = added.map((s) => s.Sid)
  const merged: PolicyDocument = {
    Version: policy.Version ?? '2012-10-17',
    ...(policy.Id ? { Id: policy.Id } : {}),
    Statement: [...policy.Statement.filter((s) => !sids.includes(s.Sid)), ...added],
  }
  const who = added.map((s) => (s.Sid === EVENTS_SID ? EVENTS : `controller role ${role?.role.name}`))
  return {
    added,
    fix: {
      summary: `add a statement for ${who.join(' and ')} to the key policy of ${key.arn} (shown below). aws kms put-key-policy replaces the whole policy: the command is the current policy with only that added (compare with aws kms get-key-policy --key-id ${key.arn} --policy-name default first; if a stack or another team owns the key, add the statement there instead)${key.accountId !== accountOf(queue.arn) ? `; the key is in account ${key.accountId}` : ''}`,
      commands: [
        `aws kms put-key-policy --key-id ${key.arn} --policy-name default --policy ${shellQuote(JSON.stringify(merged))} --region ${regionOf(facts, key.arn)}`,
      ],
      snippet: { language: 'json', text: JSON.stringify({ Statement: added }, null, 2) },
    },
  }
}

/** SSE-SQS, as the Karpenter getting-started queue is encrypted: EventBridge needs no key permission. */
function sseSqsFix(facts: Facts, queue: QueueFacts, why: string): Fix {
  const set = (attributes: Record<string, string>) =>
    `aws sqs set-queue-attributes --queue-url ${queue.url} --region ${facts.meta.region} --attributes ${shellQuote(JSON.stringify(attributes))}`
  return inStack(
    {
      summary: `${why}: switch queue ${queue.name} to SSE-SQS (what the Karpenter getting-started queue uses; no key policy involved) — drop the KMS key, then enable SQS managed encryption; or set KmsMasterKeyId to a customer managed key whose key policy allows ${EVENTS} ${EVENTS_KEY_ACTIONS.join(' and ')}`,
      commands: [set({ KmsMasterKeyId: '' }), set({ SqsManagedSseEnabled: 'true' })],
    },
    ownership(facts, queue.url),
    `queue ${queue.name}`,
  )
}

/** interruption-queue: may EventBridge put messages on the queue, as far as its KMS key decides? */
export function eventsKeyFindings(facts: Facts, queue: QueueFacts): Finding[] {
  const findings: Finding[] = []
  const found = queueKey(facts, queue, findings)
  if (found.kind === 'none' || found.kind === 'unknown') return findings
  const evidence = { queue: queue.arn, kmsMasterKeyId: queue.kmsMasterKeyId }
  if (found.kind === 'missing') {
    return [
      {
        status: 'fail',
        subject: queue.arn,
        message: `queue ${queue.name} is encrypted with KMS key ${found.id}, which does not exist: SQS rejects every message sent to it, so no interruption event arrives`,
        evidence,
        code: 'queue-key-missing',
        fix: sseSqsFix(facts, queue, `KMS key ${found.id} does not exist`),
      },
    ]
  }
  const key = found.key
  if (key.keyState !== 'Enabled') {
    return [
      {
        status: 'fail',
        subject: key.arn,
        message: `KMS key ${key.arn} of queue ${queue.name} is ${key.keyState}, not Enabled: SQS cannot encrypt with it and rejects every message sent to the queue`,
        evidence: { ...evidence, keyState: key.keyState },
        code: 'queue-key-disabled',
        ...(key.keyState === 'Disabled'
          ? {
              fix: {
                summary: 'enable the key',
                commands: [`aws kms enable-key --key-id ${key.arn} --region ${regionOf(facts, key.arn)}`],
              },
            }
          : {}),
      },
    ]
  }
  if (key.keyManager === 'AWS') {
    return [
      {
        status: 'fail',
        subject: key.arn,
        message: `queue ${queue.name} is encrypted with the AWS managed key ${found.id} (aws/sqs): its key policy cannot be changed and lets only principals of the account use it through SQS, never ${EVENTS}, so EventBridge cannot deliver any interruption event`,
        evidence: { ...evidence, key: key.arn, keyManager: 'AWS' },
        code: 'queue-key-aws-managed',
        fix: sseSqsFix(facts, queue, `EventBridge cannot use the AWS managed key aws/sqs`),
      },
    ]
  }
  const policy = readOr(key.policy, findings, key.arn, `key policy of ${key.arn} (queue ${queue.name})`)
  if (policy === undefined) return findings
  const results = eventsUse(facts, key, policy, queue)
  const notes = [...new Set(results.flatMap((r) => r.use.notes))]
  const caveats = [
    `judged for the requests SQS makes to KMS for EventBridge (aws:SourceAccount, aws:SourceArn of each rule that targets the queue, encryption context aws:sqs:arn); a condition on any other key is not judged`,
    ...CAVEATS,
    ...notes,
  ]
  const decisions = Object.fromEntries(
    results.map((r) => [r.action, { decision: r.use.decision, statements: r.use.matchedStatements }]),
  )
  const denied = results.filter((r) => isDenied(r.use))
  if (denied.length > 0) {
    const explicit = [
      ...new Set(denied.flatMap((r) => (r.use.decision === 'explicitDeny' ? r.use.matchedStatements : []))),
    ]
    const repair = keyPolicyRepair(facts, queue, key, policy)
    return [
      {
        status: 'fail',
        subject: key.arn,
        message: `the key policy of ${key.arn} (SSE-KMS key of queue ${queue.name}) does not let ${EVENTS} use it for ${denied.map((r) => r.action).join(', ')}${explicit.length > 0 ? ` (explicitly denied by ${explicit.join(', ')})` : ''}: EventBridge cannot put interruption events on the queue, so none arrive (the rules count FailedInvocations); IAM policies cannot grant a service principal, only the key policy can`,
        evidence: { ...evidence, key: key.arn, decisions },
        code: 'queue-key-events-denied',
        caveats,
        ...(repair && explicit.length === 0 ? { fix: repair.fix } : {}),
      },
    ]
  }
  if (results.some((r) => r.use.decision === 'uncertain')) {
    return [
      {
        status: 'unknown',
        subject: key.arn,
        message: `whether the key policy of ${key.arn} (queue ${queue.name}) lets ${EVENTS} use it hangs on statements karpctl cannot evaluate locally: ${notes.join('; ') || 'see evidence'}`,
        evidence: { ...evidence, key: key.arn, decisions },
        caveats,
      },
    ]
  }
  return [
    {
      status: 'pass',
      subject: key.arn,
      message: `the key policy of ${key.arn} (SSE-KMS key of queue ${queue.name}) lets ${EVENTS} use it for ${EVENTS_KEY_ACTIONS.join(', ')} (${[...new Set(results.flatMap((r) => r.use.matchedStatements))].join(', ')})`,
      evidence: { ...evidence, key: key.arn, decisions },
      caveats,
    },
  ]
}

/**
 * controller-policy: may the controller role decrypt the queue's messages? Only for a customer managed
 * key that exists and is enabled: interruption-queue reports the others (an AWS managed key's policy
 * lets every principal of the account use it through SQS).
 */
export function controllerKeyFindings(facts: Facts, role: RoleFacts): Finding[] {
  const queue = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  if (!queue) return []
  const findings: Finding[] = []
  const found = queueKey(facts, queue, findings)
  if (found.kind !== 'key') return findings
  const key = found.key
  if (key.keyManager === 'AWS' || key.keyState !== 'Enabled') return []
  const policy = readOr(key.policy, findings, key.arn, `key policy of ${key.arn} (queue ${queue.name})`)
  if (policy === undefined) return findings
  const use = controllerUse(facts, key, policy, role, queue)
  const roleName = role.role.name
  const caveats = [
    `judged for the request SQS makes to KMS when the controller receives (kms:ViaService sqs.${regionOf(facts, key.arn)}.amazonaws.com, kms:CallerAccount, encryption context aws:sqs:arn); a condition on any other key is not judged`,
    ...CAVEATS,
    ...use.notes,
  ]
  const evidence = {
    queue: queue.arn,
    key: key.arn,
    decision: use.decision,
    via: use.via ?? null,
    statements: use.matchedStatements,
    iamPoliciesCount: use.iamEnabled,
  }
  if (isDenied(use)) {
    const why =
      use.decision === 'explicitDeny'
        ? `explicitly denied by ${use.matchedStatements.join(', ')}`
        : use.iamEnabled
          ? 'the key policy defers to IAM, and no policy of the role allows it'
          : 'the key policy does not allow it and does not let IAM policies grant it'
    const fix =
      use.decision === 'explicitDeny' ? undefined : controllerFix(facts, queue, key, policy, role, use)
    return [
      {
        status: 'fail',
        subject: role.role.arn,
        message: `controller role ${roleName} may not use KMS key ${key.arn} of queue ${queue.name} for kms:Decrypt (${why}): every ReceiveMessage fails, so the controller handles no interruption`,
        evidence,
        code: 'queue-key-controller-denied',
        caveats,
        ...(fix ? { fix } : {}),
      },
    ]
  }
  if (use.decision === 'uncertain') {
    return [
      {
        status: 'unknown',
        subject: role.role.arn,
        message: `whether controller role ${roleName} may use KMS key ${key.arn} of queue ${queue.name} for kms:Decrypt hangs on what karpctl cannot judge locally: ${use.notes.join('; ') || 'see evidence'}`,
        evidence,
        caveats,
      },
    ]
  }
  return [
    {
      status: 'pass',
      subject: role.role.arn,
      message: `${roleName} may use KMS key ${key.arn} of queue ${queue.name} for kms:Decrypt, allowed by ${use.via === 'iam' ? 'its IAM policies (the key policy defers to IAM)' : 'the key policy'}`,
      evidence,
      caveats,
    },
  ]
}

/**
 * Where the key policy defers to the account, an inline policy on the role (the key policy stays as
 * it is); else the statement in the key policy. Not a grant (aws kms create-grant): a grant shows in no
 * policy, so neither reviewers nor this check would see why the controller may decrypt.
 */
function controllerFix(
  facts: Facts,
  queue: QueueFacts,
  key: KmsKey,
  policy: PolicyDocument,
  role: RoleFacts,
  use: KeyUse,
): Fix | undefined {
  const name = role.role.name
  if (iamRoute(key, role, use)) {
    const doc = {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: CONTROLLER_SID,
          Effect: 'Allow',
          Action: 'kms:Decrypt',
          Resource: key.arn,
          Condition: viaSqs(facts, key),
        },
      ],
    }
    return inStack(
      {
        summary: `the key policy lets IAM policies of the account grant use of the key: allow ${name} kms:Decrypt on it through SQS (an inline policy; the key policy is left as it is)`,
        commands: [
          `aws iam put-role-policy --role-name ${name} --policy-name ${INLINE_POLICY} --policy-document ${shellQuote(JSON.stringify(doc))}`,
        ],
      },
      ownership(facts, name, role.role.tags),
      `controller role ${name}`,
    )
  }
  return keyPolicyRepair(facts, queue, key, policy)?.fix
}
