import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RuleState } from '../../../src/plan/resources/event-rule.js'
import { RETARGETED, ruleRepair } from '../../../src/plan/resources/rule-repair.js'
import type { ApplyEnv } from '../../../src/plan/types.js'

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
