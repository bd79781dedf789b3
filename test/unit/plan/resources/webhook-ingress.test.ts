// The webhook ingress rule (issue 18): its shape, which rules on the node group already let the
// cluster group reach tcp/8443, each verdict, and the writes in order (the record before the rule).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type * as ec2 from '@aws-sdk/client-ec2'
import {
  ADDED_INGRESS,
  REPAIRED_INGRESS,
  webhookIngress,
} from '../../../../src/plan/resources/webhook-ingress.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const ARN = 'arn:aws:ec2:eu-west-1:123456789012:security-group/sg-node'
const make = (record?: typeof REPAIRED_INGRESS) =>
  webhookIngress({
    nodeGroupId: 'sg-node',
    clusterGroupId: 'sg-cluster',
    arn: ARN,
    ...(record ? { record } : {}),
  })

test('the exported records are the tag names teardown and doctor read on the group', () => {
  assert.deepEqual(
    [ADDED_INGRESS, REPAIRED_INGRESS],
    ['karpctl.io/added-ingress-8443', 'karpctl.io/repaired-ingress-8443'],
  )
})

test('shape: one rule in Network, authorized and tagged on the node group', () => {
  const { observe, verdict, apply, ...shape } = make()
  assert.equal(
    [observe, verdict, apply].every((f) => typeof f === 'function'),
    true,
  )
  assert.deepEqual(shape, {
    address: 'ec2-ingress.webhook-8443',
    kind: 'security group rule',
    name: 'sg-node tcp/8443 from sg-cluster',
    group: 'Network',
    dependsOn: [],
    desired: { groupId: 'sg-node', protocol: 'tcp', port: 8443, source: 'sg-cluster' },
    permissions: [
      { action: 'ec2:AuthorizeSecurityGroupIngress', resource: ARN },
      { action: 'ec2:CreateTags', resource: ARN },
    ],
  })
})

/** Observes a node group answering with the given body; returns the state and the inputs read. */
async function observeWith(body: Partial<ec2.DescribeSecurityGroupsCommandOutput>) {
  const inputs: unknown[] = []
  const r = recordingEnv({ aws: { DescribeSecurityGroups: (i) => (inputs.push(i), body) } })
  const state = await make().observe(r.env)
  return { state, inputs, calls: r.awsCalls }
}
const group = (IpPermissions?: ec2.IpPermission[], Tags?: ec2.Tag[]) => ({
  SecurityGroups: [
    { GroupId: 'sg-node', ...(IpPermissions ? { IpPermissions } : {}), ...(Tags ? { Tags } : {}) },
  ],
})
const from = (...ids: string[]) => ids.map((GroupId) => ({ GroupId }))
const presence = async (...p: ec2.IpPermission[]) => (await observeWith(group(p))).state?.present

test("observe: the node group read by its id, the rule found and the group's tags kept", async () => {
  const got = await observeWith(
    group(
      [{ IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: from('sg-cluster') }],
      [
        { Key: ADDED_INGRESS, Value: 'sg-cluster' },
        { Key: 'Name', Value: 'nodes' },
      ],
    ),
  )
  assert.deepEqual(got, {
    state: { present: true, tags: { [ADDED_INGRESS]: 'sg-cluster', Name: 'nodes' } },
    inputs: [{ GroupIds: ['sg-node'] }],
    calls: [{ service: 'ec2', op: 'DescribeSecurityGroups' }],
  })
})

test('observe: no such group (no list, or an empty one) is null', async () => {
  assert.equal((await observeWith({})).state, null)
  assert.equal((await observeWith({ SecurityGroups: [] })).state, null)
})

test('observe: a group with no rules and no tags; a tag with no key or value', async () => {
  assert.deepEqual((await observeWith(group())).state, { present: false, tags: {} })
  assert.deepEqual((await observeWith(group([], [{ Key: 'k' }, { Value: 'v' }]))).state, {
    present: false,
    tags: { k: '', '': 'v' },
  })
})

