// One inline policy on a role karpctl may not own (issue 18): its shape with and without a record, what
// it reads, each verdict, the exact writes in order (the record before the policy), and its removal.
// Each assertion fails when the condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import type { PolicyDocument } from '../../../../src/policy/types.js'
import { inlinePolicy, inlinePolicyAbsent } from '../../../../src/plan/resources/inline-policy.js'
import { REPAIRED_INLINE } from '../../../../src/desired/ownership.js'
import { recordingEnv, type AwsAnswer } from '../../../helpers/recording-env.js'

const ROLE = 'demo-karpenter'
const ROLE_ARN = `arn:aws:iam::123456789012:role/${ROLE}`
const NAME = 'KarpctlPassNodeRole'
const doc = (action: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'Pass', Effect: 'Allow', Action: action, Resource: '*' }],
})
const WANT = doc('iam:PassRole')
const want = (record?: string) =>
  inlinePolicy({
    address: 'iam-inline.pass',
    roleName: ROLE,
    roleArn: ROLE_ARN,
    policyName: NAME,
    document: WANT,
    dependsOn: ['iam-role.controller'],
    ...(record === undefined ? {} : { record }),
  })
const absent = () =>
  inlinePolicyAbsent({ address: 'iam-inline.pass', roleName: ROLE, policyName: NAME, dependsOn: ['x'] })

const denied = (name = 'AccessDenied') => Object.assign(new Error('denied'), { name })
const notFound = () => denied('NoSuchEntity')
const tagList = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }))
/** GetRole and GetRolePolicy as IAM answers them (the document URL-encoded), each input kept. */
function reads(tags: Record<string, string>, policy: PolicyDocument | null, inputs: unknown[] = []) {
  const aws: Record<string, AwsAnswer> = {
    GetRole: (i) => (inputs.push(i), { Role: { RoleName: ROLE, Arn: ROLE_ARN, Tags: tagList(tags) } }),
  }
  if (policy)
    aws.GetRolePolicy = (i) => (
      inputs.push(i),
      { PolicyName: NAME, PolicyDocument: encodeURIComponent(JSON.stringify(policy)) }
    )
  return aws
}
const shape = shapeOf

test('shape: one inline policy of the role, put with PutRolePolicy; with a record, TagRole too', () => {
  const bare = {
    address: 'iam-inline.pass',
    kind: 'IAM inline policy',
    name: `${ROLE}/${NAME}`,
    group: 'IAM',
    dependsOn: ['iam-role.controller'],
    desired: { role: ROLE, policy: NAME },
    documents: { [NAME]: WANT },
    permissions: [{ action: 'iam:PutRolePolicy', resource: ROLE_ARN }],
  }
  assert.deepEqual(shape(want()), bare)
  assert.deepEqual(shape(want(REPAIRED_INLINE)), {
    ...bare,
    permissions: [
      { action: 'iam:PutRolePolicy', resource: ROLE_ARN },
      { action: 'iam:TagRole', resource: ROLE_ARN },
    ],
  })
})

test("observe: the role's tags and the policy's document, read from IAM by the role's and policy's names", async () => {
  const inputs: unknown[] = []
  const tags = { team: 'platform', [REPAIRED_INLINE]: 'Other' }
  const r = recordingEnv({ aws: reads(tags, doc('ec2:A'), inputs) })
  assert.deepEqual(await want().observe(r.env), { roleExists: true, document: doc('ec2:A'), tags })
  assert.deepEqual(inputs, [{ RoleName: ROLE }, { RoleName: ROLE, PolicyName: NAME }])
  assert.deepEqual(r.awsCalls, [
    { service: 'iam', op: 'GetRole' },
    { service: 'iam', op: 'GetRolePolicy' },
  ])
  assert.deepEqual(r.awsWrites, [])
})

