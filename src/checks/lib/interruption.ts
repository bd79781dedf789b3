// The interruption queue as the chart configures it and as the getting-started template builds it;
// shared by interruption-queue, interruption-rules and controller-policy.
import type { Facts, HelmRelease, PolicyStatement } from '../../facts/types.js'
import { partitionOf, setting } from './facts.js'

/** The services the getting-started queue policy lets send to the interruption queue. */
export const QUEUE_SENDERS = ['events.amazonaws.com', 'sqs.amazonaws.com']

/** settings.interruptionQueue, or the controller's INTERRUPTION_QUEUE when set outside the chart values. */
export function interruptionQueueSetting(facts: Facts, release: HelmRelease): string | undefined {
  const value = setting(release, 'interruptionQueue')
  if (typeof value === 'string' && value.trim() !== '') return value.trim()
  const deployment = facts.kube.deployment.ok ? facts.kube.deployment.value : null
  const env = deployment?.env.INTERRUPTION_QUEUE
  return env && env.trim() !== '' ? env.trim() : undefined
}

export const queueArnFor = (facts: Facts, name: string) =>
  `arn:${partitionOf(facts)}:sqs:${facts.meta.region}:${facts.meta.accountId ?? '<account-id>'}:${name}`

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
