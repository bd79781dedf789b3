// installOf: the install a tenant builds on, read from doctor's facts. A failed read is one error naming
// the read (never "not installed"); the base NodeClass is `default` when it is the install's, else the
// first that is not a tenant's; tenant nodes join through aws-auth when the install's nodes do.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEMO_INSTALL } from '../../helpers/tenant-spec.js'
import { EnvironmentError } from '../../../src/errors.js'
import type { EC2NodeClass, Facts } from '../../../src/facts/types.js'
import { installOf } from '../../../src/tenant/tenant.js'
import { tenantClass } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, NODE_ROLE_ARN, ok, withoutHelm } from '../../helpers/facts.js'

const throwsEnv = (f: Facts, message: string, code: string) =>
  assert.throws(
    () => installOf(f),
    (e: unknown) => e instanceof EnvironmentError && e.message === message && e.code === code,
  )

const FIX = 'run `karpctl install` first (or `karpctl doctor` to see what is wrong)'

test('the healthy install: its cluster, account, controller role, aws-auth access and the default class selectors', () => {
  // Kills: L85 'aws-auth', and pins every field.
  assert.deepEqual(installOf(healthyFacts()), DEMO_INSTALL)
})

test("a Helm release that could not be read is an error naming the read, not 'not installed'", () => {
  // Kills: L45 `if (true)`, L47/L48 the message and code, L55 what.
  throwsEnv(
    healthyFacts((f) => (f.kube.release = failed('helm release'))),
    'cannot read the Karpenter Helm release of cluster demo: AccessDenied for helm release (AccessDenied)',
    'READ_FAILED',
  )
})

test('no Helm release and no controller, or no controller role, is NOT_INSTALLED with the way out', () => {
  // Kills: L58, L60, L62, L63.
  throwsEnv(
    healthyFacts((f) => ((f.kube.release = ok(null)), (f.kube.rendered = ok(null)))),
    `no Karpenter Helm release or controller Deployment found in cluster demo: ${FIX}`,
    'NOT_INSTALLED',
  )
  throwsEnv(
    healthyFacts((f) => (f.iam.controllerRoleName = null)),
    `the Karpenter controller's IAM role could not be found (no IRSA annotation, no Pod Identity association): ${FIX}`,
    'NOT_INSTALLED',
  )
})

test('a controller Argo CD applied (no Helm release) is an install tenants build on', () => {
  const install = installOf(healthyFacts(withoutHelm()))
  assert.equal(install.controllerRoleName, 'KarpenterControllerRole-demo')
})

test('EC2NodeClasses that could not be read are an error naming the read', () => {
  // Kills: L65 what.
  throwsEnv(
    healthyFacts((f) => (f.kube.nodeClasses = failed('nodeclasses'))),
    'cannot read the EC2NodeClasses of cluster demo: AccessDenied for nodeclasses (AccessDenied)',
    'READ_FAILED',
  )
})

const classed = (name: string, discovery: string, labels?: Record<string, string>): EC2NodeClass => {
  const c = tenantClass(name, 'KarpenterNodeRole-demo')
  c.spec.subnetSelectorTerms = [{ tags: { 'karpenter.sh/discovery': discovery } }]
  if (labels) c.metadata.labels = labels
  return c
}
const baseOf = (...classes: EC2NodeClass[]) =>
  installOf(healthyFacts((f) => (f.kube.nodeClasses = ok(classes)))).base.subnetSelectorTerms

test("the base class is `default` when it is not a tenant's, even after others", () => {
  // Kills: L67 find (every mutant of its predicate), L67:58.
  assert.deepEqual(baseOf(classed('gpu', 'gpu'), classed('default', 'main')), [
    { tags: { 'karpenter.sh/discovery': 'main' } },
  ])
})

test("a tenant's class named `default` is skipped: the first class that is no tenant's is the base", () => {
  // Kills: L68 (its predicate, its negation, its optional chaining on a class without labels).
  assert.deepEqual(
    baseOf(classed('default', 'tenant', { 'karpctl.io/tenant': 'default' }), classed('gpu', 'gpu')),
    [{ tags: { 'karpenter.sh/discovery': 'gpu' } }],
  )
})

