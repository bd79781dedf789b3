import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import { arnMatch, evaluate, globMatch, parseOperator } from '../../../src/policy/evaluate.js'
import { controllerPolicyDocuments } from '../../../src/desired/controller-policy.js'

const NODE_ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const OTHER_ROLE = 'arn:aws:iam::123456789012:role/Admin'
// service null: the request carries no iam:PassedToService at all.
const passRole = (resource = NODE_ROLE, service: string | null = 'ec2.amazonaws.com') => ({
  action: 'iam:PassRole',
  resource,
  context: (service === null ? {} : { 'iam:PassedToService': service }) as Record<string, string>,
})
const doc = (...Statement: PolicyStatement[]): PolicyDocument => ({ Version: '2012-10-17', Statement })

// The statement from the getting-started template, as src/spec writes it.
const allowPassingInstanceRole: PolicyStatement = {
  Sid: 'AllowPassingInstanceRole',
  Effect: 'Allow',
  Action: 'iam:PassRole',
  Resource: NODE_ROLE,
  Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
}

test('Allow: the getting-started statement lets the controller pass the node role to EC2', () => {
  const r = evaluate([doc(allowPassingInstanceRole)], passRole())
  assert.equal(r.decision, 'allowed')
  assert.deepEqual(r.matchedStatements, ['AllowPassingInstanceRole'])
  assert.deepEqual(r.notes, [])
})

test('the real controller policies from src/spec allow PassRole on the node role only', () => {
  const docs = controllerPolicyDocuments({
    partition: 'aws',
    region: 'us-west-2',
    accountId: '123456789012',
    clusterName: 'demo',
    nodeRoleArns: [NODE_ROLE],
    queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
  }).map((p) => p.document)
  assert.equal(evaluate(docs, passRole()).decision, 'allowed')
  assert.equal(evaluate(docs, passRole(OTHER_ROLE)).decision, 'implicitDeny')
})

test('iam:PassedToService: StringEquals list includes ec2.amazonaws.com.cn; other services are not allowed', () => {
  assert.equal(
    evaluate([doc(allowPassingInstanceRole)], passRole(NODE_ROLE, 'ec2.amazonaws.com.cn')).decision,
    'allowed',
  )
  assert.equal(
    evaluate([doc(allowPassingInstanceRole)], passRole(NODE_ROLE, 'lambda.amazonaws.com')).decision,
    'implicitDeny',
  )
  // StringEquals is case-sensitive.
  assert.equal(
    evaluate([doc(allowPassingInstanceRole)], passRole(NODE_ROLE, 'EC2.amazonaws.com')).decision,
    'implicitDeny',
  )
})

test('a condition key absent from the request does not match a positive operator', () => {
  const r = evaluate([doc(allowPassingInstanceRole)], passRole(NODE_ROLE, null))
  assert.equal(r.decision, 'implicitDeny')
  assert.deepEqual(r.matchedStatements, [])
})

test('no statement at all: implicit deny', () => {
  assert.equal(evaluate([], passRole()).decision, 'implicitDeny')
  assert.equal(evaluate([doc()], passRole()).decision, 'implicitDeny')
})

test('explicit Deny wins over an Allow in another policy and names the deny', () => {
  const deny: PolicyStatement = { Sid: 'NoPassRole', Effect: 'Deny', Action: 'iam:PassRole', Resource: '*' }
  const r = evaluate([doc(allowPassingInstanceRole), doc(deny)], passRole())
  assert.equal(r.decision, 'explicitDeny')
  assert.deepEqual(r.matchedStatements, ['NoPassRole'])
})

test('a Deny that does not match the request leaves the Allow in force', () => {
  const deny: PolicyStatement = {
    Sid: 'NoAdmin',
    Effect: 'Deny',
    Action: 'iam:PassRole',
    Resource: OTHER_ROLE,
  }
  assert.equal(evaluate([doc(allowPassingInstanceRole, deny)], passRole()).decision, 'allowed')
  assert.equal(evaluate([doc(allowPassingInstanceRole, deny)], passRole(OTHER_ROLE)).decision, 'explicitDeny')
})

