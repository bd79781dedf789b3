// The ownership model end to end on an in-memory account: what --adopt does to a resource another tool
// made (never the created marks; only additions, each recorded), and what teardown does after it (the
// resource kept, byte for byte as it was before the adoption).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { eventRule } from '../../../src/plan/resources/event-rule.js'
import { iamRole } from '../../../src/plan/resources/iam-role.js'
import { kubeObject } from '../../../src/plan/resources/kube-object.js'
import { iamRoleAbsent } from '../../../src/plan/resources/iam-role-absent.js'
import { sqsQueue } from '../../../src/plan/resources/sqs-queue.js'
import { queueAbsent } from '../../../src/plan/resources/sqs-queue-absent.js'
import { ruleAbsent } from '../../../src/plan/resources/event-rule-absent.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import { queuePolicy, QUEUE_ATTRIBUTES } from '../../../src/desired/interruption.js'
import {
  ADOPTED_BY,
  ownershipOf,
  ownershipTags,
  readRecord,
  recordKeys,
  recordTags,
  USED_AS_IT_IS,
} from '../../../src/desired/ownership.js'
import { fakeAccount, type FakeAccount } from '../../helpers/fake-aws-state.js'

const OWN = ownershipTags('demo')
const QUEUE_ARN = 'arn:aws:sqs:us-west-2:123456789012:demo'

async function run(resources: Resource[], env: ApplyEnv) {
  const plan = await buildPlan('t', resources, env)
  const result = await applyPlan(plan, env)
  return { plan, result }
}

test('ownershipOf: created needs both marks of this cluster; adopted is its own mark; the rest is foreign', () => {
  assert.equal(ownershipOf(OWN, 'demo'), 'created')
  assert.equal(ownershipOf(ownershipTags('other'), 'demo'), 'foreign')
  assert.equal(ownershipOf({ 'karpctl.io/managed-by': 'karpctl' }, 'demo'), 'foreign')
  assert.equal(ownershipOf({ [ADOPTED_BY]: 'demo' }, 'demo'), 'adopted')
  assert.equal(ownershipOf({ [ADOPTED_BY]: 'other' }, 'demo'), 'foreign')
  assert.equal(ownershipOf(undefined, 'demo'), 'foreign')
  // Adopted by this cluster but also carrying the created marks is created: teardown may delete it.
  assert.equal(ownershipOf({ ...OWN, [ADOPTED_BY]: 'demo' }, 'demo'), 'created')
})

test('records longer than a tag value continue in numbered keys and read back whole', () => {
  const names = Array.from(
    { length: 8 },
    (_, i) => `KarpenterControllerSomethingPolicy${i}-a-long-cluster-name`,
  )
  const tags = recordTags('karpctl.io/added-inline-policies', names)
  assert.ok(Object.values(tags).every((v) => v.length <= 256))
  assert.deepEqual(Object.keys(tags), [
    'karpctl.io/added-inline-policies',
    'karpctl.io/added-inline-policies-2',
  ])
  assert.deepEqual(readRecord(tags, 'karpctl.io/added-inline-policies'), names)
  assert.deepEqual(recordKeys(tags, 'karpctl.io/added-inline-policies'), Object.keys(tags))
  assert.deepEqual(recordTags('k', []), {})
  assert.deepEqual(readRecord({}, 'k'), [])
  assert.deepEqual(recordTags('k', ['a', 'a', 'b']), { k: 'a b' })
})

const stackTrust: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Principal: { Federated: 'arn:aws:iam::123456789012:oidc-provider/oidc.example/id/X' },
      Action: 'sts:AssumeRoleWithWebIdentity',
    },
  ],
}
const podIdentityTrust: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Principal: { Service: 'pods.eks.amazonaws.com' },
      Action: ['sts:AssumeRole', 'sts:TagSession'],
    },
  ],
}
const doc = (sid: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Sid: sid, Effect: 'Allow', Action: 'ec2:DescribeImages', Resource: '*' }],
})