test('observe: a role with no tags (or no Role at all), a tag missing its key or value, a policy with no document', async () => {
  const policy = { GetRolePolicy: () => ({}) }
  assert.deepEqual(await want().observe(recordingEnv({ aws: { GetRole: () => ({}), ...policy } }).env), {
    roleExists: true,
    document: { Statement: [] },
    tags: {},
  })
  const noTags = { GetRole: () => ({ Role: { RoleName: ROLE } }), ...policy }
  assert.deepEqual((await want().observe(recordingEnv({ aws: noTags }).env))?.tags, {})
  const halfTags = { GetRole: () => ({ Role: { Tags: [{ Key: 'a' }, { Value: 'b' }] } }), ...policy }
  assert.deepEqual((await want().observe(recordingEnv({ aws: halfTags }).env))?.tags, { a: '', '': 'b' })
})

test('observe: a missing role is roleExists false with nothing else read; a missing policy keeps the tags', async () => {
  const noRole = recordingEnv({ aws: { GetRolePolicy: () => ({}) } })
  assert.deepEqual(await want().observe(noRole.env), { roleExists: false, document: null })
  assert.deepEqual(
    noRole.awsCalls.map((c) => c.op),
    ['GetRole'],
  )
  assert.deepEqual(await absent().observe(noRole.env), { roleExists: false, document: null })
  const noPolicy = recordingEnv({ aws: reads({ team: 'platform' }, null) })
  assert.deepEqual(await want().observe(noPolicy.env), {
    roleExists: true,
    document: null,
    tags: { team: 'platform' },
  })
})

test('observe: a read failing with anything but NotFound is thrown, not taken for a missing role or policy', async () => {
  const ok = reads({}, WANT)
  for (const op of ['GetRole', 'GetRolePolicy']) {
    const env = recordingEnv({
      aws: {
        ...ok,
        [op]: () => {
          throw denied()
        },
      },
    }).env
    await assert.rejects(want().observe(env), { name: 'AccessDenied', message: 'denied' }, op)
    await assert.rejects(absent().observe(env), { name: 'AccessDenied', message: 'denied' }, op)
  }
})

test('verdict: a missing role blocks, whatever the record', () => {
  const blocked = {
    action: 'create',
    changes: [],
    blocked: `role ${ROLE} does not exist: run \`karpctl install\` first`,
  }
  for (const r of [want(), want(REPAIRED_INLINE)]) {
    assert.deepEqual(r.verdict(null), blocked)
    assert.deepEqual(r.verdict({ roleExists: false, document: null }), blocked)
  }
})

test('verdict: a missing policy is created, said with its record when there is one', () => {
  const cur = { roleExists: true, document: null, tags: {} }
  assert.deepEqual(want().verdict(cur), { action: 'create', changes: [{ field: 'policy', to: NAME }] })
  assert.deepEqual(want(REPAIRED_INLINE).verdict(cur), {
    action: 'create',
    changes: [{ field: 'policy', to: NAME }],
    note: `recorded as the ${REPAIRED_INLINE} tag`,
  })
})

test("verdict: a different document is an update listing the document's changes", () => {
  const recordedTags = { [REPAIRED_INLINE]: NAME }
  const cur = { roleExists: true, document: doc('ec2:A'), tags: recordedTags }
  const changes = [{ field: 'document.Statement.Pass.Action', from: 'ec2:A', to: 'iam:PassRole' }]
  assert.deepEqual(want().verdict(cur), { action: 'update', changes })
  assert.deepEqual(want(REPAIRED_INLINE).verdict(cur), {
    action: 'update',
    changes,
    note: `recorded as the ${REPAIRED_INLINE} tag`,
  })
})

test('verdict: the same document not listed in the record is an update of the record; listed or unrecorded, unchanged', () => {
  const there = (tags: Record<string, string>) => ({ roleExists: true, document: WANT, tags })
  assert.deepEqual(want(REPAIRED_INLINE).verdict(there({ [REPAIRED_INLINE]: 'Other' })), {
    action: 'update',
    changes: [{ field: `tags.${REPAIRED_INLINE}`, to: NAME }],
    note: `recorded as the ${REPAIRED_INLINE} tag`,
  })
  // Listed in the record's second key: still recorded.
  const unchanged = { action: 'unchanged', changes: [] }
  const listed = there({ [REPAIRED_INLINE]: 'Other', [`${REPAIRED_INLINE}-2`]: NAME })
  assert.deepEqual(want(REPAIRED_INLINE).verdict(listed), unchanged)
  assert.deepEqual(want().verdict(there({})), unchanged)
})