test('action wildcards match case-insensitively; resource wildcards case-sensitively', () => {
  const s = (Action: string, Resource: string): PolicyDocument => doc({ Effect: 'Allow', Action, Resource })
  assert.equal(evaluate([s('iam:Pass*', NODE_ROLE)], passRole()).decision, 'allowed')
  assert.equal(evaluate([s('IAM:passrole', NODE_ROLE)], passRole()).decision, 'allowed')
  assert.equal(evaluate([s('iam:?assRole', NODE_ROLE)], passRole()).decision, 'allowed')
  assert.equal(evaluate([s('*', '*')], passRole()).decision, 'allowed')
  assert.equal(evaluate([s('iam:Get*', NODE_ROLE)], passRole()).decision, 'implicitDeny')
  assert.equal(
    evaluate([s('iam:PassRole', 'arn:aws:iam::123456789012:role/KarpenterNodeRole-*')], passRole()).decision,
    'allowed',
  )
  assert.equal(
    evaluate([s('iam:PassRole', 'arn:aws:iam::*:role/KarpenterNodeRole-???o')], passRole()).decision,
    'allowed',
  )
  assert.equal(
    evaluate([s('iam:PassRole', 'arn:aws:iam::123456789012:role/karpenternoderole-*')], passRole()).decision,
    'implicitDeny',
  )
})

test('wildcards never leak regex meaning', () => {
  assert.equal(globMatch('a.c', 'abc', false), false)
  assert.equal(globMatch('a+c', 'a+c', false), true)
  assert.equal(globMatch('role/(x)', 'role/(x)', false), true)
})

test('ARN matching compares each colon-separated part on its own', () => {
  assert.equal(arnMatch('arn:aws:iam::*:role/X', 'arn:aws:iam::123456789012:role/X'), true)
  assert.equal(arnMatch('arn:aws-cn:iam::*:role/X', 'arn:aws:iam::123456789012:role/X'), false)
  // the resource part keeps its colons
  assert.equal(
    arnMatch('arn:aws:logs:*:*:log-group:/x:*', 'arn:aws:logs:us-west-2:1:log-group:/x:log-stream:y'),
    true,
  )
})

test('NotAction: an Allow on everything except iam:* does not allow PassRole', () => {
  const notIam = doc({ Sid: 'AllButIam', Effect: 'Allow', NotAction: 'iam:*', Resource: '*' })
  assert.equal(evaluate([notIam], passRole()).decision, 'implicitDeny')
  assert.equal(
    evaluate([notIam], { action: 'ec2:RunInstances', resource: '*', context: {} }).decision,
    'allowed',
  )
})

test('NotResource: a Deny on everything but the node role leaves the node role allowed', () => {
  const allow = doc({ Effect: 'Allow', Action: 'iam:PassRole', Resource: '*' })
  const denyOthers = doc({
    Sid: 'OnlyNodeRole',
    Effect: 'Deny',
    Action: 'iam:PassRole',
    NotResource: NODE_ROLE,
  })
  assert.equal(evaluate([allow, denyOthers], passRole()).decision, 'allowed')
  const r = evaluate([allow, denyOthers], passRole(OTHER_ROLE))
  assert.equal(r.decision, 'explicitDeny')
  assert.deepEqual(r.matchedStatements, ['OnlyNodeRole'])
})

