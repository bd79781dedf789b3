// Building a plan: a read that fails says what could not be read and what to do (grant the reads, or
// check the network), with a code by kind; karpctl's own errors pass through; one blocked step is
// its own line.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KarpctlError } from '../../../src/errors.js'
import { assertNotBlocked, buildPlan, PlanError } from '../../../src/plan/plan.js'
import type { Resource } from '../../../src/plan/types.js'
import { awsError, bareEnv, fakeResource } from '../../helpers/fake-resource.js'

const failingRead = (err: unknown): Resource => ({
  ...fakeResource('g.x'),
  kind: 'IAM role',
  name: 'KarpenterNodeRole-demo',
  observe: () => Promise.reject(err),
})

test('a denied read: ACCESS_DENIED, naming the resource, the code and the message, and the reads to grant', async () => {
  await assert.rejects(
    buildPlan(
      't',
      [failingRead(awsError('AccessDenied', 'not authorized to perform: iam:GetRole', 403))],
      bareEnv(),
    ),
    (e: unknown) => {
      assert.ok(e instanceof PlanError)
      assert.equal(e.code, 'ACCESS_DENIED')
      assert.equal(
        e.message,
        'cannot read IAM role KarpenterNodeRole-demo (AccessDenied: not authorized to perform: iam:GetRole): grant the read permissions listed in the README and run again',
      )
      return true
    },
  )
})

test('any other failed read: READ_FAILED, and the network and credentials to check', async () => {
  await assert.rejects(
    buildPlan(
      't',
      [failingRead(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' }))],
      bareEnv(),
    ),
    (e: unknown) => {
      assert.ok(e instanceof PlanError)
      assert.equal(e.code, 'READ_FAILED')
      assert.equal(
        e.message,
        'cannot read IAM role KarpenterNodeRole-demo (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:443): check the network and credentials, and run again',
      )
      return true
    },
  )
})

test("karpctl's own error from a read passes through unchanged", async () => {
  const own = new KarpctlError('the cluster is not reachable', 'NO_CLUSTER')
  await assert.rejects(buildPlan('t', [failingRead(own)], bareEnv()), (e) => e === own)
})

test('a PlanError without a code is PLAN_FAILED', () => {
  assert.equal(new PlanError('m').code, 'PLAN_FAILED')
})

test('one blocked step: the error is its own line, not a count', async () => {
  const plan = await buildPlan(
    't',
    [fakeResource('g.a', [], { blocked: 'made by terraform' }), fakeResource('g.b')],
    bareEnv(),
  )
  assert.throws(() => assertNotBlocked(plan), { code: 'BLOCKED', message: 'thing g.a: made by terraform' })
})