function stackAccount(): FakeAccount {
  return {
    roles: {
      'demo-karpenter': {
        trust: stackTrust,
        tags: { 'alpha.eksctl.io/cluster-name': 'demo' },
        attached: ['arn:aws:iam::123456789012:policy/KarpenterControllerPolicy-demo'],
        inline: { Own: doc('Own') },
      },
    },
    queues: {
      demo: {
        arn: QUEUE_ARN,
        attributes: {
          MessageRetentionPeriod: '300',
          Policy: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
        },
        tags: { team: 'platform' },
      },
    },
    rules: {
      'Karpenter-demo-SpotInterruption': {
        arn: 'arn:aws:events:us-west-2:123456789012:rule/Karpenter-demo-SpotInterruption',
        state: 'DISABLED',
        pattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
        targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: 'arn:aws:sqs:us-west-2:123456789012:old' }],
        tags: {},
      },
    },
  }
}

const role = (adopt: boolean) =>
  iamRole({
    address: 'iam-role.controller',
    name: 'demo-karpenter',
    arn: 'arn:aws:iam::123456789012:role/demo-karpenter',
    description: 'd',
    trust: podIdentityTrust,
    managed: [{ arn: 'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore' }],
    inline: [
      { name: 'KarpenterControllerA-demo', document: doc('A') },
      { name: 'KarpenterControllerB-demo', document: doc('B') },
    ],
    tags: OWN,
    ownership: OWN,
    adopt,
    notOursHint: 'pass --adopt',
  })

