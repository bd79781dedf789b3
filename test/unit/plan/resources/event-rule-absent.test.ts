// An interruption rule's teardown, call by call: reads, verdicts for karpctl's own, an adopted one
// and another tool's, and exactly which writes its apply makes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDED_TARGET, ENABLED_FROM } from '../../../../src/plan/resources/event-rule.js'
import { ruleAbsent } from '../../../../src/plan/resources/event-rule-absent.js'
import { ADOPTED_BY } from '../../../../src/desired/ownership.js'
import { OWN, tagList, GONE, FOREIGN_NOTE, env, run, type Answer } from '../../../helpers/teardown-env.js'

const RULE = 'Karpenter-demo-SpotInterruption'
const RULE_ARN = `arn:aws:events:us-west-2:123456789012:rule/${RULE}`
const rule = (keptNote?: string) =>
  ruleAbsent({
    key: 'SpotInterruptionRule',
    name: RULE,
    ownership: OWN,
    dependsOn: ['helm.karpenter'],
    keptNote,
  })
const ruleAnswers = (tags: Record<string, string>, targets: string[]): Record<string, Answer> => ({
  DescribeRule: (i) => (i.Name === RULE ? { Arn: RULE_ARN } : assert.fail(`DescribeRule ${String(i.Name)}`)),
  ListTargetsByRule: (i) => {
    assert.deepEqual(i, { Rule: RULE })
    return { Targets: targets.map((Id) => ({ Id, Arn: 'q' })) }
  },
  ListTagsForResource: (i) => {
    assert.deepEqual(i, { ResourceARN: RULE_ARN })
    return { Tags: tagList(tags) }
  },
})

test('rule: its shape; gone is "already gone" and writes nothing', async () => {
  const r = rule()
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired, r.permissions],
    [
      'events-rule.SpotInterruptionRule',
      'EventBridge rule',
      RULE,
      'Interruption handling',
      ['helm.karpenter'],
      { absent: true },
      [],
    ],
  )
  const e = env()
  const { cur, verdict } = await run(r, e.env)
  assert.equal(cur, null)
  assert.deepEqual(verdict, GONE)
  assert.deepEqual(e.writes, [])
})

test("rule: karpctl's own is deleted, its targets removed first; without targets only deleted", async () => {
  const e = env({ aws: ruleAnswers(OWN, ['KarpenterInterruptionQueueTarget', 'other']) })
  const { cur, verdict } = await run(rule(), e.env)
  assert.deepEqual(cur, {
    owner: undefined,
    arn: RULE_ARN,
    targets: ['KarpenterInterruptionQueueTarget', 'other'],
    tags: OWN,
  })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [
    ['RemoveTargets', { Rule: RULE, Ids: ['KarpenterInterruptionQueueTarget', 'other'] }],
    ['DeleteRule', { Name: RULE }],
  ])
  assert.ok(
    !e.reads.some(([op]) => op === 'DescribeStackResources'),
    'no stack asked about for karpctl’s own',
  )
  const bare = env({ aws: ruleAnswers(OWN, []) })
  await run(rule(), bare.env)
  assert.deepEqual(bare.writes, [['DeleteRule', { Name: RULE }]])
})

test('rule: an adopted one loses the target karpctl added, is disabled again, and loses the records', async () => {
  const tags = {
    [ADOPTED_BY]: 'demo',
    [ADDED_TARGET]: 'karpctl-demo',
    [ENABLED_FROM]: 'DISABLED',
    'aws:cloudformation:stack-name': 'Karpenter-demo',
  }
  const e = env({ aws: ruleAnswers(tags, ['KarpenterInterruptionQueueTarget', 'karpctl-demo']) })
  const { verdict } = await run(rule(), e.env)
  assert.ok(
    e.reads.some(
      ([op, i]) =>
        op === 'DescribeStackResources' && (i as { PhysicalResourceId?: string }).PhysicalResourceId === RULE,
    ),
  )
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'target', from: 'karpctl-demo' },
      { field: 'state', from: 'ENABLED', to: 'DISABLED' },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_TARGET}`, from: 'karpctl-demo' },
      { field: `tags.${ENABLED_FROM}`, from: 'DISABLED' },
    ],
    note: "kept: made by CloudFormation stack Karpenter-demo (`aws cloudformation delete-stack --stack-name Karpenter-demo`); karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [
    ['RemoveTargets', { Rule: RULE, Ids: ['karpctl-demo'] }],
    ['DisableRule', { Name: RULE }],
    ['UntagResource', { ResourceARN: RULE_ARN, TagKeys: [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM] }],
  ])
})

test('rule: a recorded target already gone and a rule that was enabled: only the records go', async () => {
  const tags = { [ADOPTED_BY]: 'demo', [ADDED_TARGET]: 'karpctl-demo', [ENABLED_FROM]: 'ENABLED' }
  const e = env({ aws: ruleAnswers(tags, ['KarpenterInterruptionQueueTarget']) })
  const { verdict } = await run(rule('kept: the install’s own'), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'state', from: 'ENABLED', to: 'ENABLED' },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_TARGET}`, from: 'karpctl-demo' },
      { field: `tags.${ENABLED_FROM}`, from: 'ENABLED' },
    ],
    note: "kept: the install’s own; karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [
    ['UntagResource', { ResourceARN: RULE_ARN, TagKeys: [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM] }],
  ])
})

test("rule: another tool's without records is kept as it is, nothing written", async () => {
  const e = env({ aws: ruleAnswers({ team: 'x' }, ['t']) })
  const { verdict } = await run(rule(), e.env)
  assert.deepEqual(verdict, { action: 'unchanged', changes: [], note: FOREIGN_NOTE })
  assert.deepEqual(e.writes, [])
})

const denied = () => {
  throw Object.assign(new Error('not authorized'), { name: 'AccessDenied' })
}

test('a rule read that fails other than "not found" is thrown, never taken for gone', async () => {
  // Kills: orNull swallowing every error (its catch emptied or its test forced).
  await assert.rejects(rule().observe(env({ aws: { DescribeRule: denied } }).env), { name: 'AccessDenied' })
})

test('empty answers: a rule without tags or targets', async () => {
  const r = env({
    aws: {
      DescribeRule: () => ({ Arn: RULE_ARN }),
      ListTargetsByRule: () => ({}),
      ListTagsForResource: () => ({}),
    },
  })
  assert.deepEqual(await rule().observe(r.env), { owner: undefined, arn: RULE_ARN, targets: [], tags: {} })
})
