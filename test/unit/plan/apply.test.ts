// The executor's reporting: the one line a failed step shows (AWS's words, whitespace folded, the
// error code once), the events it emits in order with their timings, its default concurrency, and
// the error it throws carrying the result.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KarpctlError } from '../../../src/errors.js'
import { ApplyError, applyPlan, describeStepError, type StepEvent } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import type { Step } from '../../../src/plan/types.js'
import { awsError, bareEnv, fakeResource } from '../../helpers/fake-resource.js'

const step = {
  resource: fakeResource('g.x'),
  verdict: { action: 'create', changes: [] },
  current: null,
} as Step

test("describeStepError: karpctl's own message as is; AWS's with its code once, whitespace folded", () => {
  // Kills: the KarpctlError branch dropped (its name would be prefixed); `\s` for `\s+`; no trim;
  // `endsWith` for `startsWith`; `||` for `&&`.
  assert.equal(
    describeStepError(new KarpctlError('the role is not ours', 'BLOCKED'), step),
    'the role is not ours',
  )
  assert.equal(
    describeStepError(awsError('Throttling', '  Rate   exceeded\tnow  ', 400), step),
    'Throttling: Rate exceeded now',
  )
  assert.equal(
    describeStepError(awsError('AccessDenied', 'AccessDenied: not authorized', 403), step),
    'AccessDenied: not authorized',
    'a message that starts with its code is not prefixed again',
  )
  assert.equal(
    describeStepError(awsError('LimitExceeded', 'quota hit: LimitExceeded', 409), step),
    'LimitExceeded: quota hit: LimitExceeded',
    'a code at the end of the message is still prefixed',
  )
})

test('ApplyError carries the code APPLY_FAILED and the result', () => {
  const result = { applied: ['a'], failed: [], skipped: [] }
  const e = new ApplyError('m', result)
  assert.equal(e.code, 'APPLY_FAILED')
  assert.equal(e.message, 'm')
  assert.equal(e.result, result)
})

test('events: start, done with its duration; failed with its message and duration; skipped with why', async () => {
  // Kills: an event's status or message emptied, an event object emptied, `now() + t0` for `now() - t0`.
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.ok'),
      fakeResource('g.bad', ['g.ok'], {
        apply: () => Promise.reject(awsError('ValidationError', 'bad value', 400)),
      }),
      fakeResource('g.child', ['g.bad']),
    ],
    env,
  )
  let clock = 1000
  const events: StepEvent[] = []
  const r = await applyPlan(plan, env, {
    concurrency: 1,
    now: () => (clock += 10),
    onEvent: (e) => events.push(e),
  })
  assert.deepEqual(
    events.map(({ step: s, ...rest }) => ({ address: s.resource.address, ...rest })),
    [
      { address: 'g.ok', status: 'start' },
      { address: 'g.ok', status: 'done', ms: 10 },
      { address: 'g.bad', status: 'start' },
      { address: 'g.bad', status: 'failed', message: 'ValidationError: bad value', ms: 10 },
      { address: 'g.child', status: 'skipped', message: 'a step it depends on failed' },
    ],
  )
  assert.deepEqual(r, {
    applied: ['g.ok'],
    failed: [{ address: 'g.bad', message: 'ValidationError: bad value' }],
    skipped: ['g.child'],
  })
})

test('a retry event names the attempt and the message', async () => {
  const env = bareEnv()
  let calls = 0
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.x', [], {
        apply: async () => {
          if (++calls === 1) throw awsError('Throttling', 'Rate exceeded', 400)
        },
      }),
    ],
    env,
  )
  const events: StepEvent[] = []
  await applyPlan(plan, env, {
    now: () => 0,
    onEvent: (e) => events.push(e),
    retry: { attempts: 8, baseMs: 0, maxMs: 0 },
  })
  assert.deepEqual(
    events.map(({ step: s, ...rest }) => ({ address: s.resource.address, ...rest })),
    [
      { address: 'g.x', status: 'start' },
      {
        address: 'g.x',
        status: 'retry',
        attempt: 1,
        message: 'Throttling: Rate exceeded',
        waiting: 'AWS, which throttles the requests (Throttling)',
        attempts: 8,
        delayMs: 0,
      },
      { address: 'g.x', status: 'done', ms: 0 },
    ],
  )
})

async function peakConcurrency(n: number, concurrency?: number): Promise<number> {
  let active = 0
  let peak = 0
  const env = bareEnv()
  const resources = Array.from({ length: n }, (_, i) =>
    fakeResource(`g.r${i}`, [], {
      apply: async () => {
        active++
        peak = Math.max(peak, active)
        await new Promise((r) => setTimeout(r, 5))
        active--
      },
    }),
  )
  const plan = await buildPlan('t', resources, env)
  const r = await applyPlan(plan, env, concurrency === undefined ? {} : { concurrency })
  assert.equal(r.applied.length, n)
  return peak
}

test('independent steps run at most 8 at once by default, or the concurrency asked', async () => {
  // Kills: `opts.concurrency && 8` (no bound at all when none is given).
  assert.equal(await peakConcurrency(12), 8)
  assert.equal(await peakConcurrency(12, 3), 3)
})
