// The interruption queue teardown removes, or gives back as it was when karpctl adopted it.
import type * as sqs from '@aws-sdk/client-sqs'
import { stackKeptNote } from '../../facts/collect-owners.js'
import { parsePolicyDocument } from '../../facts/policy-document.js'
import type { PolicyDocument } from '../../policy/types.js'
import { ADOPTED_BY, REPAIRED_STATEMENTS } from '../../desired/ownership.js'
import { isOwned } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { Resource } from '../types.js'
import { orNull, ownedVerdict, ownerHint, removedTags } from './absent.js'
import { ADDED_POLICY, withoutAddedStatements } from './queue-policy.js'

interface QueueState {
  /** The owning stack's note, when CloudFormation says one owns it. */
  owner?: string
  url: string
  arn: string
  tags: Record<string, string>
  policy: PolicyDocument | null
}

/** karpctl's queue is deleted; an adopted one gets back its policy as found and loses karpctl's records. */
export function queueAbsent(w: {
  name: string
  ownership: Record<string, string>
  dependsOn: string[]
  keptNote?: string
  /** The install doctor --fix repaired goes too: the statements its repair recorded go as well. */
  repairs?: boolean
}): Resource<QueueState> {
  const statementKeys = [ADDED_POLICY, ...(w.repairs ? [REPAIRED_STATEMENTS] : [])]
  const added = (cur: QueueState) =>
    statementKeys.flatMap((k) => (cur.tags[k] ?? '').split(',').filter(Boolean))
  const restored = (cur: QueueState) => withoutAddedStatements(cur.policy, cur.arn, added(cur))
  const records = (cur: QueueState) => [ADOPTED_BY, ...statementKeys].filter((k) => cur.tags[k] !== undefined)
  return {
    address: 'sqs-queue.interruption',
    kind: 'SQS queue',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const q = await orNull(
        aws.call<sqs.GetQueueUrlCommandOutput>('sqs', 'GetQueueUrl', { QueueName: w.name }),
      )
      if (!q?.QueueUrl) return null
      const t = await aws.call<sqs.ListQueueTagsCommandOutput>('sqs', 'ListQueueTags', {
        QueueUrl: q.QueueUrl,
      })
      const tags = t.Tags ?? {}
      const owner = isOwned(tags, w.ownership) ? undefined : await stackKeptNote(aws, q.QueueUrl)
      // The policy matters only where karpctl recorded adding to it.
      if (statementKeys.every((k) => tags[k] === undefined))
        return { owner, url: q.QueueUrl, arn: '', tags, policy: null }
      const a = await aws.call<sqs.GetQueueAttributesCommandOutput>('sqs', 'GetQueueAttributes', {
        QueueUrl: q.QueueUrl,
        AttributeNames: ['QueueArn', 'Policy'],
      })
      return {
        owner,
        url: q.QueueUrl,
        arn: a.Attributes?.QueueArn ?? '',
        tags,
        policy: a.Attributes?.Policy ? parsePolicyDocument(a.Attributes.Policy) : null,
      }
    },
    verdict(cur) {
      if (!cur || isOwned(cur.tags, w.ownership)) return ownedVerdict(cur, w.ownership)
      const kept = w.keptNote ?? cur.owner ?? ownerHint(cur.tags)
      const keys = records(cur)
      if (!keys.length) return { action: 'unchanged', changes: [], note: kept }
      return {
        action: 'update',
        changes: [
          ...(restored(cur) ? leafChanges(cur.policy ?? undefined, restored(cur), 'Policy') : []),
          ...removedTags(cur.tags, keys),
        ],
        note: `${kept}; karpctl's recorded changes given back`,
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (isOwned(cur.tags, w.ownership)) {
        await orNull(aws.write('sqs', 'DeleteQueue', { QueueUrl: cur.url }))
        return
      }
      const policy = restored(cur)
      if (policy)
        await aws.write('sqs', 'SetQueueAttributes', {
          QueueUrl: cur.url,
          Attributes: { Policy: JSON.stringify(policy) },
        })
      const keys = records(cur)
      if (keys.length) await aws.write('sqs', 'UntagQueue', { QueueUrl: cur.url, TagKeys: keys })
    },
  }
}
