// An IAM role's conditions, one at a time (issue 18): what karpctl's own role is repaired to, when
// another tool's role is used as it is, blocked or adopted, and exactly what each apply writes. Each
// assertion fails when the condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument, PolicyStatement } from '../../../../src/policy/types.js'
import { ADDED_INLINE } from '../../../../src/plan/resources/adopted-role.js'
import { ATTACHED_POLICIES } from '../../../../src/plan/resources/attached-policies.js'
import { iamRole, type RoleState, type RoleWant } from '../../../../src/plan/resources/iam-role.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { ADOPTED_BY, ownershipTags, USED_AS_IT_IS } from '../../../../src/desired/ownership.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const OWN = ownershipTags('demo')
const TAGS = { ...OWN, team: 'platform' }
const ARN = 'arn:aws:iam::1:role/KarpenterControllerRole-demo'
const web: PolicyStatement = {
  Effect: 'Allow',
  Principal: { Federated: 'arn:aws:iam::1:oidc-provider/x' },
  Action: 'sts:AssumeRoleWithWebIdentity',
}
const svc: PolicyStatement = {
  Effect: 'Allow',
  Principal: { Service: ['ec2.amazonaws.com', 'pods.eks.amazonaws.com'] },
  Action: 'sts:AssumeRole',
}
const trust = (...Statement: PolicyStatement[]): PolicyDocument => ({ Version: '2012-10-17', Statement })
const doc = (action: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: action, Resource: '*' }],
})
const A = 'arn:aws:iam::aws:policy/A'
const B = 'arn:aws:iam::aws:policy/B'

const want = (over: Partial<RoleWant> = {}): RoleWant => ({
  address: 'iam-role.controller',
  name: 'KarpenterControllerRole-demo',
  arn: ARN,
  description: 'Karpenter controller (karpctl)',
  trust: trust(web),
  managed: [{ arn: A }],
  inline: [{ name: 'P', document: doc('ec2:One') }],
  tags: TAGS,
  ownership: OWN,
  adopt: false,
  notOursHint: 'pass --adopt',
  ...over,
})
/** A role as observed; `tags` are its tags whatever `over.role` says. */
const state = (over: Partial<RoleState> = {}, tags: Record<string, string> = TAGS): RoleState => {
  const s = {
    role: { name: 'KarpenterControllerRole-demo', arn: ARN, path: '/', trust: trust(web), tags },
    attached: [A],
    inline: { P: doc('ec2:One') },
    ...over,
  }
  return { ...s, role: { ...s.role, tags } }
}

test('the resource: its address, what it wants (principals of its trust), its documents and permissions', () => {
  const r = iamRole(
    want({ trust: trust(web, svc, { Effect: 'Allow', Principal: '*', Action: 'x' }), dependsOn: ['x'] }),
  )
  assert.equal(r.address, 'iam-role.controller')
  assert.equal(r.kind, 'IAM role')
  assert.equal(r.name, 'KarpenterControllerRole-demo')
  assert.equal(r.group, 'IAM')
  assert.deepEqual(r.dependsOn, ['x'])
  assert.deepEqual(iamRole(want()).dependsOn, [])
  assert.deepEqual(r.desired, {
    name: 'KarpenterControllerRole-demo',
    trustedBy: 'arn:aws:iam::1:oidc-provider/x, ec2.amazonaws.com, pods.eks.amazonaws.com, *',
    managedPolicies: [A],
    inlinePolicies: ['P'],
    tags: TAGS,
  })
  assert.deepEqual(iamRole(want({ trust: trust({ Effect: 'Allow', Action: 'x' }) })).desired.trustedBy, '*')
  assert.deepEqual(r.documents, { trust: r.documents?.trust, 'inline P': doc('ec2:One') })
  assert.deepEqual(
    r.permissions.map((p) => p.action),
    [
      'iam:CreateRole',
      'iam:TagRole',
      'iam:UpdateAssumeRolePolicy',
      'iam:AttachRolePolicy',
      'iam:PutRolePolicy',
    ],
  )
  assert.ok(r.permissions.every((p) => p.resource === ARN))
})

