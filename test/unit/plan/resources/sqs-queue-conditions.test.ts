// The interruption queue's conditions, one at a time (issue 18): what karpctl's own queue is repaired to,
// when another tool's queue is used as it is, blocked or adopted, and what each apply writes. Each
// assertion fails when the condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { QueueFacts } from '../../../../src/facts/types.js'
import type { PolicyDocument } from '../../../../src/policy/types.js'
import { ADDED_POLICY } from '../../../../src/plan/resources/queue-policy.js'
import { sqsQueue, type QueueState } from '../../../../src/plan/resources/sqs-queue.js'
import {
  QUEUE_ATTRIBUTES,
  queuePolicy,
  referenceQueueStatements,
} from '../../../../src/desired/interruption.js'
import { ADOPTED_BY, ownershipTags, USED_AS_IT_IS } from '../../../../src/desired/ownership.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const ARN = 'arn:aws:sqs:us-west-2:1:demo'
const URL = 'https://sqs.us-west-2.amazonaws.com/1/demo'
const OWN = ownershipTags('demo')
const TAGS = { ...OWN, team: 'platform' }
const POLICY = queuePolicy(ARN)

const resource = (adopt = false) =>
  sqsQueue({
    name: 'demo',
    arn: ARN,
    attributes: { ...QUEUE_ATTRIBUTES },
    policy: POLICY,
    tags: TAGS,
    ownership: OWN,
    adopt,
  })
const facts = (over: Partial<QueueFacts> = {}): QueueFacts => ({
  name: 'demo',
  url: URL,
  arn: ARN,
  policy: POLICY,
  messageRetentionSeconds: 300,
  sseEnabled: true,
  ...over,
})
const state = (over: Partial<QueueFacts> = {}, tags: Record<string, string> = TAGS): QueueState => ({
  queue: facts(over),
  tags,
})
const POLICY_TO = 'EventBridge + SQS may send; DenyHTTP'

test('the resource: its address, what it wants, the permissions it needs; observe reads the queue and its tags', async () => {
  const r = resource()
  assert.equal(r.address, 'sqs-queue.interruption')
  assert.equal(r.kind, 'SQS queue')
  assert.equal(r.name, 'demo')
  assert.equal(r.group, 'Interruption handling')
  assert.deepEqual(r.dependsOn, [])
  assert.deepEqual(r.desired, { name: 'demo', attributes: QUEUE_ATTRIBUTES, tags: TAGS })
  assert.deepEqual(r.documents, { policy: POLICY })
  assert.deepEqual(r.permissions, [
    { action: 'sqs:CreateQueue', resource: ARN },
    { action: 'sqs:SetQueueAttributes', resource: ARN },
    { action: 'sqs:TagQueue', resource: ARN },
  ])
  assert.equal(await r.observe(recordingEnv().env), null)
  const asked: unknown[] = []
  const env = recordingEnv({
    aws: {
      GetQueueUrl: () => ({ QueueUrl: URL }),
      GetQueueAttributes: () => ({ Attributes: { QueueArn: ARN } }),
      ListQueueTags: (i) => (asked.push(i), { Tags: { team: 'x' } }),
    },
  })
  const cur = await r.observe(env.env)
  assert.deepEqual(cur?.tags, { team: 'x' })
  assert.equal(cur?.queue.url, URL)
  assert.deepEqual(asked, [{ QueueUrl: URL }])
  const untagged = recordingEnv({
    aws: {
      GetQueueUrl: () => ({ QueueUrl: URL }),
      GetQueueAttributes: () => ({ Attributes: {} }),
      ListQueueTags: () => ({}),
    },
  })
  assert.deepEqual((await r.observe(untagged.env))?.tags, {})
})

test("karpctl's queue: created with every attribute; then retention, encryption, policy and tags repaired each on its own", () => {
  assert.deepEqual(resource().verdict(null), {
    action: 'create',
    changes: [
      { field: 'MessageRetentionPeriod', from: undefined, to: '300' },
      { field: 'SqsManagedSseEnabled', from: undefined, to: 'true' },
      { field: 'Policy', to: POLICY_TO },
    ],
  })
  assert.deepEqual(resource().verdict(state()), { action: 'unchanged', changes: [] })
  assert.deepEqual(resource().verdict(state({ messageRetentionSeconds: 60 })), {
    action: 'update',
    changes: [{ field: 'MessageRetentionPeriod', from: 60, to: '300' }],
  })
  assert.deepEqual(resource().verdict(state({ sseEnabled: false })).changes, [
    { field: 'SqsManagedSseEnabled', from: 'false', to: 'true' },
  ])
  // An existing queue's policy: each statement it gains or loses, whole.
  const [send, deny] = referenceQueueStatements(ARN)
  assert.deepEqual(
    resource()
      .verdict(state({ policy: null }))
      .changes.map((c) => c.field),
    ['Policy.Version', 'Policy.Id', 'Policy.Statement.0', 'Policy.Statement.DenyHTTP'],
  )
  const other: PolicyDocument = { ...POLICY, Statement: [send!] }
  assert.deepEqual(resource().verdict(state({ policy: other })).changes, [
    { field: 'Policy.Statement.DenyHTTP', from: undefined, to: deny },
  ])
  assert.deepEqual(resource().verdict(state({}, { ...OWN })).changes, [
    { field: 'tags.team', from: undefined, to: 'platform' },
  ])
})

