// Credentials the Kubernetes API does not accept, through the whole doctor pipeline (the HTTP-level
// mock of `demo`, the real collectors): 401 to everything, 403 to everything, 403 to anonymous. Each
// ends the run with one EnvironmentError that says so and how to refresh them — never a report of
// unknowns that exits 0. A 403 on some reads only stays a per-check gap.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { test, type TestContext } from 'node:test'
import { doctor } from '../../src/doctor/doctor.js'
import { EnvironmentError } from '../../src/errors.js'
import {
  KUBE_SERVER,
  KUBE_TOKEN,
  kubeconfigYaml,
  startMockCluster,
  type MockCluster,
  type MockOptions,
} from '../helpers/mock-cluster.js'

function mock(t: TestContext, options: MockOptions = {}): MockCluster {
  const m = startMockCluster({ expectations: false, ...options })
  t.after(() => m.stop())
  return m
}

/** Fails the test if anything rejects unhandled while `fn` runs (it would kill the CLI with a stack). */
async function noUnhandled<T>(t: TestContext, fn: () => Promise<T>): Promise<T> {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  t.after(() => process.off('unhandledRejection', onUnhandled))
  try {
    return await fn()
  } finally {
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  }
}

async function envError(t: TestContext, m: MockCluster): Promise<EnvironmentError> {
  return noUnhandled(t, async () => {
    try {
      await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
    } catch (err) {
      assert.ok(err instanceof EnvironmentError, `expected an EnvironmentError, got ${String(err)}`)
      return err
    }
    assert.fail('doctor ran to a report')
  })
}

test('401 to every Kubernetes request: one error, the credentials do not work, how to refresh them', async (t) => {
  const m = mock(t, {
    faults: [{ op: 'kube:GET', error: { status: 401, code: 'Unauthorized' }, times: Infinity }],
  })
  const err = await envError(t, m)
  assert.equal(err.code, 'KUBE_UNAUTHORIZED')
  assert.match(
    err.message,
    /^the Kubernetes API at \S+ rejected the credentials of kube context "demo" \(401 Unauthorized\): /,
  )
  assert.match(err.message, /aws eks update-kubeconfig/)
  assert.match(err.message, /aws eks get-token/)
  assert.ok(!err.message.includes('\n'))
})

test('403 to every Kubernetes read (the version aside): the identity has no access, one error', async (t) => {
  const m = mock(t, {
    faults: [
      {
        op: 'kube:GET',
        match: (c) => c.path !== '/version',
        error: {
          status: 403,
          code: 'Forbidden',
          message: 'forbidden: User "arn:aws:iam::123456789012:user/ci" cannot list',
        },
        times: Infinity,
      },
    ],
  })
  const err = await envError(t, m)
  assert.equal(err.code, 'KUBE_FORBIDDEN')
  assert.match(err.message, /denied every read to kube context "demo"/)
  assert.match(err.message, /access entry or an aws-auth mapping/)
})

test('403 to system:anonymous (no credential was seen): the same one error as a 401', async (t) => {
  const m = mock(t, {
    faults: [
      {
        op: 'kube:GET',
        match: (c) => (c.path ?? '').startsWith('/api/v1/nodes'),
        error: {
          status: 403,
          code: 'Forbidden',
          message: 'nodes is forbidden: User "system:anonymous" cannot list resource "nodes"',
        },
        times: Infinity,
      },
    ],
  })
  const err = await envError(t, m)
  assert.equal(err.code, 'KUBE_UNAUTHORIZED')
  assert.match(err.message, /403: it treats them as system:anonymous/)
})

test('403 on one read only is a gap in what doctor can see, not the end of the run', async (t) => {
  const m = mock(t, {
    faults: [
      {
        op: 'kube:GET',
        match: (c) => (c.path ?? '').startsWith('/api/v1/namespaces/kube-system/configmaps/aws-auth'),
        error: 'denied',
        times: Infinity,
      },
    ],
  })
  const outcome = await noUnhandled(t, () => doctor({ live: m.runOptions({ maxAttempts: 1 }) }))
  assert.equal(outcome.facts.kube.awsAuth.ok, false)
  assert.equal(outcome.facts.kube.nodes.ok, true)
})

test('a kube server URL with user:password@ is stored and reported without it', async (t) => {
  const m = mock(t)
  writeFileSync(m.kubeconfig, kubeconfigYaml(withUserinfo(KUBE_SERVER), KUBE_TOKEN))
  const outcome = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  assert.doesNotMatch(JSON.stringify(outcome.facts), /s3cr3t-kube-pw/)
  assert.ok(!outcome.facts.meta.kubeServer?.includes('@'), outcome.facts.meta.kubeServer)
})

/** The mock's kube server with a user and password in its URL. */
function withUserinfo(server: string): string {
  const url = new URL(server)
  url.username = 'admin'
  url.password = 's3cr3t-kube-pw'
  return url.toString().replace(/\/$/, '')
}