test('negated operators match when the value differs and when the key is absent (IAM semantics)', () => {
  const deny = doc({
    Sid: 'OnlyEc2',
    Effect: 'Deny',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { StringNotEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
  })
  const allow = doc({ Effect: 'Allow', Action: 'iam:PassRole', Resource: '*' })
  assert.equal(evaluate([allow, deny], passRole()).decision, 'allowed')
  assert.equal(evaluate([allow, deny], passRole(NODE_ROLE, 'lambda.amazonaws.com')).decision, 'explicitDeny')
  assert.equal(evaluate([allow, deny], passRole(NODE_ROLE, null)).decision, 'explicitDeny')
})

test('IfExists: an absent key satisfies the condition, a present key is compared', () => {
  const s = doc({
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { StringEqualsIfExists: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
  })
  assert.equal(evaluate([s], passRole(NODE_ROLE, null)).decision, 'allowed')
  assert.equal(evaluate([s], passRole()).decision, 'allowed')
  assert.equal(evaluate([s], passRole(NODE_ROLE, 'lambda.amazonaws.com')).decision, 'implicitDeny')
})

test('condition keys are case-insensitive; StringEqualsIgnoreCase and StringLike compare values', () => {
  const ignoreCase = doc({
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { StringEqualsIgnoreCase: { 'IAM:PASSEDTOSERVICE': 'EC2.AMAZONAWS.COM' } },
  })
  assert.equal(evaluate([ignoreCase], passRole()).decision, 'allowed')
  const like = doc({
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { StringLike: { 'iam:PassedToService': 'ec2.*' } },
  })
  assert.equal(evaluate([like], passRole(NODE_ROLE, 'ec2.amazonaws.com.cn')).decision, 'allowed')
  assert.equal(evaluate([like], passRole(NODE_ROLE, 'lambda.amazonaws.com')).decision, 'implicitDeny')
  const notLike = doc({
    Sid: 'x',
    Effect: 'Deny',
    Action: '*',
    Resource: '*',
    Condition: { StringNotLike: { 'iam:PassedToService': 'ec2.*' } },
  })
  assert.equal(evaluate([like, notLike], passRole(NODE_ROLE, 'ec2.amazonaws.com')).decision, 'allowed')
})

test('ForAllValues: every request value must match; a missing key is vacuously true', () => {
  const s = doc({
    Effect: 'Allow',
    Action: 'ec2:CreateTags',
    Resource: '*',
    Condition: { 'ForAllValues:StringEquals': { 'aws:TagKeys': ['team', 'env'] } },
  })
  const req = (keys?: string[]) => ({
    action: 'ec2:CreateTags',
    resource: 'arn:aws:ec2:us-west-2:1:instance/i-1',
    context: (keys ? { 'aws:TagKeys': keys } : {}) as Record<string, string[]>,
  })
  assert.equal(evaluate([s], req(['team'])).decision, 'allowed')
  assert.equal(evaluate([s], req(['team', 'env'])).decision, 'allowed')
  assert.equal(evaluate([s], req(['team', 'owner'])).decision, 'implicitDeny')
  assert.equal(evaluate([s], req()).decision, 'allowed')
})

test('ForAnyValue: one matching request value is enough; a missing key does not match', () => {
  const s = doc({
    Effect: 'Allow',
    Action: 'ec2:CreateTags',
    Resource: '*',
    Condition: { 'ForAnyValue:StringLike': { 'aws:TagKeys': 'karpenter.sh/*' } },
  })
  const req = (keys?: string[]) => ({
    action: 'ec2:CreateTags',
    resource: '*',
    context: (keys ? { 'aws:TagKeys': keys } : {}) as Record<string, string[]>,
  })
  assert.equal(evaluate([s], req(['team', 'karpenter.sh/nodepool'])).decision, 'allowed')
  assert.equal(evaluate([s], req(['team'])).decision, 'implicitDeny')
  assert.equal(evaluate([s], req()).decision, 'implicitDeny')
})

test('Bool, ArnLike/ArnEquals and Null', () => {
  const bool = doc({
    Effect: 'Allow',
    Action: '*',
    Resource: '*',
    Condition: { Bool: { 'aws:SecureTransport': true } },
  })
  assert.equal(
    evaluate([bool], { action: 's3:GetObject', resource: '*', context: { 'aws:SecureTransport': 'true' } })
      .decision,
    'allowed',
  )
  assert.equal(
    evaluate([bool], { action: 's3:GetObject', resource: '*', context: { 'aws:SecureTransport': 'false' } })
      .decision,
    'implicitDeny',
  )
  assert.equal(
    evaluate([bool], { action: 's3:GetObject', resource: '*', context: {} }).decision,
    'implicitDeny',
  )

  for (const op of ['ArnLike', 'ArnEquals']) {
    const arn = doc({
      Effect: 'Allow',
      Action: '*',
      Resource: '*',
      Condition: { [op]: { 'aws:SourceArn': 'arn:aws:events:*:123456789012:rule/Karpenter-*' } },
    })
    assert.equal(
      evaluate([arn], {
        action: 'sqs:SendMessage',
        resource: '*',
        context: { 'aws:SourceArn': 'arn:aws:events:us-west-2:123456789012:rule/Karpenter-demo' },
      }).decision,
      'allowed',
      op,
    )
    assert.equal(
      evaluate([arn], {
        action: 'sqs:SendMessage',
        resource: '*',
        context: { 'aws:SourceArn': 'arn:aws:events:us-west-2:999999999999:rule/Karpenter-demo' },
      }).decision,
      'implicitDeny',
      op,
    )
  }

  const mustBeAbsent = doc({
    Effect: 'Allow',
    Action: '*',
    Resource: '*',
    Condition: { Null: { 'aws:RequestTag/team': 'true' } },
  })
  assert.equal(
    evaluate([mustBeAbsent], { action: 'ec2:CreateTags', resource: '*', context: {} }).decision,
    'allowed',
  )
  assert.equal(
    evaluate([mustBeAbsent], {
      action: 'ec2:CreateTags',
      resource: '*',
      context: { 'aws:RequestTag/team': 'a' },
    }).decision,
    'implicitDeny',
  )
  const mustBePresent = doc({
    Effect: 'Allow',
    Action: '*',
    Resource: '*',
    Condition: { Null: { 'aws:RequestTag/team': 'false' } },
  })
  assert.equal(
    evaluate([mustBePresent], {
      action: 'ec2:CreateTags',
      resource: '*',
      context: { 'aws:RequestTag/team': 'a' },
    }).decision,
    'allowed',
  )
})

test('unknown operators: an Allow does not grant, a Deny denies, and both are reported', () => {
  const allow = doc({
    Sid: 'IpAllow',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } },
  })
  const r1 = evaluate([allow], passRole())
  assert.equal(r1.decision, 'implicitDeny')
  assert.ok(
    r1.notes.some((n) => n.includes('IpAllow') && n.includes('IpAddress')),
    r1.notes.join('\n'),
  )

  const deny = doc({
    Sid: 'DateDeny',
    Effect: 'Deny',
    Action: 'iam:PassRole',
    Resource: '*',
    Condition: { DateGreaterThan: { 'aws:CurrentTime': '2020-01-01T00:00:00Z' } },
  })
  const r2 = evaluate([doc(allowPassingInstanceRole), deny], passRole())
  assert.equal(r2.decision, 'explicitDeny')
  assert.deepEqual(r2.matchedStatements, ['DateDeny'])
  assert.ok(r2.notes.some((n) => n.includes('DateGreaterThan')))
})

