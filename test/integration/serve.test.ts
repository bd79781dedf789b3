// doctor --serve against the HTTP-level mock of the `demo` cluster (test/helpers/mock-cluster.ts), with
// the Events API mocked beside it: two runs, the Events each writes on the wire (create, then a
// read and a merge patch of the series), what /metrics and /healthz answer and refuse, and a stop.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import nock from 'nock'
import { interrupt } from '../../src/context/interrupt.js'
import { serve } from '../../src/doctor/serve.js'
import { KUBE_SERVER, startMockCluster, type MockCluster } from '../helpers/mock-cluster.js'
import { irsaTrust, CONTROLLER_ROLE } from '../helpers/facts.js'

interface Written {
  method: string
  path: string
  body: Record<string, unknown>
  contentType?: string
}

/**
 * doctor --serve on the mock, its log kept: resolves once `times` log lines match `line` (runs go on
 * until the test stops them). The mock and the process-wide interrupt are reset after the test.
 */
async function serving(t: TestContext, m: MockCluster, intervalMs: number, line: RegExp, times: number) {
  t.after(() => {
    m.stop()
    interrupt.reset()
  })
  nock.enableNetConnect('127.0.0.1')
  const log: string[] = []
  let base = ''
  const done = serve({
    live: m.runOptions({ maxAttempts: 1 }),
    intervalMs,
    listen: { host: '127.0.0.1', port: 0 },
    events: true,
    runTimeoutMs: 60_000,
    log: (l) => log.push(l),
    onListening: (a) => (base = `http://${a.host}:${a.port}`),
  })
  for (const end = Date.now() + 60_000; log.filter((l) => line.test(l)).length < times; await sleep(20))
    assert.ok(Date.now() < end, log.join('\n'))
  return { log, base, done }
}

test('two runs: Events created, then patched (series 2), never duplicated; /metrics, /healthz; a stop ends it', async (t) => {
  // The Events API: a store that answers as the API server does.
  const events = new Map<string, Record<string, unknown>>()
  const written: Written[] = []
  const EVENTS = /^\/apis\/events\.k8s\.io\/v1\/namespaces\/([^/]+)\/events(?:\/([^/?]+))?$/
  const scope = nock(KUBE_SERVER).persist()
  scope
    .get((uri) => EVENTS.test(uri))
    .reply((uri) => {
      const e = events.get(uri)
      return e ? [200, e] : [404, { kind: 'Status', code: 404, reason: 'NotFound' }]
    })
  scope
    .post((uri) => EVENTS.test(uri))
    .reply(function (uri, body) {
      const e = body as { metadata: { name: string } }
      written.push({ method: 'POST', path: uri, body: e as never })
      const key = `${uri}/${e.metadata.name}`
      if (events.has(key)) return [409, { kind: 'Status', code: 409, reason: 'AlreadyExists' }]
      events.set(key, e as never)
      return [201, e]
    })
  scope
    .patch((uri) => EVENTS.test(uri))
    .reply(function (uri, body) {
      // nock parses only application/json bodies: a merge patch comes as its text.
      const patch = (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown>
      written.push({
        method: 'PATCH',
        path: uri,
        body: patch,
        contentType: String(this.req.headers['content-type']),
      })
      const merged = { ...events.get(uri), ...patch }
      events.set(uri, merged)
      return [200, merged]
    })

  // Started after the Events interceptors: nock matches in order, and the mock's fallback answers any GET.
  const m = startMockCluster({
    expectations: false,
    mutate: (s) => {
      // Two faults: the subnets lost their discovery tag (the EC2NodeClass's), the IRSA trust names
      // another ServiceAccount (the controller's).
      for (const sn of s.subnets) sn.tags = {}
      const role = s.roles[CONTROLLER_ROLE]
      assert.ok(role)
      role.trust = irsaTrust('karpenter', 'karpenter')
    },
  })
  const { log, base, done } = await serving(t, m, 50, /^events: /, 2)
  // Scraped while it runs on (a third run may be under way: the assertions hold for any number).
  const metrics = await fetch(`${base}/metrics`)
  assert.equal(metrics.status, 200)
  const text = await metrics.text()
  assert.equal((await fetch(`${base}/healthz`)).status, 200)
  assert.equal((await fetch(`${base}/other`)).status, 404)
  assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405)
  interrupt.stop('SIGTERM')
  await done
  assert.match(log.at(-1) ?? '', /^stopping \(SIGTERM\)/)
  await assert.rejects(fetch(`${base}/healthz`))

  assert.match(text, /^karpctl_check\{check="discovery-tags",severity="error",status="fail"\} 1$/m)
  assert.match(text, /^karpctl_check\{check="irsa-trust-policy",severity="error",status="fail"\} 1$/m)
  assert.ok(Number(/^karpctl_runs_total\{result="ok"\} (\d+)$/m.exec(text)?.[1]) >= 2, text)
  assert.match(text, /^karpctl_events_total\{result="error"\} 0$/m)

  // Each Event was created once, by the first run; every later run read it and patched only its
  // series, one more each time (2, 3, …).
  const posts = written.filter((w) => w.method === 'POST')
  assert.ok(posts.length >= 2, JSON.stringify(written, null, 1))
  assert.equal(events.size, posts.length, 'no Event created twice')
  const kinds = posts.map((p) => (p.body.regarding as { kind: string }).kind).sort()
  assert.ok(kinds.includes('EC2NodeClass') && kinds.includes('Deployment'), kinds.join())
  const onNodeClass = posts.find((p) => (p.body.regarding as { kind: string }).kind === 'EC2NodeClass')!
  assert.match(onNodeClass.path, /\/namespaces\/default\/events$/)
  assert.match(String(onNodeClass.body.note), /^discovery-tags: /)
  for (const post of posts) {
    const path = `${post.path}/${(post.body.metadata as { name: string }).name}`
    const patches = written.filter((w) => w.method === 'PATCH' && w.path === path)
    assert.ok(patches.length >= 1, `${path} was not patched by the second run`)
    patches.forEach((p, i) => {
      assert.equal(p.contentType, 'application/merge-patch+json')
      assert.deepEqual(Object.keys(p.body), ['series'])
      assert.equal((p.body.series as { count: number }).count, i + 2)
    })
  }
})

test('a run that cannot run (the cluster is not found) is counted, logged, and the loop goes on', async (t) => {
  const m = startMockCluster({ expectations: false, mutate: (s) => (s.cluster = null) })
  const { log, base, done } = await serving(t, m, 20, /^doctor could not run: /, 2)
  const text = await (await fetch(`${base}/metrics`)).text()
  interrupt.stop('SIGTERM')
  await done
  assert.match(log.find((l) => l.startsWith('doctor could not run')) ?? '', /demo/)
  assert.match(text, /^karpctl_last_run_success 0$/m)
  assert.match(text, /^karpctl_runs_total\{result="ok"\} 0$/m)
  assert.doesNotMatch(text, /^karpctl_check\{/m)
})
