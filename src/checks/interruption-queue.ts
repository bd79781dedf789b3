import type { Facts, HelmRelease, QueueFacts } from '../facts/types.js'
import { KARPENTER_CHART } from './lib/compat.js'
import { allowsCapacityType } from './lib/capacity.js'
import { isRendered, need, needRelease, shellQuote } from './lib/facts.js'
import { inStack, ownership } from './lib/owners.js'
import { setEnvCommand, setSettingCommand, withRenderedNote } from './lib/install.js'
import {
  interruptionQueue as queueSetting,
  QUEUE_SENDERS,
  queueArnFor,
  type InterruptionQueueRef,
} from './lib/interruption.js'
import { actionMatch, allowsService, coversResource, roleStatements } from './lib/policy.js'
import { eventsKeyFindings } from './lib/queue-key.js'
import { QUEUE_ATTRIBUTES, queuePolicy, withReferenceStatements } from '../desired/interruption.js'
import type { Check, Finding, Fix } from './types.js'

function helmSetFix(facts: Facts, release: HelmRelease, name: string): string {
  // No Helm release (Argo CD, Flux, manifests): the chart rendered the setting into the environment.
  if (isRendered(release)) return setSettingCommand(facts, release, 'settings.interruptionQueue', name)
  return `helm upgrade ${release.name} ${KARPENTER_CHART} --version ${release.chartVersion} --namespace ${release.namespace} --reuse-values --set settings.interruptionQueue=${shellQuote(name)}`
}

/** Sets the queue where the install set it: the chart values, or the controller's environment. */
function setQueueCommand(facts: Facts, release: HelmRelease, ref: InterruptionQueueRef, name: string) {
  if (ref.source === 'INTERRUPTION_QUEUE')
    return setEnvCommand(facts, release.namespace, 'INTERRUPTION_QUEUE', name)
  return helmSetFix(facts, release, name)
}

const FORM_TEXT: Record<Exclude<InterruptionQueueRef['form'], 'name'>, string> = {
  url: 'a queue URL',
  arn: 'a queue ARN',
  invalid: 'not a valid SQS queue name',
}

function createQueueCommands(facts: Facts, name: string): string[] {
  const { region } = facts.meta
  const attributes = { ...QUEUE_ATTRIBUTES, Policy: JSON.stringify(queuePolicy(queueArnFor(facts, name))) }
  return [
    `aws sqs create-queue --queue-name ${shellQuote(name)} --region ${region} --attributes ${shellQuote(
      JSON.stringify(attributes),
    )}`,
  ]
}

/**
 * No queue where no NodePool may launch spot: nothing is lost that a default install promises. eksctl's
 * `karpenter:` block makes no queue unless `withSpotInterruptionQueue` (default false), and the Helm
 * chart's default is none; the two-minute spot notice is what the queue is for (Karpenter's
 * interruption docs). Unreadable NodePools: not proven, the warning stands.
 */
function offWithoutSpot(facts: Facts): Finding | undefined {
  const pools = facts.kube.nodePools
  if (!pools.ok || pools.value.some((p) => allowsCapacityType(p, 'spot'))) return undefined
  return {
    status: 'pass',
    subject: 'settings.interruptionQueue',
    message: `settings.interruptionQueue is not set: interruption handling is off; no NodePool allows spot, so no spot interruption goes unhandled (scheduled maintenance and rebalance events are not acted on)`,
  }
}

export const interruptionQueue: Check = {
  meta: {
    id: 'interruption-queue',
    title: 'The interruption queue is named correctly, exists and accepts EventBridge messages',
    category: 'interruption',
    severity: 'error',
    docs: 'settings.interruptionQueue must be the SQS queue NAME (not a URL or ARN) of an existing queue whose policy lets events.amazonaws.com and sqs.amazonaws.com send messages and, when it is encrypted with a KMS key (SSE-KMS), whose key policy lets events.amazonaws.com use the key (kms:GenerateDataKey, kms:Decrypt; the AWS managed aws/sqs key never does); without it Karpenter does not react to spot interruptions, rebalance recommendations or scheduled events.',
  },
  run(facts) {
    const release = needRelease(facts)
    return withRenderedNote(release, judgeQueue(facts, release))
  },
}

