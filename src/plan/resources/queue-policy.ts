// The policy of an interruption queue karpctl may not own: the reference statements it lacks are added
// to its own (kept) statements, and the queue is tagged with that fact, in a call made before the
// policy changes, so a run killed in between never leaves an unrecorded change.
import type * as sqs from '@aws-sdk/client-sqs'
import { allowsService } from '../../checks/lib/policy.js'
import { queue } from '../../facts/collect-interruption.js'
import type { QueueFacts } from '../../facts/types.js'
import { QUEUE_SENDERS, withReferenceStatements } from '../../spec/interruption.js'
import type { Resource } from '../types.js'

export const ADDED_POLICY = 'karpctl.io/added-policy-statements'

const sends = (q: QueueFacts) =>
  QUEUE_SENDERS.every((svc) => allowsService(q.policy, svc, 'sqs:SendMessage', q.arn))

export function queuePolicyStatements(w: {
  queueName: string
  queueArn: string
  group: string
}): Resource<QueueFacts> {
  return {
    address: 'sqs-queue-policy.interruption',
    kind: 'SQS queue policy',
    name: w.queueName,
    group: w.group,
    dependsOn: [],
    desired: { senders: QUEUE_SENDERS },
    permissions: ['SetQueueAttributes', 'TagQueue'].map((a) => ({
      action: `sqs:${a}`,
      resource: w.queueArn,
    })),
    observe: ({ aws }) => queue(aws, w.queueName),
    verdict(cur) {
      if (!cur) return { action: 'update', changes: [], blocked: `queue ${w.queueName} does not exist` }
      return sends(cur)
        ? { action: 'unchanged', changes: [] }
        : {
            action: 'update',
            changes: [
              {
                field: 'Policy',
                from: cur.policy ? 'as found' : '(none)',
                to: `${QUEUE_SENDERS.join(' + ')} may send`,
              },
            ],
            note: `its statements are kept; recorded as the ${ADDED_POLICY} tag`,
          }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      await aws.write('sqs', 'TagQueue', { QueueUrl: cur.url, Tags: { [ADDED_POLICY]: 'send,DenyHTTP' } })
      await aws.write('sqs', 'SetQueueAttributes', {
        QueueUrl: cur.url,
        Attributes: { Policy: JSON.stringify(withReferenceStatements(cur.policy, cur.arn)) },
      } satisfies sqs.SetQueueAttributesCommandInput)
    },
  }
}
