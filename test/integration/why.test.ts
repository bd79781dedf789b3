// `karpctl why` end to end on the wire: the real collectors (doctor's Kubernetes reads and why's
// own) and the real KubeClient against a nock-served Kubernetes API holding one NodePool with a GPU
// taint, one without, and four Pending pods, and a nock-served EC2 describing five instance types (two
// pages) offered in the subnet zone. Proves the verdicts, and that each kind of object (and each EC2
// read) is made once however many pods and NodePools are judged, and that nothing is written.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import nock from 'nock'
import { notServed, offeringsAnswer, serveEc2, serveKube, wireEnv } from '../helpers/why-wire.js'
import { createRunContext } from '../../src/context/run-context.js'
import { exitCodeOf, why } from '../../src/why/why.js'
import { healthyNodeClass, healthyNodePool } from '../helpers/facts.js'
import { ec2Answer, KUBE_SERVER } from '../helpers/mock-cluster.js'
import { describedType, DEVICE_TYPES, INSTANCE_TYPES, pendingPod } from '../helpers/why.js'

let dir: string
const seen: string[] = []
let restoreEnv: () => void = () => undefined

const gpuPool = () => {
  const np = healthyNodePool()
  np.metadata = { name: 'gpu' }
  np.spec.weight = 50
  np.spec.template.spec.taints = [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }]
  return np
}
const nodeClass = () => {
  const nc = healthyNodeClass()
  nc.status = { ...nc.status, subnets: [{ id: 'subnet-a', zone: 'us-west-2a' }] }
  return nc
}
const pods = [
  pendingPod({}, 'web-6d4cf56db6-aaaaa'),
  pendingPod({}, 'web-6d4cf56db6-bbbbb'),
  pendingPod({ nodeSelector: { team: 'payments' } }, 'web-6d4cf56db6-ccccc'),
  pendingPod({ nodeSelector: { 'kubernetes.io/arch': 's390x' } }, 'web-6d4cf56db6-ddddd'),
]

/** What the API serves: the test of devices and spread swaps in its own pods and types. */
let served = pods
let types = INSTANCE_TYPES
const ZONE = 'topology.kubernetes.io/zone'
const nodes = [
  { metadata: { name: 'node-a', labels: { [ZONE]: 'us-west-2a' } } },
  { metadata: { name: 'node-b', labels: { [ZONE]: 'us-west-2b' } } },
]
const placed = ['p1', 'p2'].map((name) => ({
  metadata: { name, namespace: 'shop', labels: { app: 'web' } },
  spec: { nodeName: 'node-a', containers: [] },
  status: { phase: 'Running' },
}))

const ec2Calls: URLSearchParams[] = []

/** EC2's answer: the types in two pages (a NextToken), the offerings in the zones asked for. */
function ec2(action: string, q: URLSearchParams) {
  if (action === 'DescribeInstanceTypes') {
    const page = q.get('NextToken') === 'page-2' ? types.slice(3) : types.slice(0, 3)
    return ec2Answer(action, {
      instanceTypeSet: page.map(describedType),
      ...(q.get('NextToken') ? {} : { nextToken: 'page-2' }),
    })
  }
  if (action === 'DescribeInstanceTypeOfferings') {
    assert.equal(q.get('LocationType'), 'availability-zone')
    assert.equal(q.get('Filter.1.Name'), 'location')
    const zones = [...q.entries()].filter(([k]) => /^Filter\.1\.Value\.\d+$/.test(k)).map(([, v]) => v)
    return offeringsAnswer(types, zones)
  }
  return undefined
}

function answer(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list([healthyNodePool(), gpuPool()])
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses':
      return list([nodeClass()])
    case '/api/v1/namespaces/shop/pods':
      if (
        url.searchParams.get('fieldSelector') ===
        'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed'
      )
        return list(placed)
      assert.equal(url.searchParams.get('fieldSelector'), 'status.phase=Pending')
      return list(served)
    case '/api/v1/nodes':
      return list(nodes)
    case '/apis/karpenter.sh/v1/nodeclaims':
      return list([])
    case '/apis/apps/v1/daemonsets':
      return list([])
    case '/api/v1/namespaces/shop/events':
      return list([])
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  return notServed(url.pathname)
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-why-'))
  restoreEnv = wireEnv(dir)
  nock.disableNetConnect()
  serveEc2(ec2, ec2Calls)
  // Any method: a write would be recorded, and the test fails on it.
  serveKube(answer, seen)
})

after(() => {
  nock.cleanAll()
  nock.enableNetConnect()
  restoreEnv()
  rmSync(dir, { recursive: true, force: true })
})

