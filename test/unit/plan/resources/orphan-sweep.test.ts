// Karpenter's leftovers for this cluster: found by their tags, deleted only on --sweep.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { orphanSweep } from '../../../../src/plan/resources/orphan-sweep.js'
import { tagList, env, run, twoPages } from '../../../helpers/teardown-env.js'

test('orphans: the three tag filters per listing, instances live only, profiles named and tagged for this cluster', async () => {
  const r = orphanSweep({ clusterName: 'demo', sweep: true, dependsOn: ['p'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired],
    [
      'sweep.karpenter-orphans',
      "Karpenter's leftovers",
      'tagged for cluster demo',
      'Sweep',
      ['p'],
      { sweep: true },
    ],
  )
  const e = env({
    aws: {
      DescribeInstances: () => ({
        Reservations: [{ Instances: [{ InstanceId: 'i-1' }, { InstanceId: 'i-2' }] }, {}],
      }),
      DescribeLaunchTemplates: () => ({ LaunchTemplates: [{ LaunchTemplateId: 'lt-1' }] }),
      ListInstanceProfiles: twoPages(
        'InstanceProfiles',
        [
          { InstanceProfileName: 'demo_1', Roles: [{ RoleName: 'r1' }, { RoleName: 'r2' }] },
          { InstanceProfileName: 'demo_2', Roles: [] },
        ],
        [{ InstanceProfileName: 'demo_3' }, { InstanceProfileName: 'xdemo_4' }],
      ),
      ListInstanceProfileTags: (i) => ({
        Tags: tagList(
          i.InstanceProfileName === 'demo_1'
            ? { 'kubernetes.io/cluster/demo': 'owned', 'karpenter.k8s.aws/ec2nodeclass': 'default' }
            : i.InstanceProfileName === 'demo_2'
              ? { 'kubernetes.io/cluster/demo': 'shared', 'karpenter.k8s.aws/ec2nodeclass': 'default' }
              : { 'kubernetes.io/cluster/demo': 'owned' },
        ),
      }),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const byCluster = [
    [
      { Name: 'tag:eks:eks-cluster-name', Values: ['demo'] },
      { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
    ],
    [
      { Name: 'tag:kubernetes.io/cluster/demo', Values: ['owned'] },
      { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
    ],
    [{ Name: 'tag:karpenter.k8s.aws/cluster', Values: ['demo'] }],
  ]
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeInstances').map(([, i]) => i),
    byCluster.map((f) => ({
      Filters: [...f, { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] }],
    })),
  )
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeLaunchTemplates').map(([, i]) => i),
    byCluster.map((Filters) => ({ Filters })),
  )
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'ListInstanceProfileTags').map(([, i]) => i),
    [{ InstanceProfileName: 'demo_1' }, { InstanceProfileName: 'demo_2' }, { InstanceProfileName: 'demo_3' }],
  )
  assert.deepEqual(cur, {
    instances: ['i-1', 'i-2'],
    launchTemplates: ['lt-1'],
    instanceProfiles: [{ name: 'demo_1', roles: ['r1', 'r2'] }],
  })
  assert.deepEqual(verdict, {
    action: 'delete',
    changes: ['i-1', 'i-2', 'lt-1', 'demo_1'].map((from) => ({ field: 'orphan', from })),
  })
  assert.deepEqual(e.writes, [
    ['TerminateInstances', { InstanceIds: ['i-1', 'i-2'] }],
    ['DeleteLaunchTemplate', { LaunchTemplateId: 'lt-1' }],
    ['RemoveRoleFromInstanceProfile', { InstanceProfileName: 'demo_1', RoleName: 'r1' }],
    ['RemoveRoleFromInstanceProfile', { InstanceProfileName: 'demo_1', RoleName: 'r2' }],
    ['DeleteInstanceProfile', { InstanceProfileName: 'demo_1' }],
  ])
})

test('orphans: none found is unchanged; a profile-only sweep terminates no instance', async () => {
  const r = orphanSweep({ clusterName: 'demo', sweep: false, dependsOn: [] })
  const empty = env({
    aws: {
      DescribeInstances: () => ({}),
      DescribeLaunchTemplates: () => ({}),
      ListInstanceProfiles: () => ({}),
    },
  })
  const { cur, verdict } = await run(r, empty.env)
  assert.deepEqual(cur, { instances: [], launchTemplates: [], instanceProfiles: [] })
  assert.deepEqual(verdict, { action: 'unchanged', changes: [], note: 'none found' })
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'none found' })
  assert.deepEqual(empty.writes, [])
  const sweep = orphanSweep({ clusterName: 'demo', sweep: true, dependsOn: [] })
  const e = env()
  await sweep.apply(e.env, {
    instances: [],
    launchTemplates: [],
    instanceProfiles: [{ name: 'demo_9', roles: [] }],
  })
  await sweep.apply(e.env, null)
  assert.deepEqual(e.writes, [['DeleteInstanceProfile', { InstanceProfileName: 'demo_9' }]])
})