test('a role another tool made: blocked without --adopt; adopted with only recorded additions, never the created marks', async () => {
  const acct = fakeAccount(stackAccount())
  const blocked = await buildPlan('t', [role(false)], acct.env)
  assert.match(blocked.steps[0]!.verdict.blocked ?? '', /exists and was not made by karpctl .*pass --adopt/)

  const { plan } = await run([role(true)], acct.env)
  const v = plan.steps[0]!.verdict
  assert.equal(v.action, 'update')
  assert.match(v.note ?? '', /^adopted \(not karpctl's\)/)
  assert.deepEqual(
    v.changes.map((c) => c.field),
    ['trust statement', 'attached policy', 'inline policy', 'inline policy', `tags.${ADOPTED_BY}`],
  )
  const r = acct.state.roles['demo-karpenter']!
  assert.equal(r.tags['karpctl.io/managed-by'], undefined)
  assert.equal(r.tags['karpctl.io/cluster'], undefined)
  assert.equal(r.tags[ADOPTED_BY], 'demo')
  assert.equal(
    r.tags['karpctl.io/added-inline-policies'],
    'KarpenterControllerA-demo KarpenterControllerB-demo',
  )
  assert.equal(r.tags['karpctl.io/attached-policies'], 'AmazonSSMManagedInstanceCore')
  // The role's own statement, inline policy and attachment stay; karpctl's statement comes after them.
  assert.deepEqual((r.trust as typeof stackTrust).Statement[0], stackTrust.Statement[0])
  assert.equal((r.trust as { Statement: { Sid?: string }[] }).Statement[1]!.Sid, 'KarpctlAdopted0')
  assert.deepEqual(r.inline.Own, doc('Own'))
  // The record is written before the changes it lists.
  assert.equal(acct.writes[0]![0], 'TagRole')

  // A re-run is unchanged, and needs no --adopt any more (the adoption is recorded).
  const again = await buildPlan('t', [role(false)], acct.env)
  assert.equal(again.steps[0]!.verdict.action, 'unchanged')
  assert.equal(again.steps[0]!.verdict.blocked, undefined)
})

test('teardown after an adoption keeps the role and gives it back exactly as it was', async () => {
  const before = stackAccount()
  const acct = fakeAccount(before)
  await run([role(true)], acct.env)
  const absent = iamRoleAbsent({
    address: 'iam-role.controller',
    name: 'demo-karpenter',
    ownership: OWN,
    dependsOn: [],
  })
  const { plan } = await run([absent], acct.env)
  assert.equal(plan.steps[0]!.verdict.action, 'update')
  assert.match(plan.steps[0]!.verdict.note ?? '', /given back/)
  assert.ok(!acct.writes.some(([op]) => op === 'DeleteRole'))
  assert.deepEqual(acct.state.roles, before.roles)
  // Nothing left to give back: a second teardown is unchanged.
  const again = await buildPlan('t', [absent], acct.env)
  assert.equal(again.steps[0]!.verdict.action, 'unchanged')
})

test("an inline policy of the role named as one of karpctl's blocks the adoption instead of being overwritten", async () => {
  const a = stackAccount()
  a.roles['demo-karpenter']!.inline['KarpenterControllerA-demo'] = doc('Theirs')
  const acct = fakeAccount(a)
  const plan = await buildPlan('t', [role(true)], acct.env)
  assert.match(
    plan.steps[0]!.verdict.blocked ?? '',
    /inline policies of its own named as karpctl's \(KarpenterControllerA-demo\)/,
  )
})

test('a created role is still deleted by teardown', async () => {
  const acct = fakeAccount({
    roles: {
      'demo-karpenter': { trust: podIdentityTrust, tags: OWN, attached: [], inline: { X: doc('X') } },
    },
    queues: {},
    rules: {},
  })
  await run(
    [
      iamRoleAbsent({
        address: 'iam-role.controller',
        name: 'demo-karpenter',
        ownership: OWN,
        dependsOn: [],
      }),
    ],
    acct.env,
  )
  assert.deepEqual(acct.state.roles, {})
})

const queue = (adopt: boolean) =>
  sqsQueue({
    name: 'demo',
    arn: QUEUE_ARN,
    attributes: { ...QUEUE_ATTRIBUTES },
    policy: queuePolicy(QUEUE_ARN),
    tags: OWN,
    ownership: OWN,
    adopt,
  })

test('a queue another tool made: adopted without the created marks; teardown keeps it and its policy as found', async () => {
  const before = stackAccount()
  const acct = fakeAccount(before)
  assert.ok((await buildPlan('t', [queue(false)], acct.env)).steps[0]!.verdict.blocked)
  await run([queue(true)], acct.env)
  const q = acct.state.queues.demo!
  assert.equal(q.tags['karpctl.io/managed-by'], undefined)
  assert.equal(q.tags[ADOPTED_BY], 'demo')
  assert.equal(q.tags['karpctl.io/added-policy-statements'], 'send,DenyHTTP')
  assert.equal(q.attributes.MessageRetentionPeriod, '300')
  assert.equal((JSON.parse(q.attributes.Policy!) as { Statement: unknown[] }).Statement.length, 2)

  const { plan } = await run([queueAbsent({ name: 'demo', ownership: OWN, dependsOn: [] })], acct.env)
  assert.equal(plan.steps[0]!.verdict.action, 'update')
  assert.ok(!acct.writes.some(([op]) => op === 'DeleteQueue'))
  assert.deepEqual(
    {
      ...acct.state.queues.demo!,
      attributes: {
        ...acct.state.queues.demo!.attributes,
        Policy: JSON.parse(acct.state.queues.demo!.attributes.Policy!),
      },
    },
    {
      ...before.queues.demo!,
      attributes: {
        ...before.queues.demo!.attributes,
        Policy: JSON.parse(before.queues.demo!.attributes.Policy!),
      },
    },
  )
})

const rule = (adopt: boolean): Resource => ({
  ...eventRule({
    key: 'SpotInterruptionRule',
    name: 'Karpenter-demo-SpotInterruption',
    arn: 'arn:aws:events:us-west-2:123456789012:rule/Karpenter-demo-SpotInterruption',
    eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    queueArn: QUEUE_ARN,
    targetId: 'KarpenterInterruptionQueueTarget',
    tags: OWN,
    ownership: OWN,
    adopt,
  }),
  dependsOn: [],
})

test('a rule another tool made: adopted with its targets kept; teardown takes back the target and the state', async () => {
  const before = stackAccount()
  const acct = fakeAccount(before)
  assert.ok((await buildPlan('t', [rule(false)], acct.env)).steps[0]!.verdict.blocked)
  await run([rule(true)], acct.env)
  const r = acct.state.rules['Karpenter-demo-SpotInterruption']!
  assert.equal(r.state, 'ENABLED')
  assert.equal(r.tags['karpctl.io/managed-by'], undefined)
  // The reference id is taken by the rule's own target: karpctl's gets one of its own.
  assert.deepEqual(
    r.targets.map((t) => t.Id),
    ['KarpenterInterruptionQueueTarget', 'karpctl-demo'],
  )
  assert.equal(r.tags['karpctl.io/added-target'], 'karpctl-demo')

  await run(
    [
      ruleAbsent({
        key: 'SpotInterruptionRule',
        name: 'Karpenter-demo-SpotInterruption',
        ownership: OWN,
        dependsOn: [],
      }),
    ],
    acct.env,
  )
  assert.ok(!acct.writes.some(([op]) => op === 'DeleteRule'))
  assert.deepEqual(acct.state.rules, before.rules)
})

test('a rule with another event pattern is never adopted', async () => {
  const a = stackAccount()
  a.rules['Karpenter-demo-SpotInterruption']!.pattern = { source: ['aws.health'] }
  const plan = await buildPlan('t', [rule(true)], fakeAccount(a).env)
  assert.match(plan.steps[0]!.verdict.blocked ?? '', /another event pattern/)
})

test('a Kubernetes object another tool made is used as it is on --adopt: never changed, never labelled', async () => {
  const live = {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: { amiSelectorTerms: [{ alias: 'al2023@v20240807' }] },
  }
  const applied: unknown[] = []
  const env = {
    ...fakeAccount(stackAccount()).env,
    kube: { get: async () => live, apply: async (_p: string, o: unknown) => applied.push(o) },
  } as unknown as ApplyEnv
  const want = (adopt: boolean) =>
    kubeObject({
      address: 'kube.ec2nodeclass.default',
      object: {
        ...live,
        metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } },
        spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }] },
      },
      ownerLabel: ['app.kubernetes.io/managed-by', 'karpctl'],
      adopt,
      dependsOn: [],
    })
  assert.match((await buildPlan('t', [want(false)], env)).steps[0]!.verdict.blocked ?? '', /pass --adopt/)
  const { plan } = await run([want(true)], env)
  assert.equal(plan.steps[0]!.verdict.action, 'unchanged')
  assert.match(plan.steps[0]!.verdict.note ?? '', /used as it is/)
  assert.deepEqual(applied, [])
})

test("another tool's queue and rule that already are what karpctl needs are used as they are: no --adopt, no mark, no write", async () => {
  const a = stackAccount()
  a.queues.demo!.attributes.Policy = JSON.stringify(queuePolicy(QUEUE_ARN))
  a.rules['Karpenter-demo-SpotInterruption']!.state = 'ENABLED'
  a.rules['Karpenter-demo-SpotInterruption']!.targets = [{ Id: 'x', Arn: QUEUE_ARN }]
  const acct = fakeAccount(a)
  const { plan } = await run([queue(false), rule(false)], acct.env)
  assert.deepEqual(
    plan.steps.map((s) => [s.verdict.action, s.verdict.blocked, s.verdict.note]),
    [
      ['unchanged', undefined, USED_AS_IT_IS],
      ['unchanged', undefined, USED_AS_IT_IS],
    ],
  )
  assert.deepEqual(acct.writes, [])
})
