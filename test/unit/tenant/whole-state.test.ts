// Issue 19 item 4: `tenant add` states the tenant's whole desired state. A policy, tag, weight or memory
// limit an earlier run set and this run no longer asks for is removed, and the plan shows it as
// `from → (removed)`; what karpctl did not set (a policy attached by hand, another tool's tag, a field
// another manager owns) stays, and a role karpctl did not create is never touched.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeRolePolicies } from '../../../src/plan/resources/node-role-policies.js'
import type { RoleState } from '../../../src/plan/resources/iam-role.js'
import type { KubeObject } from '../../../src/plan/resources/kube-object.js'
import { planJson, renderPlan } from '../../../src/plan/render.js'
import type { Resource } from '../../../src/plan/types.js'
import { tenantNodePool, tenantTags, type TenantSpec } from '../../../src/desired/tenant.js'
import { tenantAddResources } from '../../../src/tenant/tenant.js'
import { recordingEnv } from '../../helpers/recording-env.js'
import { tenantSpec } from '../../helpers/tenant-spec.js'

const ROLE = 'KarpenterNodeRole-demo-acme'
const ROLE_ARN = `arn:aws:iam::123456789012:role/${ROLE}`
const X = 'arn:aws:iam::123456789012:policy/acme-s3'
const Y = 'arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess'
const BY_HAND = 'arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy'
const OWN = tenantTags('demo', 'acme')
// The record's keys, spelled out: they are a format stored on roles, read back by later versions.
const ASKED_POLICIES = 'karpctl.io/asked-policies'
const ASKED_TAGS = 'karpctl.io/asked-tags'
const DEFAULTS = nodeRolePolicies('aws').map((p) => p.arn)

// The shared tenant spec, with an instance-category and CPU limit for the whole-state record to keep.
const spec = (over: Partial<TenantSpec> = {}, pool: Partial<TenantSpec['nodePool']> = {}): TenantSpec =>
  tenantSpec(over, { instanceCategories: ['c', 'm', 'r'], cpuLimit: 100, ...pool })

const roleOf = (s: TenantSpec) =>
  tenantAddResources(s).find((r) => r.address === 'iam-role.tenant') as Resource<RoleState>
const poolOf = (s: TenantSpec) =>
  tenantAddResources(s).find((r) => r.address === 'kube.nodepool.tenant') as Resource<KubeObject>

const roleState = (tags: Record<string, string>, attached: string[]): RoleState => ({
  role: {
    name: ROLE,
    arn: ROLE_ARN,
    path: '/',
    trust: {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
    },
    tags,
  },
  attached,
  inline: {},
})

/** The role after `tenant add acme --policy-arn X --tag cost-center=42`, plus what others put on it. */
const earlier = () =>
  roleState(
    {
      ...OWN,
      'cost-center': '42',
      [ASKED_POLICIES]: '123456789012:policy/acme-s3',
      [ASKED_TAGS]: 'cost-center',
      team: 'finance', // another tool's tag
    },
    [...DEFAULTS, X, BY_HAND],
  )

test('the first run records on the role what the user asked for, and the same flags again change nothing', async () => {
  const asked = spec({ policyArns: [X], tags: { 'cost-center': '42' } })
  const r = recordingEnv()
  await roleOf(asked).apply(r.env, null)
  const create = r.awsWrites.find((w) => w.op === 'CreateRole')
  assert.deepEqual(
    Object.fromEntries((create?.input.Tags as { Key: string; Value: string }[]).map((t) => [t.Key, t.Value])),
    {
      ...OWN,
      'cost-center': '42',
      [ASKED_POLICIES]: '123456789012:policy/acme-s3',
      [ASKED_TAGS]: 'cost-center',
    },
  )
  assert.deepEqual(roleOf(asked).verdict(earlier()), { action: 'unchanged', changes: [] })
})

test('re-run without --policy-arn and --tag: the recorded policy is detached and the tag removed; the rest stays', async () => {
  const role = roleOf(spec())
  const v = role.verdict(earlier())
  assert.equal(v.action, 'update')
  assert.deepEqual(v.changes, [
    { field: 'attached policy', from: 'acme-s3', to: undefined },
    { field: 'tags.cost-center', from: '42', to: undefined },
    { field: `tags.${ASKED_POLICIES}`, from: '123456789012:policy/acme-s3', to: undefined },
    { field: `tags.${ASKED_TAGS}`, from: 'cost-center', to: undefined },
  ])
  const r = recordingEnv()
  await role.apply(r.env, earlier())
  assert.deepEqual(r.awsWrites, [
    { op: 'DetachRolePolicy', input: { RoleName: ROLE, PolicyArn: X } },
    {
      op: 'UntagRole',
      input: { RoleName: ROLE, TagKeys: ['cost-center', ASKED_POLICIES, ASKED_TAGS] },
    },
  ])
  // Applied: the role is as this run asks, so a third run plans nothing.
  const after = roleState({ ...OWN, team: 'finance' }, [...DEFAULTS, BY_HAND])
  assert.deepEqual(role.verdict(after), { action: 'unchanged', changes: [] })
  assert.ok(role.permissions.some((p) => p.action === 'iam:DetachRolePolicy'))
  assert.ok(role.permissions.some((p) => p.action === 'iam:UntagRole'))
})

