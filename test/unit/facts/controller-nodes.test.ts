// The controller's nodes (sg-webhook-8443's facts): spec.providerID → instance → the groups on its
// network interfaces, one DescribeInstances for all ids, groups already read not asked again, Fargate
// and unresolvable nodes said as such.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { controllerNodesOf, instanceIdOf, isFargate } from '../../../src/facts/collect-network.js'
import type { KubeNode, Pod, SecurityGroup } from '../../../src/facts/types.js'

const sg = (id: string): SecurityGroup => ({ id, name: id, vpcId: 'vpc-1', tags: {}, ingress: [] })
const node = (name: string, providerID?: string, labels: Record<string, string> = {}): KubeNode => ({
  name,
  labels,
  taints: [],
  ready: true,
  karpenter: false,
  ...(providerID ? { providerID } : {}),
})
const pod = (nodeName?: string): Pod => ({
  metadata: { name: `karpenter-${nodeName ?? 'pending'}` },
  ...(nodeName ? { nodeName } : {}),
  containerStatuses: [],
})

/** EC2 answering DescribeInstances with `instances` (id → groups per ENI) and DescribeSecurityGroups. */
function ec2(instances: Record<string, string[][]>) {
  const asked: { op: string; input: unknown }[] = []
  const aws = {
    call: async (_service: string, op: string, input: { Filters: { Values: string[] }[] }) => {
      asked.push({ op, input })
      const ids = input.Filters[0]!.Values
      if (op === 'DescribeInstances')
        return {
          Reservations: [
            {
              Instances: ids
                .filter((id) => instances[id])
                .map((id) => ({
                  InstanceId: id,
                  NetworkInterfaces: instances[id]!.map((g) => ({
                    Groups: g.map((GroupId) => ({ GroupId })),
                  })),
                })),
            },
          ],
        }
      return { SecurityGroups: ids.map((GroupId) => ({ GroupId, GroupName: GroupId, IpPermissions: [] })) }
    },
  } as unknown as Aws
  return { aws, asked }
}

test('instanceIdOf: the id at the tail of an EC2 providerID, nothing from other shapes', () => {
  assert.equal(instanceIdOf('aws:///us-west-2a/i-0abc123def4567890'), 'i-0abc123def4567890')
  assert.equal(instanceIdOf('aws:///us-west-2a/e4f5-fargate/fargate-ip-192-168-1-1'), undefined)
  assert.equal(instanceIdOf('kind://docker/kind/kind-control-plane'), undefined)
  assert.equal(instanceIdOf(undefined), undefined)
})

test('isFargate: by label, by the fargate- name, by a providerID naming Fargate', () => {
  assert.equal(isFargate(node('ip-1', undefined, { 'eks.amazonaws.com/compute-type': 'fargate' })), true)
  assert.equal(isFargate(node('fargate-ip-192-168-1-1.us-west-2.compute.internal')), true)
  assert.equal(isFargate(node('x', 'aws:///us-west-2a/abc/fargate-ip-1')), true)
  assert.equal(isFargate(node('ip-1', 'aws:///us-west-2a/i-0abc')), false)
})

test('one DescribeInstances for every node; groups read before are not asked again; ENIs unioned', async () => {
  const { aws, asked } = ec2({ 'i-0a': [['sg-ng'], ['sg-ng', 'sg-extra']], 'i-0b': [['sg-ng']] })
  const nodes = [node('n-a', 'aws:///us-west-2a/i-0a'), node('n-b', 'aws:///us-west-2b/i-0b')]
  const got = await controllerNodesOf(aws, {
    pods: [pod('n-b'), pod('n-a'), pod('n-a'), pod()],
    nodes,
    known: async () => [sg('sg-ng')],
  })
  assert.deepEqual(
    got.map((n) => [n.name, n.instanceId, n.securityGroups?.map((g) => g.id)]),
    [
      ['n-a', 'i-0a', ['sg-ng', 'sg-extra']],
      ['n-b', 'i-0b', ['sg-ng']],
    ],
  )
  assert.deepEqual(asked, [
    { op: 'DescribeInstances', input: { Filters: [{ Name: 'instance-id', Values: ['i-0a', 'i-0b'] }] } },
    { op: 'DescribeSecurityGroups', input: { Filters: [{ Name: 'group-id', Values: ['sg-extra'] }] } },
  ])
})

test('Fargate needs no read; a node with no EC2 providerID or a gone instance is unresolved', async () => {
  const { aws, asked } = ec2({})
  const fargate = await controllerNodesOf(aws, {
    pods: [pod('fargate-ip-1'), pod('kind-1')],
    nodes: [node('fargate-ip-1'), node('kind-1', 'kind://docker/kind/kind-1')],
    known: async () => [],
  })
  assert.deepEqual(asked, [])
  assert.deepEqual(fargate, [
    { name: 'fargate-ip-1', fargate: true },
    { name: 'kind-1', fargate: false, unresolved: 'its spec.providerID names no EC2 instance' },
  ])
  const gone = await controllerNodesOf(aws, {
    pods: [pod('n-a')],
    nodes: [node('n-a', 'aws:///us-west-2a/i-0dead')],
    known: async () => [],
  })
  assert.equal(gone[0]!.unresolved, 'instance i-0dead was not found')
})
