// AWS managed policies attached to a role karpctl may not own (issue 18): which are missing (a fallback
// counts for its primary), the attach with its fallback, the resource's shape, what it reads, each
// verdict, and the exact writes in order (the merged record before any attach). Each assertion fails
// when the condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import {
  attachedPolicies,
  attachMissing,
  missingPolicies,
} from '../../../../src/plan/resources/attached-policies.js'
import type { ManagedPolicyWant } from '../../../../src/plan/resources/iam-role.js'
import { REPAIRED_POLICIES } from '../../../../src/desired/ownership.js'
import { recordingEnv, type AwsAnswer } from '../../../helpers/recording-env.js'

const ROLE = 'demo-node'
const ROLE_ARN = `arn:aws:iam::123456789012:role/${ROLE}`
const WORKER = 'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy'
const CNI = 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy'
const PULL = 'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly'
const READ = 'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly'
const MANAGED: ManagedPolicyWant[] = [{ arn: WORKER }, { arn: CNI }, { arn: PULL, orElse: READ }]

const want = () =>
  attachedPolicies({
    address: 'iam-policies.node',
    roleName: ROLE,
    roleArn: ROLE_ARN,
    managed: MANAGED,
    group: 'Nodes',
  })
const failure = (name: string) => () => Object.assign(new Error(`${name} here`), { name })
const attach = (PolicyArn: string) => ({ op: 'AttachRolePolicy', input: { RoleName: ROLE, PolicyArn } })
const tagRole = (Value: string) => ({
  op: 'TagRole',
  input: { RoleName: ROLE, Tags: [{ Key: REPAIRED_POLICIES, Value }] },
})

test('missingPolicies: the wanted policies neither attached nor attached as their fallback', () => {
  assert.deepEqual(missingPolicies(MANAGED, []), MANAGED)
  assert.deepEqual(missingPolicies(MANAGED, [WORKER, READ]), [{ arn: CNI }])
  assert.deepEqual(missingPolicies(MANAGED, new Set([CNI, PULL, WORKER, 'arn:aws:iam::1:policy/own'])), [])
})

test('attachMissing: attaches each missing policy to the role, in IAM, and returns what it attached', async () => {
  const r = recordingEnv()
  assert.deepEqual(await attachMissing(r.env.aws, ROLE, MANAGED, [WORKER]), [CNI, PULL])
  assert.deepEqual(r.awsWrites, [attach(CNI), attach(PULL)])
  assert.deepEqual(r.awsCalls, [
    { service: 'iam', op: 'AttachRolePolicy' },
    { service: 'iam', op: 'AttachRolePolicy' },
  ])
  const none = recordingEnv()
  assert.deepEqual(await attachMissing(none.env.aws, ROLE, MANAGED, [WORKER, CNI, READ]), [])
  assert.deepEqual(none.awsWrites, [])
})

test('attachMissing: a primary that does not exist is replaced by its fallback; any other failure is thrown', async () => {
  const pullMissing = (i: Record<string, unknown>) =>
    i.PolicyArn === PULL ? failure('NoSuchEntity')() : undefined
  const r = recordingEnv({ writeErrors: { AttachRolePolicy: pullMissing } })
  assert.deepEqual(await attachMissing(r.env.aws, ROLE, MANAGED, [WORKER]), [CNI, READ])
  assert.deepEqual(r.awsWrites, [attach(CNI), attach(PULL), attach(READ)])
  assert.deepEqual(
    r.awsCalls.map((c) => c.service),
    ['iam', 'iam', 'iam'],
  )

  const pullDenied = (i: Record<string, unknown>) =>
    i.PolicyArn === PULL ? failure('AccessDenied')() : undefined
  const d = recordingEnv({ writeErrors: { AttachRolePolicy: pullDenied } })
  await assert.rejects(attachMissing(d.env.aws, ROLE, MANAGED, [WORKER]), { name: 'AccessDenied' })
  assert.deepEqual(d.awsWrites, [attach(CNI), attach(PULL)])

  // No fallback: even NotFound is thrown.
  const n = recordingEnv({ writeErrors: { AttachRolePolicy: failure('NoSuchEntity') } })
  await assert.rejects(attachMissing(n.env.aws, ROLE, MANAGED, [WORKER]), { name: 'NoSuchEntity' })
  assert.deepEqual(n.awsWrites, [attach(CNI)])
})

test('shape: the role by name, the wanted ARNs, AttachRolePolicy and TagRole on the role', () => {
  const r = want()
  assert.deepEqual(shapeOf(r), {
    address: 'iam-policies.node',
    kind: 'IAM role policies',
    name: ROLE,
    group: 'Nodes',
    dependsOn: [],
    desired: { attached: [WORKER, CNI, PULL] },
    permissions: [
      { action: 'iam:AttachRolePolicy', resource: ROLE_ARN },
      { action: 'iam:TagRole', resource: ROLE_ARN },
    ],
  })
})

