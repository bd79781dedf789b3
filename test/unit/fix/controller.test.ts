// The controller's repairs, built from hand-made findings: value types (Helm edits, the rest manual),
// the STS annotation (through Helm, or on the live ServiceAccount when Helm does not render it), and
// the Pod Identity association (to the controller role, then a restart of its Deployment).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { podIdentity, stsAnnotation, valueTypes } from '../../../src/fix/controller.js'
import {
  ACCOUNT,
  CLUSTER,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  failed,
  healthyFacts,
  ok,
  REGION,
} from '../../helpers/facts.js'

const STS = 'eks.amazonaws.com/sts-regional-endpoints'
const f = (code: string, evidence?: Record<string, unknown>): Finding => ({
  status: 'fail',
  code,
  message: code,
  ...(evidence ? { evidence } : {}),
})
/** The Deployment and its namespace named apart from the release's, to tell which one a restart names. */
const moved = (x: Facts) => {
  if (!x.kube.deployment.ok || !x.kube.deployment.value) throw new Error('no deployment')
  x.kube.deployment.value.metadata.name = 'karpenter-ctl'
}

test('valueTypes: a value in the user values is a Helm edit; one from a chart default stays manual', () => {
  const facts = healthyFacts((x) => {
    if (x.kube.release.ok && x.kube.release.value) x.kube.release.value.values.tolerations = [{ value: 1 }]
  })
  const inValues = f('value-type', { path: 'tolerations[0].value' })
  const chartDefault = f('value-type', { path: 'podAnnotations.x' })
  const built = valueTypes(facts, [inValues, chartDefault], 'toleration-value-types', {})
  assert.deepEqual(built.resources, [])
  assert.deepEqual(built.manual, [chartDefault])
  assert.deepEqual(
    built.values?.map((e) => [e.path, e.value, e.finding]),
    [[['tolerations', 0, 'value'], '1', inValues]],
  )
  // No release read: no edits, all manual.
  const noRelease = healthyFacts((x) => {
    x.kube.release = failed('the release')
  })
  assert.deepEqual(valueTypes(noRelease, [inValues], 'c', {}), {
    resources: [],
    manual: [inValues],
    values: [],
  })
})

/** The live ServiceAccount lacks the annotation and Helm does not render one. */
const liveOnly = (mutate?: (x: Facts) => void) =>
  healthyFacts((x) => {
    if (x.kube.release.ok && x.kube.release.value) delete x.kube.release.value.renderedServiceAccount
    moved(x)
    mutate?.(x)
  })

test('stsAnnotation: missing on a ServiceAccount Helm does not render: annotated live, the controller restarted', () => {
  const missing = f('missing-on-live')
  const other = f('something-else')
  const built = stsAnnotation(liveOnly(), [missing, other], 'sts-regional-annotation', {})
  assert.deepEqual(built.manual, [other])
  assert.deepEqual(built.values, [])
  assert.equal(built.resources.length, 1)
  const r = built.resources[0]!
  assert.deepEqual(
    [r.address, r.name, r.group, r.desired],
    [
      `kube.sa-annotation.${STS}`,
      `kube-system/karpenter ${STS}`,
      'fix: sts-regional-annotation',
      { [STS]: 'true' },
    ],
  )
  const v = r.verdict({ metadata: { name: 'karpenter', annotations: {} } } as never)
  assert.deepEqual(v.changes, [
    { field: STS, from: undefined, to: 'true' },
    { field: 'restart', to: 'deployment kube-system/karpenter-ctl', event: true },
  ])
})

test("stsAnnotation: a ServiceAccount with no namespace is kube-system's", () => {
  const facts = liveOnly((x) => {
    x.kube.serviceAccount = ok({ metadata: { name: 'sa', annotations: {} } })
  })
  const [r] = stsAnnotation(facts, [f('missing-on-live')], 'c', {}).resources
  assert.equal(r!.name, `kube-system/sa ${STS}`)
})

