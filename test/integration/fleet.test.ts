// doctor --all-clusters end to end against HTTP-level mocks: one account and region (the healthy `demo`
// mock of test/helpers/mock-cluster.ts) holding four clusters — `demo` (Karpenter, healthy), `empty` (no
// Karpenter), `locked` (its API refuses the caller: 401) and `slow` (its API never answers within the
// per-cluster --timeout). Every API server checks that the caller sent an EKS token for *its* cluster,
// signed by the run's credentials, as aws-iam-authenticator reads one (minus asking STS).
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import nock from 'nock'
import { catalog } from '../../src/checks/catalog.js'
import { fleetDoctor } from '../../src/fleet/fleet.js'
import { fleetJson, fleetSarif, renderFleet } from '../../src/report/fleet.js'
import { ACCOUNT, REGION } from '../helpers/facts.js'
import { HOSTS, MockCluster } from '../helpers/mock-cluster.js'

const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE'

/** The cluster an `Authorization: Bearer k8s-aws-v1.…` header was made for, or null if it is not one. */
function tokenCluster(authorization: string | undefined): { cluster: string; url: URL } | null {
  const m = /^Bearer k8s-aws-v1\.([A-Za-z0-9_-]+)$/.exec(authorization ?? '')
  if (!m) return null
  const url = new URL(Buffer.from(m[1] as string, 'base64url').toString('utf8'))
  const ok =
    url.host === `sts.${REGION}.amazonaws.com` &&
    url.searchParams.get('Action') === 'GetCallerIdentity' &&
    url.searchParams.get('X-Amz-SignedHeaders') === 'host;x-k8s-aws-id' &&
    url.searchParams.get('X-Amz-Credential')?.startsWith(`${ACCESS_KEY}/`)
  return ok ? { cluster: '', url } : null
}

const describeOf = (name: string) => ({
  cluster: {
    name,
    arn: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${name}`,
    version: '1.34',
    status: 'ACTIVE',
    endpoint: `https://${name}.gr7.${REGION}.eks.amazonaws.com`,
    certificateAuthority: { data: Buffer.from('not a real CA').toString('base64') },
    resourcesVpcConfig: { subnetIds: [], securityGroupIds: [], endpointPublicAccess: true },
  },
})

