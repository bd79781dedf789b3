// `karpctl why` end to end on the wire: the real collectors (doctor's Kubernetes reads and why's
// own) and the real KubeClient against a nock-served Kubernetes API holding one NodePool with a GPU
// taint, one without, and three Pending pods. Proves the verdicts, and that each kind of object is
// read once however many pods and NodePools are judged, and that nothing is written.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import nock from 'nock'
import { createRunContext } from '../../src/context/run-context.js'
import { exitCodeOf, why } from '../../src/why/why.js'
import { healthyNodeClass, healthyNodePool } from '../helpers/facts.js'
import { KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml } from '../helpers/mock-cluster.js'
import { pendingPod } from '../helpers/why.js'

let dir: string
const seen: string[] = []
const saved: Record<string, string | undefined> = {}

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
]

function answer(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list([healthyNodePool(), gpuPool()])
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses':
      return list([nodeClass()])
    case '/api/v1/namespaces/shop/pods':
      assert.equal(url.searchParams.get('fieldSelector'), 'status.phase=Pending')
      return list(pods)
    case '/apis/karpenter.sh/v1/nodeclaims':
      return list([])
    case '/apis/apps/v1/daemonsets':
      return list([])
    case '/api/v1/namespaces/shop/events':
      return list([])
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  // Everything else doctor's collectors read (the Helm release, webhooks, CRDs…): none here.
  return url.pathname.split('/').length % 2 === 0 && !/\/namespaces\/[^/]+\/[^/]+\/[^/]+$/.test(url.pathname)
    ? list([])
    : [404, { kind: 'Status', reason: 'NotFound', message: 'not found' }]
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-why-'))
  writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml(KUBE_SERVER, KUBE_TOKEN))
  saved.KUBECONFIG = process.env.KUBECONFIG
  process.env.KUBECONFIG = join(dir, 'kubeconfig')
  nock.disableNetConnect()
  // Any method: a write would be recorded, and the test fails on it.
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
    nock(KUBE_SERVER)
      .persist()
      .intercept(/.*/, method)
      .reply(function (uri) {
        seen.push(`${this.req.method} ${uri}`)
        return answer(uri)
      })
})

after(() => {
  nock.cleanAll()
  nock.enableNetConnect()
  if (saved.KUBECONFIG === undefined) delete process.env.KUBECONFIG
  else process.env.KUBECONFIG = saved.KUBECONFIG
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
        'could-not-tell',
        [
          'gpu ruled-out: did not tolerate taint nvidia.com/gpu=true:NoSchedule (spec.template.spec.taints)',
          'default not-judged: taints, requirements, zones and limits allow it; instance types not judged (a node needs cpu 500m, memory 1Gi)',
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
    ],
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
