// `tenant list`: one row per NodePool labelled as a tenant's, with its class's role, capacity types,
// limits, usage, node count, and the verdict of the findings about its pool, class or role.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CheckResult, Finding } from '../../../src/checks/types.js'
import type { Facts, KubeNode, NodePool } from '../../../src/facts/types.js'
import { tenantChecks, tenantRows, type TenantRow } from '../../../src/tenant/tenant.js'
import { withTenants } from '../../helpers/check-fixtures.js'
import { failed, ok } from '../../helpers/facts.js'
import { meta, result } from '../../helpers/results.js'

const ROLE = 'KarpenterNodeRole-demo-acme'

/** Tenant acme's NodePool `acme-pool` on class `acme`, its pool named apart from its tenant. */
const acme = (edit?: (p: NodePool) => void, mutate?: (f: Facts) => void): Facts =>
  withTenants([['acme']], (f) => {
    if (!f.kube.nodePools.ok) throw new Error('fixture')
    const p = f.kube.nodePools.value.find((x) => x.metadata.name === 'acme')!
    p.metadata.name = 'acme-pool'
    edit?.(p)
    mutate?.(f)
  })

const row = (over: Partial<TenantRow> = {}): TenantRow => ({
  tenant: 'acme',
  nodePool: 'acme-pool',
  role: ROLE,
  capacityTypes: [],
  limits: {},
  usage: {},
  nodes: 0,
  checks: 'pass',
  problems: [],
  ...over,
})

const node = (name: string, pool?: string): KubeNode => ({
  name,
  labels: pool ? { 'karpenter.sh/nodepool': pool } : ({} as Record<string, string>),
  taints: [],
  ready: true,
  karpenter: !!pool,
  kubeletVersion: 'v1.34.1',
})

test("only the tenants' NodePools are rows: the install's `default` is not one", () => {
  // Kills: L254 filter removed, L255 `() => undefined` and its optional chaining (a pool without labels).
  assert.deepEqual(tenantRows(acme(), []), [row()])
})

test("a row: the tenant from its label, the class's role, capacity types, limits, usage, its own nodes", () => {
  // Kills: L257 `&&`, L258 class lookup, L276, L278-L282.
  const f = acme(
    (p) => {
      p.spec.template.spec.requirements = [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      ]
      p.spec.limits = { cpu: '64' }
      p.status = { resources: { cpu: '8' } } as NodePool['status']
    },
    (f) =>
      (f.kube.nodes = ok([
        node('n1', 'acme-pool'),
        node('n2', 'acme-pool'),
        node('n3', 'default'),
        node('n4'),
      ])),
  )
  assert.deepEqual(tenantRows(f, []), [
    row({ capacityTypes: ['spot'], limits: { cpu: '64' }, usage: { cpu: '8' }, nodes: 2 }),
  ])
})

test('requirements without a capacity type: no capacity types', () => {
  // Kills: L278 optional chaining after find, L279.
  const f = acme((p) => {
    p.spec.template.spec.requirements = [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }]
  })
  assert.deepEqual(tenantRows(f, [])[0]!.capacityTypes, [])
})

test('NodePools or nodes that could not be read: no rows, no node counted', () => {
  // Kills: L251, L253.
  assert.deepEqual(
    tenantRows(
      acme(undefined, (f) => (f.kube.nodePools = failed('nodepools'))),
      [],
    ),
    [],
  )
  assert.deepEqual(
    tenantRows(
      acme(undefined, (f) => (f.kube.nodes = failed('nodes'))),
      [],
    ),
    [row()],
  )
})

test('EC2NodeClasses that could not be read: one error naming the read', () => {
  // Kills: L252.
  assert.throws(
    () =>
      tenantRows(
        acme(undefined, (f) => (f.kube.nodeClasses = failed('nodeclasses'))),
        [],
      ),
    {
      message: 'cannot read the EC2NodeClasses of cluster demo: AccessDenied for nodeclasses (AccessDenied)',
    },
  )
})

const finding = (status: Finding['status'], message: string, subject?: string): Finding =>
  subject ? { status, message, subject } : { status, message }
const check = (id: string, ...findings: Finding[]): CheckResult => result(meta(id), findings)

