// The policy helpers the checks judge statements with, one condition at a time (issue 12, item 8:
// mutation testing): list forms, wildcards, read-only actions, statement labels, which statements a
// role has, Action/NotAction and Resource/NotResource matching, breadth, and service principals.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  actionMatch,
  allowsService,
  asList,
  broadActionMatch,
  coversResource,
  hasCondition,
  isReadOnlyAction,
  isWildcard,
  roleStatements,
  statementLabel,
  unscopedResource,
  wildcardMatch,
} from '../../../../src/checks/lib/policy.js'
import type { PolicyStatement } from '../../../../src/policy/types.js'
import { policyDoc } from '../../../helpers/check-fixtures.js'

const allow = (over: Partial<PolicyStatement>): PolicyStatement => ({ Effect: 'Allow', ...over })
const QUEUE = 'arn:aws:sqs:us-west-2:123456789012:demo'
const EVENTS = 'events.amazonaws.com'

test('asList: absent and null are empty, a scalar is one string, a list is strings', () => {
  assert.deepEqual(asList(undefined), [])
  assert.deepEqual(asList(null), [])
  assert.deepEqual(asList('a'), ['a'])
  assert.deepEqual(asList(['a', 1]), ['a', '1'])
  assert.deepEqual(asList(false), ['false'])
})

test('wildcardMatch: case-sensitive unless asked', () => {
  assert.equal(wildcardMatch('Q*', 'q1'), false)
  assert.equal(wildcardMatch('Q*', 'q1', true), true)
})

test('isWildcard: * or ? anywhere', () => {
  assert.equal(isWildcard('a*b'), true)
  assert.equal(isWildcard('a?'), true)
  assert.equal(isWildcard('ab'), false)
})

test('isReadOnlyAction: Describe, Get and List at the start of the action name, any case', () => {
  for (const a of ['ec2:DescribeSubnets', 'iam:GetRole', 'sqs:ListQueues', 'ec2:describeimages', 'ssm:Get-x'])
    assert.equal(isReadOnlyAction(a), true, a)
  for (const a of ['ec2:RunInstances', 'ec2:CreateDescribe', 'Describe', 'a b:GetX'])
    assert.equal(isReadOnlyAction(a), false, a)
})

test('hasCondition: only a Condition with at least one operator', () => {
  assert.equal(hasCondition(allow({})), false)
  assert.equal(hasCondition(allow({ Condition: {} })), false)
  assert.equal(hasCondition(allow({ Condition: { Bool: { 'aws:SecureTransport': 'true' } } })), true)
})

test('statementLabel: the Sid after #, else the index in brackets', () => {
  const s = { source: 'P', kind: 'inline' as const, index: 2 }
  assert.equal(statementLabel({ ...s, statement: allow({ Sid: 'S' }) }), 'P#S')
  assert.equal(statementLabel({ ...s, statement: allow({}) }), 'P[2]')
})

test('roleStatements: attached ones with a document, then inline ones, each with its source, kind and index', () => {
  const a = allow({ Action: 'a:A' })
  const b = allow({ Action: 'b:B' })
  const c = allow({ Action: 'c:C' })
  assert.deepEqual(
    roleStatements(
      [
        { arn: 'arn:p1', name: 'p1', document: policyDoc(a, b) },
        { arn: 'arn:p2', name: 'p2', document: null },
      ],
      [{ name: 'i1', document: policyDoc(c) }],
    ),
    [
      { source: 'p1', kind: 'attached', index: 0, statement: a },
      { source: 'p1', kind: 'attached', index: 1, statement: b },
      { source: 'i1', kind: 'inline', index: 0, statement: c },
    ],
  )
})

test('actionMatch: the matching Action (any case), NotAction when it does not list the action, else null', () => {
  assert.equal(actionMatch(allow({ Action: ['s3:*', 'EC2:run*'] }), 'ec2:RunInstances'), 'EC2:run*')
  assert.equal(actionMatch(allow({ Action: 's3:*' }), 'ec2:RunInstances'), null)
  assert.equal(
    actionMatch(allow({ NotAction: ['iam:*', 's3:*'] }), 'ec2:RunInstances'),
    'NotAction iam:*,s3:*',
  )
  assert.equal(actionMatch(allow({ NotAction: 'EC2:*' }), 'ec2:RunInstances'), null)
  assert.equal(actionMatch(allow({}), 'ec2:RunInstances'), null)
})

test('broadActionMatch: a NotAction, or a wildcard other than the action itself', () => {
  assert.equal(broadActionMatch('NotAction iam:*', 'ec2:RunInstances'), true)
  assert.equal(broadActionMatch('NotAction iam:PassRole', 'ec2:RunInstances'), true)
  assert.equal(broadActionMatch('ec2:*', 'ec2:RunInstances'), true)
  assert.equal(broadActionMatch('ec2:RunInstances', 'ec2:RunInstances'), false)
  assert.equal(broadActionMatch('ec2:Run?nstances', 'ec2:Run?nstances'), false)
  assert.equal(broadActionMatch('EC2:Run*', 'ec2:run*'), false)
})