test("karpctl's queue applied: CreateQueue whole; else its attributes set, and its tags only when missing", async () => {
  const attributes = { ...QUEUE_ATTRIBUTES, Policy: JSON.stringify(POLICY) }
  const writes = async (cur: QueueState | null) => {
    const r = recordingEnv()
    await resource().apply(r.env, cur)
    return r.awsWrites
  }
  assert.deepEqual(await writes(null), [
    { op: 'CreateQueue', input: { QueueName: 'demo', Attributes: attributes, tags: TAGS } },
  ])
  assert.deepEqual(await writes(state()), [
    { op: 'SetQueueAttributes', input: { QueueUrl: URL, Attributes: attributes } },
  ])
  assert.deepEqual(await writes(state({}, { ...OWN })), [
    { op: 'SetQueueAttributes', input: { QueueUrl: URL, Attributes: attributes } },
    { op: 'TagQueue', input: { QueueUrl: URL, Tags: TAGS } },
  ])
})

test("another tool's queue: used as it is when both senders may send; else blocked without --adopt", () => {
  assert.deepEqual(resource().verdict(state({ messageRetentionSeconds: 60 }, { team: 'x' })), {
    action: 'unchanged',
    changes: [],
    note: USED_AS_IT_IS,
  })
  assert.deepEqual(resource().verdict(state({ policy: null }, { team: 'x' })), {
    action: 'update',
    changes: [],
    blocked:
      "exists and was not made by karpctl (another tool's interruption queue?): remove it with the tool that made it, or pass --adopt to use it as it is (karpctl then only adds the send statements it lacks, recorded)",
  })
})

test('adopted: the send statements it lacks and the mark; nothing more once it sends; kept and never retargeted', async () => {
  const note = `adopted (not karpctl's): its attributes stay its owner's; recorded as ${ADOPTED_BY}, teardown keeps it`
  const v = resource(true).verdict(state({ policy: null }, { team: 'x' }))
  assert.equal(v.action, 'update')
  assert.equal(v.note, note)
  assert.deepEqual(
    v.changes.map((c) => c.field),
    [
      'Policy.Version',
      'Policy.Id',
      'Policy.Statement.0',
      'Policy.Statement.DenyHTTP',
      `tags.${ADOPTED_BY}`,
      'tags.karpctl.io/added-policy-statements',
    ],
  )
  // Adopted by this cluster earlier: no --adopt needed; unchanged once it sends.
  assert.deepEqual(resource().verdict(state({}, { [ADOPTED_BY]: 'demo' })), {
    action: 'unchanged',
    changes: [],
    note,
  })
  assert.deepEqual(
    resource()
      .verdict(state({ policy: null }, { [ADOPTED_BY]: 'demo' }))
      .changes.map((c) => c.field),
    [
      'Policy.Version',
      'Policy.Id',
      'Policy.Statement.0',
      'Policy.Statement.DenyHTTP',
      'tags.karpctl.io/added-policy-statements',
    ],
  )
  // Apply on another tool's queue: the record, then the policy; never its attributes.
  const r = recordingEnv()
  await resource(true).apply(r.env, state({ policy: null, messageRetentionSeconds: 60 }, { team: 'x' }))
  assert.deepEqual(
    r.awsWrites.map((w) => w.op),
    ['TagQueue', 'SetQueueAttributes'],
  )
  assert.deepEqual(r.awsWrites[0]!.input, {
    QueueUrl: URL,
    Tags: { [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send,DenyHTTP' },
  })
  const none = recordingEnv()
  await resource(true).apply(none.env, state({ messageRetentionSeconds: 60 }, { team: 'x' }))
  assert.deepEqual(none.awsWrites, [])
})

/** An ApplyEnv that answers each read by operation and records the service of every call and write. */
function serviceEnv(answers: Record<string, unknown>) {
  const services: string[] = []
  const aws = {
    call: async (service: string, op: string) => {
      services.push(`${service}:${op}`)
      return answers[op] ?? {}
    },
    write: async (service: string, op: string) => {
      services.push(`${service}:${op}`)
      return {}
    },
  }
  return { env: { aws } as unknown as ApplyEnv, services }
}

test('every read and write of the queue goes to SQS', async () => {
  const s = serviceEnv({
    GetQueueUrl: { QueueUrl: URL },
    GetQueueAttributes: { Attributes: { QueueArn: ARN } },
  })
  const cur = await resource().observe(s.env)
  await resource(true).apply(s.env, cur)
  await resource().apply(s.env, null)
  await resource().apply(s.env, state({}, { ...OWN }))
  assert.deepEqual(s.services, [
    'sqs:GetQueueUrl',
    'sqs:GetQueueAttributes',
    'sqs:ListQueueTags',
    'sqs:TagQueue',
    'sqs:SetQueueAttributes',
    'sqs:CreateQueue',
    'sqs:SetQueueAttributes',
    'sqs:TagQueue',
  ])
})
