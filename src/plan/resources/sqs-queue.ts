// The interruption queue: the template's attributes and policy, karpctl's tags. A queue another tool
// made is used as it is on --adopt (queue-policy.ts adds only what it lacks, recorded), never marked karpctl's.
import type * as sqs from '@aws-sdk/client-sqs'
import { queue } from '../../facts/collect-interruption.js'
import type { QueueFacts } from '../../facts/types.js'
import type { PolicyDocument } from '../../policy/types.js'
import { isOwned, missingTags, sameDocument } from '../compare.js'
import { leafChanges, tagChanges } from '../diff.js'
import { ADOPTED_BY, OWNERSHIP, ownershipOf } from '../../desired/ownership.js'
import { notCreatedVerdict } from './not-created.js'
import type { FieldChange, Resource } from '../types.js'
import { adoptedQueueChanges, applyAdoptedQueue } from './queue-policy.js'

export interface QueueState {
  queue: QueueFacts
  tags: Record<string, string>
}

export function sqsQueue(w: {
  name: string
  arn: string
  attributes: Record<string, string>
  policy: PolicyDocument
  tags: Record<string, string>
  ownership: Record<string, string>
  adopt: boolean
}): Resource<QueueState> {
  const changesOf = (cur: QueueState | null): FieldChange[] => {
    const c: FieldChange[] = []
    const q = cur?.queue
    if (q?.messageRetentionSeconds !== Number(w.attributes.MessageRetentionPeriod))
      c.push({
        field: 'MessageRetentionPeriod',
        from: q?.messageRetentionSeconds,
        to: w.attributes.MessageRetentionPeriod,
      })
    if (!q?.sseEnabled) c.push({ field: 'SqsManagedSseEnabled', from: q ? 'false' : undefined, to: 'true' })
    // A new queue's policy is said in words (--show-policies prints it); an existing one's, value by value.
    if (!q) c.push({ field: 'Policy', to: 'EventBridge + SQS may send; DenyHTTP' })
    else if (!q.policy || !sameDocument(q.policy, w.policy))
      c.push(...leafChanges(q.policy ?? undefined, w.policy, 'Policy'))
    if (cur) c.push(...tagChanges(cur.tags, w.tags))
    return c
  }
  const cluster = w.ownership[OWNERSHIP.cluster] ?? ''
  const stateOf = (cur: QueueState) =>
    isOwned(cur.tags, w.ownership) ? 'created' : ownershipOf(cur.tags, cluster)
  const attributes = () => ({ ...w.attributes, Policy: JSON.stringify(w.policy) })
  return {
    address: 'sqs-queue.interruption',
    kind: 'SQS queue',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: [],
    desired: { name: w.name, attributes: w.attributes, tags: w.tags },
    documents: { policy: w.policy },
    permissions: ['CreateQueue', 'SetQueueAttributes', 'TagQueue'].map((a) => ({
      action: `sqs:${a}`,
      resource: w.arn,
    })),
    async observe({ aws }) {
      const q = await queue(aws, w.name)
      if (!q) return null
      const t = await aws.call<sqs.ListQueueTagsCommandOutput>('sqs', 'ListQueueTags', { QueueUrl: q.url })
      return { queue: q, tags: t.Tags ?? {} }
    },
    verdict(cur) {
      const state = cur ? stateOf(cur) : null
      if (cur && state && state !== 'created')
        return notCreatedVerdict({
          state,
          changes: adoptedQueueChanges(cur, cluster),
          adopt: w.adopt,
          notOurs: `exists and was not made by karpctl (another tool's interruption queue?): remove it with the tool that made it, or pass --adopt to use it as it is (karpctl then only adds the send statements it lacks, recorded)`,
          adoptedNote: `adopted (not karpctl's): its attributes stay its owner's; recorded as ${ADOPTED_BY}, teardown keeps it`,
        })
      const changes = changesOf(cur)
      return { action: !cur ? 'create' : changes.length ? 'update' : 'unchanged', changes }
    },
    async apply({ aws }, cur) {
      if (!cur) {
        await aws.write('sqs', 'CreateQueue', { QueueName: w.name, Attributes: attributes(), tags: w.tags })
        return
      }
      if (stateOf(cur) !== 'created') return applyAdoptedQueue(aws, cur, cluster)
      await aws.write('sqs', 'SetQueueAttributes', { QueueUrl: cur.queue.url, Attributes: attributes() })
      if (missingTags(cur.tags, w.tags).length)
        await aws.write('sqs', 'TagQueue', { QueueUrl: cur.queue.url, Tags: w.tags })
    },
  }
}
