// How doctor asks EC2 for what a selector selects: as Karpenter v1.14.1 does (providers/subnet and
// providers/securitygroup getFilters), every term a filter, an `id` term included, so an id that does not
// exist matches nothing (Karpenter: SecurityGroupsNotFound) instead of failing the read
// (InvalidGroup.NotFound with GroupIds, seen on the bed: doctor said unknown where Karpenter said False).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { securityGroupsFor, subnetsFor } from '../../../src/facts/collect-network.js'

function recording() {
  const asked: { op: string; input: unknown }[] = []
  const aws = {
    call: async (_service: string, op: string, input: unknown) => {
      asked.push({ op, input })
      return {}
    },
  } as unknown as Aws
  return { aws, asked }
}

test('an id term is a subnet-id / group-id filter, never SubnetIds / GroupIds', async () => {
  const { aws, asked } = recording()
  assert.deepEqual(await securityGroupsFor(aws, [{ id: 'sg-0123456789abcdef0' }]), [])
  assert.deepEqual(await subnetsFor(aws, [{ id: 'subnet-0a' }]), [])
  assert.deepEqual(asked, [
    {
      op: 'DescribeSecurityGroups',
      input: { Filters: [{ Name: 'group-id', Values: ['sg-0123456789abcdef0'] }] },
    },
    { op: 'DescribeSubnets', input: { Filters: [{ Name: 'subnet-id', Values: ['subnet-0a'] }] } },
  ])
})

test('tag and name terms: one filter per tag (`*`: tag-key), the name as group-name / tag:Name', async () => {
  const { aws, asked } = recording()
  await securityGroupsFor(aws, [{ tags: { 'karpenter.sh/discovery': 'demo', team: '*' }, name: 'web' }])
  await subnetsFor(aws, [{ tags: { tier: 'private' }, name: 'private-*' } as never])
  assert.deepEqual(
    asked.map((a) => a.input),
    [
      {
        Filters: [
          { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
          { Name: 'tag-key', Values: ['team'] },
          { Name: 'group-name', Values: ['web'] },
        ],
      },
      {
        Filters: [
          { Name: 'tag:tier', Values: ['private'] },
          { Name: 'tag:Name', Values: ['private-*'] },
        ],
      },
    ],
  )
})
