// The interruption repairs, built from hand-made findings: a missing queue (created as install makes
// it, with the rules that do not already send to it), its policy (the reference statements added, or
// manual on a stack's queue), the setting's ARN (a Helm edit), and the rules (created, or repaired in
// place with the finding's target id — manual on a stack's rule).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import { queueFix, rules } from '../../../src/fix/interruption.js'
import { interruptionRules, QUEUE_ATTRIBUTES, queuePolicy } from '../../../src/desired/interruption.js'
import { recordingEnv } from '../../helpers/recording-env.js'
import { ACCOUNT, CLUSTER, failed, healthyFacts, ok, QUEUE_ARN, REGION } from '../../helpers/facts.js'
import { GS_STACK, ownedBy, ownerUnknown, QUEUE_URL } from '../../helpers/owners.js'

const fail = (over: Partial<Finding> = {}): Finding => ({ status: 'fail', message: 'm', ...over })
const TAGS = { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': CLUSTER }
const RULES = interruptionRules(CLUSTER)
const subjectOf = (r: (typeof RULES)[number]) =>
  `${r.eventPattern.source[0]} / ${r.eventPattern['detail-type'][0]}`
const NEW_QUEUE = 'karpenter-new'
const NEW_ARN = `arn:aws:sqs:${REGION}:${ACCOUNT}:${NEW_QUEUE}`

test('queueFix: a missing queue is created with the template attributes and policy, and all five rules after it', () => {
  const facts = healthyFacts((f) => {
    f.events.rules = ok([])
  })
  const q = fail({ code: 'queue-missing', evidence: { interruptionQueue: NEW_QUEUE } })
  const built = queueFix(facts, [q], 'interruption-queue', {})
  assert.deepEqual([built.manual, built.values, [...built.why!]], [[], [], []])
  const [queue, ...ruleResources] = built.resources
  assert.deepEqual(
    [queue!.address, queue!.name, queue!.group, queue!.permissions[0]!.resource],
    ['sqs-queue.interruption', NEW_QUEUE, 'fix: interruption-queue', NEW_ARN],
  )
  assert.deepEqual(queue!.desired.attributes, QUEUE_ATTRIBUTES)
  assert.deepEqual(queue!.documents, { policy: queuePolicy(NEW_ARN) })
  assert.deepEqual(queue!.desired.tags, TAGS)
  assert.deepEqual(
    ruleResources.map((r) => [
      r.address,
      r.name,
      r.group,
      r.dependsOn,
      r.desired,
      r.permissions[0]!.resource,
    ]),
    RULES.map((r) => [
      `events-rule.${r.key}`,
      r.name,
      'fix: interruption-queue',
      ['sqs-queue.interruption'],
      { name: r.name, eventPattern: r.eventPattern, target: NEW_ARN, tags: TAGS },
      `arn:aws:events:${REGION}:${ACCOUNT}:rule/${r.name}`,
    ]),
  )
})

test('queueFix: the rules that already send the same events to the new queue are not made again', () => {
  const [spot] = RULES.filter((r) => r.key === 'SpotInterruptionRule')
  const facts = healthyFacts((f) => {
    f.events.rules = ok([
      // Sends the spot warnings to the new queue already.
      {
        name: 'mine',
        arn: 'arn:r/mine',
        state: 'ENABLED',
        eventPattern: spot!.eventPattern,
        targetArns: [NEW_ARN],
        targets: [{ id: 'x', arn: NEW_ARN }],
      },
      // Same events to another queue, and other events to the new one: neither counts.
      {
        name: 'other-queue',
        arn: 'arn:r/o',
        state: 'ENABLED',
        eventPattern: RULES[0]!.eventPattern,
        targetArns: [QUEUE_ARN],
        targets: [{ id: 'x', arn: QUEUE_ARN }],
      },
      {
        name: 'other-events',
        arn: 'arn:r/e',
        state: 'ENABLED',
        eventPattern: { source: ['aws.s3'], 'detail-type': ['Object Created'] },
        targetArns: [NEW_ARN],
        targets: [{ id: 'x', arn: NEW_ARN }],
      },
    ])
  })
  const q = fail({ code: 'queue-missing', evidence: { interruptionQueue: NEW_QUEUE } })
  const built = queueFix(facts, [q], 'c', {})
  assert.deepEqual(
    built.resources.map((r) => r.address),
    ['sqs-queue.interruption', ...RULES.filter((r) => r !== spot).map((r) => `events-rule.${r.key}`)],
  )
  // No rules read: all five.
  const unread = healthyFacts((f) => {
    f.events.rules = failed('rules')
  })
  assert.equal(queueFix(unread, [q], 'c', {}).resources.length, 6)
})

test('queueFix: a queue-missing finding without the name, or another code with it, is manual', () => {
  const noName = fail({ code: 'queue-missing', evidence: {} })
  const noEvidence = fail({ code: 'queue-missing' })
  const otherCode = fail({ code: 'other', evidence: { interruptionQueue: NEW_QUEUE } })
  const built = queueFix(healthyFacts(), [noName, noEvidence, otherCode], 'c', {})
  assert.deepEqual([built.resources, built.manual, built.values], [[], [noName, noEvidence, otherCode], []])
})

const policyFinding = (over: Partial<Finding> = {}) =>
  fail({ subject: QUEUE_ARN, evidence: { missing: ['events.amazonaws.com'] }, ...over })

test("queueFix: a queue policy without the senders gets the reference statements; not on a stack's queue", () => {
  const free = queueFix(healthyFacts(), [policyFinding()], 'interruption-queue', {})
  assert.deepEqual(
    free.resources.map((r) => [r.address, r.name, r.group, r.permissions[0]!.resource]),
    [['sqs-queue-policy.interruption', CLUSTER, 'fix: interruption-queue', QUEUE_ARN]],
  )
  assert.deepEqual(free.manual, [])

  const f = policyFinding({ message: 'no senders' })
  const stack = healthyFacts((x) => ownedBy(x, QUEUE_URL, GS_STACK, 'Q', 'AWS::SQS::Queue'))
  const held = queueFix(stack, [f], 'c', {})
  assert.deepEqual(held.resources, [])
  assert.deepEqual(held.manual, [
    { ...f, message: `no senders (managed by CloudFormation stack ${GS_STACK}: change it there)` },
  ])
  assert.deepEqual(
    [...held.why!.values()],
    [
      `queue ${CLUSTER} belongs to CloudFormation stack ${GS_STACK}: change it in the stack, a direct change is drift the stack reverts`,
    ],
  )
  assert.equal(held.why!.get(held.manual[0]!), [...held.why!.values()][0])
  // An owner that could not be asked holds it too.
  const unknown = queueFix(
    healthyFacts((x) => ownerUnknown(x, QUEUE_URL)),
    [f],
    'c',
    {},
  )
  assert.deepEqual([unknown.resources, unknown.manual], [[], [f]])
  assert.match(unknown.why!.get(f) ?? '', /^whether a CloudFormation stack owns queue demo is not known/)
})

test('queueFix: a policy finding without the queue read, or about no ARN, is manual', () => {
  const f = policyFinding()
  const noQueue = queueFix(
    healthyFacts((x) => {
      x.sqs.queue = ok(null)
    }),
    [f],
    'c',
    {},
  )
  assert.deepEqual([noQueue.resources, noQueue.manual], [[], [f]])
  const unread = queueFix(
    healthyFacts((x) => {
      x.sqs.queue = failed('queue')
    }),
    [f],
    'c',
    {},
  )
  assert.deepEqual([unread.resources, unread.manual], [[], [f]])
  const notArn = policyFinding({ subject: CLUSTER })
  const noSubject = fail({ evidence: { missing: [] } })
  assert.deepEqual(queueFix(healthyFacts(), [notArn, noSubject], 'c', {}).manual, [notArn, noSubject])
})

const reference = (evidence: Record<string, unknown>) => fail({ code: 'queue-reference', evidence })

test("queueFix: the queue's ARN in a values path becomes its name in the Helm edit; the env var, elsewhere and no release are manual", () => {
  const set = reference({ queueName: CLUSTER, source: 'settings.interruptionQueue' })
  const aws = reference({ queueName: CLUSTER, source: 'settings.aws.interruptionQueueName' })
  const env = reference({ queueName: CLUSTER, source: 'INTERRUPTION_QUEUE' })
  const elsewhere = reference({ queueName: CLUSTER, source: 'settings.interruptionQueue', elsewhere: true })
  const noName = reference({ queueName: null, source: 'settings.interruptionQueue' })
  const noSource = reference({ queueName: CLUSTER })
  const otherCode = fail({
    code: 'x',
    evidence: { queueName: CLUSTER, source: 'settings.interruptionQueue' },
  })
  const built = queueFix(healthyFacts(), [set, aws, env, elsewhere, noName, noSource, otherCode], 'c', {})
  assert.deepEqual(
    built.values!.map((e) => [e.path, e.value, e.finding]),
    [
      [['settings', 'interruptionQueue'], CLUSTER, set],
      [['settings', 'aws', 'interruptionQueueName'], CLUSTER, aws],
    ],
  )
  assert.deepEqual(built.manual, [env, elsewhere, noName, noSource, otherCode])
  const noRelease = queueFix(
    healthyFacts((x) => {
      x.kube.release = failed('release')
    }),
    [set],
    'c',
    {},
  )
  assert.deepEqual([noRelease.values, noRelease.manual], [[], [set]])
})

const ruleMissing = (r: (typeof RULES)[number]) => fail({ code: 'rule-missing', subject: subjectOf(r) })

test('rules: each missing rule is created as install names it, to the queue, after nothing', () => {
  const facts = healthyFacts()
  const [a, b] = [ruleMissing(RULES[0]!), ruleMissing(RULES[2]!)]
  const unknownSubject = fail({ code: 'rule-missing', subject: 'aws.s3 / Object Created' })
  const other = fail({ code: 'something' })
  const built = rules(facts, [a, unknownSubject, b, other], 'interruption-rules', {})
  assert.deepEqual(
    built.resources.map((r) => [r.address, r.name, r.group, r.dependsOn, r.desired]),
    [RULES[0]!, RULES[2]!].map((r) => [
      `events-rule.${r.key}`,
      r.name,
      'fix: interruption-rules',
      [],
      { name: r.name, eventPattern: r.eventPattern, target: QUEUE_ARN, tags: TAGS },
    ]),
  )
  assert.deepEqual(built.manual, [unknownSubject, other])
  assert.deepEqual([...built.why!], [])
})

test('rules: without the queue, a missing rule is manual (nothing to send to)', () => {
  const facts = healthyFacts((f) => {
    f.sqs.queue = ok(null)
  })
  const a = ruleMissing(RULES[0]!)
  assert.deepEqual(rules(facts, [a], 'c', {}).resources, [])
  assert.deepEqual(rules(facts, [a], 'c', {}).manual, [a])
})

const repair = (rule: string, over: Record<string, unknown> = {}) =>
  fail({
    code: 'rule-repair',
    subject: `arn:aws:events:${REGION}:${ACCOUNT}:rule/${rule}`,
    message: `${rule} broken`,
    evidence: { rule, queueArn: QUEUE_ARN, targetId: 'T1', ...over },
  })

test('rules: a rule repaired in place gets the queue as a target with the given id; the stale queues are removed', async () => {
  const old = `arn:aws:sqs:${REGION}:${ACCOUNT}:old`
  const f = repair('Karpenter-demo-Rebalance', { otherQueues: [old] })
  const built = rules(healthyFacts(), [f], 'interruption-rules', {})
  assert.deepEqual(built.manual, [])
  const [r, ...more] = built.resources
  assert.equal(more.length, 0)
  assert.deepEqual(
    [r!.address, r!.group, r!.permissions[0]!.resource],
    ['events-rule-repair.Karpenter-demo-Rebalance', 'fix: interruption-rules', f.subject],
  )
  const cur = {
    arn: f.subject!,
    state: 'ENABLED',
    pattern: null,
    targets: [{ Id: 'Old', Arn: old }],
    tags: {},
  }
  assert.deepEqual(r!.verdict(cur).changes, [
    { field: 'target', to: QUEUE_ARN },
    { field: 'target', from: old },
  ])
  const rec = recordingEnv()
  await r!.apply(rec.env, cur)
  assert.deepEqual(
    rec.awsWrites.filter((w) => w.op !== 'TagResource'),
    [
      {
        op: 'PutTargets',
        input: { Rule: 'Karpenter-demo-Rebalance', Targets: [{ Id: 'T1', Arn: QUEUE_ARN }] },
      },
      { op: 'RemoveTargets', input: { Rule: 'Karpenter-demo-Rebalance', Ids: ['Old'] } },
    ],
  )
  // No other queues named: none removed.
  const [plain] = rules(healthyFacts(), [repair('Karpenter-demo-Rebalance')], 'c', {}).resources
  assert.deepEqual(plain!.verdict(cur).changes, [{ field: 'target', to: QUEUE_ARN }])
})

test("rules: a stack's rule is manual, naming the stack, with the others still repaired and created", () => {
  const facts = healthyFacts((f) =>
    ownedBy(f, 'Karpenter-demo-Rebalance', GS_STACK, 'R', 'AWS::Events::Rule'),
  )
  const held = repair('Karpenter-demo-Rebalance')
  const free = repair('Karpenter-demo-SpotInterruption')
  const missing = ruleMissing(RULES[0]!)
  const built = rules(facts, [held, missing, free], 'interruption-rules', {})
  assert.deepEqual(
    built.resources.map((r) => r.address),
    [`events-rule.${RULES[0]!.key}`, 'events-rule-repair.Karpenter-demo-SpotInterruption'],
  )
  const named = {
    ...held,
    message: `Karpenter-demo-Rebalance broken (managed by CloudFormation stack ${GS_STACK}: change it there)`,
  }
  assert.deepEqual(built.manual, [named])
  assert.deepEqual(
    [...built.why!.values()],
    [
      `rule Karpenter-demo-Rebalance belongs to CloudFormation stack ${GS_STACK}: change it in the stack, a direct change is drift the stack reverts`,
    ],
  )
  assert.equal(built.why!.get(built.manual[0]!), [...built.why!.values()][0])
})

test('rules: only a rule-missing finding makes a rule; a rule of the same name another tool made is not adopted', () => {
  const sameSubject = fail({ code: 'rule-disabled', subject: subjectOf(RULES[0]!) })
  const built = rules(healthyFacts(), [sameSubject], 'c', {})
  assert.deepEqual([built.resources, built.manual], [[], [sameSubject]])
  const [created] = rules(healthyFacts(), [ruleMissing(RULES[0]!)], 'c', {}).resources
  const foreign = { arn: 'arn:r', state: 'ENABLED', pattern: RULES[0]!.eventPattern, targets: [], tags: {} }
  assert.match(created!.verdict(foreign).blocked ?? '', /^exists and was not made by karpctl: pass --adopt/)
})

test("rules: a stack's rule held back leaves the other manual findings listed", () => {
  const facts = healthyFacts((f) =>
    ownedBy(f, 'Karpenter-demo-Rebalance', GS_STACK, 'R', 'AWS::Events::Rule'),
  )
  const other = fail({ code: 'something', subject: 'x' })
  const built = rules(facts, [repair('Karpenter-demo-Rebalance'), other], 'c', {})
  assert.deepEqual(
    built.manual.map((m) => m.subject),
    ['x', `arn:aws:events:${REGION}:${ACCOUNT}:rule/Karpenter-demo-Rebalance`],
  )
})