test("only tenants' classes: no base, NOT_INSTALLED", () => {
  // Kills: L69, L71, L72.
  throwsEnv(
    healthyFacts(
      (f) => (f.kube.nodeClasses = ok([classed('acme', 'demo', { 'karpctl.io/tenant': 'acme' })])),
    ),
    `no EC2NodeClass to take subnet and security-group selectors from: ${FIX}`,
    'NOT_INSTALLED',
  )
})

test('a base class without AMI selectors gets al2023@latest', () => {
  // Kills: L89.
  const f = healthyFacts((f) => {
    if (f.kube.nodeClasses.ok) delete f.kube.nodeClasses.value[0]!.spec.amiSelectorTerms
  })
  assert.deepEqual(installOf(f).base.amiSelectorTerms, [{ alias: 'al2023@latest' }])
})

test('a base class with its own AMI selectors keeps them', () => {
  // Kills: L89 `??` -> `&&`.
  const f = healthyFacts((f) => {
    if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.spec.amiSelectorTerms = [{ id: 'ami-0123' }]
  })
  assert.deepEqual(installOf(f).base.amiSelectorTerms, [{ id: 'ami-0123' }])
})

test('no account id in the facts is an empty one', () => {
  // Kills: L82.
  assert.equal(installOf(healthyFacts((f) => (f.meta.accountId = undefined))).accountId, '')
})

const mapping = (rolearn: string) => ({ rolearn, groups: ['system:bootstrappers', 'system:nodes'] })
/** The access a tenant gets on a cluster in `mode` whose aws-auth reads `awsAuth`. */
const accessOf = (mode: string | undefined, awsAuth: Facts['kube']['awsAuth'], mutate?: (f: Facts) => void) =>
  installOf(
    healthyFacts((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = mode
      f.kube.awsAuth = awsAuth
      mutate?.(f)
    }),
  ).access

test("access: aws-auth when aws-auth maps a NodeClass's role (even in API_AND_CONFIG_MAP), or the cluster has only aws-auth", () => {
  // Kills: L74:29, L75:44, L78 `&&`, L78:43 startsWith, L79 `false` and `!==`.
  assert.equal(accessOf('API_AND_CONFIG_MAP', ok([mapping(NODE_ROLE_ARN)])), 'aws-auth')
  assert.equal(accessOf('CONFIG_MAP', ok([])), 'aws-auth')
})

test('access: one mapped role among others is enough, whichever class it is the role of', () => {
  // Kills: L78 every (over the mappings, and over the roles).
  const other = mapping('arn:aws:iam::123456789012:role/eksctl-demo-nodegroup-NodeInstanceRole')
  const second = (f: Facts) => {
    if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value.push(tenantClass('gpu', 'GpuNodeRole'))
  }
  assert.equal(accessOf('API_AND_CONFIG_MAP', ok([other, mapping(NODE_ROLE_ARN)]), second), 'aws-auth')
})

test('access: an access entry when aws-auth maps no NodeClass role, is absent, or could not be read', () => {
  // Kills: L78 `true`, L78:18, L78:36, L78:62, L75:72, L75:78.
  const other = mapping('arn:aws:iam::123456789012:role/KarpenterNodeRole-demo-old')
  assert.equal(accessOf('API_AND_CONFIG_MAP', ok([other])), 'access-entry')
  assert.equal(accessOf('API', ok(null)), 'access-entry')
  assert.equal(accessOf('API', failed('aws-auth')), 'access-entry')
})

test('access: a class without a role never matches a mapping', () => {
  // Kills: L74 (the filter of absent roles: `/undefined` would match a role named "undefined").
  const noRole = (f: Facts) => {
    if (f.kube.nodeClasses.ok) delete (f.kube.nodeClasses.value[0]!.spec as { role?: string }).role
  }
  assert.equal(
    accessOf('API', ok([mapping('arn:aws:iam::123456789012:role/undefined')]), noRole),
    'access-entry',
  )
})

test('access: a cluster that could not be described counts as allowing access entries', () => {
  // Kills: L79 optional chaining on the cluster.
  assert.equal(
    accessOf('API', ok([]), (f) => (f.eks.cluster = failed('cluster'))),
    'access-entry',
  )
})