test("karpctl's role: created whole; then trust, each policy, each inline policy and tags repaired on its own", () => {
  const r = iamRole(want())
  assert.deepEqual(r.verdict(null), {
    action: 'create',
    changes: [
      { field: 'trust', to: 'arn:aws:iam::1:oidc-provider/x' },
      { field: 'attached policy', to: 'A' },
      { field: 'inline policy', to: 'P' },
    ],
  })
  assert.deepEqual(r.verdict(state()), { action: 'unchanged', changes: [] })
  // An existing role's trust and inline policies: each value that differs, as it is and as it will be.
  assert.deepEqual(r.verdict(state({ role: { ...state().role, trust: trust(svc) } })), {
    action: 'update',
    changes: [
      {
        field: 'trust.Statement.0.Principal.Service',
        from: ['ec2.amazonaws.com', 'pods.eks.amazonaws.com'],
        to: undefined,
      },
      {
        field: 'trust.Statement.0.Principal.Federated',
        from: undefined,
        to: 'arn:aws:iam::1:oidc-provider/x',
      },
      { field: 'trust.Statement.0.Action', from: 'sts:AssumeRole', to: 'sts:AssumeRoleWithWebIdentity' },
    ],
  })
  assert.deepEqual(r.verdict(state({ attached: [B] })).changes, [{ field: 'attached policy', to: 'A' }])
  assert.deepEqual(r.verdict(state({ inline: { P: doc('ec2:Other') } })).changes, [
    { field: 'inline policy P.Statement.0.Action', from: 'ec2:Other', to: 'ec2:One' },
  ])
  assert.deepEqual(r.verdict(state({ inline: {} })).changes, [{ field: 'inline policy', to: 'P' }])
  assert.deepEqual(r.verdict(state({}, { ...OWN, team: 'other', extra: 'kept' })).changes, [
    { field: 'tags.team', from: 'other', to: 'platform' },
  ])
})

test("karpctl's role applied: CreateRole whole; else only what differs", async () => {
  const writes = async (cur: RoleState | null, w = want()) => {
    const r = recordingEnv()
    await iamRole(w).apply(r.env, cur)
    return r.awsWrites
  }
  const tagList = Object.entries(TAGS).map(([Key, Value]) => ({ Key, Value }))
  const put = {
    op: 'PutRolePolicy',
    input: {
      RoleName: 'KarpenterControllerRole-demo',
      PolicyName: 'P',
      PolicyDocument: JSON.stringify(doc('ec2:One')),
    },
  }
  const attach = { op: 'AttachRolePolicy', input: { RoleName: 'KarpenterControllerRole-demo', PolicyArn: A } }
  assert.deepEqual(await writes(null), [
    {
      op: 'CreateRole',
      input: {
        RoleName: 'KarpenterControllerRole-demo',
        Path: '/',
        Description: 'Karpenter controller (karpctl)',
        AssumeRolePolicyDocument: JSON.stringify(trust(web)),
        Tags: tagList,
      },
    },
    attach,
    put,
  ])
  assert.deepEqual(await writes(state()), [])
  assert.deepEqual(await writes(state({ role: { ...state().role, trust: trust(svc) } })), [
    {
      op: 'UpdateAssumeRolePolicy',
      input: { RoleName: 'KarpenterControllerRole-demo', PolicyDocument: JSON.stringify(trust(web)) },
    },
  ])
  assert.deepEqual(await writes(state({}, { ...OWN })), [
    {
      op: 'TagRole',
      input: { RoleName: 'KarpenterControllerRole-demo', Tags: [{ Key: 'team', Value: 'platform' }] },
    },
  ])
  assert.deepEqual(await writes(state({ attached: [] })), [attach])
  assert.deepEqual(await writes(state({ inline: { P: doc('ec2:Other') } })), [put])
})

