// The interruption queue as the chart configures it and as the getting-started template builds it;
// shared by interruption-queue, interruption-rules and controller-policy. The setting is derived in
// one place (interruptionQueueOf, also used by the collector), so every check judges the same queue.
import { interruptionQueueOf, type InterruptionQueueRef } from '../../facts/collect-interruption.js'
import type { Facts, HelmRelease } from '../../facts/types.js'
import { partitionOf } from './facts.js'
import { optional } from './parts.js'

export { QUEUE_SENDERS, referenceQueueStatements } from '../../desired/interruption.js'
export type { InterruptionQueueRef } from '../../facts/collect-interruption.js'

/** The queue the install names (settings.interruptionQueue, the v0.x key, or INTERRUPTION_QUEUE); null when none. */
export function interruptionQueue(facts: Facts, release: HelmRelease): InterruptionQueueRef | null {
  return interruptionQueueOf(release, optional(facts.kube.deployment) ?? null, {
    partition: partitionOf(facts),
    region: facts.meta.region,
    accountId: facts.meta.accountId,
  })
}

/**
 * The ARN of the queue meant: as SQS described it when it was read, else as the setting names it;
 * undefined when the setting names no queue at all (interruption-queue reports that).
 */
export function interruptionQueueArn(facts: Facts, ref: InterruptionQueueRef): string | undefined {
  const read = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  return (ref.name && read?.name === ref.name && read.arn) || ref.arn
}

export const queueArnFor = (facts: Facts, name: string) =>
  `arn:${partitionOf(facts)}:sqs:${facts.meta.region}:${facts.meta.accountId ?? '<account-id>'}:${name}`