test('why --all-pending -n shop: verdicts per NodePool in weight order, one read of each kind, no write', async () => {
  const ctx = await createRunContext({
    clusterName: 'demo',
    region: 'us-west-2',
    karpctlVersion: 'test',
    maxAttempts: 1,
  })
  const { report } = await why({ context: ctx, selector: { kind: 'all-pending', namespace: 'shop' } })

  assert.deepEqual(report.order, [
    { nodePool: 'gpu', weight: 50 },
    { nodePool: 'default', weight: 0 },
  ])
  assert.deepEqual(
    report.groups.map((g) => [
      g.pods,
      g.outcome,
      g.nodePools.map((v) => `${v.nodePool} ${v.status}: ${v.message}`),
    ]),
    [
      [
        ['web-6d4cf56db6-aaaaa', 'web-6d4cf56db6-bbbbb'],
        'fits',
        [
          'gpu ruled-out: did not tolerate taint nvidia.com/gpu=true:NoSchedule (spec.template.spec.taints)',
          'default fits: 4 of 5 instance types have room, the smallest c6g.large (1930m cpu / 2.9Gi memory / 29 pods allocatable; a node needs cpu 500m, memory 1Gi, pods 1)',
        ],
      ],
      [
        ['web-6d4cf56db6-ccccc'],
        'none',
        [
          'gpu ruled-out: did not tolerate taint nvidia.com/gpu=true:NoSchedule (spec.template.spec.taints)',
          'default ruled-out: label "team" does not have known values',
        ],
      ],
      [
        ['web-6d4cf56db6-ddddd'],
        'none',
        [
          'gpu ruled-out: did not tolerate taint nvidia.com/gpu=true:NoSchedule (spec.template.spec.taints)',
          'default ruled-out: no instance type matches kubernetes.io/arch In [s390x]: the 5 types offered in [us-west-2a] have kubernetes.io/arch amd64, arm64',
        ],
      ],
    ],
  )
  // EC2: the types read once (both pages), the offerings once, in the subnets' zone only.
  const actions = ec2Calls.map(
    (q) => `${q.get('Action')}${q.get('NextToken') ? ` ${q.get('NextToken')}` : ''}`,
  )
  assert.deepEqual(actions.sort(), [
    'DescribeInstanceTypeOfferings',
    'DescribeInstanceTypes',
    'DescribeInstanceTypes page-2',
  ])
  assert.equal(
    ec2Calls.find((q) => q.get('Action') === 'DescribeInstanceTypeOfferings')?.get('Filter.1.Value.1'),
    'us-west-2a',
  )
  assert.equal(exitCodeOf(report), 1)
  assert.deepEqual(report.unreadable, [])
  const gets = seen.filter((s) => s.startsWith('GET '))
  assert.equal(gets.length, new Set(gets).size, `a read was repeated:\n${gets.join('\n')}`)
  assert.deepEqual(
    seen.filter((s) => !s.startsWith('GET ')),
    [],
    'why is read-only',
  )
  for (const read of [
    'GET /apis/karpenter.sh/v1/nodepools',
    'GET /apis/karpenter.k8s.aws/v1/ec2nodeclasses',
    'GET /apis/karpenter.sh/v1/nodeclaims',
    'GET /apis/apps/v1/daemonsets',
    'GET /api/v1/namespaces/shop/events?',
    'GET /api/v1/namespaces/shop/pods?',
  ])
    assert.equal(gets.filter((g) => g.startsWith(read)).length, 1, `${read} once:\n${gets.join('\n')}`)
})

test('why pod that does not exist: one line, exit 2 (InputError)', async () => {
  const ctx = await createRunContext({
    clusterName: 'demo',
    region: 'us-west-2',
    karpctlVersion: 'test',
    maxAttempts: 1,
  })
  await assert.rejects(
    why({ context: ctx, selector: { kind: 'pod', namespace: 'shop', name: 'nope' } }),
    (err: Error & { exitCode?: number }) =>
      err.message === 'pod shop/nope does not exist: check the name and -n' && err.exitCode === 2,
  )
})

test('devices from EC2, and required zone spread over the pods already placed: one read of them, only then', async () => {
  served = [
    pendingPod(
      { containers: [{ name: 'app', resources: { requests: { cpu: '1', 'nvidia.com/gpu': '1' } } }] },
      'train-5b9c7d8f6-aaaaa',
    ),
    pendingPod(
      {
        topologySpreadConstraints: [
          {
            topologyKey: ZONE,
            whenUnsatisfiable: 'DoNotSchedule',
            maxSkew: 1,
            labelSelector: { matchLabels: { app: 'web' } },
          },
        ],
      },
      'web-6d4cf56db6-eeeee',
    ),
  ]
  served[0]!.metadata.labels = { app: 'train', 'pod-template-hash': '5b9c7d8f6' }
  served[0]!.metadata.ownerReferences = [{ kind: 'ReplicaSet', name: 'train-5b9c7d8f6', controller: true }]
  types = [...INSTANCE_TYPES, ...DEVICE_TYPES]
  seen.length = 0
  try {
    const ctx = await createRunContext({
      clusterName: 'demo',
      region: 'us-west-2',
      karpctlVersion: 'test',
      maxAttempts: 1,
    })
    const { report } = await why({ context: ctx, selector: { kind: 'all-pending', namespace: 'shop' } })
    const byPod = Object.fromEntries(
      report.groups.map((g) => [g.pods[0], g.nodePools.find((v) => v.nodePool === 'default')!]),
    )
    // The GPU counts came from DescribeInstanceTypes' GpuInfo: the g5.xlarge and the p4d have one.
    const gpu = byPod['train-5b9c7d8f6-aaaaa']!
    assert.equal(gpu.status, 'fits')
    assert.match(gpu.message, /the smallest g5\.xlarge .*\(2 of them with nvidia\.com\/gpu 1\)$/)
    // Two web pods already in us-west-2a, none in us-west-2b (a node there): the subnets allow only us-west-2a.
    const spread = byPod['web-6d4cf56db6-eeeee']!
    assert.equal(spread.status, 'ruled-out')
    assert.equal(spread.rule, 'topology-spread')
    assert.equal(
      spread.message,
      'topology spread on topology.kubernetes.io/zone (maxSkew 1, DoNotSchedule): the zones NodePool default can launch in hold us-west-2a 2 pods matching app=web, the emptiest zone (us-west-2b) holds 0: one more would make the skew 3 > 1',
    )
    const gets = seen.filter((g) => g.startsWith('GET /api/v1/namespaces/shop/pods?'))
    assert.equal(gets.length, 2, gets.join('\n'))
    assert.deepEqual(report.unreadable, [])
  } finally {
    served = pods
    types = INSTANCE_TYPES
  }
})
