// An endpoint that cannot look a resource up by physical id (moto 5.2 ignores PhysicalResourceId) may
// still list its stacks: the owner then comes from the listing, read once for every id.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { describeOwner, stackKeptNote } from '../../../src/facts/collect-owners.js'
import { onePage } from '../../helpers/pager.js'

function fakeAws(listing: 'ok' | 'denied') {
  const calls: string[] = []
  const answers: Record<string, (i: Record<string, unknown>) => unknown> = {
    DescribeStackResources: () => {
      throw Object.assign(new Error('Stack with id None does not exist'), { name: 'ValidationError' })
    },
    ListStacks: () => {
      if (listing === 'denied') throw Object.assign(new Error('denied'), { name: 'AccessDenied' })
      return {
        StackSummaries: [
          {
            StackName: 'Karpenter-demo',
            StackId: 'arn:aws:cloudformation:us-west-2:1:stack/Karpenter-demo/x',
          },
          { StackName: 'other', StackId: 'arn:aws:cloudformation:us-west-2:1:stack/other/y' },
        ],
      }
    },
    ListStackResources: (i) => ({
      StackResourceSummaries:
        i.StackName === 'arn:aws:cloudformation:us-west-2:1:stack/Karpenter-demo/x'
          ? [
              {
                LogicalResourceId: 'KarpenterInterruptionQueue',
                PhysicalResourceId: 'https://sqs.us-west-2.amazonaws.com/1/demo',
                ResourceType: 'AWS::SQS::Queue',
                ResourceStatus: 'CREATE_COMPLETE',
              },
              {
                LogicalResourceId: 'Gone',
                PhysicalResourceId: 'Retained',
                ResourceType: 'AWS::Events::Rule',
                ResourceStatus: 'DELETE_SKIPPED',
              },
            ]
          : [],
    }),
  }
  const memo = new Map<string, Promise<unknown>>()
  const call = (_s: string, op: string, input: Record<string, unknown> = {}) => {
    const key = `${op} ${JSON.stringify(input)}`
    if (!memo.has(key)) {
      calls.push(op)
      memo.set(key, (async () => answers[op]!(input))())
    }
    return memo.get(key)!
  }
  const aws = {
    call,
    all: onePage(call),
  } as unknown as Aws
  return { aws, calls }
}

test('the listing answers when the lookup cannot: a queue URL from another endpoint is the same queue', async () => {
  const { aws, calls } = fakeAws('ok')
  const found = await describeOwner(aws, 'http://127.0.0.1:5000/1/demo')
  assert.equal(found?.owner.stackName, 'Karpenter-demo')
  assert.equal(found?.owner.logicalId, 'KarpenterInterruptionQueue')
  // Not declared anywhere, or let go of by its stack: no owner.
  assert.equal(await describeOwner(aws, 'demo-karpenter'), null)
  assert.equal(await describeOwner(aws, 'Retained'), null)
  assert.equal(await describeOwner(aws, 'http://127.0.0.1:5000/2/demo'), null)
  // Listed once for every id.
  assert.equal(calls.filter((c) => c === 'ListStacks').length, 1)
  assert.equal(calls.filter((c) => c === 'ListStackResources').length, 2)
  assert.match(
    (await stackKeptNote(aws, 'https://sqs.us-west-2.amazonaws.com/1/demo')) ?? '',
    /^kept: made by CloudFormation stack Karpenter-demo \(`aws cloudformation delete-stack --stack-name Karpenter-demo`\)$/,
  )
})

test('a listing that fails leaves the lookup unsupported (unknown, never "not owned")', async () => {
  const { aws } = fakeAws('denied')
  await assert.rejects(describeOwner(aws, 'demo-karpenter'), { name: 'NotImplemented' })
  assert.equal(await stackKeptNote(aws, 'demo-karpenter'), undefined)
})