test('policy variables are not resolved: treated conservatively and noted', () => {
  const s = doc({
    Sid: 'Var',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: 'arn:aws:iam::123456789012:role/${aws:username}',
  })
  const r = evaluate([s], passRole())
  assert.equal(r.decision, 'implicitDeny')
  assert.ok(r.notes.some((n) => n.includes('policy variable')))
})

test('statements without a Sid are labelled by position', () => {
  const r = evaluate(
    [
      { Id: 'inline-pass', Statement: [{ Effect: 'Allow', Action: 'iam:PassRole', Resource: '*' }] },
      doc({ Effect: 'Allow', Action: '*', Resource: '*' }),
    ],
    passRole(),
  )
  assert.deepEqual(r.matchedStatements, ['inline-pass.Statement[0]', 'policy[1].Statement[0]'])
})

test('parseOperator splits set qualifiers and IfExists', () => {
  assert.deepEqual(parseOperator('ForAllValues:StringLikeIfExists'), {
    set: 'ForAllValues',
    base: 'StringLike',
    ifExists: true,
  })
  assert.deepEqual(parseOperator('StringEquals'), { base: 'StringEquals', ifExists: false })
  assert.deepEqual(parseOperator('BoolIfExists'), { base: 'Bool', ifExists: true })
})

test('partialContext: a condition on a key the request does not list is uncertain, not "absent"', () => {
  const notOrg: PolicyStatement = {
    Sid: 'OutsideOrg',
    Effect: 'Deny',
    Action: 'kms:Decrypt',
    Resource: '*',
    Condition: { StringNotEquals: { 'aws:PrincipalOrgID': 'o-abc123' } },
  }
  const allow: PolicyStatement = { Sid: 'Use', Effect: 'Allow', Action: 'kms:Decrypt', Resource: '*' }
  const request = { action: 'kms:Decrypt', resource: '*', context: { 'kms:CallerAccount': '123456789012' } }
  // IAM semantics: a missing key satisfies StringNotEquals, so the Deny applies.
  const complete = evaluate([doc(allow, notOrg)], request)
  assert.equal(complete.decision, 'explicitDeny')
  assert.equal(complete.uncertain, undefined)
  // A request karpctl only describes: the key may be there, so the Deny is uncertain (and still denies).
  const partial = evaluate([doc(allow, notOrg)], { ...request, partialContext: true })
  assert.equal(partial.decision, 'explicitDeny')
  assert.deepEqual(partial.uncertain, ['OutsideOrg'])
  assert.ok(partial.notes.some((n) => /aws:PrincipalOrgID, a key karpctl does not know/.test(n)))
  // A key the request does list is judged exactly, partial or not.
  const known: PolicyStatement = {
    ...allow,
    Condition: { StringEquals: { 'kms:CallerAccount': '999999999999' } },
  }
  const r = evaluate([doc(known)], { ...request, partialContext: true })
  assert.equal(r.decision, 'implicitDeny')
  assert.equal(r.uncertain, undefined)
})
