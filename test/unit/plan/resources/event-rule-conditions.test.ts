// An interruption rule's conditions, one at a time (issue 18): how a rule is read, what karpctl's own
// rule is repaired to, when another tool's rule is used as it is, blocked or adopted, and exactly what
// the adoption writes (recorded before it is made). Each assertion fails when the condition it names is
// changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  ADDED_TARGET,
  ENABLED_FROM,
  eventRule,
  observeRule,
  type RuleState,
} from '../../../../src/plan/resources/event-rule.js'
import { ADOPTED_BY, ownershipTags, USED_AS_IT_IS } from '../../../../src/desired/ownership.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const QUEUE = 'arn:aws:sqs:us-west-2:1:demo'
const ARN = 'arn:aws:events:us-west-2:1:rule/Karpenter-demo-Spot'
const PATTERN = { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] }
const OWN = ownershipTags('demo')
const TAGS = { ...OWN, team: 'platform' }

const rule = (adopt = false) =>
  eventRule({
    key: 'SpotInterruptionRule',
    name: 'Karpenter-demo-Spot',
    arn: ARN,
    eventPattern: PATTERN,
    queueArn: QUEUE,
    targetId: 'KarpenterInterruptionQueueTarget',
    tags: TAGS,
    ownership: OWN,
    adopt,
  })
const state = (over: Partial<RuleState> = {}): RuleState => ({
  arn: ARN,
  state: 'ENABLED',
  pattern: PATTERN,
  targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE }],
  tags: TAGS,
  ...over,
})
const foreign = (over: Partial<RuleState> = {}) => state({ tags: { team: 'x' }, ...over })

test('observeRule: null when the rule does not exist, every field read, defaults for what EventBridge leaves out', async () => {
  assert.equal(await observeRule(recordingEnv().env.aws, 'r', ARN), null)
  const asked: unknown[] = []
  const full = recordingEnv({
    aws: {
      DescribeRule: (i) => (
        asked.push(i),
        { Arn: 'arn:real', State: 'DISABLED', EventPattern: JSON.stringify(PATTERN) }
      ),
      ListTargetsByRule: (i) => (asked.push(i), { Targets: [{ Id: 't', Arn: QUEUE }, {}] }),
      ListTagsForResource: (i) => (asked.push(i), { Tags: [{ Key: 'k', Value: 'v' }, {}] }),
    },
  })
  assert.deepEqual(await observeRule(full.env.aws, 'r', ARN), {
    arn: 'arn:real',
    state: 'DISABLED',
    pattern: PATTERN,
    targets: [
      { Id: 't', Arn: QUEUE },
      { Id: '', Arn: '' },
    ],
    tags: { k: 'v', '': '' },
  })
  assert.deepEqual(asked, [{ Name: 'r' }, { Rule: 'r' }, { ResourceARN: 'arn:real' }])
  const bare = recordingEnv({
    aws: { DescribeRule: () => ({}), ListTargetsByRule: () => ({}), ListTagsForResource: () => ({}) },
  })
  assert.deepEqual(await observeRule(bare.env.aws, 'r', ARN), {
    arn: ARN,
    state: 'UNKNOWN',
    pattern: null,
    targets: [],
    tags: {},
  })
  const denied = recordingEnv({
    aws: {
      DescribeRule: () => {
        throw Object.assign(new Error('no'), { name: 'AccessDeniedException' })
      },
    },
  })
  await assert.rejects(observeRule(denied.env.aws, 'r', ARN), /no/)
})

