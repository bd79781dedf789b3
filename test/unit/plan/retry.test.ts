// Which failures the executor retries, at the edges the executor tests do not reach, and the exact wait.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeApiError } from '../../../src/context/kube.js'
import { backoff, DEFAULT_RETRY, retryable } from '../../../src/plan/retry.js'
import { awsError } from '../../helpers/fake-resource.js'

test('Kubernetes: 429 and every status from 500 are retried; 499 and 4xx others are not', () => {
  // Kills: the 429 case dropped; `> 500` for `>= 500`.
  assert.equal(retryable(new KubeApiError(429, 'TooManyRequests', 'slow down', '/api/v1/x')), true)
  assert.equal(retryable(new KubeApiError(500, 'InternalError', 'boom', '/api/v1/x')), true)
  assert.equal(retryable(new KubeApiError(499, 'Unknown', 'x', '/api/v1/x')), false)
  assert.equal(retryable(new KubeApiError(400, 'BadRequest', 'x', '/api/v1/x')), false)
})

test('an error without $metadata and without a retryable kind is not retried (and does not throw)', () => {
  // Kills: `$metadata.httpStatusCode` without `?.`.
  assert.equal(retryable(new Error('something else')), false)
})

test('an endpoint that does not offer the operation is not retried, even on a 5xx', () => {
  // Kills: the `f.kind !== 'unsupported'` guard forced true.
  assert.equal(retryable(awsError('NotImplemented', 'not implemented', 501)), false)
  assert.equal(retryable(awsError('Error', 'Unexpected token < in JSON at position 0', 500)), false)
  assert.equal(retryable(awsError('InternalFailure', 'internal error', 500)), true)
})

test('a role named before the words that it is not there yet is retried (any text between)', () => {
  // Kills: `role.` for `role.*`; `(be )` made mandatory.
  assert.equal(
    retryable(awsError('InvalidParameterException', 'Role arn:aws:iam::123:role/new does not exist', 400)),
    true,
  )
  assert.equal(retryable(awsError('InvalidParameterException', 'role new not found', 400)), true)
  assert.equal(
    retryable(
      awsError('InvalidParameterException', 'The role arn:aws:iam::123:role/new could not be found', 400),
    ),
    true,
  )
})

test('backoff: half the capped exponential wait plus a random share of the other half', (t) => {
  // Kills: `Math.random() / (ms / 2)` for `*`.
  t.mock.method(Math, 'random', () => 0.5)
  assert.equal(backoff({ attempts: 5, baseMs: 100, maxMs: 1000 }, 1), 75)
  assert.equal(backoff({ attempts: 5, baseMs: 100, maxMs: 1000 }, 3), 300)
  assert.equal(backoff({ attempts: 5, baseMs: 100, maxMs: 1000 }, 6), 750)
  assert.deepEqual(DEFAULT_RETRY, { attempts: 8, baseMs: 500, maxMs: 8000 })
})
