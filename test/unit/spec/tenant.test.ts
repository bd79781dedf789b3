// A tenant as pure data: its name's refusals, and its EC2NodeClass and NodePool as whole objects
// (every field the API server and Karpenter read, so a changed literal is caught).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import { TENANT_KEY, tenantNodeClass, tenantNodePool, validateTenantName } from '../../../src/spec/tenant.js'
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
