import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import { parseAllDocuments } from 'yaml'
import { buildPlan } from '../../../src/plan/plan.js'
import type { ApplyEnv } from '../../../src/plan/types.js'
import {
  TENANT_KEY,
  tenantNames,
  tenantNodeClass,
  tenantNodePool,
  tenantPassRolePolicy,
  validateTenantName,
  workloadSnippet,
  type TenantSpec,
} from '../../../src/desired/tenant.js'
import { tenantRemoveResources } from '../../../src/plan/tenant-removal.js'
import { installOf, tenantAddResources } from '../../../src/tenant/tenant.js'
import { healthyFacts } from '../../helpers/facts.js'
import { fixturePath } from '../../helpers/fixtures.js'
import { tenantSpec } from '../../helpers/tenant-spec.js'

// The shared tenant spec with every NodePool field and a policy and tag of the tenant's own.
const spec = (over: Partial<TenantSpec> = {}): TenantSpec =>
  tenantSpec({
    policyArns: ['arn:aws:iam::123456789012:policy/acme-s3'],
    tags: { 'cost-center': '42' },
    nodePool: {
      capacityTypes: ['spot'],
      instanceFamilies: ['m7g'],
      architectures: ['arm64'],
      zones: ['us-west-2a'],
      cpuLimit: 64,
      memoryLimit: '256Gi',
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '5m',
      weight: 10,
    },
    ...over,
  })

test('tenant names: DNS labels up to 40 characters, never "default"; derived names fit IAM', () => {
  for (const ok of ['acme', 'a', 'beta-2', 'x'.repeat(40)]) assert.equal(validateTenantName(ok), ok)
  for (const bad of ['Acme', 'acme_corp', '-acme', 'acme-', '', 'x'.repeat(41), 'a.b', 'default'])
    assert.throws(() => validateTenantName(bad), /tenant name|"default"/, bad)
  const n = tenantNames({
    clusterName: 'c'.repeat(60),
    accountId: '1',
    partition: 'aws',
    tenant: 'x'.repeat(40),
  })
  assert.ok(n.roleName.length <= 64)
  assert.equal(
    n.roleName,
    tenantNames({ clusterName: 'c'.repeat(60), accountId: '1', partition: 'aws', tenant: 'x'.repeat(40) })
      .roleName,
  )
})

function crdSchema(file: string) {
  const crd = parseAllDocuments(
    readFileSync(fixturePath(`v1.14.1/charts/karpenter-crd/templates/${file}`), 'utf8'),
  )
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'CustomResourceDefinition') as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: object } }[] }
  }
  return crd.spec.versions.find((v) => v.name === 'v1')!.schema.openAPIV3Schema
}

test("a tenant's NodePool taints and labels its nodes, and both objects are valid against the real CRD schemas", () => {
  const np = tenantNodePool(spec())
  assert.deepEqual(np.spec.template.spec.taints, [{ key: TENANT_KEY, value: 'acme', effect: 'NoSchedule' }])
  assert.deepEqual(np.spec.template.metadata.labels, { [TENANT_KEY]: 'acme' })
  assert.deepEqual(np.spec.limits, { cpu: '64', memory: '256Gi' })
  assert.equal(np.spec.weight, 10)
  const keys = np.spec.template.spec.requirements.map((r) => r.key)
  assert.deepEqual(keys, [
    'kubernetes.io/arch',
    'kubernetes.io/os',
    'karpenter.sh/capacity-type',
    'karpenter.k8s.aws/instance-family',
    'topology.kubernetes.io/zone',
  ])
  const nc = tenantNodeClass(spec({ subnetTag: { key: 'network/tier', value: 'private-acme' } }))
  assert.equal(nc.spec.role, 'KarpenterNodeRole-demo-acme')
  assert.deepEqual(nc.spec.subnetSelectorTerms, [
    { tags: { 'karpenter.sh/discovery': 'demo', 'network/tier': 'private-acme' } },
  ])
  assert.deepEqual(nc.spec.tags, { 'cost-center': '42', 'karpctl.io/cluster': 'demo', [TENANT_KEY]: 'acme' })
  const ajv = new Ajv({ strict: false, allErrors: true })
  for (const [file, obj] of [
    ['karpenter.sh_nodepools.yaml', np],
    ['karpenter.k8s.aws_ec2nodeclasses.yaml', nc],
  ] as const) {
    const v = ajv.compile(crdSchema(file))
    assert.ok(v(obj), `${file}: ${JSON.stringify(v.errors)}`)
  }
})

