// The interruption queue and its EventBridge rules as the getting-started template builds them:
// what install creates and what doctor's checks compare against.
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { INTERRUPTION_RULES } from './controller-policy.js'
import { shortenName } from './names.js'

/** The services the getting-started queue policy lets send to the interruption queue. */
export const QUEUE_SENDERS = ['events.amazonaws.com', 'sqs.amazonaws.com']

/** SQS attributes of the template's queue (SQS takes every attribute as a string). */
export const QUEUE_ATTRIBUTES = { MessageRetentionPeriod: '300', SqsManagedSseEnabled: 'true' } as const

/** The queue policy of the getting-started template: EventBridge and SQS may send; plain HTTP is denied. */
export function referenceQueueStatements(queueArn: string): PolicyStatement[] {
  return [
    {
      Effect: 'Allow',
      Principal: { Service: [...QUEUE_SENDERS] },
      Action: 'sqs:SendMessage',
      Resource: queueArn,
    },
    {
      Sid: 'DenyHTTP',
      Effect: 'Deny',
      Action: 'sqs:*',
      Resource: queueArn,
      Condition: { Bool: { 'aws:SecureTransport': false } },
      Principal: '*',
    },
  ]
}

export function queuePolicy(queueArn: string): PolicyDocument {
  return { Version: '2012-10-17', Id: 'EC2InterruptionPolicy', Statement: referenceQueueStatements(queueArn) }
}

/**
 * A queue's policy with the reference statements it lacks added: its own statements are kept (a queue
 * may serve others), the send grant is added, and DenyHTTP only when the policy has none of that Sid.
 */
export function withReferenceStatements(policy: PolicyDocument | null, queueArn: string): PolicyDocument {
  const existing = policy?.Statement ?? []
  const [send, denyHttp] = referenceQueueStatements(queueArn) as [PolicyStatement, PolicyStatement]
  const Statement = [...existing, send, ...(existing.some((s) => s.Sid === 'DenyHTTP') ? [] : [denyHttp])]
  // A policy that exists keeps its own header (no Id added), so taking the statements out gives it back.
  if (policy) return { ...policy, Statement }
  return { Version: '2012-10-17', Id: 'EC2InterruptionPolicy', Statement }
}

export const RULE_TARGET_ID = 'KarpenterInterruptionQueueTarget'

export interface RuleSpec {
  key: string
  name: string
  eventPattern: { source: string[]; 'detail-type': string[] }
}

/** The five rules, named `Karpenter-<cluster>-<key>` (shortened within EventBridge's 64 characters). */
export function interruptionRules(clusterName: string): RuleSpec[] {
  return INTERRUPTION_RULES.map((r) => ({
    key: r.key,
    name: shortenName(`Karpenter-${clusterName}-${r.key.replace(/Rule$/, '')}`, 64),
    eventPattern: { source: [r.source], 'detail-type': [r.detailType] },
  }))
}
