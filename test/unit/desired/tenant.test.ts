// A tenant as pure data: its name's refusals, and its EC2NodeClass and NodePool as whole objects
// (every field the API server and Karpenter read, so a changed literal is caught).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import {
  TENANT_KEY,
  tenantNodeClass,
  tenantNodePool,
  tenantTags,
  validateTenantName,
  workloadSnippet,
} from '../../../src/desired/tenant.js'
import { tenantSpec } from '../../helpers/tenant-spec.js'

const refusal = (name: string): InputError => {
  try {
    validateTenantName(name)
  } catch (err) {
    assert.ok(err instanceof InputError, String(err))
    return err
  }
  assert.fail(`accepted ${name}`)
}

test('a bad tenant name and the name "default" are refused with the INVALID_TENANT code', () => {
  // Kills: either code emptied.
  assert.equal(refusal('Acme').code, 'INVALID_TENANT')
  assert.match(refusal('Acme').message, /^"Acme" is not a valid tenant name: lower-case letters/)
  assert.equal(refusal('default').code, 'INVALID_TENANT')
  assert.equal(
    refusal('default').message,
    '"default" is the install\'s own NodePool: choose another tenant name',
  )
})

test("the tenant's EC2NodeClass: karpctl's, labelled with the tenant, on the tenant's role and the install's selectors", () => {
  // Kills: apiVersion, kind, metadata, labels or their values emptied.
  assert.deepEqual(tenantNodeClass(tenantSpec({ tags: { 'cost-center': '42' } })), {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'acme', labels: { 'app.kubernetes.io/managed-by': 'karpctl', [TENANT_KEY]: 'acme' } },
    spec: {
      role: 'KarpenterNodeRole-demo-acme',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      tags: { 'cost-center': '42', 'karpctl.io/cluster': 'demo', [TENANT_KEY]: 'acme' },
    },
  })
})

test("the tenant's NodePool: linux nodes of its choices, tainted and labelled for it, on its EC2NodeClass", () => {
  // Kills: apiVersion, kind, the managed-by label, the os requirement, the category key, nodeClassRef emptied.
  const pool = tenantNodePool(
    tenantSpec({}, { instanceCategories: ['c', 'm'], cpuLimit: 100, memoryLimit: '400Gi', weight: 0 }),
  )
  assert.deepEqual(pool, {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'acme', labels: { 'app.kubernetes.io/managed-by': 'karpctl', [TENANT_KEY]: 'acme' } },
    spec: {
      template: {
        metadata: { labels: { [TENANT_KEY]: 'acme' } },
        spec: {
          taints: [{ key: TENANT_KEY, value: 'acme', effect: 'NoSchedule' }],
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'acme' },
          expireAfter: '720h',
        },
      },
      limits: { cpu: '100', memory: '400Gi' },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
      weight: 0,
    },
  })
})

test('a NodePool limit is written only when given: none gives no limits, a memory limit alone gives only memory', () => {
  // Kills: the cpu limit written when there is none (`cpu: "undefined"`).
  assert.equal('limits' in tenantNodePool(tenantSpec()).spec, false)
  assert.deepEqual(tenantNodePool(tenantSpec({}, { memoryLimit: '1Ti' })).spec.limits, { memory: '1Ti' })
  assert.deepEqual(tenantNodePool(tenantSpec({}, { cpuLimit: 8 })).spec.limits, { cpu: '8' })
})

test('a tenant name is a whole DNS label of 1 to 40 characters', () => {
  // Kills: the label unanchored at the end or its tail made mandatory; the length bound dropped or off by one; every name taken for "default".
  for (const ok of ['a', '7', 'acme', 'beta-2', 'x'.repeat(40)]) assert.equal(validateTenantName(ok), ok)
  for (const bad of ['acme-', 'acme_corp', 'a.b', 'x'.repeat(41)])
    assert.match(refusal(bad).message, /is not a valid tenant name/)
})

test("a tenant's tags: karpctl's ownership marks of the cluster and the tenant's key", () => {
  // Kills: the tags object emptied.
  assert.deepEqual(tenantTags('demo', 'acme'), {
    'karpctl.io/managed-by': 'karpctl',
    'karpctl.io/cluster': 'demo',
    [TENANT_KEY]: 'acme',
  })
})

test("a tenant with its own subnet tag selects the cluster's subnets that carry it", () => {
  // Kills: the tenant's subnet selector emptied.
  const nc = tenantNodeClass(tenantSpec({ subnetTag: { key: 'network/tier', value: 'private-acme' } }))
  assert.deepEqual(nc.spec.subnetSelectorTerms, [
    { tags: { 'karpenter.sh/discovery': 'demo', 'network/tier': 'private-acme' } },
  ])
})

test('instance families and zones become requirements by their well-known keys; no weight, no weight field', () => {
  // Kills: the family or zone key emptied; the weight written when there is none.
  const pool = tenantNodePool(tenantSpec({}, { instanceFamilies: ['m7g'], zones: ['us-west-2a'] }))
  assert.deepEqual(pool.spec.template.spec.requirements.slice(3), [
    { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7g'] },
    { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a'] },
  ])
  assert.equal('weight' in pool.spec, false)
})

test("the workload snippet selects the tenant's nodes and tolerates their taint", () => {
  // Kills: any line of the snippet emptied, or its lines not joined by newlines.
  assert.equal(
    workloadSnippet('acme'),
    [
      'nodeSelector:',
      `  ${TENANT_KEY}: acme`,
      'tolerations:',
      `  - key: ${TENANT_KEY}`,
      '    operator: Equal',
      '    value: "acme"',
      '    effect: NoSchedule',
    ].join('\n'),
  )
  assert.equal(TENANT_KEY, 'karpctl.io/tenant')
})