test("another tool's role: used as it is when it already is what karpctl needs; else blocked without --adopt", () => {
  const r = iamRole(want())
  assert.deepEqual(r.verdict(state({}, { team: 'x' })), {
    action: 'unchanged',
    changes: [],
    note: USED_AS_IT_IS,
  })
  assert.deepEqual(r.verdict(state({ attached: [] }, { team: 'x' })), {
    action: 'update',
    changes: [],
    blocked: 'exists and was not made by karpctl (no karpctl.io/managed-by tag): pass --adopt',
  })
  // Another cluster's created marks are not this cluster's.
  assert.equal(
    r.verdict(state({ attached: [] }, ownershipTags('other'))).blocked?.startsWith('exists and was not made'),
    true,
  )
})

test('adopted: only additions, marked; its own inline policy of the same name blocks', () => {
  const note = `adopted (not karpctl's): only additions, recorded as ${ADOPTED_BY} and the ${ADDED_INLINE} / ${ATTACHED_POLICIES} tags; teardown takes them back and keeps the role`
  const v = iamRole(want({ adopt: true })).verdict(state({ attached: [], inline: {} }, { team: 'x' }))
  assert.deepEqual(v, {
    action: 'update',
    changes: [
      { field: 'attached policy', to: 'A' },
      { field: 'inline policy', to: 'P' },
      { field: `tags.${ADOPTED_BY}`, from: undefined, to: 'demo' },
    ],
    note,
  })
  // Every own inline policy of karpctl's names is named.
  assert.match(
    iamRole(
      want({
        adopt: true,
        inline: [
          { name: 'P', document: doc('ec2:One') },
          { name: 'Q', document: doc('ec2:Two') },
        ],
      }),
    ).verdict(state({ attached: [], inline: { P: doc('ec2:Own'), Q: doc('ec2:Own') } }, { team: 'x' }))
      .blocked ?? '',
    /^has inline policies of its own named as karpctl's \(P, Q\): /,
  )
  // Already adopted by this cluster: no --adopt needed, and nothing left is unchanged.
  assert.deepEqual(iamRole(want()).verdict(state({}, { [ADOPTED_BY]: 'demo' })), {
    action: 'unchanged',
    changes: [],
    note,
  })
  assert.deepEqual(iamRole(want()).verdict(state({ attached: [] }, { [ADOPTED_BY]: 'demo' })).changes, [
    { field: 'attached policy', to: 'A' },
  ])
  assert.deepEqual(
    iamRole(want({ adopt: true })).verdict(
      state({ attached: [], inline: { P: doc('ec2:Own') } }, { team: 'x' }),
    ),
    {
      action: 'update',
      changes: [],
      blocked:
        "has inline policies of its own named as karpctl's (P): karpctl would overwrite them; rename them, or let karpctl make its own role",
    },
  )
})

test('adoption writes the record first, then the trust statements, the policies and the inline policies', async () => {
  const r = recordingEnv()
  const cur = state({ role: { ...state().role, trust: trust(svc) }, attached: [], inline: {} }, { team: 'x' })
  await iamRole(want({ adopt: true })).apply(r.env, cur)
  assert.deepEqual(
    r.awsWrites.map((w) => w.op),
    ['TagRole', 'UpdateAssumeRolePolicy', 'AttachRolePolicy', 'PutRolePolicy'],
  )
  assert.deepEqual(r.awsWrites[0]!.input, {
    RoleName: 'KarpenterControllerRole-demo',
    Tags: [
      { Key: ADOPTED_BY, Value: 'demo' },
      { Key: ATTACHED_POLICIES, Value: 'A' },
      { Key: ADDED_INLINE, Value: 'P' },
    ],
  })
  assert.deepEqual(r.awsWrites[1]!.input, {
    RoleName: 'KarpenterControllerRole-demo',
    PolicyDocument: JSON.stringify(trust(svc, { ...web, Sid: 'KarpctlAdopted0' })),
  })
  assert.deepEqual(r.awsWrites[3]!.input, {
    RoleName: 'KarpenterControllerRole-demo',
    PolicyName: 'P',
    PolicyDocument: JSON.stringify(doc('ec2:One')),
  })
  // Trust already there: no trust write. Nothing to add: no write at all.
  const some = recordingEnv()
  await iamRole(want({ adopt: true })).apply(some.env, state({ attached: [] }, { team: 'x' }))
  assert.deepEqual(
    some.awsWrites.map((w) => w.op),
    ['TagRole', 'AttachRolePolicy'],
  )
  const none = recordingEnv()
  await iamRole(want({ adopt: true })).apply(none.env, state({}, { team: 'x' }))
  assert.deepEqual(none.awsWrites, [])
})

