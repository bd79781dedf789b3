// karpctl upgrade's pure parts: each precondition's blocked line, the controller role's gap to the
// target template, the values carried between the 1.0.14 and 1.14.1 charts, and the plan's order.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parse } from 'yaml'
import type { Facts, PolicyDocument } from '../../../src/facts/types.js'
import { orderResources } from '../../../src/plan/plan.js'
import { referencePolicies } from '../../../src/spec/reference-policy.js'
import { controllerIamStep, obsoleteActions, upgradePolicyName } from '../../../src/upgrade/iam.js'
import {
  kubernetesGate,
  releaseGate,
  storageGate,
  versionGate,
  type Judgement,
} from '../../../src/upgrade/preconditions.js'
import { upgradePlan } from '../../../src/upgrade/upgrade.js'
import { migrateValues, VALUE_REMOVALS } from '../../../src/upgrade/values.js'
import { controllerRole, setChartVersion } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE_ARN, healthyFacts, ok } from '../../helpers/facts.js'
import { gettingStarted } from '../../helpers/owners.js'

const FIXTURES = '/work/shared/fixtures/karpenter'
const blockedOf = (j: Judgement) => (j.ok ? assert.fail(`expected blocked, got ${j.note}`) : j.blocked)

test('version: both 1.x, target not older; each refusal says the way out', () => {
  assert.equal(versionGate('1.0.14', '1.14.1').ok, true)
  assert.deepEqual(versionGate('1.14.1', '1.14.1'), { ok: true, note: 'already 1.14.1' })
  assert.match(blockedOf(versionGate('0.37.0', '1.14.1')), /not 1\.x: .*migrated to v1 in stages/)
  assert.match(blockedOf(versionGate('1.14.1', '1.5.0')), /newer than --to 1\.5\.0: .*helm rollback/)
  assert.match(blockedOf(versionGate('1.0.14', '2.0.0')), /not a Karpenter 1\.x version/)
  assert.match(blockedOf(versionGate('latest', '1.14.1')), /karpctl doctor/)
})

