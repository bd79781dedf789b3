// SQS + EventBridge facts: the interruption queue and the rules that target it.
import type * as eb from '@aws-sdk/client-eventbridge'
import type * as sqs from '@aws-sdk/client-sqs'
import type { Aws } from '../context/aws.js'
import { isNotFound } from '../context/aws.js'
import { parsePolicyDocument } from '../iam/policy-document.js'
import type { EventRule, QueueFacts } from './types.js'

export async function queue(aws: Aws, name: string): Promise<QueueFacts | null> {
  let url: string
  try {
    const out = await aws.call<sqs.GetQueueUrlCommandOutput>('sqs', 'GetQueueUrl', { QueueName: name })
    url = out.QueueUrl ?? ''
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
  const out = await aws.call<sqs.GetQueueAttributesCommandOutput>('sqs', 'GetQueueAttributes', {
    QueueUrl: url,
    AttributeNames: ['All'],
  })
  const a = out.Attributes ?? {}
  return {
    name,
    url,
    arn: a.QueueArn ?? '',
    policy: a.Policy ? parsePolicyDocument(a.Policy) : null,
    messageRetentionSeconds: a.MessageRetentionPeriod ? Number(a.MessageRetentionPeriod) : undefined,
    sseEnabled: a.SqsManagedSseEnabled === 'true' || Boolean(a.KmsMasterKeyId),
  }
}

/** Rules that target the queue (ListRuleNamesByTarget), each with its pattern, state and targets. */
export async function rulesTargeting(aws: Aws, queueArn: string): Promise<EventRule[]> {
  const names = await aws.all<eb.ListRuleNamesByTargetCommandOutput, string>(
    'eventbridge',
    'ListRuleNamesByTarget',
    { TargetArn: queueArn },
    'NextToken',
    (out) => ({ items: out.RuleNames, next: out.NextToken }),
  )
  return Promise.all(
    names.map(async (name) => {
      const [rule, targets] = await Promise.all([
        aws.call<eb.DescribeRuleCommandOutput>('eventbridge', 'DescribeRule', { Name: name }),
        aws.call<eb.ListTargetsByRuleCommandOutput>('eventbridge', 'ListTargetsByRule', { Rule: name }),
      ])
      return {
        name,
        arn: rule.Arn ?? '',
        state: rule.State ?? 'UNKNOWN',
        eventPattern: rule.EventPattern ? (JSON.parse(rule.EventPattern) as Record<string, unknown>) : null,
        targetArns: (targets.Targets ?? []).map((t) => t.Arn ?? ''),
      }
    }),
  )
}
