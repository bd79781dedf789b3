// `karpctl why` when an EC2NodeClass has no subnet where a pod must run, or none at all, on the wire:
// EKS names the cluster's VPC, EC2 describes its subnets (once), and the printed fix tags the private
// subnet with the most free addresses in that zone with the class's selector tags — a command, not a
// describe to read. Only the tags the classes select on are kept in the facts (a snapshot holds no other).
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach, test } from 'node:test'
import nock from 'nock'
import { createRunContext } from '../../src/context/run-context.js'
import type { EC2NodeClass } from '../../src/facts/types.js'
import { why } from '../../src/why/why.js'
import { healthyNodeClass, healthyNodePool } from '../helpers/facts.js'
import { ec2Answer, HOSTS, KUBE_SERVER } from '../helpers/mock-cluster.js'
import { describedType, INSTANCE_TYPES, pendingPod } from '../helpers/why.js'
import { notServed, offeringsAnswer, serveEc2, serveKube, wireEnv } from '../helpers/why-wire.js'

let dir: string
let restoreEnv: () => void = () => undefined
const ec2Calls: URLSearchParams[] = []
let eksCalls = 0
const seen: string[] = []
let nodeClass: EC2NodeClass

const subnet = (id: string, zone: string, ips: number, pub: boolean, tags: Record<string, string>) => ({
  subnetId: id,
  availabilityZone: zone,
  availabilityZoneId: `usw2-az${zone.slice(-1)}`,
  vpcId: 'vpc-0abc',
  availableIpAddressCount: ips,
  mapPublicIpOnLaunch: pub,
  tagSet: Object.entries(tags).map(([key, value]) => ({ key, value })),
})
const SUBNETS = [
  subnet('subnet-a', 'us-west-2a', 200, false, { 'karpenter.sh/discovery': 'demo', Name: 'private-a' }),
  // A public subnet with more room: nodes do not belong there, the private one is picked.
  subnet('subnet-b-public', 'us-west-2b', 4000, true, { Name: 'public-b' }),
  subnet('subnet-b', 'us-west-2b', 150, false, {
    Name: 'private-b',
    owner: 'ghp_notAKeyJustATagValue0000000000000000',
  }),
  subnet('subnet-c', 'us-west-2c', 90, false, {}),
]

function ec2(action: string, q: URLSearchParams) {
  if (action === 'DescribeInstanceTypes')
    return ec2Answer(action, { instanceTypeSet: INSTANCE_TYPES.map(describedType) })
  if (action === 'DescribeInstanceTypeOfferings')
    return offeringsAnswer(INSTANCE_TYPES, ['us-west-2a', 'us-west-2b', 'us-west-2c'])
  if (action === 'DescribeSubnets') {
    assert.equal(q.get('Filter.1.Name'), 'vpc-id')
    assert.equal(q.get('Filter.1.Value.1'), 'vpc-0abc')
    return ec2Answer(action, { subnetSet: SUBNETS })
  }
  return undefined
}

function answer(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list([healthyNodePool()])
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses':
      return list([nodeClass])
    case '/api/v1/namespaces/shop/pods':
      return list([pendingPod({ nodeSelector: { 'topology.kubernetes.io/zone': 'us-west-2b' } })])
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  return notServed(url.pathname)
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-why-subnets-'))
  restoreEnv = wireEnv(dir)
  nock.disableNetConnect()
  serveEc2(ec2, ec2Calls)
  nock(HOSTS.eks)
    .persist()
    .get('/clusters/demo')
    .reply(() => {
      eksCalls++
      return [
        200,
        {
          cluster: {
            name: 'demo',
            arn: 'arn:aws:eks:us-west-2:111122223333:cluster/demo',
            resourcesVpcConfig: { vpcId: 'vpc-0abc' },
          },
        },
      ]
    })
  serveKube(answer, seen)
})

beforeEach(() => {
  ec2Calls.length = 0
  eksCalls = 0
  nodeClass = healthyNodeClass()
  nodeClass.status = { ...nodeClass.status, subnets: [{ id: 'subnet-a', zone: 'us-west-2a' }] }
})

after(() => {
  nock.cleanAll()
  nock.enableNetConnect()
  restoreEnv()
  rmSync(dir, { recursive: true, force: true })
})

const context = () =>
  createRunContext({ clusterName: 'demo', region: 'us-west-2', karpctlVersion: 'test', maxAttempts: 1 })

test('a pod pinned to a zone the class has no subnet in: the fix tags the private subnet there', async () => {
  const snapshot = join(dir, 'zone.json')
  const { report } = await why({
    context: await context(),
    selector: { kind: 'all-pending', namespace: 'shop' },
    saveSnapshot: snapshot,
  })
  const v = report.groups[0]?.nodePools[0]
  assert.equal(v?.rule, 'zones')
  assert.deepEqual(v?.fix?.commands, [
    `aws ec2 create-tags --region us-west-2 --resources subnet-b --tags '[{"Key":"karpenter.sh/discovery","Value":"demo"}]'`,
  ])
  assert.match(
    v?.fix?.summary ?? '',
    /^tag subnet-b \(us-west-2b, 150 free addresses\) with karpenter\.sh\/discovery=demo/,
  )
  // One DescribeCluster, one DescribeSubnets, whatever the number of pods and NodePools.
  assert.equal(eksCalls, 1)
  assert.equal(ec2Calls.filter((q) => q.get('Action') === 'DescribeSubnets').length, 1)
  assert.deepEqual(
    seen.filter((s) => !s.startsWith('GET ')),
    [],
    'why is read-only',
  )
  // The snapshot keeps the selected tag key only: no Name, no other tag's value.
  const saved = readFileSync(snapshot, 'utf8')
  assert.doesNotMatch(saved, /private-b|ghp_|"owner"/)
  assert.match(saved, /"subnets": \{\s*"ok": true/)
})

test('an EC2NodeClass whose selector matches no subnet: the fix tags one private subnet per zone', async () => {
  nodeClass.status = {
    conditions: [
      {
        type: 'SubnetsReady',
        status: 'False',
        reason: 'SubnetsNotFound',
        message: 'SubnetSelector did not match any Subnets',
      },
      { type: 'SecurityGroupsReady', status: 'True' },
      { type: 'AMIsReady', status: 'True' },
      { type: 'InstanceProfileReady', status: 'True' },
      { type: 'ValidationSucceeded', status: 'True' },
      { type: 'Ready', status: 'False' },
    ],
  }
  const { report } = await why({
    context: await context(),
    selector: { kind: 'all-pending', namespace: 'shop' },
  })
  const v = report.groups[0]?.nodePools[0]
  assert.equal(v?.rule, 'nodeclass')
  assert.deepEqual(v?.fix?.commands, [
    `aws ec2 create-tags --region us-west-2 --resources subnet-a subnet-b subnet-c --tags '[{"Key":"karpenter.sh/discovery","Value":"demo"}]'`,
  ])
})

test('when EKS does not answer with a VPC, the fix stays the diagnosis and the run goes on', async () => {
  // No answer for this cluster: the read fails, and is data.
  const ctx = await createRunContext({
    clusterName: 'other',
    region: 'us-west-2',
    karpctlVersion: 'test',
    maxAttempts: 1,
  })
  const { report } = await why({ context: ctx, selector: { kind: 'all-pending', namespace: 'shop' } })
  const v = report.groups[0]?.nodePools[0]
  assert.equal(v?.rule, 'zones')
  assert.match(v?.fix?.commands?.[1] ?? '', /^aws ec2 describe-subnets /)
  assert.equal(ec2Calls.filter((q) => q.get('Action') === 'DescribeSubnets').length, 0)
})
