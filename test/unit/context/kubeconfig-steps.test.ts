// The steps resolveKubeCredentials is made of, each on its own: the merge of several files, the
// choice of context, the user a context without one gets, client-node's options turned into a
// request's, and the reuse of a computed credential.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeConfig } from '@kubernetes/client-node'
import {
  mergeFiles,
  pickContext,
  reusedFor,
  toRequestOptions,
  userOf,
  type KubeRequestOptions,
  type MergedConfig,
} from '../../../src/context/kubeconfig.js'
import { EnvironmentError } from '../../../src/errors.js'

const file = (path: string, names: string[], server = 'https://a.example') => ({
  path,
  doc: {
    clusters: names.map((n) => ({ name: n, cluster: { server: `${server}/${n}` } })),
    contexts: names.map((n) => ({ name: n, context: { cluster: n, user: n } })),
    users: names.map((n) => ({ name: n, user: { token: `t-${path}-${n}` } })),
  },
})

test('mergeFiles: the first file to name a cluster, context or user wins it; later ones add new names', () => {
  const m = mergeFiles(
    [file('/k/one', ['a', 'b'], 'https://one'), file('/k/two', ['b', 'c'], 'https://two')],
    () => new KubeConfig(),
  )
  assert.deepEqual(
    m.clusters.map((c) => [c.name, c.server]),
    [
      ['a', 'https://one/a'],
      ['b', 'https://one/b'],
      ['c', 'https://two/c'],
    ],
  )
  assert.deepEqual(
    m.users.map((u) => [u.name, u.token]),
    [
      ['a', 't-/k/one-a'],
      ['b', 't-/k/one-b'],
      ['c', 't-/k/two-c'],
    ],
  )
  assert.deepEqual(
    m.contexts.map((c) => c.name),
    ['a', 'b', 'c'],
  )
})

test('mergeFiles: a relative tokenFile becomes an auth provider reading it from beside its kubeconfig', () => {
  const m = mergeFiles(
    [{ path: '/k/dir/config', doc: { users: [{ name: 'u', user: { tokenFile: 'tok' } }] } }],
    () => new KubeConfig(),
  )
  assert.deepEqual(m.users[0]?.authProvider, { name: 'karpctl-token-file', config: { path: '/k/dir/tok' } })
})

const merged = (): MergedConfig => ({
  clusters: [{ name: 'c1', server: 'https://c1', skipTLSVerify: false }],
  users: [{ name: 'u1' }],
  contexts: [
    { name: 'one', cluster: 'c1', user: 'u1' },
    { name: 'lost', cluster: 'nowhere', user: 'u1' },
    { name: 'bare', cluster: 'c1' } as MergedConfig['contexts'][number],
  ],
})

const code = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof EnvironmentError)
    return { code: err.code, message: err.message }
  }
  assert.fail('did not throw')
}

test('pickContext: the named context and its cluster; each missing piece is its own one-line error', () => {
  const m = merged()
  const { ctx, cluster } = pickContext(m, 'one')
  assert.equal(ctx.name, 'one')
  assert.equal(cluster.name, 'c1')
  const none = code(() => pickContext(m, undefined))
  assert.equal(none.code, 'NO_KUBE_CONTEXT')
  assert.match(none.message, /one of: one, lost, bare/)
  const unknown = code(() => pickContext(m, 'other'))
  assert.equal(unknown.code, 'UNKNOWN_KUBE_CONTEXT')
  assert.match(unknown.message, /"other" does not exist/)
  const lost = code(() => pickContext(m, 'lost'))
  assert.equal(lost.code, 'BAD_KUBECONFIG')
  assert.match(lost.message, /names cluster "nowhere"/)
  assert.equal(
    code(() => pickContext({ clusters: [], contexts: [] }, undefined)).message.includes('none'),
    true,
  )
})

test('userOf: a context with a user gets it; one without is given an empty user of its own, recorded in the merge', () => {
  const m = merged()
  assert.equal(userOf(m, m.contexts[0]!).name, 'u1')
  const bare = m.contexts[2]!
  const u = userOf(m, bare)
  assert.deepEqual(u, { name: 'bare (no user)' })
  assert.equal(m.contexts[2]?.user, 'bare (no user)')
  assert.equal(m.users.length, 2)
  // Asked again, the same user, not a second one.
  assert.equal(userOf(m, m.contexts[2]!).name, 'bare (no user)')
  assert.equal(m.users.length, 2)
})

test("toRequestOptions: headers as strings, verification on unless turned off, the server's basic auth as a fallback", () => {
  const o = toRequestOptions(
    { headers: { Authorization: 'Bearer x', 'X-N': 3, Gone: undefined }, servername: 'sni' },
    'u:p',
    false,
  )
  assert.deepEqual(o.headers, { Authorization: 'Bearer x', 'X-N': '3' })
  assert.equal(o.rejectUnauthorized, true)
  assert.equal(o.servername, 'sni')
  assert.equal(o.auth, 'u:p')
  assert.equal(o.secureContext, undefined)
  assert.equal(toRequestOptions({ rejectUnauthorized: false, auth: 'k:v' }, 'u:p', false).auth, 'k:v')
  assert.equal(toRequestOptions({ rejectUnauthorized: false }, undefined, false).rejectUnauthorized, false)
})

test('toRequestOptions: the agent only with a proxy; a key Node cannot parse is left to the request', () => {
  const agent = {} as never
  assert.equal(toRequestOptions({ agent }, undefined, false).agent, undefined)
  assert.equal(toRequestOptions({ agent }, undefined, true).agent, agent)
  const bad = toRequestOptions({ key: 'not a key' }, undefined, false)
  assert.equal(bad.key, 'not a key')
  assert.equal(bad.secureContext, undefined)
})

const options = (token: string): KubeRequestOptions => ({
  headers: { Authorization: token },
  rejectUnauthorized: true,
})

test('reusedFor: one computation for concurrent callers, reused until it is older than the window', async () => {
  let t = 0
  let runs = 0
  const get = reusedFor(
    10,
    async () => options(`t${++runs}`),
    () => t,
  )
  const [a, b] = await Promise.all([get(), get()])
  assert.equal(runs, 1)
  assert.equal(a.headers.Authorization, 't1')
  // Each caller has its own headers: one that adds to them does not change the next one's.
  a.headers.Extra = 'x'
  assert.equal(b.headers.Extra, undefined)
  t = 10
  assert.equal((await get()).headers.Authorization, 't1')
  t = 11
  assert.equal((await get()).headers.Authorization, 't2')
})

test('reusedFor: a failed computation is not kept; the next call computes again', async () => {
  let runs = 0
  const get = reusedFor(
    10_000,
    async () => {
      if (++runs === 1) throw new Error('plugin failed')
      return options('ok')
    },
    () => 0,
  )
  await assert.rejects(get(), /plugin failed/)
  assert.equal((await get()).headers.Authorization, 'ok')
  assert.equal(runs, 2)
})