test("problems: the failing findings about the tenant's pool, class (either spelling) or role, by subject or by name in the message", () => {
  // Kills: L259-L267 (each way a finding is the tenant's), L270.
  const results = [
    check(
      'tenant-isolation',
      finding('fail', 'by pool', 'nodepool/acme-pool'),
      finding('fail', 'by class', 'ec2nodeclass/acme'),
      finding('fail', 'by class kind', 'EC2NodeClass/acme'),
      finding('fail', 'by role', `arn:aws:iam::123456789012:role/${ROLE}`),
      finding('fail', 'NodePool acme-pool has no taint'),
      finding('fail', 'NodePool beta has no taint', 'nodepool/beta'),
      finding('fail', 'no subject, about another tenant'),
      finding('warn', 'a warning', 'nodepool/acme-pool'),
      finding('pass', 'a pass', 'nodepool/acme-pool'),
    ),
  ]
  assert.deepEqual(tenantRows(acme(), results), [
    row({
      checks: 'fail',
      problems: ['by pool', 'by class', 'by class kind', 'by role', 'NodePool acme-pool has no taint'],
    }),
  ])
})

test("a class named in a finding's message is the tenant's only as a whole word", () => {
  // Kills: L267:92 (the name after the last `/`, not the last character).
  const results = [check('nodeclass-ready', finding('fail', 'EC2NodeClass acme is not Ready'))]
  assert.deepEqual(tenantRows(acme(), results)[0]!.problems, ['EC2NodeClass acme is not Ready'])
})

test('a finding without a subject is not about a tenant whose role name is a plain word', () => {
  // Kills: L267:42 (a missing subject read as some text).
  const f = acme(undefined, (f) => {
    if (f.kube.nodeClasses.ok)
      f.kube.nodeClasses.value.find((c) => c.metadata.name === 'acme')!.spec.role = 'here'
  })
  const results = [check('node-role', finding('fail', 'no subject: about the install'))]
  assert.deepEqual(tenantRows(f, results), [row({ role: 'here' })])
})

test("a pool whose class is gone: no role, and no finding is the tenant's through the missing class", () => {
  // Kills: L261/L262/L263/L276 optional chaining, L263 `&&` and '' (which would make every finding its own).
  const f = acme((p) => (p.spec.template.spec.nodeClassRef.name = 'gone'))
  const results = [check('node-role', finding('fail', 'about something else', 'role/other'))]
  assert.deepEqual(tenantRows(f, results), [row({ role: undefined })])
})

test("checks: unknown when a finding of the tenant's is unknown, though its check failed on another tenant", () => {
  // Kills: L272:9 `false`, L272:29 `false`/`!==`/'' and the whole `||` reduced to its right side.
  const results = [
    check(
      'tenant-isolation',
      finding('unknown', 'cannot tell', 'nodepool/acme-pool'),
      finding('fail', 'beta', 'nodepool/beta'),
    ),
  ]
  assert.deepEqual(tenantRows(acme(), results), [row({ checks: 'unknown' })])
})

test('checks: unknown when some check could not judge at all, though none of its findings is the tenant', () => {
  // Kills: L272 `&&`, L272:56 every, L272:76 `false`/`!==`/''.
  const results = [
    check('node-role', finding('pass', 'fine', 'role/other')),
    check('discovery-tags', finding('unknown', 'cannot read subnets', 'subnet-0a')),
  ]
  assert.deepEqual(tenantRows(acme(), results), [row({ checks: 'unknown' })])
})

test("checks: pass when the tenant's findings pass and every check judged", () => {
  // Kills: L272 `true` (each), L272:9 every (no finding of the tenant's), L283 strings.
  assert.deepEqual(tenantRows(acme(), [check('node-role', finding('warn', 'old', 'nodepool/acme-pool'))]), [
    row({ checks: 'pass' }),
  ])
  assert.deepEqual(tenantRows(acme(), [check('node-role', finding('pass', 'fine', 'role/other'))]), [row()])
})

test('tenantChecks runs exactly the checks that judge tenants', () => {
  // Kills: L223-L228 (the list), L233 (the filter).
  assert.deepEqual(
    tenantChecks(acme())
      .map((r) => r.meta.id)
      .sort(),
    ['discovery-tags', 'node-role', 'nodeclass-ready', 'passrole-node-role', 'tenant-isolation'],
  )
})
