// The policy of an interruption queue karpctl may not own: the reference statements it lacks are added
// to its own (kept) statements, and the queue is tagged with that fact, in a call made before the
// policy changes, so a run killed in between never leaves an unrecorded change.
import type * as sqs from '@aws-sdk/client-sqs'
import { allowsService } from '../../checks/lib/policy.js'
import { queue } from '../../facts/collect-interruption.js'
import type { Aws } from '../../context/aws.js'
import type { QueueFacts } from '../../facts/types.js'
import type { PolicyDocument } from '../../policy/types.js'
import {
  QUEUE_SENDERS,
  referenceQueueStatements,
  withReferenceStatements,
} from '../../desired/interruption.js'
import { ADOPTED_BY, REPAIRED_STATEMENTS } from '../../desired/ownership.js'
import { canonical } from '../compare.js'
import { leafChanges, tagChanges } from '../diff.js'
import type { FieldChange, Resource } from '../types.js'

export const ADDED_POLICY = 'karpctl.io/added-policy-statements'

const sends = (q: QueueFacts) =>
  QUEUE_SENDERS.every((svc) => allowsService(q.policy, svc, 'sqs:SendMessage', q.arn))

/** The statements the queue's policy gains (its own are kept), each as it will read. */
const addedStatements = (q: QueueFacts): FieldChange[] =>
  leafChanges(q.policy ?? undefined, withReferenceStatements(q.policy, q.arn), 'Policy')

/** Which reference statements withReferenceStatements adds: the send grant, and DenyHTTP unless present. */
export const statementsToAdd = (policy: PolicyDocument | null): string[] => [
  'send',
  ...((policy?.Statement ?? []).some((s) => s.Sid === 'DenyHTTP') ? [] : ['DenyHTTP']),
]

/**
 * The policy without the statements karpctl recorded adding (teardown's give-back); null when none of
 * them is there. Only statements equal to the reference ones go, so an owner's edit is never removed.
 */
export function withoutAddedStatements(
  policy: PolicyDocument | null,
  queueArn: string,
  added: string[],
): PolicyDocument | null {
  if (!policy) return null
  const [send, denyHttp] = referenceQueueStatements(queueArn)
  const key = (x: unknown) => JSON.stringify(canonical(x))
  const drop = new Set([
    ...(added.includes('send') ? [key(send)] : []),
    ...(added.includes('DenyHTTP') ? [key(denyHttp)] : []),
  ])
  const kept = policy.Statement.filter((s) => !drop.has(key(s)))
  return kept.length === policy.Statement.length ? null : { ...policy, Statement: kept }
}

interface AdoptedQueue {
  queue: QueueFacts
  tags: Record<string, string>
}

/** An adopted queue's changes: the send statements when it lacks them, and the tags that record them. */
export function adoptedQueueChanges(cur: AdoptedQueue, clusterName: string): FieldChange[] {
  if (sends(cur.queue)) return []
  return [...addedStatements(cur.queue), ...tagChanges(cur.tags, adoptionTags(cur, clusterName))]
}

const adoptionTags = (cur: AdoptedQueue, clusterName: string) => ({
  [ADOPTED_BY]: clusterName,
  [ADDED_POLICY]: statementsToAdd(cur.queue.policy).join(','),
})

/** Records first (the adoption and the statements about to be added), then the policy. */
export async function applyAdoptedQueue(aws: Aws, cur: AdoptedQueue, clusterName: string) {
  const add = !sends(cur.queue)
  if (!add) return
  await aws.write('sqs', 'TagQueue', {
    QueueUrl: cur.queue.url,
    Tags: adoptionTags(cur, clusterName),
  })
  await aws.write('sqs', 'SetQueueAttributes', {
    QueueUrl: cur.queue.url,
    Attributes: { Policy: JSON.stringify(withReferenceStatements(cur.queue.policy, cur.queue.arn)) },
  } satisfies sqs.SetQueueAttributesCommandInput)
}

/** doctor --fix's repair of a queue's policy: recorded apart from an adoption's (see REPAIRED_STATEMENTS). */
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
            changes: addedStatements(cur),
            note: `its statements are kept; recorded as the ${REPAIRED_STATEMENTS} tag`,
          }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      await aws.write('sqs', 'TagQueue', {
        QueueUrl: cur.url,
        Tags: { [REPAIRED_STATEMENTS]: statementsToAdd(cur.policy).join(',') },
      })
      await aws.write('sqs', 'SetQueueAttributes', {
        QueueUrl: cur.url,
        Attributes: { Policy: JSON.stringify(withReferenceStatements(cur.policy, cur.arn)) },
      } satisfies sqs.SetQueueAttributesCommandInput)
    },
  }
}
