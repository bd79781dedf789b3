// The executor's failure handling: a step runs only when every changing dependency succeeded (not only
// the first one listed), its dependents are skipped transitively, independent steps still run; and
// which errors it retries (throttling, 5xx, the network, AWS's eventual consistency), with bounded
// attempts, and which it never retries (access denied, validation, karpctl's own errors).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeApiError } from '../../../src/context/kube.js'
import { KarpctlError } from '../../../src/errors.js'
import { applyPlan, type StepEvent } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { backoff, retryable, type RetryPolicy } from '../../../src/plan/retry.js'
import type { ApplyEnv } from '../../../src/plan/types.js'
import { awsError, bareEnv, fakeResource } from '../../helpers/fake-resource.js'

const denied = () =>
  Promise.reject(
    awsError('AccessDenied', 'User: u is not authorized to perform: iam:CreateRole on resource: r', 403),
  )

test('a step whose second (or any) dependency failed is skipped, transitively; independent steps run', async () => {
  // Kills: only the first dependency's outcome consulted (ok[0]); skipped only when all failed
  // (ok.every); a skipped step reported as ok (its dependents run).
  const applied: string[] = []
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.ok', [], { applied }),
      fakeResource('g.bad', [], { applied, apply: denied }),
      fakeResource('g.second-failed', ['g.ok', 'g.bad'], { applied }),
      fakeResource('g.first-failed', ['g.bad', 'g.ok'], { applied }),
      fakeResource('g.middle-failed', ['g.ok', 'g.bad', 'g.unchanged'], { applied }),
      fakeResource('g.grandchild', ['g.second-failed'], { applied }),
      fakeResource('g.unchanged', [], { applied, exists: true }),
      fakeResource('g.after-ok', ['g.ok', 'g.unchanged'], { applied }),
      fakeResource('g.free', [], { applied }),
    ],
    env,
  )
  const r = await applyPlan(plan, env)
  assert.deepEqual(
    r.failed.map((f) => f.address),
    ['g.bad'],
  )
  assert.deepEqual([...r.skipped].sort(), [
    'g.first-failed',
    'g.grandchild',
    'g.middle-failed',
    'g.second-failed',
  ])
  assert.deepEqual([...r.applied].sort(), ['g.after-ok', 'g.free', 'g.ok'])
  assert.deepEqual(
    [...applied].sort(),
    ['g.after-ok', 'g.bad', 'g.free', 'g.ok'],
    'a skipped step never applies',
  )
})

const policy: RetryPolicy = { attempts: 4, baseMs: 100, maxMs: 300 }

/** A step that throws `err` `failures` times, then succeeds; how often it ran and slept. */
async function attemptsFor(err: Error, failures = 2) {
  let calls = 0
  const sleeps: number[] = []
  const env: ApplyEnv = {
    ...bareEnv(),
    sleep: async (ms) => {
      sleeps.push(ms)
    },
  }
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.x', [], {
        apply: async () => {
          if (++calls <= failures) throw err
        },
      }),
    ],
    env,
  )
  const events: StepEvent[] = []
  const r = await applyPlan(plan, env, { retry: policy, onEvent: (e) => events.push(e) })
  return { calls, sleeps, r, retries: events.filter((e) => e.status === 'retry').length }
}

const netError = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })

const RETRIED: [string, Error][] = [
  ['IAM throttling', awsError('Throttling', 'Rate exceeded', 400)],
  ['a ThrottlingException', awsError('ThrottlingException', 'Rate exceeded', 400)],
  ['EC2 RequestLimitExceeded', awsError('RequestLimitExceeded', 'Request limit exceeded.', 503)],
  ['HTTP 429', awsError('TooManyRequestsException', 'Too many requests', 429)],
  ['HTTP 500', awsError('InternalFailure', 'internal error', 500)],
  ['HTTP 503', awsError('ServiceUnavailable', 'Service Unavailable', 503)],
  ['a reset connection', netError()],
  [
    'a trust naming a principal made seconds ago',
    awsError('MalformedPolicyDocument', 'Invalid principal in policy: "AWS":"arn:aws:iam::1:role/new"', 400),
  ],
  [
    'an instance profile not yet visible to EC2',
    awsError(
      'InvalidParameterValue',
      'Value (p) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name',
      400,
    ),
  ],
  [
    'a role not yet assumable',
    awsError('InvalidParameterException', 'The role cannot be assumed by EKS', 400),
  ],
  [
    'a custom resource before its CRD is served (404)',
    new KubeApiError(404, 'NotFound', 'not found', '/apis/x'),
  ],
  ['a conflicting update (409)', new KubeApiError(409, 'Conflict', 'conflict', '/api/v1/x')],
  ['an API server 503', new KubeApiError(503, 'ServiceUnavailable', 'unavailable', '/api/v1/x')],
]