test('the PassRole grant names exactly the tenant role, passed to EC2 only', () => {
  assert.deepEqual(tenantPassRolePolicy('arn:aws:iam::1:role/r').Statement, [
    {
      Sid: 'AllowPassingTenantInstanceRole',
      Effect: 'Allow',
      Resource: 'arn:aws:iam::1:role/r',
      Action: 'iam:PassRole',
      Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
    },
  ])
  assert.match(
    workloadSnippet('acme'),
    /nodeSelector:\n {2}karpctl.io\/tenant: acme\ntolerations:\n {2}- key: karpctl.io\/tenant\n {4}operator: Equal\n {4}value: "acme"\n {4}effect: NoSchedule/,
  )
})

test("add: role (node policies + the tenant's), access, PassRole, NodeClass, NodePool; remove: the reverse, NodePool first", () => {
  const add = tenantAddResources(spec())
  assert.deepEqual(
    add.map((r) => r.address),
    [
      'iam-role.tenant',
      'aws-auth.node',
      'iam-policy.tenant-passrole',
      'kube.ec2nodeclass.tenant',
      'kube.nodepool.tenant',
    ],
  )
  assert.ok(
    (add[0]!.desired.managedPolicies as string[]).includes('arn:aws:iam::123456789012:policy/acme-s3'),
  )
  assert.ok(
    tenantAddResources(spec({ access: 'access-entry' })).some((r) => r.address === 'eks-access-entry.node'),
  )
  const install = installOf(healthyFacts())
  const rm = tenantRemoveResources(install, 'acme', 1000)
  assert.deepEqual(
    rm.map((r) => [r.address, r.dependsOn]),
    [
      ['kube.nodepool.tenant', []],
      ['kube.ec2nodeclass.tenant', ['kube.nodepool.tenant']],
      [
        install.access === 'access-entry' ? 'eks-access-entry.remove' : 'aws-auth.remove',
        ['kube.ec2nodeclass.tenant'],
      ],
      ['iam-policy.tenant-passrole', ['kube.ec2nodeclass.tenant']],
      [
        'iam-role.tenant',
        [
          'kube.ec2nodeclass.tenant',
          install.access === 'access-entry' ? 'eks-access-entry.remove' : 'aws-auth.remove',
          'iam-policy.tenant-passrole',
        ],
      ],
    ],
  )
})

test("installOf: the install a tenant builds on, from doctor's facts; none is one clear error", () => {
  const i = installOf(healthyFacts())
  assert.equal(i.controllerRoleName, 'KarpenterControllerRole-demo')
  assert.ok(i.base.subnetSelectorTerms.length > 0)
  const none = healthyFacts()
  none.kube.release = { ok: true, value: null }
  assert.throws(
    () => installOf(none),
    /no Karpenter Helm release or controller Deployment found in cluster demo: run `karpctl install` first/,
  )
})

test("remove keeps what is not the tenant's: an unlabelled NodePool, a role without karpctl tags, a mapping karpctl did not add", async () => {
  const install = installOf(healthyFacts())
  const rm = tenantRemoveResources({ ...install, access: 'aws-auth' }, 'acme', 1000)
  const env = {
    aws: {
      call: async (_s: string, op: string) => {
        if (op === 'GetRole')
          return {
            Role: {
              RoleName: 'KarpenterNodeRole-demo-acme',
              Arn: 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo-acme',
              AssumeRolePolicyDocument: '{"Statement":[]}',
              Tags: [{ Key: 'team', Value: 'acme' }],
            },
          }
        if (op === 'GetRolePolicy') throw Object.assign(new Error('nope'), { name: 'NoSuchEntity' })
        if (op === 'ListInstanceProfilesForRole') return { InstanceProfiles: [] }
        return { AttachedPolicies: [], PolicyNames: [] }
      },
      all: async () => [],
    },
    kube: {
      get: async (path: string) =>
        path.includes('configmaps/aws-auth')
          ? {
              metadata: { annotations: {} },
              data: {
                mapRoles:
                  '- rolearn: arn:aws:iam::123456789012:role/KarpenterNodeRole-demo-acme\n  groups: [system:nodes]\n',
              },
            }
          : { metadata: { name: 'acme', labels: { team: 'acme' } } },
    },
  } as unknown as ApplyEnv
  const plan = await buildPlan('t', rm, env)
  assert.deepEqual(
    plan.steps.map((s) => [s.resource.address, s.verdict.action, s.verdict.note]),
    [
      ['kube.nodepool.tenant', 'unchanged', "kept: not labelled as karpctl's"],
      ['kube.ec2nodeclass.tenant', 'unchanged', "kept: not labelled as karpctl's"],
      ['aws-auth.remove', 'unchanged', 'kept: not in karpctl.io/added-map-roles, so karpctl did not add it'],
      ['iam-policy.tenant-passrole', 'unchanged', 'already gone'],
      [
        'iam-role.tenant',
        'unchanged',
        'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)',
      ],
    ],
  )
})