function judgeQueue(facts: Facts, release: HelmRelease): Finding[] {
  const ref = queueSetting(facts, release)
  const cluster = facts.meta.clusterName
  if (!ref) {
    const off = offWithoutSpot(facts)
    if (off) return [off]
    return [
      {
        status: 'warn',
        subject: 'settings.interruptionQueue',
        message: `settings.interruptionQueue is not set: Karpenter does not handle spot interruptions, rebalance recommendations or scheduled maintenance`,
        fix: {
          summary: `create a queue (and the EventBridge rules, see interruption-rules) and tell Karpenter its name`,
          commands: [...createQueueCommands(facts, cluster), helmSetFix(facts, release, cluster)],
        },
      },
    ]
  }
  if (ref.form !== 'name') return malformed(facts, release, ref)
  const name = ref.value
  const queue = need(facts.sqs.queue)
  if (!queue) {
    const meant = queueMeant(facts, release, ref, name)
    if (meant) return [meant]
    return [
      {
        status: 'fail',
        subject: name,
        message: `interruption queue ${name} does not exist in ${facts.meta.region}: the controller logs errors and handles no interruptions`,
        evidence: { interruptionQueue: name, region: facts.meta.region },
        code: 'queue-missing',
        fix: {
          summary: `create queue ${name} with the reference policy`,
          commands: createQueueCommands(facts, name),
        },
      },
    ]
  }
  return [
    {
      status: 'pass',
      subject: queue.arn,
      message: `interruption queue ${queue.name} exists`,
      evidence: { url: queue.url },
    },
    policyFinding(facts, queue),
    ...eventsKeyFindings(facts, queue),
  ]
}

/**
 * The named queue does not exist, but the cluster's interruption rules deliver to a queue that exists
 * and that the controller may receive from (terraform-aws-eks's `Karpenter-<cluster>` under the
 * getting-started setting `<cluster>`): that is the queue meant. The fix names it in the setting; it
 * never builds a second queue and rule set beside it. Several such queues: named, left to the user.
 */
function queueMeant(
  facts: Facts,
  release: HelmRelease,
  ref: InterruptionQueueRef,
  name: string,
): Finding | null {
  const found = Object.values(facts.sqs.deliveredTo ?? {}).flatMap((r) => (r.ok && r.value ? [r.value] : []))
  const role = facts.iam.controllerRoleName ? facts.iam.roles[facts.iam.controllerRoleName] : undefined
  const roleFacts = role?.ok ? role.value : null
  if (found.length === 0 || !roleFacts || !roleFacts.attached.ok || !roleFacts.inline.ok) return null
  const statements = roleStatements(roleFacts.attached.value, roleFacts.inline.value)
  const accountId = facts.meta.accountId ?? roleFacts.role.arn.split(':')[4]
  const mayReceive = (q: QueueFacts) =>
    statements.some(
      (s) =>
        s.statement.Effect === 'Allow' &&
        actionMatch(s.statement, 'sqs:ReceiveMessage') &&
        coversResource(s.statement, q.arn, accountId),
    ) &&
    !statements.some(
      (s) =>
        s.statement.Effect === 'Deny' &&
        actionMatch(s.statement, 'sqs:ReceiveMessage') &&
        coversResource(s.statement, q.arn, accountId),
    )
  const readable = found.filter(mayReceive)
  if (readable.length === 0) return null
  const region = facts.meta.region
  const base = `interruption queue ${name} does not exist in ${region}`
  if (readable.length > 1)
    return {
      status: 'fail',
      subject: name,
      message: `${base}; the interruption rules deliver to ${readable.map((q) => q.name).join(' and ')}, which the controller may read: set ${ref.source} to the one meant`,
      code: 'queue-ambiguous',
      evidence: { interruptionQueue: name, source: ref.source, candidates: readable.map((q) => q.arn) },
      fix: {
        summary: `set ${ref.source} to one of ${readable.map((q) => q.name).join(', ')} (not created: one of them is the queue meant)`,
        commands: [],
      },
    }
  const q = readable[0]!
  return {
    status: 'fail',
    subject: name,
    message: `${base}, but the interruption rules deliver to queue ${q.name} (${q.arn}), which the controller may read: ${ref.source} should name it`,
    code: 'queue-misnamed',
    evidence: { interruptionQueue: name, source: ref.source, queueName: q.name, queueArn: q.arn },
    fix: {
      summary: `set ${ref.source} to ${q.name} (the existing queue; no second queue or rule set is made)`,
      commands: [setQueueCommand(facts, release, ref, q.name)],
    },
  }
}

/**
 * A URL or ARN where Karpenter wants a name: one failing finding, whose fix sets the name meant (and
 * creates that queue when it does not exist). The queue meant is still judged (its policy), so the
 * fix is the only thing between the user and working interruption handling.
 */
