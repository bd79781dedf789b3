// doctor --fix's repairs × the ownership of what they repair (issue 18), end to end on an in-memory
// account: a repair of a resource karpctl did not create is recorded apart from an adoption's changes,
// stays while the install it repaired runs (teardown of tenants or of an adoption keeps it), and is given
// back, leaving the resource byte for byte as it was, only when that install goes too. A role karpctl
// created is deleted whole either way.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { attachedPolicies } from '../../../src/plan/resources/attached-policies.js'
import { inlinePolicy } from '../../../src/plan/resources/inline-policy.js'
import { queuePolicyStatements } from '../../../src/plan/resources/queue-policy.js'
import { iamRoleAbsent } from '../../../src/plan/resources/iam-role-absent.js'
import { queueAbsent } from '../../../src/plan/resources/sqs-queue-absent.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import {
  ADOPTED_BY,
  ownershipTags,
  readRecord,
  recordTags,
  REPAIRED_INLINE,
  REPAIRED_POLICIES,
  REPAIRED_STATEMENTS,
} from '../../../src/desired/ownership.js'
import { fakeAccount, type FakeAccount, type FakeRole } from '../../helpers/fake-aws-state.js'

const OWN = ownershipTags('demo')
const ACCOUNT = 'arn:aws:iam::123456789012'
const QUEUE_ARN = 'arn:aws:sqs:us-west-2:123456789012:demo'
const CNI = 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy'
const WORKER = 'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy'

const doc = (sid: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Sid: sid, Effect: 'Allow', Action: 'ec2:DescribeImages', Resource: '*' }],
})
const trust = { Version: '2012-10-17', Statement: [] }

type Ownership = 'created' | 'adopted' | 'foreign'
function roleOwnedAs(o: Ownership): FakeRole {
  const tags: Record<string, string> =
    o === 'created'
      ? { ...OWN }
      : o === 'adopted'
        ? // install --adopt added an inline policy of its own and recorded it.
          {
            team: 'platform',
            [ADOPTED_BY]: 'demo',
            ...recordTags('karpctl.io/added-inline-policies', ['Added']),
          }
        : { team: 'platform', 'alpha.eksctl.io/cluster-name': 'demo' }
  return {
    trust,
    tags,
    attached: [WORKER],
    inline: { Own: doc('Own'), ...(o === 'adopted' ? { Added: doc('Added') } : {}) },
  }
}

function account(o: Ownership): FakeAccount {
  return {
    roles: { 'demo-node': roleOwnedAs(o), 'demo-karpenter': roleOwnedAs(o) },
    queues: {
      demo: {
        arn: QUEUE_ARN,
        attributes: { Policy: JSON.stringify({ Version: '2012-10-17', Statement: [] }) },
        tags: o === 'created' ? { ...OWN } : { team: 'platform' },
      },
    },
    rules: {},
  }
}

async function run(resources: Resource[], env: ApplyEnv) {
  const plan = await buildPlan('t', resources, env)
  assert.deepEqual(
    plan.steps.filter((s) => s.verdict.blocked).map((s) => s.verdict.blocked),
    [],
  )
  return { plan, result: await applyPlan(plan, env) }
}

// The three repairs doctor --fix makes to IAM and the queue, as src/fix builds them.
const repairs = (): Resource[] => [
  attachedPolicies({
    address: 'iam-role-policies.node',
    roleName: 'demo-node',
    roleArn: `${ACCOUNT}:role/demo-node`,
    managed: [{ arn: WORKER }, { arn: CNI }],
    group: 'node-role',
  }),
  inlinePolicy({
    address: 'iam-inline-policy.controller-missing',
    roleName: 'demo-karpenter',
    roleArn: `${ACCOUNT}:role/demo-karpenter`,
    policyName: 'KarpenterControllerMissing-demo',
    document: doc('Missing'),
    dependsOn: [],
    record: REPAIRED_INLINE,
  }),
  { ...queuePolicyStatements({ queueName: 'demo', queueArn: QUEUE_ARN, group: 'interruption-queue' }) },
]

const teardown = (repaired: boolean): Resource[] => [
  iamRoleAbsent({
    address: 'iam-role.node',
    name: 'demo-node',
    ownership: OWN,
    dependsOn: [],
    repairs: repaired,
  }),
  iamRoleAbsent({
    address: 'iam-role.controller',
    name: 'demo-karpenter',
    ownership: OWN,
    dependsOn: [],
    repairs: repaired,
  }),
  queueAbsent({ name: 'demo', ownership: OWN, dependsOn: [], repairs: repaired }),
]

const statementSids = (q: { attributes: Record<string, string> }) =>
  (JSON.parse(q.attributes.Policy!) as { Statement: { Sid?: string }[] }).Statement.map((s) => s.Sid)

