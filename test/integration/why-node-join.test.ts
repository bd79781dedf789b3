// `why node` on a NodeClaim that launched and never joined, over the nock-served mock account and
// cluster (every doctor read answered): the causes read, not guessed — the subnet's route to a
// public-only API endpoint (a private subnet with no default route; aws/karpenter-provider-aws#988
// for the no-public-address kin) and the AMI family against the userData (an AL2023 class with a
// bash bootstrap.sh script) — beside doctor's checks and the boot log; each read once.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { whyNodes } from '../../src/why/node/why-node.js'
import { startMockCluster, type KubeObject } from '../helpers/mock-cluster.js'
import { ago, machine } from '../helpers/why-node.js'

test('never joined: a private subnet with no route to the public-only endpoint, and a bootstrap.sh userData on AL2023', async (t) => {
  const stuck = machine('ip-c', {
    conditions: [
      { type: 'Launched', status: 'True', lastTransitionTime: ago(5) },
      { type: 'Registered', status: 'Unknown', lastTransitionTime: ago(5) },
    ],
  })
  delete stuck.claim.status?.nodeName
  stuck.claim.metadata.labels = {
    ...stuck.claim.metadata.labels,
    'topology.kubernetes.io/zone': 'us-west-2a',
  }
  const instance = /(i-[0-9a-f]+)$/.exec(stuck.claim.status?.providerID ?? '')?.[1] ?? ''
  const m = startMockCluster({
    expectations: false,
    mutate: (s) => {
      const vpc = s.cluster?.resourcesVpcConfig as Record<string, unknown>
      Object.assign(vpc, {
        endpointPublicAccess: true,
        endpointPrivateAccess: false,
        publicAccessCidrs: ['0.0.0.0/0'],
      })
      const vpcId = String(vpc.vpcId)
      s.routeTables = [
        {
          id: 'rtb-main',
          vpcId,
          main: true,
          subnetIds: [],
          routes: { '10.0.0.0/16': 'local', '0.0.0.0/0': 'igw-0demo' },
        },
        { id: 'rtb-private-a', vpcId, subnetIds: ['subnet-0a'], routes: { '10.0.0.0/16': 'local' } },
      ]
      s.consoleOutput = {
        [instance]:
          'cloud-init[1606]: /var/lib/cloud/instance/scripts/part-002: line 2: /etc/eks/bootstrap.sh: No such file or directory\n',
      }
      const klass = s.kube.nodeClasses[0] as KubeObject & { spec: Record<string, unknown> }
      klass.spec.userData = '#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args "--max-pods=50"\n'
      s.kube.nodeClaims = [stuck.claim as unknown as KubeObject]
      s.kube.pdbs = []
      s.kube.events = []
    },
  })
  t.after(() => m.stop())
  const { report, facts, calls } = await whyNodes({
    live: m.runOptions({ maxAttempts: 1 }),
    selector: { kind: 'nodeclaim', name: stuck.claim.metadata.name },
  })
  const v = report.nodes[0]
  assert.equal(v?.outcome, 'not-joined')
  const route = v?.join?.filter((j) => j.source === 'api-route') ?? []
  assert.deepEqual(
    route.map((j) => j.status),
    ['fail'],
    'only subnet-0a, the zone of the claim',
  )
  assert.match(
    route[0]?.message ?? '',
    /subnet subnet-0a \(us-west-2a, route table rtb-private-a\) has no default route/,
  )
  assert.match(
    route[0]?.fix?.commands?.[0] ?? '',
    /aws eks update-cluster-config --region us-west-2 --name demo --resources-vpc-config endpointPrivateAccess=true/,
  )
  const ud = v?.join?.find((j) => j.source === 'user-data')
  assert.equal(ud?.status, 'warn')
  assert.match(ud?.message ?? '', /calls \/etc\/eks\/bootstrap\.sh, which AL2023 does not have/)
  assert.match(v?.join?.find((j) => j.source === 'boot-log')?.message ?? '', /bootstrap\.sh: No such file/)
  // The snapshot keeps the userData's shape, never its text.
  assert.deepEqual(facts.userData?.default, { kind: 'shell', callsBootstrapSh: true })
  const once = (op: string) => (calls ?? []).filter((c) => c.startsWith(op)).length
  assert.equal(once('ec2:DescribeRouteTables'), 1)
  assert.equal(once('eks:DescribeCluster'), 1, 'the endpoint access comes from doctor’s one DescribeCluster')
})