test('another policy instead: attached and recorded first, the old one detached, the record left as asked', async () => {
  const role = roleOf(spec({ policyArns: [Y], tags: { 'cost-center': '43' } }))
  assert.deepEqual(role.verdict(earlier()).changes, [
    { field: 'attached policy', to: 'AmazonS3ReadOnlyAccess' },
    { field: 'attached policy', from: 'acme-s3', to: undefined },
    { field: 'tags.cost-center', from: '42', to: '43' },
    {
      field: `tags.${ASKED_POLICIES}`,
      from: '123456789012:policy/acme-s3',
      to: 'aws:policy/AmazonS3ReadOnlyAccess',
    },
  ])
  const r = recordingEnv()
  await role.apply(r.env, earlier())
  assert.deepEqual(r.awsWrites, [
    // A run killed after this write has a record naming both: nothing attached goes unrecorded.
    {
      op: 'TagRole',
      input: {
        RoleName: ROLE,
        Tags: [
          { Key: 'cost-center', Value: '43' },
          { Key: ASKED_POLICIES, Value: 'aws:policy/AmazonS3ReadOnlyAccess 123456789012:policy/acme-s3' },
        ],
      },
    },
    { op: 'AttachRolePolicy', input: { RoleName: ROLE, PolicyArn: Y } },
    { op: 'DetachRolePolicy', input: { RoleName: ROLE, PolicyArn: X } },
    {
      op: 'TagRole',
      input: { RoleName: ROLE, Tags: [{ Key: ASKED_POLICIES, Value: 'aws:policy/AmazonS3ReadOnlyAccess' }] },
    },
  ])
})

test('what karpctl did not set stays: a role without a record, and a role karpctl did not create', async () => {
  // A role karpctl made, but no record on it: nothing is known to be the user's, so nothing is removed.
  const bare = roleState({ ...OWN, 'cost-center': '42' }, [...DEFAULTS, X])
  const v = roleOf(spec()).verdict(bare)
  assert.ok(!v.changes.some((c) => c.to === undefined && c.from !== undefined), JSON.stringify(v.changes))
  // Another tool's role of that name, even carrying a record: blocked, and apply would not detach.
  const foreign = roleState(
    { [ASKED_POLICIES]: '123456789012:policy/acme-s3', [ASKED_TAGS]: 'cost-center', 'cost-center': '1' },
    [X],
  )
  const f = roleOf(spec()).verdict(foreign)
  assert.ok(f.blocked, 'never taken over')
  assert.ok(!f.changes.some((c) => c.to === undefined && c.from !== undefined))
})

/** The fieldsV1 tree server-side apply records for `o` (maps granular, lists atomic). */
const fieldsOf = (o: unknown): unknown =>
  o && typeof o === 'object' && !Array.isArray(o)
    ? Object.fromEntries(Object.entries(o).map(([k, v]) => [`f:${k}`, fieldsOf(v)]))
    : {}

const livePool = (applied: ReturnType<typeof tenantNodePool>, extra: object[] = []) => ({
  ...applied,
  metadata: {
    ...applied.metadata,
    managedFields: [
      {
        manager: 'karpctl',
        operation: 'Apply',
        fieldsV1: fieldsOf({ metadata: { labels: applied.metadata.labels }, spec: applied.spec }),
      },
      { manager: 'karpenter', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
      ...extra,
    ],
  },
})

test('re-run without --weight and --memory-limit: the NodePool update removes them, and says so', () => {
  const before = livePool(tenantNodePool(spec({}, { weight: 10, memoryLimit: '100Gi' })))
  const pool = poolOf(spec())
  const v = pool.verdict(before as KubeObject)
  assert.equal(v.action, 'update')
  assert.deepEqual(v.changes, [
    { field: 'spec.limits.memory', from: '100Gi', to: undefined },
    { field: 'spec.weight', from: 10, to: undefined },
  ])
  // Server-side apply of the new object removes what karpctl no longer applies.
  assert.equal((pool.desired.spec as Record<string, unknown>).weight, undefined)
  // Once applied, karpctl's fields are the asked ones: nothing to change.
  assert.deepEqual(pool.verdict(livePool(tenantNodePool(spec())) as KubeObject), {
    action: 'unchanged',
    changes: [],
  })
  // A field another manager owns too stays after the apply: not shown as removed.
  const shared = livePool(tenantNodePool(spec({}, { weight: 10 })), [
    { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:weight': {} } } },
  ])
  assert.deepEqual(pool.verdict(shared as KubeObject), { action: 'unchanged', changes: [] })
})

test('removals are in the plan a person reads and in --json', () => {
  const steps = [
    { resource: roleOf(spec()), current: earlier(), verdict: roleOf(spec()).verdict(earlier()) },
    (() => {
      const cur = livePool(tenantNodePool(spec({}, { weight: 10 })))
      return { resource: poolOf(spec()), current: cur, verdict: poolOf(spec()).verdict(cur as KubeObject) }
    })(),
  ]
  const plan = { title: 'karpctl tenant add acme', steps }
  const text = renderPlan(plan, { color: false })
  assert.match(text, /attached policy: acme-s3 → \(removed\)/)
  assert.match(text, /tags\.cost-center: 42 → \(removed\)/)
  assert.match(text, /spec\.weight: 10 → \(removed\)/)
  const json = planJson(plan)
  assert.deepEqual(json.summary, { create: 0, update: 2, unchanged: 0, delete: 0 })
  assert.deepEqual(json.steps[1]?.changes, [{ field: 'spec.weight', from: 10, to: null }])
})
