// The discovery tags (issue 18): their shape and permissions, what they read (and what they skip when
// there is nothing to read), each verdict (another cluster's tag blocks, a present tag is left alone)
// and the one CreateTags call that tags and records together.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  ADDED_TAGS,
  DISCOVERY_TAG,
  REPAIRED_TAGS,
  discoveryTags,
} from '../../../../src/plan/resources/discovery-tags.js'
import { recordingEnv, type AwsAnswer } from '../../../helpers/recording-env.js'

const SUBNETS = ['subnet-a', 'subnet-b']
const GROUPS = ['sg-1']
const make = (o: { subnetIds?: string[]; securityGroupIds?: string[]; record?: typeof REPAIRED_TAGS } = {}) =>
  discoveryTags({
    clusterName: 'demo',
    subnetIds: o.subnetIds ?? SUBNETS,
    securityGroupIds: o.securityGroupIds ?? GROUPS,
    region: 'eu-west-1',
    accountId: '123456789012',
    partition: 'aws',
    ...(o.record ? { record: o.record } : {}),
  })
const ADDED_NOTE =
  'recorded on each resource as karpctl.io/added-tags, so teardown removes only what karpctl added'

test('the exported tag names are the ones teardown and doctor read on the resources', () => {
  assert.deepEqual(
    [DISCOVERY_TAG, ADDED_TAGS, REPAIRED_TAGS],
    ['karpenter.sh/discovery', 'karpctl.io/added-tags', 'karpctl.io/repaired-tags'],
  )
})

test('shape: one step in Network, CreateTags on each subnet and security group by its ARN', () => {
  const { observe, verdict, apply, ...shape } = make()
  assert.equal(
    [observe, verdict, apply].every((f) => typeof f === 'function'),
    true,
  )
  assert.deepEqual(shape, {
    address: 'ec2-tags.discovery',
    kind: 'discovery tags',
    name: 'karpenter.sh/discovery=demo',
    group: 'Network',
    dependsOn: [],
    desired: { tag: { 'karpenter.sh/discovery': 'demo' }, subnets: SUBNETS, securityGroups: GROUPS },
    permissions: [
      { action: 'ec2:CreateTags', resource: 'arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-a' },
      { action: 'ec2:CreateTags', resource: 'arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-b' },
      { action: 'ec2:CreateTags', resource: 'arn:aws:ec2:eu-west-1:123456789012:security-group/sg-1' },
    ],
  })
})

/** DescribeSubnets and DescribeSecurityGroups answering with the given bodies, each input kept. */
function reads(subnets: unknown, groups: unknown, inputs: unknown[] = []): Record<string, AwsAnswer> {
  return {
    DescribeSubnets: (i) => (inputs.push({ DescribeSubnets: i }), subnets),
    DescribeSecurityGroups: (i) => (inputs.push({ DescribeSecurityGroups: i }), groups),
  }
}

test("observe: each subnet's and group's tags, read from EC2 by their ids", async () => {
  const inputs: unknown[] = []
  const r = recordingEnv({
    aws: reads(
      {
        Subnets: [
          { SubnetId: 'subnet-a', Tags: [{ Key: DISCOVERY_TAG, Value: 'demo' }] },
          { SubnetId: 'subnet-b', Tags: [{ Key: 'team', Value: 'x' }] },
        ],
      },
      { SecurityGroups: [{ GroupId: 'sg-1', Tags: [{ Key: 'Name', Value: 'nodes' }] }] },
      inputs,
    ),
  })
  assert.deepEqual(await make().observe(r.env), {
    'subnet-a': { 'karpenter.sh/discovery': 'demo' },
    'subnet-b': { team: 'x' },
    'sg-1': { Name: 'nodes' },
  })
  assert.deepEqual(inputs, [
    { DescribeSubnets: { SubnetIds: SUBNETS } },
    { DescribeSecurityGroups: { GroupIds: GROUPS } },
  ])
  assert.deepEqual(r.awsCalls, [
    { service: 'ec2', op: 'DescribeSubnets' },
    { service: 'ec2', op: 'DescribeSecurityGroups' },
  ])
  assert.deepEqual(r.awsWrites, [])
})

test('observe: no subnets or no groups asked for reads nothing for them', async () => {
  const onlyGroups = recordingEnv({ aws: reads(null, { SecurityGroups: [{ GroupId: 'sg-1' }] }) })
  assert.deepEqual(await make({ subnetIds: [] }).observe(onlyGroups.env), { 'sg-1': {} })
  assert.deepEqual(onlyGroups.awsCalls, [{ service: 'ec2', op: 'DescribeSecurityGroups' }])
  const onlySubnets = recordingEnv({ aws: reads({ Subnets: [{ SubnetId: 'subnet-a' }] }, null) })
  assert.deepEqual(await make({ securityGroupIds: [] }).observe(onlySubnets.env), { 'subnet-a': {} })
  assert.deepEqual(onlySubnets.awsCalls, [{ service: 'ec2', op: 'DescribeSubnets' }])
})