test('storage: leaving 1.0.x needs every CRD stored as v1 only, and says how to check for v1beta1 writers', () => {
  const v1 = { 'nodepools.karpenter.sh': ['v1'], 'nodeclaims.karpenter.sh': ['v1'] }
  const pass = storageGate('1.0.14', '1.14.1', v1)
  assert.ok(pass.ok)
  assert.match(pass.note, /nothing still writes v1beta1.*apiserver_request_total.*version="v1beta1"/)
  const b = blockedOf(
    storageGate('1.0.14', '1.1.0', { ...v1, 'ec2nodeclasses.karpenter.k8s.aws': ['v1beta1', 'v1'] }),
  )
  assert.match(b, /stored as v1beta1 in ec2nodeclasses\.karpenter\.k8s\.aws \(v1beta1, v1\)/)
  assert.match(b, /storedVersions":\["v1"\]/)
  // Within 1.0.x, or from 1.1 on, v1beta1 storage is not the upgrade's concern.
  assert.ok(storageGate('1.0.10', '1.0.14', { x: ['v1beta1'] }).ok)
  assert.ok(storageGate('1.5.0', '1.14.1', { x: ['v1beta1'] }).ok)
})

test("kubernetes: the target's supported range from doctor's table", () => {
  assert.ok(kubernetesGate('1.14.1', '1.32').ok)
  assert.match(
    blockedOf(kubernetesGate('1.14.1', '1.24')),
    /Kubernetes 1\.24 is older .*1\.25 – 1\.34.*update-cluster-version/,
  )
  assert.match(blockedOf(kubernetesGate('1.1.0', '1.33')), /Kubernetes 1\.33 is newer .*choose a newer --to/)
  assert.ok(kubernetesGate('1.14.1', undefined).ok)
})

test("release: deployed passes; failed sends to doctor --fix unless it is this upgrade stopped; pending is the release step's", () => {
  const r = { name: 'karpenter', namespace: 'kube-system', chartVersion: '1.0.14' }
  assert.ok(releaseGate({ ...r, status: 'deployed' }, '1.14.1').ok)
  assert.match(
    blockedOf(releaseGate({ ...r, status: 'failed' }, '1.14.1')),
    /kube-system\/karpenter is failed .*run `karpctl doctor --fix` first/,
  )
  assert.ok(releaseGate({ ...r, status: 'failed', chartVersion: '1.14.1' }, '1.14.1').ok)
  assert.ok(releaseGate({ ...r, status: 'pending-upgrade' }, '1.14.1').ok)
  assert.ok(!releaseGate({ ...r, status: 'uninstalling' }, '1.14.1').ok)
})

test('values: the two charts differ by the webhook block alone, which 1.1 removed (pinned from the fixtures)', () => {
  const leaves = (o: unknown, p: string[] = []): string[] =>
    o && typeof o === 'object' && !Array.isArray(o) && Object.keys(o).length
      ? Object.entries(o).flatMap(([k, v]) => leaves(v, [...p, k]))
      : [p.join('.')]
  const keys = (v: string, chart: string) =>
    new Set(leaves(parse(readFileSync(`${FIXTURES}/v${v}/charts/${chart}/values.yaml`, 'utf8'))))
  for (const chart of ['karpenter', 'karpenter-crd'] as const) {
    const [old, now] = [keys('1.0.14', chart), keys('1.14.1', chart)]
    const gone = [...old].filter((k) => !now.has(k)).map((k) => k.split('.')[0])
    assert.deepEqual([...new Set(gone)], ['webhook'], chart)
    assert.deepEqual(
      VALUE_REMOVALS.filter((r) => r.chart === chart).map((r) => r.path.join('.')),
      ['webhook'],
    )
  }
})

test("values: the user's own kept, webhook removed crossing 1.1, every annotation a string; the input untouched", () => {
  const values = {
    settings: { clusterName: 'demo', interruptionQueue: 'demo' },
    webhook: { enabled: true, port: 8443 },
    podAnnotations: { 'prometheus.io/scrape': true, team: 'a' },
    tolerations: [{ key: 'k', operator: 'Equal', value: 1, effect: 'NoSchedule' }],
    controller: { resources: { requests: { cpu: 1 } } },
  }
  const before = structuredClone(values)
  const m = migrateValues('karpenter', values, '1.0.14', '1.14.1')
  assert.deepEqual(values, before)
  assert.deepEqual(m.values, {
    settings: { clusterName: 'demo', interruptionQueue: 'demo' },
    podAnnotations: { 'prometheus.io/scrape': 'true', team: 'a' },
    tolerations: [{ key: 'k', operator: 'Equal', value: '1', effect: 'NoSchedule' }],
    controller: { resources: { requests: { cpu: 1 } } },
  })
  assert.deepEqual(
    m.migrations.map((x) => x.path),
    ['webhook', 'tolerations[0].value', 'podAnnotations.prometheus\\.io/scrape'],
  )
  // Not crossing 1.1: webhook stays (a 1.0.x patch upgrade keeps its webhooks).
  assert.ok('webhook' in migrateValues('karpenter', values, '1.0.10', '1.0.14').values)
  assert.deepEqual(
    migrateValues('karpenter-crd', { webhook: { enabled: true } }, '1.0.14', '1.1.0').values,
    {},
  )
})

const v10Role = (f: Facts) => {
  controllerRole.role(f).attached = ok(
    referencePolicies('1.0.14', {
      partition: 'aws',
      region: 'us-west-2',
      accountId: '123456789012',
      clusterName: 'demo',
      nodeRoleArns: [CONTROLLER_ROLE_ARN],
      queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
    }).map((d) => ({
      arn: `arn:aws:iam::123456789012:policy/${d.name}`,
      name: d.name,
      document: d.document,
    })),
  )
  controllerRole.role(f).inline = ok([])
}
const v10 = (f: Facts) => (v10Role(f), setChartVersion('1.0.14')(f))

test("IAM: a 1.0.14 role gains exactly the 1.14.1 template's statements it lacks, scoped as there; 1.0's extras named as removable", () => {
  const step = controllerIamStep(healthyFacts(v10), '1.0.14', '1.14.1')
  const doc = step.resource.documents?.[`inline ${upgradePolicyName('1.14.1')}`] as PolicyDocument
  assert.equal(upgradePolicyName('1.14.1'), 'KarpctlUpgrade-1.14')
  const actions = doc.Statement.flatMap((s) => s.Action as string[]).sort()
  assert.deepEqual(actions, [
    'ec2:DescribeCapacityReservations',
    'ec2:DescribeInstanceStatus',
    'ec2:DescribePlacementGroups',
    'iam:ListInstanceProfiles',
  ])
  const reads = doc.Statement.find((s) => (s.Action as string[]).includes('ec2:DescribeInstanceStatus'))
  assert.deepEqual(reads?.Condition, { StringEquals: { 'aws:RequestedRegion': 'us-west-2' } })
  assert.deepEqual(step.removable, ['ec2:DescribeAvailabilityZones'])
  assert.deepEqual(obsoleteActions('1.14.1', '1.14.1'), [])
  // Its verdict against the role as it is: one inline policy added, the role adopted (recorded).
  const role = controllerRole.role(healthyFacts(v10)).role
  const v = step.resource.verdict({ role, attached: [], inline: {} })
  assert.equal(v.action, 'update')
  assert.deepEqual(
    v.changes.map((c) => c.field),
    ['inline policy', 'tags.karpctl.io/adopted-by'],
  )
  assert.ok(v.changes.some((c) => c.field === 'inline policy' && c.to === 'KarpctlUpgrade-1.14'))
  assert.match(v.note ?? '', /ec2:DescribeAvailabilityZones only Karpenter 1\.0\.14's template grants/)
})

test('IAM: a role that already has the target template needs nothing (a re-run is a no-op)', () => {
  const step = controllerIamStep(healthyFacts(setChartVersion('1.0.14')), '1.0.14', '1.14.1')
  assert.equal(step.resource.documents?.[`inline ${upgradePolicyName('1.14.1')}`], undefined)
})

test("IAM: the getting-started stack's policies are updated in the stack, never beside it", () => {
  const step = controllerIamStep(
    healthyFacts((f) => {
      gettingStarted(f)
      controllerRole.dropActions('ec2:DescribeInstanceStatus')(f)
    }),
    '1.13.1',
    '1.14.1',
  )
  const v = step.resource.verdict(null)
  assert.match(
    v.blocked ?? '',
    /CloudFormation stack Karpenter-demo: update it to the getting-started template of Karpenter 1\.14\.1 \(curl/,
  )
  assert.match(v.blocked ?? '', /aws cloudformation update-stack --stack-name Karpenter-demo/)
})

test('IAM: an explicit Deny blocks (an Allow beside it cannot help)', () => {
  const step = controllerIamStep(
    healthyFacts((f) => {
      v10(f)
      controllerRole.role(f).inline = ok([
        {
          name: 'no-status',
          document: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Deny', Action: 'ec2:DescribeInstanceStatus', Resource: '*' }],
          },
        },
      ])
    }),
    '1.0.14',
    '1.14.1',
  )
  assert.match(step.resource.verdict(null).blocked ?? '', /explicitly denies .*remove the Deny/)
})

test('the plan: preconditions, then IAM, CRD handover, the CRD release, the controller, then the 8443 rule', () => {
  const p = upgradePlan(healthyFacts(v10), { target: '1.14.1' })
  assert.deepEqual(
    orderResources(p.resources).map((r) => r.address),
    [
      'precondition.version',
      'precondition.release',
      'precondition.kubernetes',
      'precondition.storage',
      'iam-role.controller',
      'crd-handover.karpenter-crd',
      'helm.karpenter-crd',
      'helm.karpenter',
      'ec2-ingress.webhook-8443',
    ],
  )
  const controller = p.resources.find((r) => r.address === 'helm.karpenter')!
  assert.deepEqual(controller.desired.version, '1.14.1')
  assert.equal(controller.desired.chart, 'oci://public.ecr.aws/karpenter/karpenter')
  assert.ok(controller.dependsOn.includes('iam-role.controller'))
  assert.ok(controller.dependsOn.includes('helm.karpenter-crd'))
  // A downgrade plans nothing but its refusal.
  const back = upgradePlan(healthyFacts(), { target: '1.5.0' })
  assert.deepEqual(
    back.resources.map((r) => r.address),
    ['precondition.version'],
  )
})

test('the plan with --chart-dir takes the folder and its version', () => {
  const p = upgradePlan(healthyFacts(v10), { target: '1.14.1', chartDir: `${FIXTURES}/v1.14.1/charts` })
  const controller = p.resources.find((r) => r.address === 'helm.karpenter')!
  assert.equal(controller.desired.chart, `${FIXTURES}/v1.14.1/charts/karpenter`)
  const crds = p.resources.find((r) => r.address === 'crd-handover.karpenter-crd')!
  assert.ok((crds.desired.crds as string[]).includes('capacitybuffers.autoscaling.x-k8s.io'))
})
