import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RuleState } from '../../../../src/plan/resources/event-rule.js'
import { RETARGETED, ruleRepair } from '../../../../src/plan/resources/rule-repair.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const QUEUE = 'arn:aws:sqs:us-west-2:123456789012:demo'
const OLD = 'arn:aws:sqs:us-west-2:123456789012:old'
const ARN = 'arn:aws:events:us-west-2:123456789012:rule/r'

const repair = () =>
  ruleRepair({
    name: 'r',
    arn: ARN,
    queueArn: QUEUE,
    targetId: 'KarpenterInterruptionQueueTarget',
    staleQueueArns: [OLD],
    group: 'g',
  })

const rule = (over: Partial<RuleState>): RuleState => ({
  arn: ARN,
  state: 'ENABLED',
  pattern: {},
  targets: [],
  tags: {},
  ...over,
})

/** The note the plan shows and the calls apply makes, for one live rule. */
async function planAndApply(cur: RuleState) {
  const r = repair()
  const calls: { op: string; input: Record<string, unknown> }[] = []
  const aws = {
    write: async (_svc: string, op: string, input: Record<string, unknown>) => {
      calls.push({ op, input })
      return {}
    },
  }
  await r.apply({ aws } as unknown as ApplyEnv, cur)
  const tagged = calls.find((c) => c.op === 'TagResource')?.input.Tags as
    { Key: string; Value: string }[] | undefined
  return { verdict: r.verdict(cur), ops: calls.map((c) => c.op), tag: tagged?.[0] }
}

test('only a target added: the note says nothing is recorded, and apply tags nothing', async () => {
  const { verdict, ops, tag } = await planAndApply(rule({ targets: [{ Id: 'x', Arn: 'arn:aws:lambda:f' }] }))
  assert.equal(verdict.action, 'update')
  assert.equal(verdict.note, 'kept, not duplicated; only the queue target is added, so nothing is recorded')
  assert.doesNotMatch(verdict.note ?? '', new RegExp(RETARGETED))
  assert.deepEqual(ops, ['PutTargets'])
  assert.equal(tag, undefined)
})

test('a stale queue target: the note and the tag name the removed target', async () => {
  const { verdict, ops, tag } = await planAndApply(rule({ targets: [{ Id: 'o', Arn: OLD }] }))
  assert.equal(
    verdict.note,
    `kept, not duplicated; the removed queue targets recorded as the ${RETARGETED} tag`,
  )
  assert.deepEqual(ops, ['TagResource', 'PutTargets', 'RemoveTargets'])
  assert.deepEqual(tag, { Key: RETARGETED, Value: OLD })
})

test('a disabled rule already sending to the queue: the note and the tag say its state', async () => {
  const { verdict, ops, tag } = await planAndApply(
    rule({ state: 'DISABLED', targets: [{ Id: 'q', Arn: QUEUE }] }),
  )
  assert.equal(verdict.note, `kept, not duplicated; its state DISABLED recorded as the ${RETARGETED} tag`)
  assert.deepEqual(ops, ['TagResource', 'EnableRule'])
  assert.deepEqual(tag, { Key: RETARGETED, Value: 'DISABLED' })
})

test('disabled with stale targets past the tag limit: both named, and the cut said', async () => {
  const many = Array.from({ length: 6 }, (_, i) => ({ Id: `o${i}`, Arn: `${OLD}-${'x'.repeat(30)}-${i}` }))
  const r = ruleRepair({
    name: 'r',
    arn: ARN,
    queueArn: QUEUE,
    targetId: 'T',
    staleQueueArns: many.map((t) => t.Arn),
    group: 'g',
  })
  const cur = rule({ state: 'DISABLED', targets: many })
  assert.equal(
    r.verdict(cur).note,
    `kept, not duplicated; its state DISABLED and the removed queue targets recorded as the ${RETARGETED} tag (the first 256 characters)`,
  )
})

test('sends to the queue and enabled: unchanged, no note', async () => {
  const { verdict, ops } = await planAndApply(rule({ targets: [{ Id: 'q', Arn: QUEUE }] }))
  assert.deepEqual(verdict, { action: 'unchanged', changes: [] })
  assert.deepEqual(ops, [])
})

test('a re-run after a half-way repair adds to the record instead of overwriting it', async () => {
  // The first run tagged, added the target and removed the stale one, then died before EnableRule.
  const { verdict, ops, tag } = await planAndApply(
    rule({
      state: 'DISABLED',
      targets: [{ Id: 'q', Arn: QUEUE }],
      tags: { [RETARGETED]: `DISABLED ${OLD}` },
    }),
  )
  assert.equal(verdict.note, `kept, not duplicated; its state DISABLED recorded as the ${RETARGETED} tag`)
  assert.deepEqual(ops, ['TagResource', 'EnableRule'])
  assert.deepEqual(tag, { Key: RETARGETED, Value: `DISABLED ${OLD}` })
})

// --- What the step says it is, how it reads, and every write exactly (issue 18) ---

// Kills: the kind, dependsOn and permission literals emptied or filled.
test('ruleRepair: planned as the EventBridge rule, needing the four events writes on that rule', () => {
  const r = repair()
  assert.equal(r.address, 'events-rule-repair.r')
  assert.equal(r.kind, 'EventBridge rule')
  assert.equal(r.name, 'r')
  assert.equal(r.group, 'g')
  assert.deepEqual(r.dependsOn, [])
  assert.deepEqual(r.desired, { target: QUEUE, state: 'ENABLED' })
  assert.deepEqual(r.permissions, [
    { action: 'events:PutTargets', resource: ARN },
    { action: 'events:RemoveTargets', resource: ARN },
    { action: 'events:EnableRule', resource: ARN },
    { action: 'events:TagResource', resource: ARN },
  ])
})