test('every write of a role goes to IAM', async () => {
  const services: string[] = []
  const aws = {
    write: async (service: string, op: string) => {
      services.push(`${service}:${op}`)
      return {}
    },
  }
  const env = { aws } as unknown as ApplyEnv
  await iamRole(want()).apply(env, null)
  await iamRole(want()).apply(env, state({ role: { ...state().role, trust: trust(svc) } }, { ...OWN }))
  await iamRole(want({ adopt: true })).apply(
    env,
    state({ role: { ...state().role, trust: trust(svc) }, inline: {} }, { team: 'x' }),
  )
  assert.ok(services.length >= 8)
  assert.ok(
    services.every((s) => s.startsWith('iam:')),
    services.join(' '),
  )
})

test("another tool's role whose own inline policy bears karpctl's name with other statements is not what karpctl needs", () => {
  const cur = state({ inline: { P: doc('ec2:Own') } }, { team: 'x' })
  for (const adopt of [false, true]) {
    const v = iamRole(want({ adopt })).verdict(cur)
    assert.equal(v.action, 'update')
    assert.notEqual(v.note, USED_AS_IT_IS)
    assert.match(v.blocked ?? '', /inline policies of its own named as karpctl's \(P\)|pass --adopt/)
  }
})

test('observe: the role, its attached policy ARNs (no documents read) and inline policies; null when gone; a failed read throws', async () => {
  const enc = (d: unknown) => encodeURIComponent(JSON.stringify(d))
  const documentsRead: string[] = []
  const reads: Record<string, (i: Record<string, unknown>) => unknown> = {
    GetRole: () => ({
      Role: {
        RoleName: 'KarpenterControllerRole-demo',
        Arn: ARN,
        Path: '/',
        AssumeRolePolicyDocument: enc(trust(web)),
        Tags: [{ Key: 'team', Value: 'x' }],
      },
    }),
    ListAttachedRolePolicies: () => ({ AttachedPolicies: [{ PolicyArn: A, PolicyName: 'A' }] }),
    ListRolePolicies: () => ({ PolicyNames: ['P'] }),
    GetRolePolicy: () => ({ PolicyDocument: enc(doc('ec2:One')) }),
    // A managed policy's document is not what the plan compares: never read.
    GetPolicy: () => {
      documentsRead.push('GetPolicy')
      return { Policy: { Arn: A, DefaultVersionId: 'v1' } }
    },
    GetPolicyVersion: () => {
      documentsRead.push('GetPolicyVersion')
      return { PolicyVersion: { Document: enc(doc('ec2:One')) } }
    },
  }
  const cur = await iamRole(want()).observe(recordingEnv({ aws: reads }).env)
  assert.deepEqual(cur?.attached, [A])
  assert.deepEqual(cur?.inline, { P: doc('ec2:One') })
  assert.deepEqual(cur?.role.tags, { team: 'x' })
  assert.deepEqual(cur?.role.trust, trust(web))
  assert.deepEqual(documentsRead, [])
  const { GetRole: _gone, ...withoutRole } = reads
  assert.equal(await iamRole(want()).observe(recordingEnv({ aws: withoutRole }).env), null)
  const denied = () => {
    throw Object.assign(new Error('denied'), { name: 'AccessDenied' })
  }
  for (const op of ['GetRole', 'ListAttachedRolePolicies', 'ListRolePolicies']) {
    await assert.rejects(
      iamRole(want()).observe(recordingEnv({ aws: { ...reads, [op]: denied } }).env),
      (e: Error) => e.name === 'AccessDenied',
      op,
    )
  }
})
