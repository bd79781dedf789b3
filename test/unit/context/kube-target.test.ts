import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  judgeKubeTarget,
  kubeTargetLine,
  sameCa,
  sameServer,
  type TargetFacts,
} from '../../../src/context/kube-target.js'

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBdemo\n-----END CERTIFICATE-----\n'
const OTHER_PEM = '-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n'
const EKS = 'https://ABCD.gr7.us-west-2.eks.amazonaws.com'

const facts = (o: Partial<TargetFacts> = {}): TargetFacts => ({
  context: 'arn:aws:eks:us-west-2:111122223333:cluster/demo',
  server: EKS.toLowerCase() + '/',
  ca: PEM,
  explicit: false,
  clusterName: 'demo',
  eksEndpoint: EKS,
  eksCa: Buffer.from(PEM).toString('base64'),
  contexts: [],
  ...o,
})

test('servers compare as a client connects: case, trailing slash and the default port do not matter', () => {
  assert.equal(sameServer('https://X.example.com/', 'https://x.example.com:443'), true)
  assert.equal(sameServer('https://x.example.com:6443', 'https://x.example.com'), false)
  assert.equal(sameServer('https://x.example.com', 'https://y.example.com'), false)
  assert.equal(sameServer('http://x.example.com', 'https://x.example.com'), false)
})

test("CAs compare as certificates: EKS's base64 of the PEM equals the PEM; an empty CA equals nothing", () => {
  assert.equal(sameCa(PEM, Buffer.from(PEM).toString('base64')), true)
  assert.equal(sameCa(PEM.replace(/\n/g, '\r\n'), PEM), true)
  assert.equal(sameCa(PEM, OTHER_PEM), false)
  assert.equal(sameCa('', ''), false)
})

test("the cluster's endpoint with its CA: written to, and the plan says why", () => {
  const t = judgeKubeTarget(facts())
  assert.deepEqual(t, { context: facts().context, server: facts().server, match: 'endpoint' })
  assert.equal(
    kubeTargetLine(t as never),
    `kube context: ${facts().context} (${facts().server}: the cluster's endpoint)`,
  )
})

test("another API server blocks before any change, naming both servers and a context that is the cluster's", () => {
  const v = judgeKubeTarget(
    facts({
      context: 'kind-dev',
      server: 'https://127.0.0.1:6443',
      ca: OTHER_PEM,
      contexts: [
        { name: 'kind-dev', server: 'https://127.0.0.1:6443' },
        { name: 'prod-demo', server: EKS + '/' },
      ],
    }),
  )
  assert.deepEqual(v, {
    blocked: `kube context "kind-dev" points at https://127.0.0.1:6443, not at EKS cluster demo (${EKS}): pass --kube-context prod-demo — nothing was changed`,
  })
})

test('without a context of the cluster in the kubeconfig, the way out is update-kubeconfig or --kube-context', () => {
  const v = judgeKubeTarget(facts({ context: 'kind-dev', server: 'https://127.0.0.1:6443', ca: undefined }))
  assert.ok('blocked' in v)
  assert.match(
    v.blocked,
    /: run aws eks update-kubeconfig --name demo, or pass --kube-context naming the context that reaches it — nothing was changed$/,
  )
})

test("--kube-context naming another server is the user's word: written to, and the plan says EKS's endpoint", () => {
  const t = judgeKubeTarget(facts({ server: 'https://127.0.0.1:6443', ca: OTHER_PEM, explicit: true }))
  assert.deepEqual(t, {
    context: facts().context,
    server: 'https://127.0.0.1:6443',
    match: 'chosen',
    eksEndpoint: EKS,
  })
  assert.match(kubeTargetLine(t as never), /named by --kube-context; EKS's endpoint is https:\/\/ABCD/)
})

test("a tunnel to the cluster (another server, the cluster's CA) is the cluster", () => {
  const t = judgeKubeTarget(facts({ server: 'https://localhost:8443' }))
  assert.deepEqual(t, {
    context: facts().context,
    server: 'https://localhost:8443',
    match: 'ca',
    eksEndpoint: EKS,
  })
})

test("the cluster's endpoint with another CA blocks (a stale kubeconfig), unless --kube-context names it", () => {
  const v = judgeKubeTarget(facts({ ca: OTHER_PEM }))
  assert.ok('blocked' in v)
  assert.match(
    v.blocked,
    /trusts another CA than the cluster's: refresh it \(aws eks update-kubeconfig --name demo\)/,
  )
  assert.equal(
    (judgeKubeTarget(facts({ ca: OTHER_PEM, explicit: true })) as { match: string }).match,
    'endpoint',
  )
  // No CA in the kubeconfig (the system's roots): nothing to compare, the endpoint decides.
  assert.equal((judgeKubeTarget(facts({ ca: undefined })) as { match: string }).match, 'endpoint')
})

test('a cluster without an endpoint to compare: unknown, not blocked, and said', () => {
  const t = judgeKubeTarget(facts({ eksEndpoint: undefined, server: 'https://127.0.0.1:6443' }))
  assert.deepEqual(t, { context: facts().context, server: 'https://127.0.0.1:6443', match: 'unknown' })
})
