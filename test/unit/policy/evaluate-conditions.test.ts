// Each rule the local IAM evaluator applies, pinned on its own (issue 12, item 8): how actions,
// resources, condition operators, set qualifiers and ARNs are matched, what it notes when it
// cannot judge, and how a permissions boundary combines. A mutant of any one rule fails a test here.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import {
  arnMatch,
  evaluate,
  evaluateWithBoundary,
  globMatch,
  parseOperator,
} from '../../../src/policy/evaluate.js'

const NODE_ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const doc = (...Statement: PolicyStatement[]): PolicyDocument => ({ Statement })
const allow = (over: Partial<PolicyStatement> = {}): PolicyStatement => ({
  Effect: 'Allow',
  Action: 'iam:PassRole',
  Resource: NODE_ROLE,
  ...over,
})
const req = (
  context: Record<string, string | string[]> = {},
  action = 'iam:PassRole',
  resource = NODE_ROLE,
) => ({
  action,
  resource,
  context,
})
const decide = (s: PolicyStatement, context: Record<string, string | string[]> = {}) =>
  evaluate([doc(s)], req(context)).decision

// ---------- actions and resources ----------

test('Action: any one pattern of the list matching is enough', () => {
  assert.equal(decide(allow({ Action: ['s3:GetObject', 'iam:PassRole'] })), 'allowed')
})

test('NotAction matches case-insensitively, like Action', () => {
  assert.equal(decide(allow({ Action: undefined, NotAction: 'IAM:*' })), 'implicitDeny')
  assert.equal(decide(allow({ Action: undefined, NotAction: 'S3:*' })), 'allowed')
})

test('a statement with neither Action nor NotAction is ignored, with a note', () => {
  const r = evaluate([doc({ Sid: 'Broken', Effect: 'Deny', Resource: '*' }), doc(allow())], req())
  assert.equal(r.decision, 'allowed')
  assert.deepEqual(r.notes, ['Broken: has neither Action nor NotAction; ignored'])
})

test('a statement with neither Resource nor NotResource is ignored, with a note', () => {
  const r = evaluate([doc({ Sid: 'NoResource', Effect: 'Allow', Action: '*' })], req())
  assert.equal(r.decision, 'implicitDeny')
  assert.deepEqual(r.notes, [
    'NoResource: has neither Resource nor NotResource (required in identity policies); ignored',
  ])
})

test('Resource: any one pattern of the list matching is enough', () => {
  assert.equal(decide(allow({ Resource: ['arn:aws:iam::123456789012:role/Other', NODE_ROLE] })), 'allowed')
})

test('a policy variable in any one resource pattern makes the statement uncertain', () => {
  const r = evaluate(
    [doc(allow({ Sid: 'Var', Resource: [NODE_ROLE, 'arn:aws:iam::*:role/${aws:username}'] }))],
    req(),
  )
  assert.equal(r.decision, 'implicitDeny')
  assert.deepEqual(r.notes, [
    'Var: resource pattern uses a policy variable (${...}), which the local evaluator does not resolve',
    'Var: treated as not granting because it could not be evaluated exactly',
  ])
})

test('an uncertain Deny denies and says so; an uncertain Allow does not grant and says so', () => {
  const cond = { Condition: { DateLessThan: { 'aws:CurrentTime': '2030-01-01' } } }
  const deny = evaluate([doc(allow({ Sid: 'D', Effect: 'Deny', ...cond })), doc(allow())], req())
  assert.equal(deny.decision, 'explicitDeny')
  assert.ok(deny.notes.includes('D: treated as denying because it could not be evaluated exactly'))
  const grant = evaluate([doc(allow({ Sid: 'A', ...cond }))], req())
  assert.equal(grant.decision, 'implicitDeny')
  assert.ok(grant.notes.includes('A: treated as not granting because it could not be evaluated exactly'))
})

// ---------- condition operators ----------

test('condition keys are looked up by name among several request keys', () => {
  const s = allow({ Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } } })
  assert.equal(
    decide(s, { 'aws:RequestedRegion': 'us-west-2', 'iam:PassedToService': 'ec2.amazonaws.com' }),
    'allowed',
  )
  assert.equal(
    decide(s, { 'iam:PassedToService': 'lambda.amazonaws.com', 'aws:RequestedRegion': 'ec2.amazonaws.com' }),
    'implicitDeny',
  )
})

