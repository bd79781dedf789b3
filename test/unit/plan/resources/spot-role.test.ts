// The account's spot service-linked role: its shape, what it reads (ListRoles under the role's path), its
// verdict when it exists and when not, and the one write its apply makes — none when it exists, and a
// "made meanwhile" failure taken as done while any other failure is passed on.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import { spotRole } from '../../../../src/plan/resources/spot-role.js'
import type { IamRole } from '../../../../src/facts/types.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const ROLE: IamRole = {
  name: 'AWSServiceRoleForEC2Spot',
  arn: 'arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot',
  path: '/aws-service-role/spot.amazonaws.com/',
  trust: { Version: '2012-10-17', Statement: [] },
  tags: {},
}
const CREATE = { op: 'CreateServiceLinkedRole', input: { AWSServiceName: 'spot.amazonaws.com' } }

test('shape: one account-wide IAM service-linked role for spot, made with CreateServiceLinkedRole on its ARN in the partition', () => {
  const r = spotRole('123456789012', 'aws-cn')
  assert.deepEqual(shapeOf(r), {
    address: 'iam-service-linked-role.spot',
    kind: 'IAM service-linked role',
    name: 'AWSServiceRoleForEC2Spot',
    group: 'IAM',
    dependsOn: [],
    desired: { service: 'spot.amazonaws.com' },
    permissions: [
      {
        action: 'iam:CreateServiceLinkedRole',
        resource:
          'arn:aws-cn:iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot',
      },
    ],
  })
})

test('observe lists the roles under the spot service path and returns the first as an IamRole', async () => {
  const inputs: unknown[] = []
  const { env, awsCalls } = recordingEnv({
    aws: {
      ListRoles: (i) => (
        inputs.push(i),
        {
          Roles: [
            {
              RoleName: ROLE.name,
              Arn: ROLE.arn,
              Path: ROLE.path,
              AssumeRolePolicyDocument: encodeURIComponent(JSON.stringify(ROLE.trust)),
              Tags: [],
            },
          ],
        }
      ),
    },
  })
  assert.deepEqual(await spotRole('123456789012', 'aws').observe(env), ROLE)
  assert.deepEqual(inputs, [{ PathPrefix: '/aws-service-role/spot.amazonaws.com/' }])
  assert.deepEqual(awsCalls, [{ service: 'iam', op: 'ListRoles' }])
})

test('observe answers null when no role is under the spot service path', async () => {
  const { env } = recordingEnv({ aws: { ListRoles: () => ({ Roles: [] }) } })
  assert.equal(await spotRole('123456789012', 'aws').observe(env), null)
})

test('verdict: unchanged when the role exists', () => {
  assert.deepEqual(spotRole('123456789012', 'aws').verdict(ROLE), { action: 'unchanged', changes: [] })
})

test('verdict: create the spot service, noted as kept by teardown, when the role is missing', () => {
  assert.deepEqual(spotRole('123456789012', 'aws').verdict(null), {
    action: 'create',
    changes: [{ field: 'service', to: 'spot.amazonaws.com' }],
    note: 'account-wide: teardown keeps it',
  })
})

test('apply makes no write when the role exists', async () => {
  const { env, awsCalls } = recordingEnv()
  await spotRole('123456789012', 'aws').apply(env, ROLE)
  assert.deepEqual(awsCalls, [])
})

test('apply creates the service-linked role for spot.amazonaws.com when it is missing', async () => {
  const { env, awsWrites, awsCalls } = recordingEnv()
  await spotRole('123456789012', 'aws').apply(env, null)
  assert.deepEqual(awsWrites, [CREATE])
  assert.deepEqual(awsCalls, [{ service: 'iam', op: 'CreateServiceLinkedRole' }])
})

for (const message of [
  'Service role name AWSServiceRoleForEC2Spot has been taken in this account, please try a different suffix.',
  'Role ALREADY EXISTS',
]) {
  test(`apply takes a role made meanwhile as done: "${message}"`, async () => {
    const { env, awsWrites } = recordingEnv({
      writeErrors: {
        CreateServiceLinkedRole: () => Object.assign(new Error(message), { name: 'InvalidInput' }),
      },
    })
    await spotRole('123456789012', 'aws').apply(env, null)
    assert.deepEqual(awsWrites, [CREATE])
  })
}

test('apply passes any other CreateServiceLinkedRole failure on unchanged', async () => {
  const denied = Object.assign(new Error('not authorized to perform iam:CreateServiceLinkedRole'), {
    name: 'AccessDenied',
  })
  const { env } = recordingEnv({ writeErrors: { CreateServiceLinkedRole: () => denied } })
  await assert.rejects(spotRole('123456789012', 'aws').apply(env, null), (err) => err === denied)
})