test('the resource: its address, the queue it depends on, what it wants, the permissions it needs', async () => {
  const r = rule()
  assert.equal(r.address, 'events-rule.SpotInterruptionRule')
  assert.equal(r.kind, 'EventBridge rule')
  assert.equal(r.name, 'Karpenter-demo-Spot')
  assert.equal(r.group, 'Interruption handling')
  assert.deepEqual(r.dependsOn, ['sqs-queue.interruption'])
  assert.deepEqual(r.desired, {
    name: 'Karpenter-demo-Spot',
    eventPattern: PATTERN,
    target: QUEUE,
    tags: TAGS,
  })
  assert.deepEqual(r.permissions, [
    { action: 'events:PutRule', resource: ARN },
    { action: 'events:PutTargets', resource: ARN },
    { action: 'events:TagResource', resource: ARN },
  ])
  const env = recordingEnv({
    aws: {
      DescribeRule: () => ({ Arn: ARN, State: 'ENABLED' }),
      ListTargetsByRule: () => ({}),
      ListTagsForResource: () => ({}),
    },
  })
  assert.equal((await r.observe(env.env))?.state, 'ENABLED')
})

test("karpctl's rule: created whole; then each of pattern, state, target and tags repaired on its own", () => {
  assert.deepEqual(rule().verdict(null), {
    action: 'create',
    changes: [
      { field: 'event pattern', to: PATTERN },
      { field: 'target', to: QUEUE },
    ],
  })
  assert.deepEqual(rule().verdict(state()), { action: 'unchanged', changes: [] })
  // Each value of the pattern that differs, old → new.
  assert.deepEqual(rule().verdict(state({ pattern: { source: ['aws.health'] } })).changes, [
    { field: 'event pattern.source', from: ['aws.health'], to: ['aws.ec2'] },
    { field: 'event pattern.detail-type', from: undefined, to: ['EC2 Spot Instance Interruption Warning'] },
  ])
  assert.deepEqual(rule().verdict(state({ state: 'DISABLED' })), {
    action: 'update',
    changes: [{ field: 'state', from: 'DISABLED', to: 'ENABLED' }],
  })
  assert.deepEqual(
    rule().verdict(state({ targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: 'arn:other' }] }))
      .changes,
    [{ field: 'target', to: QUEUE }],
  )
  assert.deepEqual(rule().verdict(state({ tags: { ...OWN, team: 'other' } })).changes, [
    { field: 'tags.team', from: 'other', to: 'platform' },
  ])
  // Its own rule is karpctl's even when another cluster adopted it too.
  assert.deepEqual(rule().verdict(state({ tags: { ...TAGS, [ADOPTED_BY]: 'x' } })), {
    action: 'unchanged',
    changes: [],
  })
})

test("karpctl's rule applied: PutRule (tags only on create), the target when missing, the tags when missing", async () => {
  const put = (tags: boolean) => ({
    op: 'PutRule',
    input: {
      Name: 'Karpenter-demo-Spot',
      EventPattern: JSON.stringify(PATTERN),
      State: 'ENABLED',
      Description: 'Karpenter interruption handling (karpctl)',
      ...(tags ? { Tags: Object.entries(TAGS).map(([Key, Value]) => ({ Key, Value })) } : {}),
    },
  })
  const targets = {
    op: 'PutTargets',
    input: { Rule: 'Karpenter-demo-Spot', Targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE }] },
  }
  const writes = async (cur: RuleState | null) => {
    const r = recordingEnv()
    await rule().apply(r.env, cur)
    return r.awsWrites
  }
  assert.deepEqual(await writes(null), [put(true), targets])
  assert.deepEqual(await writes(state()), [])
  assert.deepEqual(await writes(state({ pattern: {} })), [put(false)])
  assert.deepEqual(await writes(state({ state: 'DISABLED' })), [put(false)])
  assert.deepEqual(await writes(state({ targets: [] })), [targets])
  // A target to another queue is not the queue's.
  assert.deepEqual(
    await writes(state({ targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: 'arn:other' }] })),
    [targets],
  )
  assert.deepEqual(await writes(state({ tags: { ...OWN } })), [
    {
      op: 'TagResource',
      input: { ResourceARN: ARN, Tags: Object.entries(TAGS).map(([Key, Value]) => ({ Key, Value })) },
    },
  ])
})