test('observe: answers with no list, an entry with no id, a tag with no key or value', async () => {
  const empty = recordingEnv({ aws: reads({}, {}) })
  assert.deepEqual(await make().observe(empty.env), {})
  const half = recordingEnv({
    aws: reads(
      { Subnets: [{ Tags: [{ Key: 'k' }, { Value: 'v' }] }] },
      { SecurityGroups: [{ GroupId: 'sg-1' }] },
    ),
  })
  assert.deepEqual(await make().observe(half.env), { '': { k: '', '': 'v' }, 'sg-1': {} })
  const noGroupId = recordingEnv({
    aws: reads({ Subnets: [] }, { SecurityGroups: [{ Tags: [{ Key: 'k', Value: 'v' }] }] }),
  })
  assert.deepEqual(await make().observe(noGroupId.env), { '': { k: 'v' } })
})

/** Each id's tags: its discovery value, or none. */
const tagged = (v: Record<string, string | undefined>) => {
  const out: Record<string, Record<string, string>> = {}
  for (const [id, c] of Object.entries(v)) out[id] = c === undefined ? {} : { [DISCOVERY_TAG]: c }
  return out
}

test("verdict: another cluster's discovery tag blocks, naming each resource and its cluster", () => {
  const cur = tagged({ 'subnet-a': 'other', 'subnet-b': 'demo', 'sg-1': 'third' })
  assert.deepEqual(make().verdict(cur), {
    action: 'update',
    changes: [],
    blocked:
      'subnet-a has karpenter.sh/discovery=other, sg-1 has karpenter.sh/discovery=third: another cluster discovers them; pass --subnet-ids / --security-group-ids to choose others',
  })
})

test('verdict: every resource tagged for this cluster is unchanged', () => {
  assert.deepEqual(make().verdict(tagged({ 'subnet-a': 'demo', 'subnet-b': 'demo', 'sg-1': 'demo' })), {
    action: 'unchanged',
    changes: [],
  })
})

test('verdict: only the untagged resources change, each from what it has (or nothing) to the cluster', () => {
  assert.deepEqual(make().verdict(tagged({ 'subnet-a': 'demo', 'sg-1': undefined })), {
    action: 'update',
    changes: [
      { field: 'subnet-b karpenter.sh/discovery', from: undefined, to: 'demo' },
      { field: 'sg-1 karpenter.sh/discovery', from: undefined, to: 'demo' },
    ],
    note: ADDED_NOTE,
  })
})

test("verdict: an empty discovery value is someone else's tag too: blocked, not overwritten", () => {
  const cur = { ...tagged({ 'subnet-a': 'demo', 'sg-1': 'demo' }), 'subnet-b': { [DISCOVERY_TAG]: '' } }
  assert.deepEqual(make().verdict(cur), {
    action: 'update',
    changes: [],
    blocked:
      'subnet-b has karpenter.sh/discovery=: another cluster discovers them; pass --subnet-ids / --security-group-ids to choose others',
  })
})

test('verdict: nothing read (null) tags everything; a repair says teardown keeps it', () => {
  const all = [
    { field: 'subnet-a karpenter.sh/discovery', from: undefined, to: 'demo' },
    { field: 'subnet-b karpenter.sh/discovery', from: undefined, to: 'demo' },
    { field: 'sg-1 karpenter.sh/discovery', from: undefined, to: 'demo' },
  ]
  assert.deepEqual(make().verdict(null), { action: 'update', changes: all, note: ADDED_NOTE })
  assert.deepEqual(make({ record: REPAIRED_TAGS }).verdict({}), {
    action: 'update',
    changes: all,
    note: 'recorded on each resource as karpctl.io/repaired-tags (a repair: teardown keeps it)',
  })
})

test('apply: one CreateTags on the untagged resources with the tag and its record', async () => {
  const r = recordingEnv()
  await make().apply(r.env, tagged({ 'subnet-a': 'demo' }))
  assert.deepEqual(r.awsCalls, [{ service: 'ec2', op: 'CreateTags' }])
  assert.deepEqual(r.awsWrites, [
    {
      op: 'CreateTags',
      input: {
        Resources: ['subnet-b', 'sg-1'],
        Tags: [
          { Key: 'karpenter.sh/discovery', Value: 'demo' },
          { Key: 'karpctl.io/added-tags', Value: 'karpenter.sh/discovery' },
        ],
      },
    },
  ])
})

test('apply: nothing read tags everything; a repair records as a repair', async () => {
  const r = recordingEnv()
  await make({ record: REPAIRED_TAGS }).apply(r.env, null)
  assert.deepEqual(r.awsWrites, [
    {
      op: 'CreateTags',
      input: {
        Resources: ['subnet-a', 'subnet-b', 'sg-1'],
        Tags: [
          { Key: 'karpenter.sh/discovery', Value: 'demo' },
          { Key: 'karpctl.io/repaired-tags', Value: 'karpenter.sh/discovery' },
        ],
      },
    },
  ])
})

test('apply: everything already tagged writes nothing', async () => {
  const r = recordingEnv()
  await make().apply(r.env, tagged({ 'subnet-a': 'demo', 'subnet-b': 'demo', 'sg-1': 'demo' }))
  assert.deepEqual(r.awsCalls, [])
})
