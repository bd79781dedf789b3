// identity ∩ permissions boundary in the local evaluator (issue 12, item 2).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { evaluateWithBoundary } from '../../../src/policy/evaluate.js'
import type { PolicyDocument } from '../../../src/policy/types.js'

const NODE_ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const request = {
  action: 'iam:PassRole',
  resource: NODE_ROLE,
  context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
}
const identity: PolicyDocument[] = [
  {
    Statement: [
      {
        Sid: 'AllowPassingInstanceRole',
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: NODE_ROLE,
        Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
      },
    ],
  },
]
const boundary = (statements: PolicyDocument['Statement']): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: statements,
})

test('no boundary: the identity policies decide', () => {
  const r = evaluateWithBoundary({ identity }, request)
  assert.equal(r.decision, 'allowed')
  assert.equal(r.boundary, undefined)
  assert.deepEqual(r.matchedStatements, ['AllowPassingInstanceRole'])
})

test('a boundary that allows the action: allowed, the identity statements decided', () => {
  const r = evaluateWithBoundary(
    { identity, boundary: boundary([{ Sid: 'All', Effect: 'Allow', Action: '*', Resource: '*' }]) },
    request,
  )
  assert.equal(r.decision, 'allowed')
  assert.deepEqual(r.boundary, { decision: 'allowed', matchedStatements: ['All'] })
})

test('a boundary that leaves the action out: implicit deny although the identity policies allow it', () => {
  const r = evaluateWithBoundary(
    {
      identity,
      boundary: boundary([
        { Sid: 'AllButPassRole', Effect: 'Allow', NotAction: 'iam:PassRole', Resource: '*' },
      ]),
    },
    request,
  )
  assert.equal(r.decision, 'implicitDeny')
  assert.equal(r.identity.decision, 'allowed')
  assert.equal(r.boundary?.decision, 'implicitDeny')
})

test("an explicit Deny in the boundary wins, and is named as the boundary's", () => {
  const r = evaluateWithBoundary(
    {
      identity,
      boundary: boundary([
        { Effect: 'Allow', Action: '*', Resource: '*' },
        { Sid: 'NoPassRole', Effect: 'Deny', Action: 'iam:PassRole', Resource: '*' },
      ]),
    },
    request,
  )
  assert.equal(r.decision, 'explicitDeny')
  assert.deepEqual(r.matchedStatements, ['permissions boundary NoPassRole'])
})

test('the boundary grants nothing by itself: identity silent → implicit deny', () => {
  const r = evaluateWithBoundary(
    { identity: [], boundary: boundary([{ Effect: 'Allow', Action: '*', Resource: '*' }]) },
    request,
  )
  assert.equal(r.decision, 'implicitDeny')
})

test('an identity Deny wins over a boundary allow', () => {
  const r = evaluateWithBoundary(
    {
      identity: [
        ...identity,
        { Statement: [{ Sid: 'Deny', Effect: 'Deny', Action: 'iam:PassRole', Resource: '*' }] },
      ],
      boundary: boundary([{ Effect: 'Allow', Action: '*', Resource: '*' }]),
    },
    request,
  )
  assert.equal(r.decision, 'explicitDeny')
  assert.deepEqual(r.matchedStatements, ['Deny'])
})

test('an unreadable boundary never lets an allow through: implicit deny, marked unreadable, with a note', () => {
  const r = evaluateWithBoundary({ identity, boundary: null }, request)
  assert.equal(r.decision, 'implicitDeny')
  assert.equal(r.identity.decision, 'allowed')
  assert.equal(r.boundary?.decision, 'unreadable')
  assert.ok(r.notes.some((n) => /permissions boundary could not be read/.test(n)))
  // …and a deny of the identity policies stands as it is.
  assert.equal(evaluateWithBoundary({ identity: [], boundary: null }, request).decision, 'implicitDeny')
})

test("uncertain boundary statements are noted as the boundary's", () => {
  const r = evaluateWithBoundary(
    {
      identity,
      boundary: boundary([
        {
          Sid: 'Odd',
          Effect: 'Allow',
          Action: '*',
          Resource: '*',
          Condition: { DateGreaterThan: { 'aws:CurrentTime': '2020-01-01' } },
        },
      ]),
    },
    request,
  )
  assert.equal(r.decision, 'implicitDeny')
  assert.ok(
    r.notes.some((n) => n.startsWith('permissions boundary: Odd')),
    r.notes.join('\n'),
  )
})
