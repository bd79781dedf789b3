// The interruption queue's teardown, call by call: reads, verdicts for karpctl's own, an adopted one
// (its policy given back) and another tool's, and exactly which writes its apply makes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDED_POLICY } from '../../../../src/plan/resources/queue-policy.js'
import { queueAbsent } from '../../../../src/plan/resources/sqs-queue-absent.js'
import { referenceQueueStatements } from '../../../../src/desired/interruption.js'
import { ADOPTED_BY } from '../../../../src/desired/ownership.js'
import { OWN, GONE, FOREIGN_NOTE, env, run, type Answer } from '../../../helpers/teardown-env.js'

const QUEUE_URL = 'https://sqs.us-west-2.amazonaws.com/123456789012/demo'
const QUEUE_ARN = 'arn:aws:sqs:us-west-2:123456789012:demo'
const queue = (keptNote?: string) => queueAbsent({ name: 'demo', ownership: OWN, dependsOn: ['x'], keptNote })
const queueAnswers = (tags: Record<string, string>, policy?: unknown): Record<string, Answer> => ({
  GetQueueUrl: (i) => {
    assert.deepEqual(i, { QueueName: 'demo' })
    return { QueueUrl: QUEUE_URL }
  },
  ListQueueTags: (i) => {
    assert.deepEqual(i, { QueueUrl: QUEUE_URL })
    return { Tags: tags }
  },
  GetQueueAttributes: (i) => {
    assert.deepEqual(i, { QueueUrl: QUEUE_URL, AttributeNames: ['QueueArn', 'Policy'] })
    return { Attributes: { QueueArn: QUEUE_ARN, ...(policy ? { Policy: JSON.stringify(policy) } : {}) } }
  },
})

test("queue: its shape; gone writes nothing; karpctl's own is deleted without reading its policy", async () => {
  const q = queue()
  assert.deepEqual(
    [q.address, q.kind, q.name, q.group, q.dependsOn, q.desired],
    ['sqs-queue.interruption', 'SQS queue', 'demo', 'Interruption handling', ['x'], { absent: true }],
  )
  const none = env()
  assert.deepEqual((await run(q, none.env)).verdict, GONE)
  assert.deepEqual(none.writes, [])
  const e = env({ aws: queueAnswers(OWN) })
  const { cur, verdict } = await run(q, e.env)
  assert.deepEqual(cur, { owner: undefined, url: QUEUE_URL, arn: '', tags: OWN, policy: null })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [['DeleteQueue', { QueueUrl: QUEUE_URL }]])
  assert.deepEqual(
    e.reads.map(([op]) => op),
    ['GetQueueUrl', 'ListQueueTags'],
  )
})

test('queue: an adopted one gets its policy back without the statements karpctl added, and loses the records', async () => {
  const [send, deny] = referenceQueueStatements(QUEUE_ARN)
  const own = {
    Sid: 'Theirs',
    Effect: 'Allow',
    Principal: { AWS: 'arn:aws:iam::1:root' },
    Action: 'sqs:*',
    Resource: QUEUE_ARN,
  }
  const tags = { [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send,DenyHTTP', team: 'x' }
  const e = env({ aws: queueAnswers(tags, { Version: '2012-10-17', Statement: [own, send, deny] }) })
  const { cur, verdict } = await run(queue(), e.env)
  assert.equal(cur?.arn, QUEUE_ARN)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'Policy.Statement.1', from: send, to: undefined },
      { field: 'Policy.Statement.DenyHTTP', from: deny, to: undefined },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_POLICY}`, from: 'send,DenyHTTP' },
    ],
    note: `${FOREIGN_NOTE}; karpctl's recorded changes given back`,
  })
  const [set, untag] = e.writes as [[string, { QueueUrl: string; Attributes: { Policy: string } }], unknown]
  assert.equal(e.writes.length, 2)
  assert.deepEqual(
    [set[0], set[1].QueueUrl, JSON.parse(set[1].Attributes.Policy)],
    ['SetQueueAttributes', QUEUE_URL, { Version: '2012-10-17', Statement: [own] }],
  )
  assert.deepEqual(untag, ['UntagQueue', { QueueUrl: QUEUE_URL, TagKeys: [ADOPTED_BY, ADDED_POLICY] }])
})

test('queue: adopted, its added statements already gone: only the records; none recorded: kept, nothing written', async () => {
  const e = env({ aws: queueAnswers({ [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send' }) })
  const { verdict } = await run(queue('kept: the stack’s'), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_POLICY}`, from: 'send' },
    ],
    note: "kept: the stack’s; karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [['UntagQueue', { QueueUrl: QUEUE_URL, TagKeys: [ADOPTED_BY, ADDED_POLICY] }]])
  const foreign = env({ aws: queueAnswers({ team: 'x' }) })
  assert.deepEqual((await run(queue(), foreign.env)).verdict, {
    action: 'unchanged',
    changes: [],
    note: FOREIGN_NOTE,
  })
  assert.deepEqual(foreign.writes, [])
})

const denied = () => {
  throw Object.assign(new Error('not authorized'), { name: 'AccessDenied' })
}

test('a queue read that fails other than "not found" is thrown, never taken for gone', async () => {
  // Kills: orNull swallowing every error (its catch emptied or its test forced).
  await assert.rejects(queue().observe(env({ aws: { GetQueueUrl: denied } }).env), { name: 'AccessDenied' })
})

test('empty answers: a queue without a URL is gone; a queue without attributes', async () => {
  assert.equal(await queue().observe(env({ aws: { GetQueueUrl: () => ({}) } }).env), null)
  const q = env({
    aws: {
      GetQueueUrl: () => ({ QueueUrl: QUEUE_URL }),
      ListQueueTags: () => ({ Tags: { [ADDED_POLICY]: 'send' } }),
      GetQueueAttributes: () => ({}),
    },
  })
  assert.deepEqual(await queue().observe(q.env), {
    owner: undefined,
    url: QUEUE_URL,
    arn: '',
    tags: { [ADDED_POLICY]: 'send' },
    policy: null,
  })
})