test('--fix records its repairs under their own keys, never the adoption records, and each before its change', async () => {
  const acct = fakeAccount(account('foreign'))
  const { plan } = await run(repairs(), acct.env)
  assert.deepEqual(
    plan.steps.map((s) => s.verdict.note),
    [
      `recorded as the ${REPAIRED_POLICIES} tag`,
      `recorded as the ${REPAIRED_INLINE} tag`,
      `its statements are kept; recorded as the ${REPAIRED_STATEMENTS} tag`,
    ],
  )
  const node = acct.state.roles['demo-node']!
  const controller = acct.state.roles['demo-karpenter']!
  assert.deepEqual(readRecord(node.tags, REPAIRED_POLICIES), ['AmazonEKS_CNI_Policy'])
  assert.deepEqual(readRecord(controller.tags, REPAIRED_INLINE), ['KarpenterControllerMissing-demo'])
  assert.equal(acct.state.queues.demo!.tags[REPAIRED_STATEMENTS], 'send,DenyHTTP')
  for (const tags of [node.tags, controller.tags, acct.state.queues.demo!.tags]) {
    assert.equal(tags[ADOPTED_BY], undefined, 'a repair is not an adoption')
    assert.equal(tags['karpctl.io/attached-policies'], undefined)
    assert.equal(tags['karpctl.io/added-inline-policies'], undefined)
    assert.equal(tags['karpctl.io/added-policy-statements'], undefined)
  }
  // Recorded first: a run killed between the two calls leaves a record of nothing, never an unrecorded change.
  const ops = acct.writes.map(([op]) => op)
  assert.ok(ops.indexOf('TagRole') < ops.indexOf('AttachRolePolicy'))
  assert.ok(ops.lastIndexOf('TagRole') < ops.indexOf('PutRolePolicy'))
  assert.ok(ops.indexOf('TagQueue') < ops.indexOf('SetQueueAttributes'))
  // A re-run changes nothing.
  const again = await buildPlan('t', repairs(), acct.env)
  assert.deepEqual(
    again.steps.map((s) => s.verdict.action),
    ['unchanged', 'unchanged', 'unchanged'],
  )
})

test('a policy --fix put before it recorded it (a killed run) is recorded on the re-run, not left unlisted', async () => {
  const a = account('foreign')
  a.roles['demo-karpenter']!.inline['KarpenterControllerMissing-demo'] = doc('Missing')
  const acct = fakeAccount(a)
  const { plan } = await run([repairs()[1]!], acct.env)
  assert.deepEqual(plan.steps[0]!.verdict.changes, [
    { field: `tags.${REPAIRED_INLINE}`, to: 'KarpenterControllerMissing-demo' },
  ])
  assert.deepEqual(readRecord(acct.state.roles['demo-karpenter']!.tags, REPAIRED_INLINE), [
    'KarpenterControllerMissing-demo',
  ])
})

for (const o of ['foreign', 'adopted'] as const) {
  test(`${o} resources: teardown while the repaired install stays keeps the repairs (and gives back an adoption's own changes)`, async () => {
    const before = account(o)
    const acct = fakeAccount(before)
    await run(repairs(), acct.env)
    await run(teardown(false), acct.env)
    const node = acct.state.roles['demo-node']!
    const controller = acct.state.roles['demo-karpenter']!
    assert.deepEqual(node.attached, [WORKER, CNI])
    assert.deepEqual(readRecord(node.tags, REPAIRED_POLICIES), ['AmazonEKS_CNI_Policy'])
    assert.ok(controller.inline['KarpenterControllerMissing-demo'])
    assert.deepEqual(readRecord(controller.tags, REPAIRED_INLINE), ['KarpenterControllerMissing-demo'])
    assert.deepEqual(statementSids(acct.state.queues.demo!).length, 2)
    assert.equal(acct.state.queues.demo!.tags[REPAIRED_STATEMENTS], 'send,DenyHTTP')
    // The adoption's own addition goes, and its marks: the role is no longer adopted.
    assert.equal(controller.inline.Added, undefined)
    assert.equal(controller.tags[ADOPTED_BY], undefined)
    assert.deepEqual(Object.keys(acct.state.roles).sort(), ['demo-karpenter', 'demo-node'])
  })

  test(`${o} resources: teardown of the install the repairs were for gives everything back, exactly as before the adoption`, async () => {
    const before = account(o)
    const acct = fakeAccount(before)
    await run(repairs(), acct.env)
    await run(teardown(true), acct.env)
    // As the role was before install --adopt: without its addition and its marks.
    const asFound = (r: FakeRole): FakeRole => ({
      ...r,
      tags: { team: 'platform', ...(o === 'foreign' ? { 'alpha.eksctl.io/cluster-name': 'demo' } : {}) },
      inline: { Own: doc('Own') },
    })
    assert.deepEqual(acct.state.roles, {
      'demo-node': asFound(before.roles['demo-node']!),
      'demo-karpenter': asFound(before.roles['demo-karpenter']!),
    })
    assert.deepEqual(JSON.parse(acct.state.queues.demo!.attributes.Policy!), {
      Version: '2012-10-17',
      Statement: [],
    })
    assert.deepEqual(acct.state.queues.demo!.tags, { team: 'platform' })
    assert.ok(!acct.writes.some(([op]) => op === 'DeleteRole' || op === 'DeleteQueue'))
    // Nothing left to give back: a second teardown is unchanged.
    const again = await buildPlan('t', teardown(true), acct.env)
    assert.deepEqual(
      again.steps.map((s) => s.verdict.action),
      ['unchanged', 'unchanged', 'unchanged'],
    )
  })
}

test('created resources: repaired or not, teardown deletes them whole', async () => {
  for (const repaired of [false, true]) {
    const acct = fakeAccount(account('created'))
    await run(repairs(), acct.env)
    await run(teardown(repaired), acct.env)
    assert.deepEqual(acct.state.roles, {})
    assert.deepEqual(acct.state.queues, {})
  }
})