// Kills: observe made to return nothing.
test('observe: reads the rule by name with its targets and tags; a gone rule is null', async () => {
  const env = recordingEnv({
    aws: {
      DescribeRule: () => ({ Arn: ARN, State: 'DISABLED' }),
      ListTargetsByRule: () => ({ Targets: [{ Id: 'o', Arn: OLD }] }),
      ListTagsForResource: () => ({ Tags: [{ Key: 'team', Value: 'x' }] }),
    },
  })
  assert.deepEqual(await repair().observe(env.env), {
    arn: ARN,
    state: 'DISABLED',
    pattern: null,
    targets: [{ Id: 'o', Arn: OLD }],
    tags: { team: 'x' },
  })
  assert.equal(await repair().observe(recordingEnv().env), null)
})

// Kills: the gone-rule verdict's condition and literals; apply's `if (!cur) return` removed.
test('a rule gone since the plan: blocked, and apply writes nothing', async () => {
  assert.deepEqual(repair().verdict(null), { action: 'update', changes: [], blocked: 'rule r is gone' })
  const env = recordingEnv()
  await repair().apply(env.env, null)
  assert.deepEqual(env.awsCalls, [])
})

// Kills: `targets.some` made `every` in the verdict and in apply.
test('a rule sending to the queue and to another target: unchanged, and apply adds no target', async () => {
  const cur = rule({
    targets: [
      { Id: 'q', Arn: QUEUE },
      { Id: 'l', Arn: 'arn:aws:lambda:f' },
    ],
  })
  assert.deepEqual(repair().verdict(cur), { action: 'unchanged', changes: [] })
  const env = recordingEnv()
  await repair().apply(env.env, cur)
  assert.deepEqual(env.awsCalls, [])
})

// Kills: the `now.length === 0` early return removed (an old record would be written again).
test('only a target added to a rule with an old record: nothing recorded, only PutTargets', async () => {
  const { verdict, ops } = await planAndApply(rule({ tags: { [RETARGETED]: `DISABLED ${OLD}` } }))
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [{ field: 'target', to: QUEUE }],
    note: 'kept, not duplicated; only the queue target is added, so nothing is recorded',
  })
  assert.deepEqual(ops, ['PutTargets'])
})

// Kills: every write's service, op and input literal; the RemoveTargets id filter (an empty id and the
// queue target's own id are never removed).
test('a disabled rule with stale targets: exactly tag, put, remove, enable, each on eventbridge', async () => {
  const cur = rule({
    state: 'DISABLED',
    targets: [
      { Id: 'o', Arn: OLD },
      { Id: '', Arn: OLD },
      { Id: 'KarpenterInterruptionQueueTarget', Arn: OLD },
    ],
  })
  assert.deepEqual(repair().verdict(cur).changes, [
    { field: 'target', to: QUEUE },
    { field: 'target', from: OLD },
    { field: 'target', from: OLD },
    { field: 'target', from: OLD },
    { field: 'state', from: 'DISABLED', to: 'ENABLED' },
  ])
  const env = recordingEnv()
  await repair().apply(env.env, cur)
  assert.deepEqual(
    env.awsCalls.map((c) => c.service),
    ['eventbridge', 'eventbridge', 'eventbridge', 'eventbridge'],
  )
  assert.deepEqual(env.awsWrites, [
    {
      op: 'TagResource',
      input: { ResourceARN: ARN, Tags: [{ Key: 'karpctl.io/retargeted-from', Value: `DISABLED ${OLD}` }] },
    },
    {
      op: 'PutTargets',
      input: { Rule: 'r', Targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE }] },
    },
    { op: 'RemoveTargets', input: { Rule: 'r', Ids: ['o'] } },
    { op: 'EnableRule', input: { Name: 'r' } },
  ])
})

/** A disabled rule whose one stale target's ARN makes the record exactly `length` characters long. */
const recordOf = (length: number) => {
  const arn = `${OLD}-${'x'.repeat(length - 'DISABLED '.length - OLD.length - 1)}`
  const r = ruleRepair({
    name: 'r',
    arn: ARN,
    queueArn: QUEUE,
    targetId: 'T',
    staleQueueArns: [arn],
    group: 'g',
  })
  return { r, cur: rule({ state: 'DISABLED', targets: [{ Id: 'o', Arn: arn }] }), record: `DISABLED ${arn}` }
}

// Kills: `> TAG_VALUE_MAX` made `>=`, and the tag value's cut removed.
test('the record at the 256-character tag limit is written whole; one past it is cut, and the note says so', async () => {
  const at = recordOf(256)
  assert.equal(at.record.length, 256)
  assert.equal(
    at.r.verdict(at.cur).note,
    `kept, not duplicated; its state DISABLED and the removed queue targets recorded as the ${RETARGETED} tag`,
  )
  const past = recordOf(257)
  assert.equal(
    past.r.verdict(past.cur).note,
    `kept, not duplicated; its state DISABLED and the removed queue targets recorded as the ${RETARGETED} tag (the first 256 characters)`,
  )
  const env = recordingEnv()
  await past.r.apply(env.env, past.cur)
  assert.deepEqual(env.awsWrites[0], {
    op: 'TagResource',
    input: { ResourceARN: ARN, Tags: [{ Key: RETARGETED, Value: past.record.slice(0, 256) }] },
  })
})
