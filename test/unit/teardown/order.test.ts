// Teardown's safe order, as the plan's dependencies say it: Karpenter's release goes only after every
// NodePool's capacity (the default and each tenant's) is gone, so Karpenter still runs to terminate its
// instances; the controller role only after the release and after every tenant's PassRole grant on it;
// the tags and the 8443 rule karpctl recorded only after the capacity that needed them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RunContext } from '../../../src/context/run-context.js'
import type { Facts } from '../../../src/facts/types.js'
import { orderResources } from '../../../src/plan/plan.js'
import type { Resource } from '../../../src/plan/types.js'
import { TENANT_KEY } from '../../../src/desired/tenant.js'
import { teardownResources } from '../../../src/teardown/teardown.js'
import { CLUSTER, healthyFacts, healthyNodePool, REGION } from '../../helpers/facts.js'

interface ListRolesPage {
  Roles?: { RoleName?: string }[]
  IsTruncated?: boolean
  Marker?: string
}

/** The RunContext teardownResources reads: the options, the Helm secrets, ListRoles. */
function fakeContext(roleNames: string[]): RunContext {
  return {
    options: { clusterName: CLUSTER, region: REGION, karpctlVersion: '0.0.0-test' },
    kube: { get: async () => null },
    aws: {
      all: async (
        _s: string,
        op: string,
        _i: Record<string, unknown>,
        _t: string,
        page: (o: ListRolesPage) => { items?: unknown[] },
      ) => {
        assert.equal(op, 'ListRoles')
        return page({ Roles: roleNames.map((RoleName) => ({ RoleName })), IsTruncated: false }).items ?? []
      },
    },
  } as unknown as RunContext
}

/** Tenants found both ways: `acme` and `beta` by their node roles, `gamma` by its NodePool only. */
function facts(controllerRoleName?: string): Facts {
  return healthyFacts((f) => {
    const gamma = healthyNodePool()
    gamma.metadata = { name: 'gamma', labels: { [TENANT_KEY]: 'gamma' } }
    f.kube.nodePools = { ok: true, value: [healthyNodePool(), gamma] }
    if (controllerRoleName) f.iam.controllerRoleName = controllerRoleName
  })
}

const TENANTS = ['acme', 'beta', 'gamma']
const ROLES = [`KarpenterNodeRole-${CLUSTER}-acme`, `KarpenterNodeRole-${CLUSTER}-beta`, 'unrelated-role']

async function plan(controllerRoleName?: string): Promise<Resource[]> {
  return teardownResources(fakeContext(ROLES), facts(controllerRoleName), {
    keepCrds: false,
    sweep: false,
    timeoutMs: 1000,
  })
}

/** Every address `address` waits for, directly or through another step. */
function after(resources: Resource[], address: string): Set<string> {
  const byAddress = new Map(resources.map((r) => [r.address, r]))
  const seen = new Set<string>()
  const visit = (a: string) => {
    const r = byAddress.get(a)
    assert.ok(r, `no step ${a}`)
    for (const d of r.dependsOn)
      if (!seen.has(d)) {
        seen.add(d)
        visit(d)
      }
  }
  visit(address)
  return seen
}

function assertAfter(resources: Resource[], address: string, before: string[]) {
  const deps = after(resources, address)
  const missing = before.filter((b) => !deps.has(b))
  assert.deepEqual(missing, [], `${address} must wait for ${missing.join(', ')}`)
  // The executor's order says the same: each of them comes first.
  const order = orderResources(resources).map((r) => r.address)
  for (const b of before) assert.ok(order.indexOf(b) < order.indexOf(address), `${b} before ${address}`)
}

const capacity = [
  'kube.nodepool.default',
  'kube.ec2nodeclass.default',
  ...TENANTS.flatMap((t) => [`tenant.${t}.kube.nodepool.tenant`, `tenant.${t}.kube.ec2nodeclass.tenant`]),
]
const grants = TENANTS.map((t) => `tenant.${t}.iam-policy.tenant-passrole`)

test("teardown plans every tenant found by its NodePool or by its node role, and the plan's order is valid", async () => {
  const rs = await plan()
  for (const t of TENANTS)
    assert.ok(
      rs.some((r) => r.address === `tenant.${t}.iam-role.tenant`),
      t,
    )
  assert.ok(!rs.some((r) => r.address.startsWith('tenant.unrelated')))
  assert.doesNotThrow(() => orderResources(rs))
})

test("the Karpenter release goes only after the default and every tenant's NodePool and EC2NodeClass", async () => {
  // Kills: `...tenantGone` dropped from capacityGone; the default EC2NodeClass dropped from it.
  assertAfter(await plan(), 'helm.karpenter', capacity)
})

test('the controller role goes only after the release and every tenant PassRole grant on it', async () => {
  // Kills: `...tenantPass` dropped from controllerDeps; the found role given only afterController.
  assertAfter(await plan(), 'iam-role.controller', ['helm.karpenter', ...grants, ...capacity])
  // The role the install runs with (an eksctl name) holds the grants: the same order for it.
  const found = await plan('demo-karpenter')
  assertAfter(found, 'iam-role.controller-found', ['helm.karpenter', ...grants, ...capacity])
})

test('recorded tags and the recorded 8443 rule are given back only after the capacity that used them', async () => {
  // Kills: a restore with no dependency, or with only the tenants' capacity (not the release's).
  const rs = await plan()
  assertAfter(rs, 'ec2-tags.restore', ['helm.karpenter', ...capacity])
  assertAfter(rs, 'ec2-ingress.restore', ['helm.karpenter', ...capacity])
})

test('the CRDs, the queue and rules, the node role: after the release', async () => {
  const rs = await plan()
  for (const a of ['helm.karpenter-crd', 'sqs-queue.interruption', 'iam-role.node'])
    assertAfter(rs, a, ['helm.karpenter', 'kube.nodepool.default', 'kube.ec2nodeclass.default'])
  for (const r of rs.filter((x) => x.address.startsWith('events-rule.')))
    assertAfter(rs, r.address, ['helm.karpenter'])
})
