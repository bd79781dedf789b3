// `karpctl why` against a hostile EC2 (issue 36 §4): a NextToken that repeats or never ends, a 200
// answer that is an HTML page (a captive portal, a proxy). (150,000 types in one page: test/unit/context/aws.test.ts.) The
// real collectors and clients, the network mocked at the HTTP layer (nock). Each must end — as `?`
// (exit 2) naming the API, never as "no instance type is offered … of 0 types".
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import nock from 'nock'
import { createRunContext } from '../../src/context/run-context.js'
import { exitCodeOf, why } from '../../src/why/why.js'
import { healthyNodeClass, healthyNodePool } from '../helpers/facts.js'
import { ec2Answer, HOSTS, KUBE_SERVER } from '../helpers/mock-cluster.js'
import { notServed, wireEnv } from '../helpers/why-wire.js'
import { describedType, INSTANCE_TYPES, pendingPod } from '../helpers/why.js'

let dir: string
let ec2Calls = 0
/** EC2's answer to this test's DescribeInstanceTypes (the offerings always answer). */
let describeTypes: (q: URLSearchParams) => [number, string, Record<string, string>] = () => [500, '', {}]

const xml = (a: ReturnType<typeof ec2Answer>) =>
  [a.status, a.body, a.headers] as [number, string, Record<string, string>]

function ec2(body: string): [number, string, Record<string, string>] {
  ec2Calls++
  const q = new URLSearchParams(body)
  if (q.get('Action') === 'DescribeInstanceTypes') return describeTypes(q)
  return xml(
    ec2Answer('DescribeInstanceTypeOfferings', {
      instanceTypeOfferingSet: INSTANCE_TYPES.map((t) => ({
        instanceType: t.name,
        locationType: 'availability-zone',
        location: 'us-west-2a',
      })),
    }),
  )
}

function kube(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  const nc = healthyNodeClass()
  nc.status = { ...nc.status, subnets: [{ id: 'subnet-a', zone: 'us-west-2a' }] }
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list([healthyNodePool()])
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses':
      return list([nc])
    case '/api/v1/namespaces/shop/pods':
      return list(url.searchParams.get('fieldSelector') === 'status.phase=Pending' ? [pendingPod()] : [])
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  return notServed(url.pathname)
}

let restore: () => void

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-bad-why-'))
  restore = wireEnv(dir)
  nock.disableNetConnect()
  nock(`https://${new URL(HOSTS.ec2).host}`)
    .persist()
    .post('/')
    .reply((_uri, body) => ec2(String(body)))
  nock(KUBE_SERVER)
    .persist()
    .get(/.*/)
    .reply((uri) => kube(uri))
})

after(() => {
  nock.cleanAll()
  nock.enableNetConnect()
  restore()
  rmSync(dir, { recursive: true, force: true })
})

/** `why --all-pending -n shop` with this EC2: the default NodePool's verdict and the exit code. */
async function judged() {
  ec2Calls = 0
  const context = await createRunContext({
    clusterName: 'demo',
    region: 'us-west-2',
    karpctlVersion: 'test',
    maxAttempts: 1,
  })
  try {
    const { report } = await why({ context, selector: { kind: 'all-pending', namespace: 'shop' } })
    const verdict = report.groups[0]?.nodePools.find((v) => v.nodePool === 'default')
    return { status: verdict?.status, message: verdict?.message ?? '', code: exitCodeOf(report), report }
  } finally {
    context.aws.destroy()
  }
}

test('a NextToken EC2 repeats ends the list after the repeat: ? naming DescribeInstanceTypes, exit 2', async () => {
  describeTypes = () =>
    xml(
      ec2Answer('DescribeInstanceTypes', {
        instanceTypeSet: [describedType(INSTANCE_TYPES[0]!)],
        nextToken: 'same',
      }),
    )
  const r = await judged()
  assert.equal(r.code, 2, r.message)
  assert.equal(r.status, 'unknown', r.message)
  assert.match(
    JSON.stringify(r.report),
    /DescribeInstanceTypes \(page 2\) with a NextToken it had given before/,
  )
  assert.ok(ec2Calls < 10, `${ec2Calls} calls`)
})

test('a NextToken that never ends is cut at the page bound, as a read failure', async () => {
  describeTypes = (q) =>
    xml(
      ec2Answer('DescribeInstanceTypes', {
        instanceTypeSet: [],
        nextToken: `t${Number((q.get('NextToken') ?? 't0').slice(1)) + 1}`,
      }),
    )
  const r = await judged()
  assert.equal(r.code, 2, r.message)
  assert.match(JSON.stringify(r.report), /with more than 1000 pages/)
})

test('EC2 answering 200 with an HTML page is an unreadable catalogue (?), never "0 types" (issue 36 §4)', async () => {
  describeTypes = () => [
    200,
    '<!doctype html><html><body>Sign in to the Wi-Fi</body></html>',
    { 'content-type': 'text/html' },
  ]
  const r = await judged()
  assert.doesNotMatch(r.message, /of 0 types|no instance type is offered/)
  assert.equal(r.code, 2, r.message)
  assert.match(JSON.stringify(r.report), /an HTML page/)
})