test("another tool's rule: used as it is when it already delivers, enabled; else blocked without --adopt", () => {
  assert.deepEqual(rule().verdict(foreign()), { action: 'unchanged', changes: [], note: USED_AS_IT_IS })
  const blocked = {
    action: 'update',
    changes: [],
    blocked:
      'exists and was not made by karpctl: pass --adopt to use it as it is (karpctl then only adds its queue as a target, recorded)',
  }
  assert.deepEqual(rule().verdict(foreign({ state: 'DISABLED' })), blocked)
  assert.deepEqual(rule().verdict(foreign({ targets: [] })), blocked)
  assert.deepEqual(rule().verdict(foreign({ targets: [{ Id: 'x', Arn: 'arn:other' }] })), blocked)
  assert.deepEqual(rule().verdict(foreign({ pattern: {} })), blocked)
  // Another pattern is blocked even with --adopt: karpctl never rewrites it.
  assert.deepEqual(rule(true).verdict(foreign({ pattern: {} })), {
    action: 'update',
    changes: [],
    blocked:
      'exists with another event pattern, and karpctl did not make it: change it with the tool that made it, or remove it',
  })
  // Used as it is with --adopt too: nothing to add, no mark.
  assert.deepEqual(rule(true).verdict(foreign()), { action: 'unchanged', changes: [], note: USED_AS_IT_IS })
})

test('adopted: the queue target added and the rule enabled, marked once for this cluster', () => {
  const note = `adopted (not karpctl's): recorded as ${ADOPTED_BY}; teardown takes back what it added and keeps the rule`
  // The tags that record it, each as it will be set.
  const marks = [
    { field: `tags.${ADOPTED_BY}`, from: undefined, to: 'demo' },
    { field: `tags.${ADDED_TARGET}`, from: undefined, to: 'KarpenterInterruptionQueueTarget' },
    { field: `tags.${ENABLED_FROM}`, from: undefined, to: 'DISABLED' },
  ]
  assert.deepEqual(rule(true).verdict(foreign({ targets: [], state: 'DISABLED' })), {
    action: 'update',
    changes: [{ field: 'target', to: QUEUE }, { field: 'state', from: 'DISABLED', to: 'ENABLED' }, ...marks],
    note,
  })
  // Already adopted by this cluster: no mark again, and no --adopt needed.
  const adopted = (over: Partial<RuleState>) => state({ tags: { [ADOPTED_BY]: 'demo' }, ...over })
  assert.deepEqual(rule().verdict(adopted({ targets: [] })), {
    action: 'update',
    changes: [
      { field: 'target', to: QUEUE },
      { field: `tags.${ADDED_TARGET}`, from: undefined, to: 'KarpenterInterruptionQueueTarget' },
    ],
    note,
  })
  assert.deepEqual(rule().verdict(adopted({})), { action: 'unchanged', changes: [], note })
  // Adopted, then its pattern changed by its owner: blocked.
  assert.match(rule().verdict(adopted({ pattern: {} })).blocked ?? '', /^exists with another event pattern/)
})

test('adoption writes the record first (mark, target id, state found), then the target, then enables', async () => {
  const writes = async (cur: RuleState) => {
    const r = recordingEnv()
    await rule(true).apply(r.env, cur)
    return r.awsWrites
  }
  assert.deepEqual(await writes(foreign()), [])
  assert.deepEqual(await writes(foreign({ targets: [{ Id: 'other', Arn: 'arn:x' }], state: 'DISABLED' })), [
    {
      op: 'TagResource',
      input: {
        ResourceARN: ARN,
        Tags: [
          { Key: ADOPTED_BY, Value: 'demo' },
          { Key: ADDED_TARGET, Value: 'KarpenterInterruptionQueueTarget' },
          { Key: ENABLED_FROM, Value: 'DISABLED' },
        ],
      },
    },
    {
      op: 'PutTargets',
      input: {
        Rule: 'Karpenter-demo-Spot',
        Targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE }],
      },
    },
    { op: 'EnableRule', input: { Name: 'Karpenter-demo-Spot' } },
  ])
  // The target id already taken by another target: karpctl's own id for this cluster.
  assert.deepEqual(
    await writes(foreign({ targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: 'arn:x' }] })),
    [
      {
        op: 'TagResource',
        input: {
          ResourceARN: ARN,
          Tags: [
            { Key: ADOPTED_BY, Value: 'demo' },
            { Key: ADDED_TARGET, Value: 'karpctl-demo' },
          ],
        },
      },
      {
        op: 'PutTargets',
        input: { Rule: 'Karpenter-demo-Spot', Targets: [{ Id: 'karpctl-demo', Arn: QUEUE }] },
      },
    ],
  )
  // Only disabled: enabled, no target added.
  assert.deepEqual(await writes(foreign({ state: 'DISABLED' })), [
    {
      op: 'TagResource',
      input: {
        ResourceARN: ARN,
        Tags: [
          { Key: ADOPTED_BY, Value: 'demo' },
          { Key: ENABLED_FROM, Value: 'DISABLED' },
        ],
      },
    },
    { op: 'EnableRule', input: { Name: 'Karpenter-demo-Spot' } },
  ])
  assert.equal(ADDED_TARGET, 'karpctl.io/added-target')
  assert.equal(ENABLED_FROM, 'karpctl.io/enabled-from')
})

