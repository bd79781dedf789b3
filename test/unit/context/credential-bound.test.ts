// The bound on credential resolution: one timer for concurrent calls, every call after it fails at once.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  boundCredentials,
  credentialsTimeoutError,
  credentialsTimeoutMs,
  descendants,
  runsCommand,
} from '../../../src/context/credential-bound.js'
import { InputError } from '../../../src/errors.js'

test('credentialsTimeoutMs: 60 s by default; seconds (decimals too) from KARPCTL_CREDENTIALS_TIMEOUT; nonsense refused', () => {
  assert.equal(credentialsTimeoutMs({}), 60_000)
  assert.equal(credentialsTimeoutMs({ KARPCTL_CREDENTIALS_TIMEOUT: '' }), 60_000)
  assert.equal(credentialsTimeoutMs({ KARPCTL_CREDENTIALS_TIMEOUT: '120' }), 120_000)
  assert.equal(credentialsTimeoutMs({ KARPCTL_CREDENTIALS_TIMEOUT: '0.5' }), 500)
  for (const bad of ['0', '-1', 'abc', '1e3', '3601', 'Infinity', '0x10', '10s'])
    assert.throws(
      () => credentialsTimeoutMs({ KARPCTL_CREDENTIALS_TIMEOUT: bad }),
      (err: unknown) =>
        err instanceof InputError &&
        /^KARPCTL_CREDENTIALS_TIMEOUT ".*" is not a number of seconds/.test(err.message),
      bad,
    )
})

test('credentialsTimeoutError names the profile, the source and the variable, exit 2, code CREDENTIALS_TIMEOUT', () => {
  const err = credentialsTimeoutError('prod', { what: 'its credential_process "x"', command: 'x' }, 1500)
  assert.match(
    err.message,
    /^AWS credentials of profile "prod" were not resolved within 1\.5 s: its credential_process "x" never finished; run it by hand to see why,.*KARPCTL_CREDENTIALS_TIMEOUT=<seconds>$/,
  )
  assert.equal(err.code, 'CREDENTIALS_TIMEOUT')
  assert.equal(err.exitCode, 2)
  assert.match(
    credentialsTimeoutError(undefined, { what: 'IMDS' }, 60_000).message,
    /of the default chain were not resolved within 60 s: IMDS never finished; check the network and any proxy/,
  )
})

test('boundCredentials: a provider that answers in time passes its value and arguments through', async () => {
  const seen: unknown[] = []
  const bounded = boundCredentials(
    async (arg: never) => (seen.push(arg), { accessKeyId: 'A' }),
    1000,
    () => new Error('x'),
  )
  assert.deepEqual(await bounded({ forceRefresh: true } as never), { accessKeyId: 'A' })
  assert.deepEqual(seen, [{ forceRefresh: true }])
  // Its own failure is its own (no credentials at all is another line, elsewhere).
  const failing = boundCredentials(
    () => Promise.reject(new Error('none')),
    1000,
    () => new Error('x'),
  )
  await assert.rejects(failing(), /none/)
})

test('boundCredentials: a provider that never answers fails after the bound, once for all callers, and for ever', async () => {
  let calls = 0
  let stopped = 0
  const bounded = boundCredentials(
    () => (calls++, new Promise<never>(() => {})),
    50,
    () => new Error('bound fired'),
    () => stopped++,
  )
  const waiting = [bounded(), bounded(), bounded()]
  for (const p of waiting) await assert.rejects(p, /bound fired/)
  assert.equal(calls, 1, 'concurrent calls share one resolution')
  assert.equal(stopped, 1, 'what was left running is stopped once')
  await assert.rejects(bounded(), /bound fired/)
  assert.equal(calls, 1, 'after the bound, nothing is tried again')
})

test('descendants: every process below the root, none above or beside it, a cycle does not loop', () => {
  const table = new Map([
    [10, 1],
    [11, 10],
    [12, 11],
    [13, 10],
    [20, 1],
    [30, 31],
    [31, 30],
  ])
  assert.deepEqual(descendants(10, table).sort(), [11, 12, 13])
  assert.deepEqual(descendants(12, table), [])
  assert.deepEqual(descendants(30, table).sort(), [30, 31])
})

test("runsCommand: the SDK's `/bin/sh -c COMMAND`, or the command a shell exec'd in its place", () => {
  assert.ok(runsCommand(['/bin/sh', '-c', '/opt/creds --p x'], '/opt/creds --p x'))
  assert.ok(runsCommand(['sh', '-c', 'creds'], 'creds'))
  assert.ok(runsCommand(['/opt/creds', '--p', 'x'], ' /opt/creds  --p x'))
  assert.ok(!runsCommand(['/bin/sh', '-c', 'other'], 'creds'))
  assert.ok(!runsCommand(['/bin/bash', '-c', 'creds', 'x'], 'creds'))
  assert.ok(!runsCommand([], 'creds'))
})