const TAGS = { team: 'platform', [REPAIRED_POLICIES]: 'Old' }
const READS: Record<string, AwsAnswer> = {
  GetRole: () => ({
    Role: {
      RoleName: ROLE,
      Arn: ROLE_ARN,
      Tags: Object.entries(TAGS).map(([Key, Value]) => ({ Key, Value })),
    },
  }),
  ListAttachedRolePolicies: () => ({
    AttachedPolicies: [
      { PolicyArn: WORKER, PolicyName: 'AmazonEKSWorkerNodePolicy' },
      { PolicyArn: READ, PolicyName: 'AmazonEC2ContainerRegistryReadOnly' },
    ],
  }),
  ListRolePolicies: () => ({ PolicyNames: [] }),
}

test("observe: the attached ARNs and the role's tags, with no policy document read", async () => {
  const r = recordingEnv({ aws: READS })
  assert.deepEqual(await want().observe(r.env), { attached: [WORKER, READ], tags: TAGS })
  assert.deepEqual(r.awsCalls.map((c) => c.op).sort(), [
    'GetRole',
    'ListAttachedRolePolicies',
    'ListRolePolicies',
  ])
  assert.deepEqual(r.awsWrites, [])
})

test('observe: a missing role is null; a failed read of the role or of its policies is thrown with its code', async () => {
  const { GetRole: _gone, ...noRole } = READS
  assert.equal(await want().observe(recordingEnv({ aws: noRole }).env), null)
  for (const op of ['GetRole', 'ListAttachedRolePolicies']) {
    const env = recordingEnv({
      aws: {
        ...READS,
        [op]: () => {
          throw failure('AccessDenied')()
        },
      },
    }).env
    await assert.rejects(want().observe(env), { name: 'AccessDenied', message: 'AccessDenied here' }, op)
  }
})

test('verdict: a missing role blocks; the missing policies are an update, by name; all there is unchanged', () => {
  assert.deepEqual(want().verdict(null), {
    action: 'update',
    changes: [],
    blocked: `role ${ROLE} does not exist: nothing to attach policies to`,
  })
  assert.deepEqual(want().verdict({ attached: [WORKER], tags: {} }), {
    action: 'update',
    changes: [
      { field: 'attached policy', to: 'AmazonEKS_CNI_Policy' },
      { field: 'attached policy', to: 'AmazonEC2ContainerRegistryPullOnly' },
    ],
    note: `recorded as the ${REPAIRED_POLICIES} tag`,
  })
  assert.deepEqual(want().verdict({ attached: [WORKER, CNI, READ], tags: {} }), {
    action: 'unchanged',
    changes: [],
  })
})

test('apply: the record (what it held, then each missing policy with its fallback) is tagged before any attach', async () => {
  const r = recordingEnv()
  await want().apply(r.env, { attached: [WORKER], tags: TAGS })
  assert.deepEqual(r.awsWrites, [
    tagRole('Old AmazonEKS_CNI_Policy AmazonEC2ContainerRegistryPullOnly AmazonEC2ContainerRegistryReadOnly'),
    attach(CNI),
    attach(PULL),
  ])
  assert.deepEqual(
    r.awsCalls.map((c) => `${c.service}:${c.op}`),
    ['iam:TagRole', 'iam:AttachRolePolicy', 'iam:AttachRolePolicy'],
  )
})

test('apply: a primary that does not exist is attached as its fallback, after the record', async () => {
  const pullMissing = (i: Record<string, unknown>) =>
    i.PolicyArn === PULL ? failure('NoSuchEntity')() : undefined
  const r = recordingEnv({ writeErrors: { AttachRolePolicy: pullMissing } })
  await want().apply(r.env, { attached: [WORKER, CNI], tags: {} })
  assert.deepEqual(r.awsWrites, [
    tagRole('AmazonEC2ContainerRegistryPullOnly AmazonEC2ContainerRegistryReadOnly'),
    attach(PULL),
    attach(READ),
  ])
})

test('apply: nothing missing writes nothing; nothing observed attaches and records every wanted policy', async () => {
  const none = recordingEnv()
  await want().apply(none.env, { attached: [WORKER, CNI, PULL], tags: TAGS })
  assert.deepEqual(none.awsWrites, [])
  const all = recordingEnv()
  await want().apply(all.env, null)
  assert.deepEqual(all.awsWrites, [
    tagRole(
      'AmazonEKSWorkerNodePolicy AmazonEKS_CNI_Policy AmazonEC2ContainerRegistryPullOnly AmazonEC2ContainerRegistryReadOnly',
    ),
    attach(WORKER),
    attach(CNI),
    attach(PULL),
  ])
})
