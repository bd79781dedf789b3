// The resources of `tenant add` and `tenant remove`, pinned exactly: their addresses, order, kinds,
// names, dependencies and permissions, the calls they make, and the refusals on what karpctl did not make.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import type { RoleState } from '../../../src/plan/resources/iam-role.js'
import type { KubeObject } from '../../../src/plan/resources/kube-object.js'
import type { Resource } from '../../../src/plan/types.js'
import { tenantTags, type InstallFacts, type TenantSpec } from '../../../src/desired/tenant.js'
import { tenantRemoveResources } from '../../../src/plan/tenant-removal.js'
import { tenantAddResources } from '../../../src/tenant/tenant.js'
import { recordingEnv } from '../../helpers/recording-env.js'
import { tenantSpec } from '../../helpers/tenant-spec.js'

const ROLE = 'KarpenterNodeRole-demo-acme'
const ROLE_ARN = `arn:aws:iam::123456789012:role/${ROLE}`
const CONTROLLER = 'KarpenterControllerRole-demo'
const noSuchEntity = () => Object.assign(new Error('not found'), { name: 'NoSuchEntity' })

const spec = (access: TenantSpec['access']): TenantSpec =>
  tenantSpec(
    { access, controllerRoleName: CONTROLLER },
    { architectures: ['arm64'], cpuLimit: 64, consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m' },
  )

const install = (access: InstallFacts['access']): InstallFacts => ({
  clusterName: 'demo',
  accountId: '123456789012',
  partition: 'aws',
  controllerRoleName: CONTROLLER,
  access,
  base: spec(access).base,
})

const outline = (rs: Resource[]) => rs.map((r) => [r.address, r.kind, r.name, r.dependsOn])
const byAddress = (rs: Resource[], address: string) => rs.find((r) => r.address === address)!

test('add via an access entry: the entry on the cluster ARN waits for the role; the NodeClass waits for role, entry and PassRole', () => {
  // Kills: L100 clusterArn, L103 accessEntry({}), L108 dependsOn, L139 dependsOn, L146, L153.
  const add = tenantAddResources(spec('access-entry'))
  assert.deepEqual(outline(add), [
    ['iam-role.tenant', 'IAM role', ROLE, []],
    ['eks-access-entry.node', 'EKS access entry', ROLE_ARN, ['iam-role.tenant']],
    ['iam-policy.tenant-passrole', 'IAM inline policy', `${CONTROLLER}/KarpctlTenantPassRole-acme`, []],
    [
      'kube.ec2nodeclass.tenant',
      'EC2NodeClass',
      'acme',
      ['iam-role.tenant', 'eks-access-entry.node', 'iam-policy.tenant-passrole'],
    ],
    ['kube.nodepool.tenant', 'NodePool', 'acme', ['kube.ec2nodeclass.tenant']],
  ])
  const entry = byAddress(add, 'eks-access-entry.node')
  assert.deepEqual(entry.desired, {
    principalArn: ROLE_ARN,
    type: 'EC2_LINUX',
    tags: tenantTags('demo', 'acme'),
  })
  assert.deepEqual(entry.permissions, [
    { action: 'eks:CreateAccessEntry', resource: 'arn:aws:eks:us-west-2:123456789012:cluster/demo' },
    { action: 'eks:TagResource', resource: 'arn:aws:eks:us-west-2:123456789012:cluster/demo' },
  ])
  // Kills: L94/L95 (the controller role's ARN the PassRole grant is written on).
  assert.deepEqual(byAddress(add, 'iam-policy.tenant-passrole').permissions, [
    { action: 'iam:PutRolePolicy', resource: `arn:aws:iam::123456789012:role/${CONTROLLER}` },
  ])
})

test('add via aws-auth on an empty cluster: the role is created with its description, aws-auth is created labelled as karpctl-managed', async () => {
  // Kills: L110 awsAuthEntry({}), L112 dependsOn, L113 managedLabel, L120 description.
  const add = tenantAddResources(spec('aws-auth'))
  assert.deepEqual(outline(add)[1], ['aws-auth.node', 'aws-auth mapping', ROLE_ARN, ['iam-role.tenant']])
  const rec = recordingEnv({
    aws: {
      GetRole: (i) => {
        if (i.RoleName !== CONTROLLER) throw noSuchEntity()
        return {
          Role: {
            RoleName: CONTROLLER,
            Arn: `arn:aws:iam::123456789012:role/${CONTROLLER}`,
            AssumeRolePolicyDocument: '{}',
            Tags: [],
          },
        }
      },
    },
  })
  // Only the AWS steps and aws-auth: the kube objects' server-side apply is kube-object.ts's to test.
  const plan = await buildPlan('t', add.slice(0, 3), rec.env)
  // Independent steps finish in any order.
  const r = await applyPlan(plan, rec.env)
  assert.deepEqual(
    [r.applied.sort(), r.failed, r.skipped],
    [['aws-auth.node', 'iam-policy.tenant-passrole', 'iam-role.tenant'], [], []],
  )
  assert.deepEqual(
    rec.awsWrites.find((w) => w.op === 'CreateRole')?.input.Description,
    'Nodes of tenant acme on EKS cluster demo (karpctl)',
  )
  assert.deepEqual(
    rec.kubeWrites.map((w) => [w.method, w.path, (w.body as KubeObject).metadata]),
    [
      [
        'POST',
        '/api/v1/namespaces/kube-system/configmaps',
        {
          name: 'aws-auth',
          namespace: 'kube-system',
          labels: { 'app.kubernetes.io/managed-by': 'karpctl' },
          annotations: { 'karpctl.io/added-map-roles': JSON.stringify([ROLE_ARN]) },
        },
      ],
    ],
  )
})

test('add refuses a role of that name another tool made, saying so and how to get out; never adopts it', () => {
  // Kills: L129 adopt, L130 notOursHint.
  const role = byAddress(tenantAddResources(spec('aws-auth')), 'iam-role.tenant') as Resource<RoleState>
  const theirs: RoleState = {
    role: { name: ROLE, arn: ROLE_ARN, path: '/', trust: { Version: '2012-10-17', Statement: [] }, tags: {} },
    attached: [],
    inline: {},
  }
  assert.equal(
    role.verdict(theirs).blocked,
    'exists and was not made by karpctl (no karpctl.io/managed-by tag): another tool made a role of that name: remove it or choose another tenant name',
  )
})

test("add refuses a NodeClass or NodePool of the tenant's name without the tenant's label; never adopts it", () => {
  // Kills: L144/L151 ownerLabel, L145/L152 adopt.
  const add = tenantAddResources(spec('aws-auth'))
  for (const [address, kind] of [
    ['kube.ec2nodeclass.tenant', 'EC2NodeClass'],
    ['kube.nodepool.tenant', 'NodePool'],
  ]) {
    const r = byAddress(add, address!) as Resource<KubeObject>
    const theirs: KubeObject = {
      apiVersion: 'v1',
      kind: kind!,
      metadata: { name: 'acme', labels: { team: 'acme' } },
    }
    assert.deepEqual(r.verdict(theirs), {
      action: 'update',
      changes: [],
      blocked:
        'exists and was not made by karpctl (no karpctl.io/tenant=acme label): pass --adopt to install beside it (it is then used as it is), or remove it',
    })
  }
})

const NODEPOOL = '/apis/karpenter.sh/v1/nodepools/acme'
const NODECLASS = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/acme'
const SEL = 'labelSelector=karpenter.sh%2Fnodepool%3Dacme'
const NODECLAIMS = `/apis/karpenter.sh/v1/nodeclaims?${SEL}`
const NODES = `/api/v1/nodes?${SEL}`
const ours = {
  metadata: { labels: { 'app.kubernetes.io/managed-by': 'karpctl', 'karpctl.io/tenant': 'acme' } },
}

test('remove via access entries also removes the access entry, after the NodeClass; the role waits for it', () => {
  // Kills: L197 dependsOn, and pins the kinds and names of each removal.
  assert.deepEqual(outline(tenantRemoveResources(install('access-entry'), 'acme', 1000)), [
    ['kube.nodepool.tenant', 'NodePool', 'acme', []],
    ['kube.ec2nodeclass.tenant', 'EC2NodeClass', 'acme', ['kube.nodepool.tenant']],
    ['eks-access-entry.remove', 'EKS access entry', ROLE_ARN, ['kube.ec2nodeclass.tenant']],
    ['aws-auth.remove', 'aws-auth mapping', ROLE_ARN, ['kube.ec2nodeclass.tenant']],
    [
      'iam-policy.tenant-passrole',
      'IAM inline policy',
      `${CONTROLLER}/KarpctlTenantPassRole-acme`,
      ['kube.ec2nodeclass.tenant'],
    ],
    [
      'iam-role.tenant',
      'IAM role',
      ROLE,
      [
        'kube.ec2nodeclass.tenant',
        'eks-access-entry.remove',
        'aws-auth.remove',
        'iam-policy.tenant-passrole',
      ],
    ],
  ])
})

test("remove deletes the tenant's NodePool and NodeClass at their paths when both karpctl labels are on them", async () => {
  // Kills: L161 labels, L169 and L185 paths.
  const rec = recordingEnv({ kube: { [NODEPOOL]: ours, [NODECLASS]: ours } })
  const [pool, cls] = tenantRemoveResources(install('aws-auth'), 'acme', 1000)
  const plan = await buildPlan('t', [pool!, cls!], rec.env)
  assert.deepEqual(
    plan.steps.map((s) => [s.resource.address, s.verdict]),
    [
      [
        'kube.nodepool.tenant',
        { action: 'delete', changes: [], note: 'waits for its NodeClaims and nodes to go' },
      ],
      [
        'kube.ec2nodeclass.tenant',
        {
          action: 'delete',
          changes: [],
          note: 'waits until it is gone (the Karpenter controller lifts its finalizers)',
        },
      ],
    ],
  )
  // Gone once deleted (Karpenter has lifted its finalizer): the wait reads it again and ends.
  const read = rec.env.kube.fresh.bind(rec.env.kube)
  rec.env.kube.fresh = (async (path: string) =>
    path === NODECLASS && rec.kubeWrites.some((w) => w.path === NODECLASS) ? null : read(path)) as typeof read
  await applyPlan(plan, rec.env)
  assert.deepEqual(rec.kubeWrites, [
    { method: 'DELETE', path: NODEPOOL },
    { method: 'DELETE', path: NODECLASS },
  ])
})

for (const [path, what] of [
  [NODECLAIMS, 'NodeClaims'],
  [NODES, 'nodes'],
]) {
  test(`remove waits for the NodePool's ${what} (by its karpenter.sh/nodepool label) until the timeout`, async () => {
    // Kills: L162 selector, L172-L178 waitGone (its paths and what it names).
    const rec = recordingEnv({ kube: { [NODEPOOL]: ours, [path!]: { items: [{}] } } })
    const plan = await buildPlan(
      't',
      tenantRemoveResources(install('aws-auth'), 'acme', 0).slice(0, 1),
      rec.env,
    )
    const r = await applyPlan(plan, rec.env)
    assert.deepEqual(r.failed, [
      {
        address: 'kube.nodepool.tenant',
        message:
          'Error: 1 NodeClaims and nodes of NodePool acme still draining after 0 s: run the same command again to keep waiting',
      },
    ])
  })
}
