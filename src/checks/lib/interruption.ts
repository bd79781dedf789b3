// The interruption queue as the chart configures it and as the getting-started template builds it;
// shared by interruption-queue, interruption-rules and controller-policy.
import type { Facts, HelmRelease } from '../../facts/types.js'
import { partitionOf, setting } from './facts.js'

export { QUEUE_SENDERS, referenceQueueStatements } from '../../spec/interruption.js'

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