test('stsAnnotation: rendered by Helm, no ServiceAccount read, or nothing missing live: the value-type result alone', () => {
  const missing = f('missing-on-live')
  const expected = { resources: [], manual: [missing], values: [] }
  // Helm renders it (the release's own ServiceAccount): the change belongs in the values.
  assert.deepEqual(stsAnnotation(healthyFacts(), [missing], 'c', {}), expected)
  const noSa = liveOnly((x) => {
    x.kube.serviceAccount = failed('the ServiceAccount')
  })
  assert.deepEqual(stsAnnotation(noSa, [missing], 'c', {}), expected)
  const other = f('boolean-in-values')
  assert.deepEqual(stsAnnotation(liveOnly(), [other], 'c', {}), {
    resources: [],
    manual: [other],
    values: [],
  })
})

const podIdentityFacts = (mutate?: (x: Facts) => void) =>
  healthyFacts((x) => {
    x.iam.controllerIdentity = 'pod-identity'
    moved(x)
    mutate?.(x)
  })

test('podIdentity: one association of the live ServiceAccount to the controller role, then a restart', () => {
  const missing = f('no-association', { roleArn: CONTROLLER_ROLE_ARN })
  const other = f('wrong-role')
  const built = podIdentity(podIdentityFacts(), [missing, other], 'pod-identity', {})
  assert.deepEqual(built.manual, [other])
  assert.equal(built.resources.length, 1)
  const r = built.resources[0]!
  assert.deepEqual(
    [r.address, r.group, r.dependsOn, r.desired],
    [
      'eks-pod-identity.controller',
      'fix: pod-identity',
      [],
      {
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        roleArn: CONTROLLER_ROLE_ARN,
        tags: { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': CLUSTER },
      },
    ],
  )
  assert.deepEqual(
    r.permissions.map((p) => p.resource),
    [
      `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${CLUSTER}`,
      `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${CLUSTER}`,
      CONTROLLER_ROLE_ARN,
    ],
  )
  assert.deepEqual(r.verdict(null).changes, [
    { field: 'role', to: CONTROLLER_ROLE_ARN },
    { field: 'restart', to: 'deployment kube-system/karpenter-ctl', event: true },
  ])
  // Another tool's association to another role: not taken over (adopt is off), karpctl's ownership tags judge it.
  const foreign = r.verdict({ associationId: 'a', roleArn: 'arn:aws:iam::1:role/x', tags: {} } as never)
  assert.match(foreign.blocked ?? '', /karpctl did not make it/)
  const mine = r.verdict({
    associationId: 'a',
    roleArn: 'arn:aws:iam::1:role/x',
    tags: { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': CLUSTER },
  } as never)
  assert.equal(mine.blocked, undefined)
})

test("podIdentity: the role the finding proved (a near-miss association's), though no controller role was discovered (issue 35, item 4)", () => {
  const nearRole = `arn:aws:iam::${ACCOUNT}:role/Karpenter-demo-20250101000000000000000001`
  const facts = podIdentityFacts((x) => {
    x.iam.controllerRoleName = null
  })
  const built = podIdentity(facts, [f('no-association', { roleArn: nearRole })], 'pod-identity', {})
  assert.deepEqual(built.manual, [])
  assert.equal((built.resources[0]!.desired as { roleArn: string }).roleArn, nearRole)
})

test('podIdentity: no role proven by the finding (no guess), or no release: all manual', () => {
  const missing = f('no-association')
  const none = { resources: [], manual: [missing] }
  const cases: ((x: Facts) => void)[] = [
    (x) => {
      x.iam.controllerRoleName = null
    },
    (x) => {
      x.iam.roles[CONTROLLER_ROLE] = failed('the role')
    },
    (x) => {
      x.iam.roles[CONTROLLER_ROLE] = ok(null)
    },
    (x) => {
      delete x.iam.roles[CONTROLLER_ROLE]
    },
    (x) => {
      x.kube.release = failed('the release')
    },
  ]
  for (const c of cases) assert.deepEqual(podIdentity(podIdentityFacts(c), [missing], 'c', {}), none)
  const other = f('wrong-role')
  assert.deepEqual(podIdentity(podIdentityFacts(), [other], 'c', {}), { resources: [], manual: [other] })
})

test('stsAnnotation without a release read: the live ServiceAccount is annotated (no Helm renders it)', () => {
  const facts = liveOnly((x) => {
    x.kube.release = failed('the release')
  })
  const missing = f('missing-on-live')
  const built = stsAnnotation(facts, [missing], 'c', {})
  assert.deepEqual(
    built.resources.map((r) => r.address),
    [`kube.sa-annotation.${STS}`],
  )
  assert.deepEqual(built.manual, [])
})
