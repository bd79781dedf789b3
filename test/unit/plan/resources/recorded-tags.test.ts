// The tags karpctl recorded adding, taken off on teardown: the listings that find them and what comes off.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDED_TAGS, REPAIRED_TAGS } from '../../../../src/plan/resources/discovery-tags.js'
import { recordedTagsRestore } from '../../../../src/plan/resources/recorded-tags.js'
import { tagList, env, run } from '../../../helpers/teardown-env.js'

test('recorded tags: the listings (per record, by discovery and in the VPC), the name, and what comes off', async () => {
  const r = recordedTagsRestore({ clusterName: 'demo', vpcId: 'vpc-1', repairs: true, dependsOn: ['z'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    ['ec2-tags.restore', 'recorded tags', `${ADDED_TAGS}, ${REPAIRED_TAGS} (cluster demo)`, 'Network', ['z']],
  )
  const subnet = (id: string, vpc: string, t: Record<string, string>) => ({
    SubnetId: id,
    VpcId: vpc,
    Tags: tagList(t),
  })
  const e = env({
    aws: {
      DescribeSubnets: () => ({
        Subnets: [
          subnet('subnet-a', 'vpc-1', {
            'karpenter.sh/discovery': 'demo',
            [ADDED_TAGS]: 'karpenter.sh/discovery,,',
          }),
          subnet('subnet-a', 'vpc-1', {
            'karpenter.sh/discovery': 'demo',
            [ADDED_TAGS]: 'karpenter.sh/discovery,,',
          }),
          subnet('subnet-b', 'vpc-1', { [REPAIRED_TAGS]: 'karpenter.sh/discovery,kubernetes.io/role/elb' }),
          subnet('subnet-c', 'vpc-2', { [ADDED_TAGS]: 'karpenter.sh/discovery' }),
          subnet('subnet-d', 'vpc-1', { 'karpenter.sh/discovery': 'other', [ADDED_TAGS]: 'x' }),
          subnet('subnet-e', 'vpc-1', { 'karpenter.sh/discovery': 'demo' }),
        ],
      }),
      DescribeSecurityGroups: () => ({
        SecurityGroups: [
          {
            GroupId: 'sg-1',
            VpcId: 'vpc-1',
            Tags: tagList({ 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'a', [REPAIRED_TAGS]: 'a,b' }),
          },
        ],
      }),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const filters = (rec: string) => [
    [
      { Name: 'tag-key', Values: [rec] },
      { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
    ],
    [
      { Name: 'tag-key', Values: [rec] },
      { Name: 'vpc-id', Values: ['vpc-1'] },
    ],
  ]
  const want = [...filters(ADDED_TAGS), ...filters(REPAIRED_TAGS)]
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeSubnets').map(([, i]) => (i as { Filters: unknown }).Filters),
    want,
  )
  assert.deepEqual(
    e.reads
      .filter(([op]) => op === 'DescribeSecurityGroups')
      .map(([, i]) => (i as { Filters: unknown }).Filters),
    want,
  )
  assert.deepEqual(cur, [
    {
      id: 'subnet-a',
      remove: ['karpenter.sh/discovery', ADDED_TAGS],
      tags: { 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'karpenter.sh/discovery,,' },
    },
    {
      id: 'subnet-b',
      remove: ['karpenter.sh/discovery', 'kubernetes.io/role/elb', REPAIRED_TAGS],
      tags: { [REPAIRED_TAGS]: 'karpenter.sh/discovery,kubernetes.io/role/elb' },
    },
    {
      id: 'sg-1',
      remove: ['a', 'b', ADDED_TAGS, REPAIRED_TAGS],
      tags: { 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'a', [REPAIRED_TAGS]: 'a,b' },
    },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'subnet-a karpenter.sh/discovery', from: 'demo' },
      { field: `subnet-a ${ADDED_TAGS}`, from: 'karpenter.sh/discovery,,' },
      { field: `subnet-b ${REPAIRED_TAGS}`, from: 'karpenter.sh/discovery,kubernetes.io/role/elb' },
      { field: `sg-1 ${ADDED_TAGS}`, from: 'a' },
      { field: `sg-1 ${REPAIRED_TAGS}`, from: 'a,b' },
    ],
  })
  assert.deepEqual(e.writes, [
    [
      'DeleteTags',
      { Resources: ['subnet-a'], Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: ADDED_TAGS }] },
    ],
    [
      'DeleteTags',
      {
        Resources: ['subnet-b'],
        Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: 'kubernetes.io/role/elb' }, { Key: REPAIRED_TAGS }],
      },
    ],
    [
      'DeleteTags',
      {
        Resources: ['sg-1'],
        Tags: [{ Key: 'a' }, { Key: 'b' }, { Key: ADDED_TAGS }, { Key: REPAIRED_TAGS }],
      },
    ],
  ])
})

test('recorded tags without a VPC: only the discovery listings; a resource without a discovery tag is not found', async () => {
  const r = recordedTagsRestore({ clusterName: 'demo', dependsOn: [] })
  assert.equal(r.name, `${ADDED_TAGS} (cluster demo)`)
  const e = env({
    aws: {
      DescribeSubnets: () => ({
        Subnets: [{ SubnetId: 'subnet-b', VpcId: 'vpc-1', Tags: tagList({ [ADDED_TAGS]: 'x' }) }],
      }),
      DescribeSecurityGroups: () => ({}),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(
    e.reads.map(([op, i]) => [op, (i as { Filters: unknown }).Filters]),
    [
      [
        'DescribeSubnets',
        [
          { Name: 'tag-key', Values: [ADDED_TAGS] },
          { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
        ],
      ],
      [
        'DescribeSecurityGroups',
        [
          { Name: 'tag-key', Values: [ADDED_TAGS] },
          { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
        ],
      ],
    ],
  )
  assert.deepEqual(
    [cur, verdict, e.writes],
    [[], { action: 'unchanged', changes: [], note: 'nothing recorded' }, []],
  )
})

test('recorded tags: distinct security groups are each given back (listings merged by id, not into one)', async () => {
  // Kills: the security groups' id function dropped (every group merged under one key).
  const sg = (id: string) => ({
    GroupId: id,
    VpcId: 'vpc-1',
    Tags: tagList({ 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'karpenter.sh/discovery' }),
  })
  const e = env({
    aws: {
      DescribeSubnets: () => ({}),
      DescribeSecurityGroups: () => ({ SecurityGroups: [sg('sg-1'), sg('sg-2')] }),
    },
  })
  const cur = await recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }).observe(e.env)
  assert.deepEqual(
    cur?.map((t) => t.id),
    ['sg-1', 'sg-2'],
  )
})
