// Teardown gives back exactly what karpctl recorded changing on what it does not own: the tcp/8443 rule
// from the recorded source group (not another group, not another port), and a cluster-autoscaler's
// recorded replica count with its record removed in the same patch.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { SCALED_FROM } from '../../../src/desired/ownership.js'
import { autoscalerRestore } from '../../../src/plan/resources/autoscaler-restore.js'
import { recordedIngressRestore } from '../../../src/plan/resources/recorded-ingress.js'
import { ADDED_INGRESS } from '../../../src/plan/resources/webhook-ingress.js'
import type { ApplyEnv, Resource, Step } from '../../../src/plan/types.js'
import { recordingEnv } from '../../helpers/recording-env.js'

interface Group {
  GroupId: string
  VpcId: string
  Tags: { Key: string; Value: string }[]
}
interface Filter {
  Name: string
  Values: string[]
}

/** DescribeSecurityGroups as EC2 answers it: only the groups every filter matches. */
function describeGroups(groups: Group[]) {
  return (input: Record<string, unknown>) => {
    const filters = (input.Filters ?? []) as Filter[]
    const match = (g: Group, f: Filter) =>
      f.Name === 'tag-key'
        ? g.Tags.some((t) => f.Values.includes(t.Key))
        : f.Name === 'vpc-id'
          ? f.Values.includes(g.VpcId)
          : assert.fail(`unexpected filter ${f.Name}`)
    return { SecurityGroups: groups.filter((g) => filters.every((f) => match(g, f))) }
  }
}

async function stepOf<S>(r: Resource<S>, env: ApplyEnv): Promise<Step> {
  const step = (await buildPlan('t', [r as Resource], env)).steps[0]
  assert.ok(step)
  return step
}

const VPC = 'vpc-1'
const groups: Group[] = [
  // karpctl added tcp/8443 from the cluster SG to this node SG, and recorded the source.
  { GroupId: 'sg-node', VpcId: VPC, Tags: [{ Key: ADDED_INGRESS, Value: 'sg-cluster' }] },
  // Another node SG, its rule from a different source.
  {
    GroupId: 'sg-node-2',
    VpcId: VPC,
    Tags: [
      { Key: ADDED_INGRESS, Value: 'sg-other' },
      { Key: 'Name', Value: 'n2' },
    ],
  },
  // No record: a rule there was not karpctl's.
  { GroupId: 'sg-untouched', VpcId: VPC, Tags: [{ Key: 'Name', Value: 'x' }] },
  // A record of another VPC (another cluster's teardown gives it back).
  { GroupId: 'sg-elsewhere', VpcId: 'vpc-2', Tags: [{ Key: ADDED_INGRESS, Value: 'sg-cluster-2' }] },
]

test('the 8443 restore revokes tcp/8443 from exactly the recorded source, and only the record tag goes', async () => {
  // Kills: a revoked pair naming the node group itself (GroupId: r.groupId) or no source; another port
  // (443, or 8443 only as FromPort); another protocol; the vpc-id filter dropped; other tags deleted.
  const { env, awsWrites } = recordingEnv({ aws: { DescribeSecurityGroups: describeGroups(groups) } })
  const step = await stepOf(recordedIngressRestore({ vpcId: VPC, dependsOn: [] }), env)
  assert.equal(step.verdict.action, 'update')
  assert.deepEqual(step.verdict.changes, [
    { field: 'sg-node ingress', from: 'tcp/8443 from sg-cluster' },
    { field: 'sg-node-2 ingress', from: 'tcp/8443 from sg-other' },
  ])
  const r = await applyPlan({ title: 't', steps: [step] }, env)
  assert.deepEqual(r.failed, [])
  const revoke = (group: string, source: string) => ({
    op: 'RevokeSecurityGroupIngress',
    input: {
      GroupId: group,
      IpPermissions: [
        { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: source }] },
      ],
    },
  })
  const untag = (group: string) => ({
    op: 'DeleteTags',
    input: { Resources: [group], Tags: [{ Key: ADDED_INGRESS }] },
  })
  assert.deepEqual(awsWrites, [
    revoke('sg-node', 'sg-cluster'),
    untag('sg-node'),
    revoke('sg-node-2', 'sg-other'),
    untag('sg-node-2'),
  ])
})

test('the 8443 restore with nothing recorded in the VPC changes nothing', async () => {
  const { env, awsWrites } = recordingEnv({
    aws: { DescribeSecurityGroups: describeGroups(groups.filter((g) => g.GroupId === 'sg-untouched')) },
  })
  const step = await stepOf(recordedIngressRestore({ vpcId: VPC, dependsOn: [] }), env)
  assert.deepEqual([step.verdict.action, step.verdict.note], ['unchanged', 'nothing recorded'])
  await applyPlan({ title: 't', steps: [step] }, env)
  assert.deepEqual(awsWrites, [])
})

const deployment = (
  namespace: string,
  name: string,
  replicas: number,
  annotations?: Record<string, string>,
) => ({
  metadata: { namespace, name, ...(annotations ? { annotations } : {}) },
  spec: { replicas },
})

test('the autoscaler restore sets exactly the recorded replicas and drops the record in the same patch', async () => {
  // Kills: replicas restored as 1, as the current 0 or off by one; the record annotation kept (or
  // removed by a second call); a deployment without the record touched; the wrong namespace or name.
  const { env, kubeWrites } = recordingEnv({
    kube: {
      '/apis/apps/v1/deployments': {
        items: [
          deployment('kube-system', 'cluster-autoscaler', 0, { [SCALED_FROM]: '3', keep: 'me' }),
          deployment('autoscaling', 'ca-2', 0, { [SCALED_FROM]: '5' }),
          deployment('kube-system', 'coredns', 2, { other: '5' }),
        ],
      },
    },
  })
  const step = await stepOf(autoscalerRestore({ dependsOn: [] }), env)
  assert.equal(step.verdict.action, 'update')
  assert.deepEqual(step.verdict.changes, [
    { field: 'kube-system/cluster-autoscaler replicas', from: 0, to: 3 },
    { field: 'autoscaling/ca-2 replicas', from: 0, to: 5 },
  ])
  const r = await applyPlan({ title: 't', steps: [step] }, env)
  assert.deepEqual(r.failed, [])
  const patch = (ns: string, name: string, replicas: number) => ({
    method: 'PATCH',
    path: `/apis/apps/v1/namespaces/${ns}/deployments/${name}`,
    body: { metadata: { annotations: { [SCALED_FROM]: null } }, spec: { replicas } },
    contentType: 'application/merge-patch+json',
  })
  assert.deepEqual(kubeWrites, [
    patch('kube-system', 'cluster-autoscaler', 3),
    patch('autoscaling', 'ca-2', 5),
  ])
})

test('the autoscaler restore with no record changes nothing', async () => {
  const { env, kubeWrites } = recordingEnv({
    kube: { '/apis/apps/v1/deployments': { items: [deployment('kube-system', 'cluster-autoscaler', 1)] } },
  })
  const step = await stepOf(autoscalerRestore({ dependsOn: [] }), env)
  assert.deepEqual([step.verdict.action, step.verdict.note], ['unchanged', 'nothing recorded'])
  await applyPlan({ title: 't', steps: [step] }, env)
  assert.deepEqual(kubeWrites, [])
})
