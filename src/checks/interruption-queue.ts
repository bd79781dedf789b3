import type { Facts, HelmRelease, PolicyDocument, PolicyStatement, QueueFacts } from '../facts/types.js'
import { KARPENTER_CHART } from './lib/compat.js'
import { need, needRelease, shellQuote } from './lib/facts.js'
import {
  interruptionQueueSetting,
  QUEUE_SENDERS,
  queueArnFor,
  referenceQueueStatements,
} from './lib/interruption.js'
import { allowsService } from './lib/policy.js'
import { QUEUE_ATTRIBUTES, queuePolicy } from '../spec/interruption.js'
import type { Check, Finding, Fix } from './types.js'

function helmSetFix(release: HelmRelease, name: string): string {
  return `helm upgrade ${release.name} ${KARPENTER_CHART} --version ${release.chartVersion} --namespace ${release.namespace} --reuse-values --set settings.interruptionQueue=${shellQuote(name)}`
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

export const interruptionQueue: Check = {
  meta: {
    id: 'interruption-queue',
    title: 'The interruption queue is named correctly, exists and accepts EventBridge messages',
    category: 'interruption',
    severity: 'error',
    docs: 'settings.interruptionQueue must be the SQS queue NAME (not a URL or ARN) of an existing queue whose policy lets events.amazonaws.com and sqs.amazonaws.com send messages; without it Karpenter does not react to spot interruptions, rebalance recommendations or scheduled events.',
  },
  run(facts) {
    const release = needRelease(facts)
    const name = interruptionQueueSetting(facts, release)
    const cluster = facts.meta.clusterName
    if (!name) {
      return [
        {
          status: 'warn',
          subject: 'settings.interruptionQueue',
          message: `settings.interruptionQueue is not set: Karpenter does not handle spot interruptions, rebalance recommendations or scheduled maintenance`,
          fix: {
            summary: `create a queue (and the EventBridge rules, see interruption-rules) and tell Karpenter its name`,
            commands: [...createQueueCommands(facts, cluster), helmSetFix(release, cluster)],
          },
        },
      ]
    }
    const malformed = notAName(name)
    if (malformed) {
      return [
        {
          status: 'fail',
          subject: 'settings.interruptionQueue',
          message: `settings.interruptionQueue is ${malformed} (${name}); Karpenter expects the queue name, e.g. ${queueNameOf(name)}`,
          evidence: { value: name },
          fix: {
            summary: 'set the queue name instead',
            commands: [helmSetFix(release, queueNameOf(name))],
          },
        },
      ]
    }
    const queue = need(facts.sqs.queue)
    if (!queue) {
      return [
        {
          status: 'fail',
          subject: name,
          message: `interruption queue ${name} does not exist in ${facts.meta.region}: the controller logs errors and handles no interruptions`,
          evidence: { interruptionQueue: name, region: facts.meta.region },
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
    ]
  },
}

/** What a URL or ARN was given as, or null for a plain name. */
function notAName(value: string): string | null {
  if (/^https?:\/\//i.test(value)) return 'a queue URL'
  if (value.startsWith('arn:')) return 'a queue ARN'
  return null
}

const queueNameOf = (value: string) => value.split(/[/:]/).filter(Boolean).pop() ?? value

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
    fix: policyFix(facts, queue),
  }
}

/** Keeps the queue's other statements and adds the reference ones that are missing. */
function policyFix(facts: Facts, queue: QueueFacts): Fix {
  const existing = queue.policy?.Statement ?? []
  const reference = referenceQueueStatements(queue.arn)
  const hasDenyHttp = existing.some((s) => s.Sid === 'DenyHTTP')
  const doc: PolicyDocument = {
    Version: '2012-10-17',
    Id: queue.policy?.Id ?? 'EC2InterruptionPolicy',
    Statement: [...existing, reference[0] as PolicyStatement, ...(hasDenyHttp ? [] : reference.slice(1))],
  }
  return {
    summary: `let EventBridge and SQS send to ${queue.name} (the queue's other statements are kept)`,
    commands: [
      `aws sqs set-queue-attributes --queue-url ${queue.url} --region ${facts.meta.region} --attributes ${shellQuote(JSON.stringify({ Policy: JSON.stringify(doc) }))}`,
    ],
  }
}