test('apply: the merged record is tagged before the policy is put, both on the role, in IAM', async () => {
  const r = recordingEnv()
  await want(REPAIRED_INLINE).apply(r.env, {
    roleExists: true,
    document: null,
    tags: { team: 'platform', [REPAIRED_INLINE]: 'Other' },
  })
  assert.deepEqual(r.awsWrites, [
    { op: 'TagRole', input: { RoleName: ROLE, Tags: [{ Key: REPAIRED_INLINE, Value: `Other ${NAME}` }] } },
    {
      op: 'PutRolePolicy',
      input: { RoleName: ROLE, PolicyName: NAME, PolicyDocument: JSON.stringify(WANT) },
    },
  ])
  assert.deepEqual(r.awsCalls, [
    { service: 'iam', op: 'TagRole' },
    { service: 'iam', op: 'PutRolePolicy' },
  ])
})

test('apply: with nothing observed, the record holds this policy alone', async () => {
  const r = recordingEnv()
  await want(REPAIRED_INLINE).apply(r.env, null)
  assert.deepEqual(
    r.awsWrites.map((w) => w.input.Tags ?? w.op),
    [[{ Key: REPAIRED_INLINE, Value: NAME }], 'PutRolePolicy'],
  )
})

test('apply: no TagRole without a record or when the record already lists the policy', async () => {
  const put = [
    {
      op: 'PutRolePolicy',
      input: { RoleName: ROLE, PolicyName: NAME, PolicyDocument: JSON.stringify(WANT) },
    },
  ]
  const bare = recordingEnv()
  await want().apply(bare.env, { roleExists: true, document: doc('ec2:A'), tags: {} })
  assert.deepEqual(bare.awsWrites, put)
  const listed = recordingEnv()
  await want(REPAIRED_INLINE).apply(listed.env, {
    roleExists: true,
    document: doc('ec2:A'),
    tags: { [REPAIRED_INLINE]: `Other ${NAME}` },
  })
  assert.deepEqual(listed.awsWrites, put)
})

test('inlinePolicyAbsent: shape, and delete only what is there', () => {
  assert.deepEqual(shape(absent()), {
    address: 'iam-inline.pass',
    kind: 'IAM inline policy',
    name: `${ROLE}/${NAME}`,
    group: 'IAM',
    dependsOn: ['x'],
    desired: { absent: true },
    permissions: [],
  })
  assert.deepEqual(absent().verdict({ roleExists: true, document: WANT, tags: {} }), {
    action: 'delete',
    changes: [],
  })
  const gone = { action: 'unchanged', changes: [], note: 'already gone' }
  assert.deepEqual(absent().verdict({ roleExists: true, document: null, tags: {} }), gone)
  assert.deepEqual(absent().verdict({ roleExists: false, document: null }), gone)
  assert.deepEqual(absent().verdict(null), gone)
})

test('inlinePolicyAbsent: DeleteRolePolicy of the policy; NotFound is already gone, any other error is thrown', async () => {
  const del = [{ op: 'DeleteRolePolicy', input: { RoleName: ROLE, PolicyName: NAME } }]
  const r = recordingEnv()
  await absent().apply(r.env, { roleExists: true, document: WANT, tags: {} })
  assert.deepEqual(r.awsWrites, del)
  assert.deepEqual(r.awsCalls, [{ service: 'iam', op: 'DeleteRolePolicy' }])
  const gone = recordingEnv({ writeErrors: { DeleteRolePolicy: notFound } })
  await absent().apply(gone.env, null)
  assert.deepEqual(gone.awsWrites, del)
  const refused = recordingEnv({ writeErrors: { DeleteRolePolicy: () => denied() } })
  await assert.rejects(absent().apply(refused.env, null), { name: 'AccessDenied', message: 'denied' })
})
