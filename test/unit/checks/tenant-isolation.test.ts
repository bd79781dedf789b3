import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tenantIsolation } from '../../../src/checks/tenant-isolation.js'
import { runCheck } from '../../../src/checks/run.js'
import { withTenants } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

test('isolated tenants pass: taint, label and their own roles', () => {
  const r = runCheck(tenantIsolation, withTenants([['acme'], ['globex']]))
  assert.equal(r.status, 'pass')
  assert.ok(
    r.findings.some(
      (f) =>
        f.message ===
        'tenant acme: NodePool acme taints its nodes karpctl.io/tenant=acme:NoSchedule and labels them karpctl.io/tenant=acme',
    ),
  )
  assert.ok(
    r.findings.some((f) => f.message === 'tenant globex has its own node role KarpenterNodeRole-demo-globex'),
  )
})

test('a tenant NodePool without a taint fails; the patch keeps its other taints', () => {
  const f = withTenants([
    ['acme', { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] }],
  ])
  const r = runCheck(tenantIsolation, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings.find((x) => x.status === 'fail')!
  assert.equal(finding.subject, 'nodepool/acme')
  assert.match(finding.message, /no NoSchedule taint keeps other workloads off its nodes/)
  const patch = JSON.parse(/-p '(.*)'$/.exec(finding.fix?.commands?.[0] ?? '')![1]!)
  assert.deepEqual(patch.spec.template.spec.taints, [
    { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
    { key: 'karpctl.io/tenant', value: 'acme', effect: 'NoSchedule' },
  ])
  assert.match(finding.fix?.snippet?.text ?? '', /effect: NoSchedule/)
  assert.doesNotMatch(JSON.stringify(finding.fix), /tenant add/)
})

test('a tenant NodePool whose nodes are not labelled fails', () => {
  const r = runCheck(tenantIsolation, withTenants([['acme', { labels: {} }]]))
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]?.message ?? '', /carry no karpctl\.io\/tenant=acme label/)
  assert.deepEqual(r.findings[0]?.evidence?.labels, {})
})

test('a taint naming another tenant fails', () => {
  const r = runCheck(
    tenantIsolation,
    withTenants([
      ['acme', { taints: [{ key: 'karpctl.io/tenant', value: 'globex', effect: 'NoSchedule' }] }],
    ]),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]?.message ?? '',
    /tenant taint karpctl\.io\/tenant=globex:NoSchedule does not name tenant acme/,
  )
})

test('a NodePool found by its tenant taint alone must still label its nodes', () => {
  const f = withTenants([
    [
      'acme',
      { poolLabel: false, labels: {}, taints: [{ key: 'tenant', value: 'acme', effect: 'NoSchedule' }] },
    ],
  ])
  const r = runCheck(tenantIsolation, f)
  assert.equal(r.status, 'fail')
  assert.equal(r.findings[0]?.subject, 'nodepool/acme')
})

test('two tenants sharing a node role fail, naming the role and both tenants', () => {
  const f = withTenants([
    ['acme', { role: 'KarpenterNodeRole-demo-shared' }],
    ['globex', { role: 'KarpenterNodeRole-demo-shared' }],
  ])
  const r = runCheck(tenantIsolation, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings.find((x) => x.subject === 'KarpenterNodeRole-demo-shared')!
  assert.match(finding.message, /tenants acme, globex share node role KarpenterNodeRole-demo-shared/)
  const commands = finding.fix?.commands ?? []
  assert.ok(
    commands.some((c) => c.startsWith('aws iam create-role --role-name KarpenterNodeRole-demo-globex ')),
  )
  // The fixture cluster uses aws-auth (CONFIG_MAP): access goes through eksctl's identity mapping.
  assert.ok(
    commands.some(
      (c) =>
        c.startsWith('eksctl create iamidentitymapping --cluster demo') &&
        c.includes('role/KarpenterNodeRole-demo-globex'),
    ),
  )
  assert.ok(
    commands.includes(
      `kubectl patch ec2nodeclass globex --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo-globex"}}'`,
    ),
  )
})

test('two tenants on one EC2NodeClass fail, and the fix says to split the class', () => {
  const f = withTenants(
    [
      ['acme', { nodeClass: 'tenants' }],
      ['globex', { nodeClass: 'tenants' }],
    ],
    (f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = 'API'
    },
  )
  const r = runCheck(tenantIsolation, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings.find((x) => x.subject === 'KarpenterNodeRole-demo-tenants')!
  assert.match(finding.fix?.summary ?? '', /EC2NodeClass tenants serves several tenants/)
  assert.ok(
    finding.fix?.commands?.some(
      (c) =>
        c.startsWith('aws eks create-access-entry --cluster-name demo') && c.includes('--type EC2_LINUX'),
    ),
  )
  assert.ok(!finding.fix?.commands?.some((c) => c.startsWith('kubectl patch ec2nodeclass')))
})

test('tenants sharing a role through instance profiles are caught', () => {
  const f = withTenants([['acme'], ['globex']], (f) => {
    if (!f.kube.nodeClasses.ok) return
    for (const nc of f.kube.nodeClasses.value.filter((c) => c.metadata.name !== 'default')) {
      delete nc.spec.role
      nc.spec.instanceProfile = `profile-${nc.metadata.name}`
      f.iam.instanceProfiles[nc.spec.instanceProfile] = ok({
        name: nc.spec.instanceProfile,
        arn: `arn:aws:iam::123456789012:instance-profile/${nc.spec.instanceProfile}`,
        roles: ['arn:aws:iam::123456789012:role/TenantNodes'],
      })
    }
  })
  const r = runCheck(tenantIsolation, f)
  assert.equal(r.status, 'fail')
  assert.ok(
    r.findings.some((x) => x.subject === 'TenantNodes' && /tenants acme, globex share/.test(x.message)),
  )
})

test("a tenant sharing the default pool's role warns", () => {
  const r = runCheck(tenantIsolation, withTenants([['acme', { nodeClass: 'default' }]]))
  assert.equal(r.status, 'warn')
  assert.match(
    r.findings[1]?.message ?? '',
    /tenant acme shares node role KarpenterNodeRole-demo with non-tenant NodePool default/,
  )
})

test('a failed NodePool read is unknown', () => {
  const r = runCheck(
    tenantIsolation,
    withTenants([['acme']], (f) => (f.kube.nodePools = failed('kube:list nodepools'))),
  )
  assert.equal(r.status, 'unknown')
})

test('no tenant NodePools: skipped, saying why', () => {
  const r = runCheck(tenantIsolation, healthyFacts())
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]?.message ?? '', /no tenant NodePools/)
})
