// The trust policy of a role karpctl may not own (plan/resources/role-trust.ts): what the step says it
// is, how it reads the trust, when it changes it, and exactly the two writes its apply makes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument } from '../../../../src/policy/types.js'
import { CHANGED_TRUST, roleTrust } from '../../../../src/plan/resources/role-trust.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const ROLE_ARN = 'arn:aws:iam::123456789012:role/demo-karpenter'
const TRUST: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Principal: { Federated: 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.example/id/ABC' },
      Action: 'sts:AssumeRoleWithWebIdentity',
    },
  ],
}
const OTHER: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
}

const trustOf = (why = 'the IRSA statement names the cluster issuer') =>
  roleTrust({
    address: 'iam-role-trust.controller',
    roleName: 'demo-karpenter',
    roleArn: ROLE_ARN,
    trust: TRUST,
    why,
    group: 'IAM',
  })

// Kills: the kind, dependsOn, documents and permission literals emptied or filled.
test('roleTrust: planned as the IAM role trust of the role, needing the two writes on that role', () => {
  const r = trustOf()
  assert.equal(CHANGED_TRUST, 'karpctl.io/changed-trust')
  assert.equal(r.address, 'iam-role-trust.controller')
  assert.equal(r.kind, 'IAM role trust')
  assert.equal(r.name, 'demo-karpenter')
  assert.equal(r.group, 'IAM')
  assert.deepEqual(r.dependsOn, [])
  assert.deepEqual(r.desired, { trust: TRUST })
  assert.deepEqual(r.documents, { trust: TRUST })
  assert.deepEqual(r.permissions, [
    { action: 'iam:UpdateAssumeRolePolicy', resource: ROLE_ARN },
    { action: 'iam:TagRole', resource: ROLE_ARN },
  ])
})

// Kills: observe's body emptied, GetRole's service/op/input emptied, `??` made `&&`, `?.` dropped.
test('observe: reads GetRole for the role name and parses its URL-encoded trust document', async () => {
  const asked: Record<string, unknown>[] = []
  const env = recordingEnv({
    aws: {
      GetRole: (i) => (
        asked.push(i),
        { Role: { AssumeRolePolicyDocument: encodeURIComponent(JSON.stringify(OTHER)) } }
      ),
    },
  })
  assert.deepEqual(await trustOf().observe(env.env), OTHER)
  assert.deepEqual(asked, [{ RoleName: 'demo-karpenter' }])
  assert.deepEqual(env.awsCalls, [{ service: 'iam', op: 'GetRole' }])
})

test('observe: a role without a trust document (or no Role at all) reads as no statements', async () => {
  for (const answer of [{}, { Role: {} }]) {
    const env = recordingEnv({ aws: { GetRole: () => answer } })
    assert.deepEqual(await trustOf().observe(env.env), { Statement: [] })
  }
})

// Kills: `cur && same` made `false` (an equal trust would be updated) or `||` (a different one kept).
test('verdict: the same trust is unchanged; another or none is an update recorded as the tag', () => {
  const r = trustOf()
  assert.deepEqual(r.verdict(structuredClone(TRUST)), { action: 'unchanged', changes: [] })
  const update = {
    action: 'update',
    changes: [{ field: 'trust', from: 'as found', to: 'the IRSA statement names the cluster issuer' }],
    note: 'recorded as the karpctl.io/changed-trust tag',
  }
  assert.deepEqual(r.verdict(OTHER), update)
  assert.deepEqual(r.verdict(null), update)
})

// Kills: each write's service, op and input emptied; the tag list emptied; the 256-character cut dropped.
test('apply: writes the trust, then tags the role with why, cut to the 256 characters IAM allows', async () => {
  const why = `w${'x'.repeat(300)}`
  const env = recordingEnv()
  await trustOf(why).apply(env.env, OTHER)
  assert.deepEqual(env.awsCalls, [
    { service: 'iam', op: 'UpdateAssumeRolePolicy' },
    { service: 'iam', op: 'TagRole' },
  ])
  assert.deepEqual(env.awsWrites, [
    {
      op: 'UpdateAssumeRolePolicy',
      input: { RoleName: 'demo-karpenter', PolicyDocument: JSON.stringify(TRUST) },
    },
    {
      op: 'TagRole',
      input: {
        RoleName: 'demo-karpenter',
        Tags: [{ Key: 'karpctl.io/changed-trust', Value: why.slice(0, 256) }],
      },
    },
  ])
  assert.equal((env.awsWrites[1]?.input.Tags as { Value: string }[])[0]?.Value.length, 256)
})
