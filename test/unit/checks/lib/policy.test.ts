import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  actionMatch,
  allowsService,
  coversResource,
  missingServiceTrust,
  wildcardMatch,
} from '../../../../src/checks/lib/policy.js'

test('wildcardMatch: * and ?, regex characters are literal, actions case-insensitive', () => {
  assert.ok(wildcardMatch('ec2:Describe*', 'ec2:DescribeSubnets'))
  assert.ok(wildcardMatch('ec2:?unInstances', 'ec2:RunInstances'))
  assert.ok(!wildcardMatch('ec2:Describe*', 'ec2:RunInstances'))
  assert.ok(!wildcardMatch('arn:aws:sqs:us-west-2:1:demo.fifo', 'arn:aws:sqs:us-west-2:1:demoXfifo'))
  assert.ok(wildcardMatch('EC2:runinstances', 'ec2:RunInstances', true))
  assert.ok(!wildcardMatch('EC2:runinstances', 'ec2:RunInstances'))
})

test('actionMatch honours Action and NotAction', () => {
  assert.equal(actionMatch({ Effect: 'Allow', Action: ['ec2:*'] }, 'ec2:RunInstances'), 'ec2:*')
  assert.equal(actionMatch({ Effect: 'Allow', NotAction: 'iam:*' }, 'ec2:RunInstances'), 'NotAction iam:*')
  assert.equal(actionMatch({ Effect: 'Allow', NotAction: 'iam:*' }, 'iam:PassRole'), null)
})

test('coversResource: patterns, the reference * account, NotResource', () => {
  const ref = 'arn:aws:ec2:us-west-2:*:instance/*'
  assert.ok(coversResource({ Effect: 'Allow', Resource: '*' }, ref))
  assert.ok(coversResource({ Effect: 'Allow', Resource: 'arn:aws:ec2:*:*:instance/*' }, ref))
  assert.ok(coversResource({ Effect: 'Allow', Resource: 'arn:aws:ec2:us-west-2:123:instance/*' }, ref, '123'))
  assert.ok(!coversResource({ Effect: 'Allow', Resource: 'arn:aws:ec2:us-west-2:123:instance/*' }, ref))
  assert.ok(!coversResource({ Effect: 'Allow', Resource: 'arn:aws:ec2:us-west-2:*:volume/*' }, ref))
  assert.ok(coversResource({ Effect: 'Allow', NotResource: 'arn:aws:ec2:*:*:volume/*' }, ref))
})

test('service principals in trust and resource policies', () => {
  const trust = {
    Statement: [
      {
        Effect: 'Allow' as const,
        Principal: { Service: ['pods.eks.amazonaws.com'] },
        Action: 'sts:AssumeRole',
      },
      {
        Effect: 'Allow' as const,
        Principal: { Service: 'pods.eks.amazonaws.com' },
        Action: 'sts:TagSession',
      },
    ],
  }
  assert.deepEqual(
    missingServiceTrust(trust, ['pods.eks.amazonaws.com'], ['sts:AssumeRole', 'sts:TagSession']),
    [],
  )
  assert.deepEqual(missingServiceTrust(trust, ['ec2.amazonaws.com'], ['sts:AssumeRole']), ['sts:AssumeRole'])
  const queue = {
    Statement: [
      {
        Effect: 'Allow' as const,
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: 'arn:aws:sqs:r:1:q',
      },
    ],
  }
  assert.ok(allowsService(queue, 'events.amazonaws.com', 'sqs:SendMessage', 'arn:aws:sqs:r:1:q'))
  assert.ok(!allowsService(queue, 'events.amazonaws.com', 'sqs:SendMessage', 'arn:aws:sqs:r:1:other'))
  assert.ok(!allowsService(null, 'events.amazonaws.com', 'sqs:SendMessage'))
})
