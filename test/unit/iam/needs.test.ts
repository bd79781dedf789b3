// A statement's requests: one per action and resource, with a context its own conditions accept, so
// the evaluator can say whether other policies stand in for it (upgrade's carry and narrowing, and the
// write-by-write test of the controller role).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyStatement } from '../../../src/policy/types.js'
import { needsOf, requestsOf, unmet } from '../../../src/iam/needs.js'

const launch: PolicyStatement = {
  Effect: 'Allow',
  Action: ['ec2:RunInstances', 'ec2:CreateFleet'],
  Resource: ['arn:aws:ec2:us-west-2:*:fleet/*', '*'],
  Condition: {
    StringEquals: { 'aws:RequestTag/kubernetes.io/cluster/demo': 'owned' },
    StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
    'ForAllValues:StringEquals': { 'aws:TagKeys': ['a', 'b'] },
    Null: { 'aws:RequestTag/x': 'false', 'aws:RequestTag/y': 'true' },
    StringNotEquals: { 'aws:RequestTag/z': 'no' },
  },
}

test('requestsOf: each action × resource, the account filled in, a context its own conditions accept', () => {
  const r = requestsOf(launch, '111122223333')
  assert.deepEqual(
    r.map((x) => `${x.action} ${x.resource}`),
    [
      'ec2:RunInstances arn:aws:ec2:us-west-2:111122223333:fleet/x',
      'ec2:RunInstances *',
      'ec2:CreateFleet arn:aws:ec2:us-west-2:111122223333:fleet/x',
      'ec2:CreateFleet *',
    ],
  )
  assert.deepEqual(r[0]?.context, {
    'aws:RequestTag/kubernetes.io/cluster/demo': 'owned',
    'aws:RequestTag/karpenter.sh/nodepool': 'x',
    'aws:TagKeys': ['a', 'b'],
    'aws:RequestTag/x': 'x',
  })
  assert.deepEqual(unmet([{ Statement: [launch] }], r), [], 'the statement meets its own requests')
  assert.deepEqual(requestsOf({ ...launch, Effect: 'Deny' }, '1'), [], 'a Deny needs nothing')
})

test('unmet: a grant conditioned on another request tag does not stand in; a wider one does', () => {
  const needs = needsOf([{ Statement: [launch] }], '1')
  const otherTag: PolicyStatement = {
    ...launch,
    Condition: { StringEquals: { 'aws:RequestTag/eks:eks-cluster-name': 'demo' } },
  }
  assert.equal(unmet([{ Statement: [otherTag] }], needs).length, needs.length)
  const wide: PolicyStatement = { Effect: 'Allow', Action: 'ec2:*', Resource: '*' }
  assert.deepEqual(unmet([{ Statement: [wide] }], needs), [])
  assert.equal(needsOf([{ Statement: [launch, launch] }], '1').length, 4, 'each request once')
})