test('a key carried with no values counts as absent', () => {
  assert.equal(
    decide(allow({ Condition: { StringEquals: { 'aws:TagKeys': 'a' } } }), { 'aws:TagKeys': [] }),
    'implicitDeny',
  )
  assert.equal(
    decide(allow({ Condition: { Null: { 'aws:TagKeys': 'true' } } }), { 'aws:TagKeys': [] }),
    'allowed',
  )
  assert.equal(
    decide(allow({ Condition: { Null: { 'aws:TagKeys': 'false' } } }), { 'aws:TagKeys': [] }),
    'implicitDeny',
  )
})

test('Null: the key must be present for "false"; either value of a two-valued Null holds', () => {
  assert.equal(
    decide(allow({ Condition: { Null: { 'aws:TagKeys': 'false' } } }), { 'aws:TagKeys': 'a' }),
    'allowed',
  )
  assert.equal(decide(allow({ Condition: { Null: { 'aws:TagKeys': ['false', 'true'] } } }), {}), 'allowed')
})

test('StringLike compares values case-sensitively', () => {
  const s = allow({ Condition: { StringLike: { 'iam:PassedToService': 'EC2.*' } } })
  assert.equal(decide(s, { 'iam:PassedToService': 'ec2.amazonaws.com' }), 'implicitDeny')
  assert.equal(decide(s, { 'iam:PassedToService': 'EC2.amazonaws.com' }), 'allowed')
})

test('StringNotEqualsIgnoreCase: holds only when no value equals, ignoring case', () => {
  const s = allow({
    Condition: { StringNotEqualsIgnoreCase: { 'iam:PassedToService': 'EC2.amazonaws.com' } },
  })
  assert.equal(decide(s, { 'iam:PassedToService': 'ec2.amazonaws.com' }), 'implicitDeny')
  assert.equal(decide(s, { 'iam:PassedToService': 'lambda.amazonaws.com' }), 'allowed')
})

test('ArnNotEquals and ArnNotLike hold only when the ARN matches none of the patterns', () => {
  for (const op of ['ArnNotEquals', 'ArnNotLike']) {
    const s = allow({ Condition: { [op]: { 'aws:SourceArn': 'arn:aws:eks:*:123456789012:cluster/demo' } } })
    assert.equal(
      decide(s, { 'aws:SourceArn': 'arn:aws:eks:us-west-2:123456789012:cluster/demo' }),
      'implicitDeny',
      op,
    )
    assert.equal(
      decide(s, { 'aws:SourceArn': 'arn:aws:eks:us-west-2:123456789012:cluster/other' }),
      'allowed',
      op,
    )
  }
})

test('a negated operator on a multi-valued key holds only when every request value differs', () => {
  const s = allow({ Condition: { StringNotEquals: { 'aws:TagKeys': 'a' } } })
  assert.equal(decide(s, { 'aws:TagKeys': ['b', 'a'] }), 'implicitDeny')
  assert.equal(decide(s, { 'aws:TagKeys': ['b', 'c'] }), 'allowed')
})

test('a positive operator on a multi-valued key holds when any request value matches', () => {
  const s = allow({ Condition: { StringEquals: { 'aws:TagKeys': 'a' } } })
  assert.equal(decide(s, { 'aws:TagKeys': ['b', 'a'] }), 'allowed')
})

test('ForAnyValue with a negated operator: one request value outside the list is enough; a missing key fails', () => {
  const s = allow({ Condition: { 'ForAnyValue:StringNotEquals': { 'aws:TagKeys': 'a' } } })
  assert.equal(decide(s, { 'aws:TagKeys': ['a', 'b'] }), 'allowed')
  assert.equal(decide(s, { 'aws:TagKeys': ['a'] }), 'implicitDeny')
  assert.equal(decide(s, {}), 'implicitDeny')
})

test('ForAllValues: an empty key is vacuously true', () => {
  assert.equal(
    decide(allow({ Condition: { 'ForAllValues:StringEquals': { 'aws:TagKeys': 'a' } } }), {
      'aws:TagKeys': [],
    }),
    'allowed',
  )
})

test('a policy variable in any one condition value makes the statement uncertain, with a note', () => {
  const r = evaluate(
    [
      doc(
        allow({
          Sid: 'V',
          Condition: { StringEquals: { 'aws:PrincipalTag/team': ['a', '${aws:username}'] } },
        }),
      ),
    ],
    req({ 'aws:PrincipalTag/team': 'a' }),
  )
  assert.equal(r.decision, 'implicitDeny')
  assert.ok(
    r.notes.includes(
      'V: condition StringEquals uses a policy variable (${...}), which the local evaluator does not resolve',
    ),
    r.notes.join('\n'),
  )
})

