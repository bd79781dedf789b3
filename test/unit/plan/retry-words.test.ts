import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeApiError } from '../../../src/context/kube.js'
import { progressLine } from '../../../src/plan/progress.js'
import { waitingFor } from '../../../src/plan/retry.js'
import { fakeResource } from '../../helpers/fake-resource.js'

const kube = (status: number, path = '/apis/karpenter.sh/v1/nodepools/default') =>
  new KubeApiError(status, 'x', `HTTP${status}: 404 page not found`, path)
const aws = (name: string, message: string, status = 400) =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } })

test('a retried step says what it waits for, not the raw answer', () => {
  assert.equal(
    waitingFor(kube(404), 'NodePool'),
    'the API server to serve NodePool objects (its CustomResourceDefinition was just installed)',
  )
  assert.equal(
    waitingFor(kube(404, '/api/v1/namespaces/x'), 'ConfigMap'),
    'the API server to find what ConfigMap needs (just created)',
  )
  assert.equal(waitingFor(kube(409), 'NodePool'), "another writer's change to NodePool to settle (conflict)")
  assert.equal(waitingFor(kube(429), 'NodePool'), 'the API server, which asks to slow down (HTTP 429)')
  assert.equal(waitingFor(kube(503), 'NodePool'), 'the API server to recover (HTTP 503)')
  assert.equal(waitingFor(kube(403), 'NodePool'), undefined)
  assert.equal(
    waitingFor(aws('ThrottlingException', 'Rate exceeded'), 'IAM role'),
    'AWS, which throttles the requests (ThrottlingException)',
  )
  assert.equal(
    waitingFor(aws('MalformedPolicyDocument', 'Invalid principal in policy'), 'IAM role'),
    'IAM to make a role or provider just created usable (IAM is eventually consistent)',
  )
  assert.equal(waitingFor(aws('InternalFailure', 'boom', 500), 'SQS queue'), 'AWS to recover (HTTP 500)')
  assert.equal(waitingFor(aws('AccessDenied', 'no', 403), 'SQS queue'), undefined)
})

test('the retry line names the wait, the attempt out of how many, and the pause', () => {
  const r = { ...fakeResource('kube.nodepool.default'), kind: 'NodePool', name: 'default' }
  const step = { resource: r, verdict: { action: 'create' as const, changes: [] }, current: null }
  assert.equal(
    progressLine(
      {
        step,
        status: 'retry',
        attempt: 1,
        message: 'HTTP404: 404 page not found',
        waiting: 'the API server to serve NodePool objects (its CustomResourceDefinition was just installed)',
        attempts: 8,
        delayMs: 400,
      },
      false,
    ),
    '↻ NodePool default: waiting for the API server to serve NodePool objects (its CustomResourceDefinition was just installed) — attempt 2 of 8 in 0.4 s',
  )
  assert.equal(
    progressLine({ step, status: 'retry', attempt: 2, message: 'socket hang up' }, false),
    '↻ NodePool default: socket hang up — attempt 3',
  )
})