function fleetMock(t: TestContext, clusters = ['demo', 'empty', 'locked']): MockCluster {
  const m = new MockCluster({
    expectations: false,
    mutate: (s) => (s.clusters = clusters),
    kubeAuthorized: (a) => tokenCluster(a) !== null,
  })
  // Registered before the mock's own interceptors, so these answer first.
  for (const name of ['empty', 'locked', 'slow'])
    nock(HOSTS.eks).persist().get(`/clusters/${name}`).reply(200, describeOf(name))
  nock(`https://empty.gr7.${REGION}.eks.amazonaws.com`)
    .persist()
    .get(() => true)
    .reply(function (path) {
      if (!tokenCluster(this.req.headers.authorization as string | undefined))
        return [401, { kind: 'Status', reason: 'Unauthorized', code: 401 }]
      if (path === '/version') return [200, { gitVersion: 'v1.34.1-eks-1' }]
      if (path.includes('/customresourcedefinitions/'))
        return [404, { kind: 'Status', reason: 'NotFound', code: 404 }]
      return [200, { kind: 'List', apiVersion: 'v1', metadata: {}, items: [] }]
    })
  nock(`https://locked.gr7.${REGION}.eks.amazonaws.com`)
    .persist()
    .get(() => true)
    .reply(401, { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized', code: 401 })
  nock(`https://slow.gr7.${REGION}.eks.amazonaws.com`)
    .persist()
    .get(() => true)
    .delay(10_000)
    .reply(200, { kind: 'List', apiVersion: 'v1', metadata: {}, items: [] })
  m.start()
  t.after(() => m.stop())
  return m
}

test('fleet: three clusters, one table worst first; a refusing cluster is unknown and stops nothing', async (t) => {
  // Under tsx, client-node's first import takes seconds (the built CLI bundles only KubeConfig): paid
  // here, once per process, so the 6 s per-cluster bound measures the clusters.
  await import('@kubernetes/client-node')
  fleetMock(t)
  const seen: string[] = []
  const outcome = await fleetDoctor({
    scope: { regions: [REGION], profiles: [], accounts: [] },
    home: REGION,
    karpctlVersion: '0.0.0-test',
    concurrency: 2,
    onCluster: (o, done, total) => seen.push(`${done}/${total} ${o.cluster.name}`),
  })
  const by = Object.fromEntries(outcome.clusters.map((o) => [o.cluster.name, o]))
  assert.deepEqual(Object.keys(by).sort(), ['demo', 'empty', 'locked'])
  assert.equal(seen.length, 3, 'one progress line per cluster')

  assert.equal(by.demo!.state, 'judged', by.demo!.reason)
  assert.equal(by.demo!.access, 'eks-token')
  assert.ok(by.demo!.karpenterVersion, 'the Karpenter version of the Helm release')
  assert.equal(by.demo!.results.length, catalog.length, 'the whole catalog ran on demo')
  assert.equal(by.demo!.exitCode, 0, renderFleet(outcome, { color: false }))

  assert.equal(by.empty!.state, 'no-karpenter')
  assert.equal(by.empty!.exitCode, 0)

  assert.equal(by.locked!.state, 'unknown')
  assert.match(by.locked!.reason ?? '', /rejected the credentials|Unauthorized|401/)
  // The run's count is discovery's calls plus every cluster's.
  const perCluster = outcome.clusters.reduce((n, o) => n + o.calls, 0)
  assert.ok(by.demo!.calls > 20, `demo made its reads (${by.demo!.calls})`)
  assert.ok(outcome.calls.length > perCluster, `${outcome.calls.length} > ${perCluster}`)
  // Exit = the worst cluster's: one could not be judged, none failed.
  assert.equal(outcome.exitCode, 2)
  assert.deepEqual(
    outcome.clusters.map((o) => o.cluster.name),
    ['locked', 'demo', 'empty'],
    'worst first: unknown before clean, then by name',
  )
  const table = renderFleet(outcome, { color: false })
  const rows = table.split('\n')
  assert.match(rows[0] ?? '', /^STATUS\s+CLUSTER\s+KARPENTER\s+IDENTITY\s+CHECKS/)
  assert.match(
    rows[1] ?? '',
    new RegExp(`^UNKNOWN\\s+${ACCOUNT}/${REGION}/locked\\s+-\\s+arn:aws:iam::${ACCOUNT}:user/karpctl-test`),
  )
  assert.match(
    table,
    new RegExp(`OK\\s+${ACCOUNT}/${REGION}/demo\\s+${by.demo!.karpenterVersion!.replace(/\./g, '\\.')}`),
  )
  assert.match(table, /NO KARPENTER\s+\S+\/empty/)
  assert.match(table, /3 clusters: 0 failed, 1 unknown, 1 clean, 1 without Karpenter/)

  const json = fleetJson(outcome, { karpctlVersion: '0.0.0-test', generatedAt: new Date(), wallTimeMs: 1 })
  assert.equal(json.clusters.length, 3)
  assert.equal(json.summary.unknown, 1)
  const demo = json.clusters.find((c) => c.name === 'demo')!
  assert.equal(demo.report?.checks.length, catalog.length)
  assert.equal(json.clusters.find((c) => c.name === 'locked')!.report, null)

  const sarif = JSON.parse(fleetSarif(outcome, catalog, '0.0.0-test')) as {
    runs: { automationDetails: { id: string } }[]
  }
  assert.deepEqual(
    sarif.runs.map((r) => r.automationDetails.id.split('/').pop()),
    ['locked', 'demo', 'empty'],
    'one SARIF run per cluster',
  )
})

test('fleet: a cluster whose API never answers is unknown after the per-cluster --timeout', async (t) => {
  fleetMock(t, ['slow'])
  const started = Date.now()
  const outcome = await fleetDoctor({
    scope: { regions: [REGION], profiles: [], accounts: [] },
    home: REGION,
    karpctlVersion: '0.0.0-test',
    clusterTimeoutS: 3,
  })
  const [slow] = outcome.clusters
  assert.equal(slow?.state, 'unknown')
  // Its reads' own bound (a third of the cluster's) or the cluster's bound, whichever ends it first.
  assert.match(slow?.reason ?? '', /did not answer within 1 s|did not finish within 3 s/)
  assert.ok(Date.now() - started < 8_000, 'not the 10 s the API takes')
  assert.equal(outcome.exitCode, 2)
})

test('fleet: a region that refuses ListClusters is a gap in the report, not the end of the run', async (t) => {
  fleetMock(t)
  nock(HOSTS.eks.replace(REGION, 'eu-west-1'))
    .get('/clusters')
    .reply(
      403,
      { message: 'User is not authorized to perform: eks:ListClusters' },
      { 'x-amzn-errortype': 'AccessDeniedException' },
    )
  const outcome = await fleetDoctor({
    scope: { regions: ['eu-west-1'], profiles: [], accounts: [] },
    home: REGION,
    karpctlVersion: '0.0.0-test',
  })
  assert.equal(outcome.clusters.length, 0)
  assert.equal(outcome.gaps.length, 1)
  assert.match(outcome.gaps[0]!.where, /eu-west-1/)
  assert.match(outcome.gaps[0]!.reason, /AccessDenied/)
  assert.equal(outcome.exitCode, 2)
})
