// The cluster's lock (issue 36.2): a Lease taken before the first write, refused in one line while
// another run holds it, waited for with --wait-for-lock, taken over once a killed run's lease expires.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeApiError, type KubeClient } from '../../../src/context/kube.js'
import { ExitCode } from '../../../src/errors.js'
import {
  expiresAt,
  goneHere,
  holderOf,
  LEASE_SECONDS,
  LOCK_NAME,
  RENEW_MS,
  LockedError,
  takeLock,
  type Holder,
  type Lease,
} from '../../../src/plan/lock.js'

const PATH = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases`

/** An API server's Lease store: create conflicts on an existing name, update on a stale resourceVersion. */
function fakeKube(o: { forbid?: boolean } = {}) {
  const store: { lease: Lease | null; rv: number; calls: string[] } = { lease: null, rv: 0, calls: [] }
  const kube = {
    fresh: async (path: string) => {
      store.calls.push(`GET ${path}`)
      return store.lease ? structuredClone(store.lease) : null
    },
    write: async (method: string, path: string, body?: unknown) => {
      store.calls.push(`${method} ${path}`)
      if (o.forbid) throw new KubeApiError(403, 'Forbidden', 'leases is forbidden', path)
      const l = body as Lease
      if (method === 'POST') {
        if (store.lease) throw new KubeApiError(409, 'AlreadyExists', 'exists', path)
      } else if (method === 'PUT') {
        if (!store.lease) throw new KubeApiError(404, 'NotFound', 'gone', path)
        if (l.metadata.resourceVersion !== store.lease.metadata.resourceVersion)
          throw new KubeApiError(409, 'Conflict', 'the object has been modified', path)
      } else if (method === 'DELETE') {
        const rv = (body as { preconditions?: { resourceVersion?: string } }).preconditions?.resourceVersion
        if (store.lease && rv === store.lease.metadata.resourceVersion) store.lease = null
        return {}
      }
      store.lease = {
        ...structuredClone(l),
        metadata: { ...l.metadata, resourceVersion: String(++store.rv) },
      }
      return structuredClone(store.lease)
    },
  }
  return { kube: kube as unknown as KubeClient, store }
}

const holder = (pid: number, command = 'karpctl install --yes'): Holder => ({
  host: 'laptop',
  pid,
  command,
  started: '2026-12-04T11:00:00.000Z',
})

function options(now: { t: number }, over: Partial<Parameters<typeof takeLock>[1]> = {}) {
  const said: string[] = []
  return {
    said,
    o: {
      namespace: 'kube-system',
      holder: holder(101),
      wait: false,
      now: () => new Date(now.t),
      sleep: async () => {},
      say: (l: string) => said.push(l),
      ...over,
    },
  }
}

test('a free cluster: the lock is a Lease with holder, host, pid, command and start time; released, it is gone', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  const lock = await takeLock(kube, options(now).o)
  assert.ok(store.lease)
  assert.equal(store.lease.metadata.name, LOCK_NAME)
  assert.deepEqual(holderOf(store.lease), holder(101))
  assert.equal(store.lease.spec?.leaseDurationSeconds, LEASE_SECONDS)
  assert.match(store.lease.spec?.holderIdentity ?? '', /^laptop\/101\/[0-9a-f]{8}$/)
  assert.equal(store.lease.spec?.renewTime, '2026-12-04T11:00:00.000000Z')
  assert.deepEqual(store.calls, [`GET ${PATH}/${LOCK_NAME}`, `POST ${PATH}`])
  await lock.release()
  assert.equal(store.lease, null)
})

test('a second run while the first holds it: one line naming who holds it and since when, exit 2', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  const first = await takeLock(kube, options(now).o)
  now.t += 20_000
  const second = takeLock(kube, options(now, { holder: holder(202, 'karpctl install --yes') }).o)
  await assert.rejects(second, (err: unknown) => {
    assert.ok(err instanceof LockedError)
    assert.equal(err.exitCode, ExitCode.cannotRun)
    assert.equal(
      err.message,
      'cluster is being changed by `karpctl install --yes` (pid 101 on laptop) since 2026-12-04T11:00:00.000Z; the lock (Lease kube-system/karpctl-lock) is renewed while that run lasts and expires 60 s after it stops: wait for it to finish, or pass --wait-for-lock',
    )
    assert.ok(!err.message.includes('\n'))
    return true
  })
  assert.deepEqual(holderOf(store.lease!), holder(101), 'the first keeps it')
  await first.release()
})

test('--wait-for-lock: waits (saying so once) until the holder gives it back, then takes it', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  const first = await takeLock(kube, options(now).o)
  let polls = 0
  const { o, said } = options(now, {
    holder: holder(202),
    wait: true,
    sleep: async () => {
      if (++polls === 3) await first.release()
    },
  })
  const got = await takeLock(kube, o)
  assert.equal(got.tookOver, false, 'a live run waited out: its work is no leftover')
  assert.equal(polls, 3)
  assert.equal(said.length, 1)
  assert.match(
    said[0]!,
    /^waiting: cluster is being changed by `karpctl install --yes` \(pid 101 on laptop\)/,
  )
  assert.deepEqual(holderOf(store.lease!), holder(202))
})

test('a lock left by a killed run is taken over once it expires, and the run says whose it was', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  await takeLock(kube, options(now, { holder: holder(101, 'karpctl upgrade --yes') }).o) // never released: killed
  now.t += (LEASE_SECONDS - 1) * 1000
  await assert.rejects(takeLock(kube, options(now, { holder: holder(202) }).o), LockedError)
  now.t += 2000
  const { o, said } = options(now, { holder: holder(202) })
  assert.equal((await takeLock(kube, o)).tookOver, true)
  assert.deepEqual(holderOf(store.lease!), holder(202))
  assert.equal(store.lease!.spec?.leaseTransitions, 1)
  assert.deepEqual(said, [
    'took over the lock of `karpctl upgrade --yes` (pid 101 on laptop) since 2026-12-04T11:00:00.000Z: not renewed for 61 s, that run was stopped or killed',
  ])
})

test('a race to create or take it over: the loser reads again and finds it held', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  // Another run creates the Lease between this run's read and its create.
  const realFresh = (kube as unknown as { fresh: (p: string) => Promise<Lease | null> }).fresh
  let first = true
  ;(kube as unknown as { fresh: unknown }).fresh = async (p: string) => {
    const got = await realFresh(p)
    if (first) {
      first = false
      await takeLock(kube, options(now, { holder: holder(303) }).o)
    }
    return got
  }
  await assert.rejects(takeLock(kube, options(now).o), /pid 303 on laptop/)
  assert.deepEqual(holderOf(store.lease!), holder(303))
})

test('no permission on leases: one line naming the namespace and the verbs to grant', async () => {
  const { kube } = fakeKube({ forbid: true })
  await assert.rejects(takeLock(kube, options({ t: 0 }).o), {
    code: 'LOCK_FORBIDDEN',
    message:
      "the cluster's lock (Lease kube-system/karpctl-lock) cannot be taken: your Kubernetes identity may not create leases.coordination.k8s.io there; grant get, create, update and delete on leases in kube-system (README: Permissions)",
  })
})

test('expiry and holder from a Lease another tool wrote', () => {
  const l: Lease = {
    metadata: { name: LOCK_NAME },
    spec: { holderIdentity: 'x', renewTime: '2026-12-04T11:00:00.000000Z', leaseDurationSeconds: 10 },
  }
  assert.equal(expiresAt(l), Date.parse('2026-12-04T11:00:10Z'))
  assert.equal(expiresAt({ metadata: { name: LOCK_NAME }, spec: {} }), null, 'held by no one')
  assert.equal(
    expiresAt({ metadata: { name: LOCK_NAME }, spec: { holderIdentity: 'x' } }),
    0,
    'never renewed: expired',
  )
  assert.equal(holderOf(l), null)
})

test('renewed while the run lasts: renewTime moves every RENEW_MS, so a live run never expires', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] })
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  const lock = await takeLock(kube, options(now).o)
  now.t += RENEW_MS
  t.mock.timers.tick(RENEW_MS)
  await new Promise((r) => setImmediate(r))
  assert.equal(store.lease?.spec?.renewTime, '2026-12-04T11:00:15.000000Z')
  assert.equal(expiresAt(store.lease!), now.t + LEASE_SECONDS * 1000)
  await lock.release()
  assert.equal(store.lease, null, 'released after a renewal: the precondition is the renewed version')
})

test('a killed run on this machine (same host and PID namespace, its pid gone): taken over at once, said so', async () => {
  const { kube, store } = fakeKube()
  const now = { t: Date.parse('2026-12-04T11:00:00Z') }
  const here = (pid: number): Holder => ({
    ...holder(pid, 'karpctl tenant add acme --yes'),
    pidns: 'pid:[4026531836]',
  })
  await takeLock(kube, options(now, { holder: here(101) }).o) // killed: never released
  now.t += 5000
  // Alive, or in another PID namespace (a container sharing the host name): waited out.
  await assert.rejects(takeLock(kube, options(now, { holder: here(202), alive: () => true }).o), LockedError)
  await assert.rejects(
    takeLock(kube, options(now, { holder: { ...here(202), pidns: 'pid:[1]' }, alive: () => false }).o),
    LockedError,
  )
  const { o, said } = options(now, { holder: here(202), alive: (pid) => pid !== 101 })
  const got = await takeLock(kube, o)
  assert.deepEqual([got.waited, got.tookOver], [true, true])
  assert.equal(holderOf(store.lease!)?.pid, 202)
  assert.deepEqual(said, [
    'took over the lock of `karpctl tenant add acme --yes` (pid 101 on laptop) since 2026-12-04T11:00:00.000Z: that process is gone from this machine (killed)',
  ])
  assert.equal(goneHere(null, here(1)), false)
})