test('observe: all traffic, or a tcp range holding 8443, from the cluster group is the rule', async () => {
  assert.equal(await presence({ IpProtocol: '-1', UserIdGroupPairs: from('sg-cluster') }), true)
  assert.equal(
    await presence({ IpProtocol: 'tcp', FromPort: 443, ToPort: 9000, UserIdGroupPairs: from('sg-cluster') }),
    true,
  )
  // A missing FromPort counts as 0, so a rule up to 8443 holds it.
  assert.equal(
    await presence({ IpProtocol: 'tcp', ToPort: 8443, UserIdGroupPairs: from('sg-cluster') }),
    true,
  )
  // The cluster group among other sources is enough.
  assert.equal(
    await presence({
      IpProtocol: 'tcp',
      FromPort: 8443,
      ToPort: 8443,
      UserIdGroupPairs: from('sg-x', 'sg-cluster'),
    }),
    true,
  )
})

test('observe: another protocol, a range missing 8443, another source or no source is not the rule', async () => {
  const pairs = from('sg-cluster')
  assert.equal(
    await presence({ IpProtocol: 'udp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: pairs }),
    false,
  )
  assert.equal(
    await presence({ IpProtocol: 'tcp', FromPort: 8444, ToPort: 9000, UserIdGroupPairs: pairs }),
    false,
  )
  assert.equal(
    await presence({ IpProtocol: 'tcp', FromPort: 443, ToPort: 8442, UserIdGroupPairs: pairs }),
    false,
  )
  assert.equal(await presence({ IpProtocol: 'tcp', FromPort: 443, UserIdGroupPairs: pairs }), false)
  assert.equal(await presence({ IpProtocol: '-1', UserIdGroupPairs: from('sg-x') }), false)
  assert.equal(await presence({ IpProtocol: '-1' }), false)
})

test('verdict: a missing group blocks, naming it and the flag that chose it', () => {
  assert.deepEqual(make().verdict(null), {
    action: 'update',
    changes: [],
    blocked: 'security group sg-node not found: check --security-group-ids',
  })
})

test('verdict: the rule present is unchanged; absent, it is created with its record named', () => {
  assert.deepEqual(make().verdict({ present: true, tags: {} }), { action: 'unchanged', changes: [] })
  const create = (record: string) => ({
    action: 'create',
    changes: [{ field: 'ingress', to: 'tcp/8443 from sg-cluster' }],
    note: `recorded as the ${record} tag on sg-node`,
  })
  assert.deepEqual(make().verdict({ present: false, tags: {} }), create('karpctl.io/added-ingress-8443'))
  assert.deepEqual(
    make(REPAIRED_INGRESS).verdict({ present: false, tags: {} }),
    create('karpctl.io/repaired-ingress-8443'),
  )
})

const writes = (record: string) => [
  { op: 'CreateTags', input: { Resources: ['sg-node'], Tags: [{ Key: record, Value: 'sg-cluster' }] } },
  {
    op: 'AuthorizeSecurityGroupIngress',
    input: {
      GroupId: 'sg-node',
      IpPermissions: [
        { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: 'sg-cluster' }] },
      ],
    },
  },
]

test('apply: the record tag first, then the rule, both on EC2', async () => {
  const r = recordingEnv()
  await make().apply(r.env, { present: false, tags: {} })
  assert.deepEqual(r.awsWrites, writes('karpctl.io/added-ingress-8443'))
  assert.deepEqual(r.awsCalls, [
    { service: 'ec2', op: 'CreateTags' },
    { service: 'ec2', op: 'AuthorizeSecurityGroupIngress' },
  ])
  const repair = recordingEnv()
  await make(REPAIRED_INGRESS).apply(repair.env, null)
  assert.deepEqual(repair.awsWrites, writes('karpctl.io/repaired-ingress-8443'))
})

test('apply: a rule already present writes nothing', async () => {
  const r = recordingEnv()
  await make().apply(r.env, { present: true, tags: {} })
  assert.deepEqual(r.awsCalls, [])
})