const NOT_RETRIED: [string, Error][] = [
  ['access denied', awsError('AccessDenied', 'User: u is not authorized to perform: iam:CreateRole', 403)],
  [
    'AccessDeniedException',
    awsError('AccessDeniedException', 'not authorized to perform: eks:CreateAccessEntry', 403),
  ],
  [
    'EC2 UnauthorizedOperation',
    awsError('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403),
  ],
  ['a validation error', awsError('ValidationError', 'Value at roleName failed to satisfy constraint', 400)],
  [
    'a malformed policy',
    awsError('MalformedPolicyDocument', 'Policy document should not specify a principal.', 400),
  ],
  ['an IAM quota', awsError('LimitExceeded', 'Cannot exceed quota for RolesPerAccount: 1000', 409)],
  ['a name taken', awsError('EntityAlreadyExists', 'Role with name r already exists.', 409)],
  ['a forbidden Kubernetes write', new KubeApiError(403, 'Forbidden', 'forbidden', '/api/v1/x')],
  ['an invalid Kubernetes object', new KubeApiError(422, 'Invalid', 'spec.x: Invalid value', '/apis/x')],
  [
    "karpctl's own error, even one that reads like eventual consistency",
    new KarpctlError('the role cannot be assumed yet: run `karpctl install` first', 'NOT_INSTALLED'),
  ],
]

for (const [what, err] of RETRIED)
  test(`retried: ${what}`, async () => {
    // Kills: the kind, status or pattern that makes it retryable dropped from retry.ts.
    assert.equal(retryable(err), true)
    const { calls, sleeps, r, retries } = await attemptsFor(err)
    assert.deepEqual([calls, retries, sleeps.length, r.applied], [3, 2, 2, ['g.x']])
  })

for (const [what, err] of NOT_RETRIED)
  test(`not retried: ${what}`, async () => {
    // Kills: 4xx (or 403, or 409 outside Kubernetes) treated as retryable; the KarpctlError guard dropped.
    if (!(err instanceof KarpctlError)) assert.equal(retryable(err), false)
    const { calls, sleeps, r, retries } = await attemptsFor(err)
    assert.deepEqual([calls, retries, sleeps.length, r.applied], [1, 0, 0, []])
    assert.equal(r.failed.length, 1)
  })

test("a retryable error that never clears: exactly the policy's attempts, each wait within the policy", async () => {
  // Kills: `attempt <= policy.attempts` (one attempt too many); no bound on the wait.
  const { calls, sleeps, r } = await attemptsFor(awsError('Throttling', 'Rate exceeded', 400), 100)
  assert.equal(calls, policy.attempts)
  assert.equal(sleeps.length, policy.attempts - 1)
  assert.equal(r.failed.length, 1)
  for (const ms of sleeps) assert.ok(ms >= 50 && ms <= policy.maxMs, `waited ${ms} ms`)
  for (let attempt = 1; attempt <= 20; attempt++) {
    const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1))
    const ms = backoff(policy, attempt)
    assert.ok(ms >= cap / 2 && ms <= cap, `attempt ${attempt}: ${ms} ms`)
  }
})

test('once stopping, no step starts (not even one queued behind the limiter) and none retries', async () => {
  const applied: string[] = []
  let stop = false
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      // Running when the interrupt comes: it ends, and counts as applied.
      fakeResource('g.running', [], {
        applied,
        apply: async () => {
          stop = true
        },
      }),
      fakeResource('g.queued', [], { applied }),
      fakeResource('g.dependent', ['g.running'], { applied }),
    ],
    env,
  )
  const events: StepEvent[] = []
  const r = await applyPlan(plan, env, {
    concurrency: 1,
    stopping: () => stop,
    onEvent: (e) => events.push(e),
  })
  assert.deepEqual(applied, ['g.running'])
  assert.deepEqual(r.applied, ['g.running'])
  assert.deepEqual(r.skipped.sort(), ['g.dependent', 'g.queued'])
  assert.ok(events.some((e) => e.status === 'skipped' && e.message === 'interrupted before it started'))

  // A throttled step does not try again after the interrupt, even though its error is retryable.
  let tries = 0
  let stopNow = false
  const retrying = await buildPlan(
    't',
    [
      fakeResource('g.throttled', [], {
        apply: () => {
          tries++
          stopNow = true
          return Promise.reject(awsError('Throttling', 'Rate exceeded', 400))
        },
      }),
    ],
    env,
  )
  const r2 = await applyPlan(retrying, env, { stopping: () => stopNow })
  assert.equal(tries, 1)
  assert.equal(r2.failed.length, 1)
})

test('a stop during the pause before a retry fails the step instead of retrying it', async () => {
  let tries = 0
  let stop = false
  const env: ApplyEnv = {
    ...bareEnv(),
    sleep: async () => {
      stop = true
      throw new KarpctlError('a wait was stopped by the interrupt', 'INTERRUPTED')
    },
  }
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.throttled', [], {
        apply: () => {
          tries++
          return Promise.reject(awsError('Throttling', 'Rate exceeded', 400))
        },
      }),
    ],
    env,
  )
  const r = await applyPlan(plan, env, { stopping: () => stop })
  assert.equal(tries, 1)
  assert.match(r.failed[0]?.message ?? '', /interrupted before retrying/)
})