test("karpctl's own target id for a cluster is cut to EventBridge's 64 characters", async () => {
  const long = 'c'.repeat(70)
  const r = eventRule({
    key: 'k',
    name: 'n',
    arn: ARN,
    eventPattern: PATTERN,
    queueArn: QUEUE,
    targetId: 'T',
    tags: {},
    ownership: ownershipTags(long),
    adopt: true,
  })
  const env = recordingEnv()
  await r.apply(env.env, foreign({ targets: [{ Id: 'T', Arn: 'arn:x' }] }))
  const put = env.awsWrites.find((w) => w.op === 'PutTargets')!
  assert.deepEqual(put.input.Targets, [{ Id: `karpctl-${long}`.slice(0, 64), Arn: QUEUE }])
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

test('every read and write of a rule goes to EventBridge', async () => {
  const s = serviceEnv({ DescribeRule: { Arn: ARN, State: 'DISABLED' } })
  const r = rule(true)
  const cur = await r.observe(s.env)
  await r.apply(s.env, cur)
  await rule().apply(s.env, null)
  await rule().apply(s.env, state({ tags: { ...OWN } }))
  assert.deepEqual(s.services, [
    'eventbridge:DescribeRule',
    'eventbridge:ListTargetsByRule',
    'eventbridge:ListTagsForResource',
    'eventbridge:TagResource',
    'eventbridge:PutTargets',
    'eventbridge:EnableRule',
    'eventbridge:PutRule',
    'eventbridge:PutTargets',
    'eventbridge:TagResource',
  ])
})

test('a rule with several targets: the queue among them is enough, and a taken id among them is avoided', async () => {
  const two = [
    { Id: 'other', Arn: 'arn:x' },
    { Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE },
  ]
  // karpctl's own rule: no target change, no PutTargets.
  assert.deepEqual(rule().verdict(state({ targets: two })), { action: 'unchanged', changes: [] })
  // Another tool's rule delivering to the queue among others: used as it is.
  assert.deepEqual(rule().verdict(foreign({ targets: two })), {
    action: 'unchanged',
    changes: [],
    note: USED_AS_IT_IS,
  })
  // Adopted and disabled: enabled only, no target added.
  const env = recordingEnv()
  await rule(true).apply(env.env, foreign({ targets: two, state: 'DISABLED' }))
  assert.deepEqual(
    env.awsWrites.map((w) => w.op),
    ['TagResource', 'EnableRule'],
  )
  // The wanted id taken by the second of two targets: karpctl's own id.
  const taken = recordingEnv()
  await rule(true).apply(
    taken.env,
    foreign({
      targets: [
        { Id: 'other', Arn: 'arn:x' },
        { Id: 'KarpenterInterruptionQueueTarget', Arn: 'arn:y' },
      ],
    }),
  )
  assert.deepEqual(taken.awsWrites.find((w) => w.op === 'PutTargets')?.input.Targets, [
    { Id: 'karpctl-demo', Arn: QUEUE },
  ])
})