test('parseOperator: anchored set qualifiers, in any case; IfExists only as a suffix of an operator', () => {
  assert.deepEqual(parseOperator('forallvalues:StringLike'), {
    set: 'ForAllValues',
    base: 'StringLike',
    ifExists: false,
  })
  assert.deepEqual(parseOperator('foranyvalue:StringLike'), {
    set: 'ForAnyValue',
    base: 'StringLike',
    ifExists: false,
  })
  assert.deepEqual(parseOperator('XForAnyValue:StringLike'), {
    base: 'XForAnyValue:StringLike',
    ifExists: false,
  })
  assert.deepEqual(parseOperator('IfExists'), { base: 'IfExists', ifExists: false })
  assert.deepEqual(parseOperator('StringEqualsIfExistsX'), { base: 'StringEqualsIfExistsX', ifExists: false })
})

// ---------- wildcards and ARNs ----------

test('an empty pattern matches only the empty string', () => {
  assert.equal(globMatch('', 'x', false), false)
  assert.equal(arnMatch('', NODE_ROLE), false)
})

test('ARNs are compared part by part: a * in one part does not swallow a colon', () => {
  assert.equal(arnMatch('arn:aws:iam::*:role/x', 'arn:aws:iam::1:2:role/x'), false)
  assert.equal(arnMatch('arn:aws:iam::*:role/x', 'arn:aws:iam::1:role/x'), true)
})

test('the resource part of an ARN keeps its colons', () => {
  assert.equal(arnMatch('arn:aws:s3:::b/*', 'arn:aws:s3:::b/k:x'), true)
  assert.equal(arnMatch('arn:aws:s3:::a:b', 'arn:aws:s3:::ab'), false)
  assert.equal(
    arnMatch('arn:aws:logs:us-west-2:1:log-group:g:*', 'arn:aws:logs:us-west-2:1:log-group:g:log-stream:s'),
    true,
  )
})

test('a pattern or value that is not an ARN is compared whole', () => {
  assert.equal(arnMatch('*:role/x', 'arn:aws:iam::1:role/x'), true)
  assert.equal(arnMatch('arn:aws:iam::1:role/*', 'role/x'), false)
  assert.equal(arnMatch('foo:a:b:c:d:*', 'foo:a:b:c:d:e:f'), true)
  assert.equal(arnMatch('arn:aws:iam::*', 'arn:aws:iam::1:role'), true)
})

// ---------- permissions boundary ----------

const identity = [doc(allow({ Sid: 'Id' }))]

test('an unreadable boundary: an identity deny stays as it is, marked unreadable', () => {
  const denied = evaluateWithBoundary(
    { identity: [doc(allow({ Sid: 'No', Effect: 'Deny' }))], boundary: null },
    req(),
  )
  assert.equal(denied.decision, 'explicitDeny')
  assert.deepEqual(denied.matchedStatements, ['No'])
  assert.deepEqual(denied.boundary, { decision: 'unreadable', matchedStatements: [] })
})

test('an unreadable boundary over an identity allow: implicit deny, nothing matched', () => {
  const r = evaluateWithBoundary({ identity, boundary: null }, req())
  assert.equal(r.decision, 'implicitDeny')
  assert.deepEqual(r.matchedStatements, [])
  assert.deepEqual(r.boundary, { decision: 'unreadable', matchedStatements: [] })
})

test('an implicit deny from either side names no statement', () => {
  const silentIdentity = evaluateWithBoundary(
    { identity: [doc()], boundary: doc(allow({ Sid: 'B' })) },
    req(),
  )
  assert.equal(silentIdentity.decision, 'implicitDeny')
  assert.deepEqual(silentIdentity.matchedStatements, [])
  const silentBoundary = evaluateWithBoundary({ identity, boundary: doc() }, req())
  assert.equal(silentBoundary.decision, 'implicitDeny')
  assert.deepEqual(silentBoundary.matchedStatements, [])
})

test('IfExists on a key carried with no values: absent, so the condition holds', () => {
  const s = allow({ Condition: { StringEqualsIfExists: { 'aws:TagKeys': 'a' } } })
  assert.equal(decide(s, { 'aws:TagKeys': [] }), 'allowed')
  const any = allow({ Condition: { 'ForAnyValue:StringEqualsIfExists': { 'aws:TagKeys': 'a' } } })
  assert.equal(decide(any, { 'aws:TagKeys': [] }), 'allowed')
})

test('non-ARNs compared whole are compared case-sensitively, and a * may span colons', () => {
  assert.equal(arnMatch('Bucket*', 'bucket-1'), false)
  assert.equal(arnMatch('x:*:b:c:d:e', 'x:a:z:b:c:d:e'), true)
})
