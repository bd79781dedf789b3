// The tcp/8443 rules karpctl recorded adding, revoked on teardown with their records.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { recordedIngressRestore } from '../../../../src/plan/resources/recorded-ingress.js'
import { ADDED_INGRESS, REPAIRED_INGRESS } from '../../../../src/plan/resources/webhook-ingress.js'
import { tagList, env, run } from '../../../helpers/teardown-env.js'

test('recorded ingress: one listing per record (in the VPC when known), each rule revoked and its record dropped', async () => {
  const r = recordedIngressRestore({ vpcId: 'vpc-1', repairs: true, dependsOn: ['q'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    [
      'ec2-ingress.restore',
      'recorded security group rules',
      `${ADDED_INGRESS}, ${REPAIRED_INGRESS}`,
      'Network',
      ['q'],
    ],
  )
  const e = env({
    aws: {
      DescribeSecurityGroups: (i) => {
        const rec = (i.Filters as { Values: string[] }[])[0]!.Values[0]
        return {
          SecurityGroups:
            rec === ADDED_INGRESS
              ? [
                  { GroupId: 'sg-1', Tags: tagList({ [ADDED_INGRESS]: 'sg-cluster' }) },
                  { GroupId: 'sg-x', Tags: tagList({ other: 'y' }) },
                ]
              : [{ GroupId: 'sg-2', Tags: tagList({ [REPAIRED_INGRESS]: 'sg-c2' }) }],
        }
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(
    e.reads.map(([, i]) => i),
    [
      {
        Filters: [
          { Name: 'tag-key', Values: [ADDED_INGRESS] },
          { Name: 'vpc-id', Values: ['vpc-1'] },
        ],
      },
      {
        Filters: [
          { Name: 'tag-key', Values: [REPAIRED_INGRESS] },
          { Name: 'vpc-id', Values: ['vpc-1'] },
        ],
      },
    ],
  )
  assert.deepEqual(cur, [
    { groupId: 'sg-1', source: 'sg-cluster', record: ADDED_INGRESS },
    { groupId: 'sg-2', source: 'sg-c2', record: REPAIRED_INGRESS },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'sg-1 ingress', from: 'tcp/8443 from sg-cluster' },
      { field: 'sg-2 ingress', from: 'tcp/8443 from sg-c2' },
    ],
  })
  const revoke = (g: string, src: string) => [
    'RevokeSecurityGroupIngress',
    {
      GroupId: g,
      IpPermissions: [
        { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: src }] },
      ],
    },
  ]
  assert.deepEqual(e.writes, [
    revoke('sg-1', 'sg-cluster'),
    ['DeleteTags', { Resources: ['sg-1'], Tags: [{ Key: ADDED_INGRESS }] }],
    revoke('sg-2', 'sg-c2'),
    ['DeleteTags', { Resources: ['sg-2'], Tags: [{ Key: REPAIRED_INGRESS }] }],
  ])
  const noVpc = recordedIngressRestore({ dependsOn: [] })
  assert.equal(noVpc.name, ADDED_INGRESS)
  const e2 = env({ aws: { DescribeSecurityGroups: () => ({}) } })
  assert.deepEqual(await noVpc.observe(e2.env), [])
  assert.deepEqual(e2.reads, [
    ['DescribeSecurityGroups', { Filters: [{ Name: 'tag-key', Values: [ADDED_INGRESS] }] }],
  ])
})