test('coversResource: the reference * account is filled only when an account is given and the ARN has one', () => {
  const ref = 'arn:aws:ec2:us-west-2:*:instance/*'
  const own = allow({ Resource: 'arn:aws:ec2:us-west-2:123:instance/*' })
  assert.equal(coversResource(own, ref, '123'), true)
  assert.equal(coversResource(own, ref, ''), false)
  // no account: the reference is not filled with an empty one
  assert.equal(coversResource(allow({ Resource: 'arn:aws:ec2:us-west-2::instance/*' }), ref), false)
  assert.equal(
    coversResource(allow({ Resource: 'arn:aws:sqs:us-west-2:123' }), 'arn:aws:sqs:us-west-2:*', '123'),
    false,
  )
  // no account field to fill (too few parts), or an account that is not `*`
  assert.equal(coversResource(allow({ Resource: 'arn:aws:s3:::123' }), 'arn:aws:s3:::*', '123'), false)
  assert.equal(coversResource(own, 'arn:aws:ec2:us-west-2:456:instance/*', '123'), false)
  // the filled-in account keeps every other part
  assert.equal(coversResource(allow({ Resource: 'arn:aws:ec2:eu-west-1:123:instance/*' }), ref, '123'), false)
})

test('coversResource: NotResource covers what it does not list (the filled account too); no Resource covers nothing', () => {
  const ref = 'arn:aws:ec2:us-west-2:*:instance/*'
  assert.equal(coversResource(allow({ NotResource: ref }), ref), false)
  assert.equal(coversResource(allow({ NotResource: ['arn:aws:s3:::*', ref] }), ref), false)
  // `?` matches the one-character `*` of the reference, not the account filled in for it
  const notStar = allow({ NotResource: 'arn:aws:ec2:us-west-2:?:instance/*' })
  assert.equal(coversResource(notStar, ref), false)
  assert.equal(coversResource(notStar, ref, '123'), true)
  assert.equal(coversResource(allow({}), ref), false)
})

test('unscopedResource: NotResource, *, or an all-wildcard ARN; not a scoped one', () => {
  assert.equal(unscopedResource(allow({ NotResource: 'arn:aws:s3:::x' })), true)
  assert.equal(unscopedResource(allow({ Resource: ['arn:aws:s3:::x', '*'] })), true)
  assert.equal(unscopedResource(allow({ Resource: 'arn:aws:ec2:*:*:*' })), true)
  assert.equal(unscopedResource(allow({ Resource: 'arn:aws:ec2:*:*:instance/*' })), false)
  assert.equal(unscopedResource(allow({ Resource: 'xarn:aws:ec2:*:*:*' })), false)
  assert.equal(unscopedResource(allow({ Resource: 'arn:aws:ec2:*:*:*/x' })), false)
  assert.equal(unscopedResource(allow({})), false)
})

test('allowsService: only Allow statements, for the service (or *, or AWS *), the action, and the resource', () => {
  const send = (over: Partial<PolicyStatement>) =>
    allowsService(
      policyDoc(allow({ Action: 'sqs:SendMessage', Resource: QUEUE, ...over })),
      EVENTS,
      'sqs:SendMessage',
      QUEUE,
    )
  assert.equal(send({ Principal: { Service: EVENTS } }), true)
  assert.equal(send({ Principal: { Service: EVENTS }, Effect: 'Deny' }), false)
  assert.equal(send({ Principal: { Service: 'sqs.amazonaws.com' } }), false)
  assert.equal(send({ Principal: '*' }), true)
  assert.equal(send({ Principal: { AWS: '*' } }), true)
  assert.equal(send({ Principal: { AWS: 'arn:aws:iam::123456789012:root' } }), false)
  // an AWS principal counts only as *, never as the service
  assert.equal(send({ Principal: { AWS: EVENTS } }), false)
  assert.equal(send({}), false)
  assert.equal(send({ Principal: { Service: EVENTS }, Action: 'sqs:ReceiveMessage' }), false)
  assert.equal(send({ Principal: { Service: EVENTS }, Resource: `${QUEUE}-other` }), false)
  // a statement without Resource applies to the policy's own resource
  assert.equal(send({ Principal: { Service: EVENTS }, Resource: undefined }), true)
  assert.equal(send({ Principal: { Service: EVENTS }, Resource: undefined, NotResource: QUEUE }), false)
})

test('allowsService without a resource: the action is enough', () => {
  const doc = policyDoc(allow({ Principal: { Service: EVENTS }, Action: 'sqs:*', Resource: 'arn:aws:sqs:x' }))
  assert.equal(allowsService(doc, EVENTS, 'sqs:SendMessage'), true)
})