function malformed(facts: Facts, release: HelmRelease, ref: InterruptionQueueRef): Finding[] {
  const what = FORM_TEXT[ref.form as Exclude<InterruptionQueueRef['form'], 'name'>]
  const where = ref.source === 'INTERRUPTION_QUEUE' ? 'INTERRUPTION_QUEUE of the controller' : ref.source
  const queue = ref.name && !ref.elsewhere && facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const evidence = { value: ref.value, source: ref.source, form: ref.form, queueName: ref.name ?? null }
  if (!ref.name) {
    return [
      {
        status: 'fail',
        subject: ref.source,
        message: `${where} is ${what} (${ref.value}): Karpenter expects the name of an SQS queue (letters, digits, - and _, up to 80 characters) and handles no interruptions`,
        evidence,
        fix: {
          summary: 'set the name of the interruption queue',
          commands: [setQueueCommand(facts, release, ref, '<queue-name>')],
        },
      },
    ]
  }
  const name = ref.name
  if (ref.elsewhere) return [foreignQueue(facts, release, ref, where, what, name, evidence)]
  const missing = facts.sqs.queue.ok && !queue
  const findings: Finding[] = [
    {
      status: 'fail',
      subject: ref.source,
      message: `${where} is ${what} (${ref.value}); Karpenter expects the queue name, e.g. ${name}${missing ? ` (no queue ${name} exists in ${facts.meta.region} either)` : ''}`,
      evidence,
      code: missing ? 'queue-reference-and-missing' : 'queue-reference',
      fix: {
        summary: missing ? `create queue ${name} and set its name` : 'set the queue name instead',
        commands: [
          ...(missing ? createQueueCommands(facts, name) : []),
          setQueueCommand(facts, release, ref, name),
        ],
      },
    },
  ]
  if (queue) findings.push(policyFinding(facts, queue), ...eventsKeyFindings(facts, queue))
  return findings
}

/**
 * The setting names a queue of another region or account. Karpenter reads the queue of the name in its
 * own region and account, so its name alone would point at another queue (or none): a queue is needed
 * here. Not repaired by --fix (evidence.elsewhere): which queue to keep is the owner's call.
 */
function foreignQueue(
  facts: Facts,
  release: HelmRelease,
  ref: InterruptionQueueRef,
  where: string,
  what: string,
  name: string,
  evidence: Record<string, unknown>,
): Finding {
  const [, , , region, account] = (ref.arn ?? '').split(':')
  const home = `${facts.meta.region}${facts.meta.accountId ? ` of account ${facts.meta.accountId}` : ''}`
  return {
    status: 'fail',
    subject: ref.source,
    message: `${where} is ${what} (${ref.value}) of a queue in ${region}${account && account !== facts.meta.accountId ? ` of account ${account}` : ''}; Karpenter takes a queue name and reads that queue in ${home}, so the controller does not receive that queue's messages`,
    evidence: { ...evidence, elsewhere: true },
    fix: {
      summary: `create queue ${name} in ${facts.meta.region} (as karpctl install makes it) and set its name`,
      commands: [...createQueueCommands(facts, name), setQueueCommand(facts, release, ref, name)],
    },
  }
}

function policyFinding(facts: Facts, queue: QueueFacts): Finding {
  const missing = QUEUE_SENDERS.filter(
    (svc) => !allowsService(queue.policy, svc, 'sqs:SendMessage', queue.arn),
  )
  if (missing.length === 0) {
    return {
      status: 'pass',
      subject: queue.arn,
      message: `policy of ${queue.name} lets ${QUEUE_SENDERS.join(' and ')} send`,
    }
  }
  return {
    status: 'fail',
    subject: queue.arn,
    message: `policy of queue ${queue.name} does not let ${missing.join(' and ')} send messages: interruption events never arrive`,
    evidence: { missing, policy: queue.policy },
    // The getting-started queue's policy is the stack's KarpenterInterruptionQueuePolicy.
    fix: inStack(policyFix(facts, queue), ownership(facts, queue.url), `queue ${queue.name}`),
  }
}

/** Keeps the queue's other statements and adds the reference ones that are missing. */
function policyFix(facts: Facts, queue: QueueFacts): Fix {
  const doc = withReferenceStatements(queue.policy, queue.arn)
  return {
    summary: `let EventBridge and SQS send to ${queue.name} (the queue's other statements are kept)`,
    commands: [
      `aws sqs set-queue-attributes --queue-url ${queue.url} --region ${facts.meta.region} --attributes ${shellQuote(JSON.stringify({ Policy: JSON.stringify(doc) }))}`,
    ],
  }
}
