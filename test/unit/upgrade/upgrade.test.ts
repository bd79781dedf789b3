// karpctl upgrade's pure parts: each precondition's blocked line, the controller role's gap to the
// target template, the values carried between the 1.0.14 and 1.14.1 charts, and the plan's order.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parse } from 'yaml'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { orderResources } from '../../../src/plan/plan.js'
import { referencePolicies } from '../../../src/desired/reference-policy.js'
import { controllerIamStep, obsoleteActions, upgradePolicyName } from '../../../src/upgrade/iam.js'
import {
  kubernetesGate,
  releaseGate,
  storageGate,
  versionGate,
  type Judgement,
} from '../../../src/upgrade/preconditions.js'
import { releaseOf, upgradePlan } from '../../../src/upgrade/upgrade.js'
import { EnvironmentError } from '../../../src/errors.js'
import { migrateValues, VALUE_REMOVALS } from '../../../src/upgrade/values.js'
import { controllerRole, setChartVersion, withoutPolicies } from '../../helpers/check-fixtures.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  healthyFacts,
  NODE_ROLE_ARN,
  ok,
  QUEUE_ARN,
  withoutHelm,
} from '../../helpers/facts.js'
import { EKSCTL_STACK, GS_STACK, gettingStarted, ownedBy, policyArn } from '../../helpers/owners.js'
import type { ApplyEnv, Step } from '../../../src/plan/types.js'
import { applyPlan } from '../../../src/plan/apply.js'
import { bareEnv } from '../../helpers/fake-resource.js'
import { ownershipTags } from '../../../src/desired/ownership.js'
import { karpenterFixtures } from '../../helpers/fixtures.js'

const FIXTURES = karpenterFixtures()
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
  const doc = step.resource.documents?.[upgradePolicyName('1.14.1')] as PolicyDocument
  assert.equal(upgradePolicyName('1.14.1'), 'KarpctlUpgrade-1.14')
  const actions = doc.Statement.flatMap((s) => s.Action as string[]).sort()
  assert.deepEqual(actions, [
    'ec2:DescribeCapacityReservations',
    'ec2:DescribeInstanceStatus',
    // ec2:DescribePlacementGroups: as zonal shift, only what the cluster uses (no placementGroupSelector)
    'iam:ListInstanceProfiles',
  ])
  const reads = doc.Statement.find((s) => (s.Action as string[]).includes('ec2:DescribeInstanceStatus'))
  assert.deepEqual(reads?.Condition, { StringEquals: { 'aws:RequestedRegion': 'us-west-2' } })
  assert.deepEqual(step.removable, ['ec2:DescribeAvailabilityZones'])
  assert.deepEqual(obsoleteActions('1.14.1', '1.14.1'), [])
  // Its verdict against the role as it is: one inline policy of karpctl's put, recorded as a repair is
  // (given back only when the upgraded install goes), never as an adoption.
  const v = step.resource.verdict({ roleExists: true, document: null, tags: {} })
  assert.equal(v.action, 'create')
  assert.deepEqual(v.changes, [{ field: 'policy', to: 'KarpctlUpgrade-1.14' }])
  assert.match(v.note ?? '', /^recorded as the karpctl\.io\/repaired-inline-policies tag; /)
  assert.match(v.note ?? '', /ec2:DescribeAvailabilityZones only Karpenter 1\.0\.14's template grants/)
  assert.deepEqual(step.resource.permissions, [
    { action: 'iam:PutRolePolicy', resource: controllerRole.role(healthyFacts(v10)).role.arn },
    { action: 'iam:TagRole', resource: controllerRole.role(healthyFacts(v10)).role.arn },
  ])
})

test('IAM: a role that already has the target template needs nothing (a re-run is a no-op)', () => {
  const step = controllerIamStep(healthyFacts(setChartVersion('1.0.14')), '1.0.14', '1.14.1')
  assert.equal(step.resource.documents?.[upgradePolicyName('1.14.1')], undefined)
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

test("IAM: eksctl's controller role with the getting-started stack's policies: eksctl's way, and the old policy detached after", () => {
  // Issue 33: the block proposed attach-role-policy on eksctl's role, and said nothing of eksctl's own
  // update nor of the 1.0 policy the new template no longer declares.
  const facts = healthyFacts((f) => {
    gettingStarted(f)
    ownedBy(
      f,
      policyArn('KarpenterControllerPolicy-demo'),
      GS_STACK,
      'KarpenterControllerPolicy',
      'AWS::IAM::ManagedPolicy',
    )
    withoutPolicies(CONTROLLER_ROLE, 'KarpenterControllerResourceDiscoveryPolicy-demo')(f)
  })
  const podIdentity = controllerIamStep(facts, '1.13.1', '1.14.1').resource.verdict(null).blocked ?? ''
  assert.match(podIdentity, /update it to the getting-started template of Karpenter 1\.14\.1/)
  assert.match(
    podIdentity,
    new RegExp(`the way eksctl does, since eksctl's stack ${EKSCTL_STACK} made the role`),
  )
  assert.match(
    podIdentity,
    /permissionPolicyARNs .* iam\.podIdentityAssociations .*eksctl update podidentityassociation --config-file/,
  )
  assert.match(podIdentity, /or, without eksctl: aws iam attach-role-policy/)
  assert.match(
    podIdentity,
    /once the upgraded controller runs, detach the old template's KarpenterControllerPolicy-demo from KarpenterControllerRole-demo .*aws iam detach-role-policy --role-name KarpenterControllerRole-demo --policy-arn arn:aws:iam::123456789012:policy\/KarpenterControllerPolicy-demo/,
  )
  const irsa = healthyFacts((f) => {
    gettingStarted(f)
    ownedBy(
      f,
      CONTROLLER_ROLE,
      'eksctl-demo-addon-iamserviceaccount-kube-system-karpenter',
      'Role1',
      'AWS::IAM::Role',
    )
    withoutPolicies(CONTROLLER_ROLE, 'KarpenterControllerResourceDiscoveryPolicy-demo')(f)
  })
  const sa = controllerIamStep(irsa, '1.13.1', '1.14.1').resource.verdict(null).blocked ?? ''
  assert.match(
    sa,
    /attachPolicyARNs .* iam\.serviceAccounts .*eksctl update iamserviceaccount --config-file <your config> --approve/,
  )
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

test("IAM first, then the CRDs: on karpctl's own install the CRD hand-over is unchanged, and the CRD release still waits for IAM", async () => {
  // Issue 33: the executor waited only for changing dependencies, so `helm karpenter-crd` ran while
  // the controller role still lacked the 1.14.1 actions.
  const p = upgradePlan(healthyFacts(karpctlRole10), {
    target: '1.14.1',
    releaseLabels: { 'app.kubernetes.io/managed-by': 'karpctl' },
  })
  const log: string[] = []
  const unchanged = new Set([
    'crd-handover.karpenter-crd',
    'iam-inline-policy.upgrade-carry',
    'ec2-ingress.webhook-8443',
  ])
  const steps: Step[] = orderResources(p.resources).map((r) => ({
    resource: {
      ...r,
      apply: async () => {
        log.push(`start ${r.address}`)
        for (let i = 0; i < 5; i++) await new Promise((res) => setImmediate(res))
        log.push(`done ${r.address}`)
      },
    },
    current: null,
    verdict: {
      action: r.address.startsWith('precondition.') || unchanged.has(r.address) ? 'unchanged' : 'update',
      changes: [],
    },
  }))
  await applyPlan({ title: 't', steps }, bareEnv())
  assert.deepEqual(log, [
    'start iam-role.controller',
    'done iam-role.controller',
    'start helm.karpenter-crd',
    'done helm.karpenter-crd',
    'start helm.karpenter',
    'done helm.karpenter',
  ])
})

test('the plan with --chart-dir takes the folder and its version', () => {
  const p = upgradePlan(healthyFacts(v10), { target: '1.14.1', chartDir: `${FIXTURES}/v1.14.1/charts` })
  const controller = p.resources.find((r) => r.address === 'helm.karpenter')!
  assert.equal(controller.desired.chart, `${FIXTURES}/v1.14.1/charts/karpenter`)
  const crds = p.resources.find((r) => r.address === 'crd-handover.karpenter-crd')!
  assert.ok((crds.desired.crds as string[]).includes('capacitybuffers.autoscaling.x-k8s.io'))
})

const PARAMS = {
  partition: 'aws',
  region: 'us-west-2',
  accountId: ACCOUNT,
  clusterName: 'demo',
  nodeRoleArns: [NODE_ROLE_ARN],
  queueArn: QUEUE_ARN,
}
/** The controller role karpctl's install of 1.0.14 made: its tags, the 1.0.14 template inline (and a tenant's). */
const TENANT_POLICY = {
  name: 'karpctl-tenant-a-passrole',
  document: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow' as const,
        Action: 'iam:PassRole',
        Resource: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo-a`,
      },
    ],
  },
}
const karpctlRole10 = (f: Facts) => {
  controllerRole.role(f).role.tags = ownershipTags('demo')
  controllerRole.role(f).attached = ok([])
  controllerRole.role(f).inline = ok([
    ...referencePolicies('1.0.14', PARAMS).map((d) => ({ name: d.name, document: d.document })),
    TENANT_POLICY,
  ])
  setChartVersion('1.0.14')(f)
}

test("IAM: on the role karpctl created, its own inline controller policies become the target's (no KarpctlUpgrade-*); the old template's policy goes, never going past IAM's inline budget", async () => {
  const facts = healthyFacts(karpctlRole10)
  const step = controllerIamStep(facts, '1.0.14', '1.14.1')
  const target = referencePolicies('1.14.1', PARAMS)
  assert.deepEqual(
    Object.keys(step.resource.documents ?? {}).filter((k) => k.startsWith('inline ')),
    target.map((p) => `inline ${p.name}`),
    "the target's policies, filled in as install fills them (the node role, the queue)",
  )
  for (const p of target) assert.deepEqual(step.resource.documents?.[`inline ${p.name}`], p.document)
  assert.deepEqual(step.removable, [], 'nothing left to remove by hand')
  const role = controllerRole.role(facts)
  const inline = Object.fromEntries(
    (role.inline.ok ? role.inline.value : []).map((p) => [p.name, p.document]),
  )
  const cur = { role: role.role, attached: [], inline }
  const v = step.resource.verdict(cur)
  assert.equal(v.blocked, undefined)
  assert.deepEqual(
    v.changes.map((c) => `${c.field} ${c.to ?? `-${String(c.from)}`}`),
    [
      ...target.map((p) => `inline policy ${p.name}`),
      'inline policy KarpctlUpgradeCarry-demo',
      'inline policy -KarpenterControllerPolicy-demo',
    ],
  )
  assert.match(
    v.note ?? '',
    /ec2:DescribeAvailabilityZones.* as only Karpenter 1\.0\.14's template grants them: kept apart in KarpctlUpgradeCarry-demo for the running controller, removed once the new one runs/,
  )
  assert.match(
    v.note ?? '',
    /set to Karpenter 1\.14\.1's reference policies.*KarpenterControllerPolicy-demo .*deleted last/,
  )
  assert.ok(!v.changes.some((c) => String(c.to).startsWith('KarpctlUpgrade-')), 'no separate upgrade policy')

  // Applied: the new grants go in while they fit beside the old, then the carry, the old one narrowed to
  // what nothing else grants yet, the rest, and the old one deleted last; the role's inline total never
  // passes 10,240 characters; the tenant's policy is never touched (each write's grants: own-role.test.ts).
  const held = new Map(Object.entries(inline).map(([n, d]) => [n, JSON.stringify(d).length]))
  const writes: string[] = []
  const aws = {
    write: async (_s: string, op: string, i: { PolicyName: string; PolicyDocument?: string }) => {
      writes.push(`${op} ${i.PolicyName}`)
      if (op === 'DeleteRolePolicy') held.delete(i.PolicyName)
      else held.set(i.PolicyName, (i.PolicyDocument ?? '').length)
      const total = [...held.values()].reduce((a, b) => a + b, 0)
      assert.ok(total <= 10240, `${total} characters after ${op} ${i.PolicyName}`)
    },
  }
  const carried: PolicyDocument[] = []
  const put = aws.write
  aws.write = async (svc, op, i) => {
    if (i.PolicyName === 'KarpctlUpgradeCarry-demo') carried.push(JSON.parse(i.PolicyDocument ?? '{}'))
    return put(svc, op, i)
  }
  await step.resource.apply({ aws } as unknown as ApplyEnv, cur)
  assert.deepEqual(
    writes.at(-1),
    'DeleteRolePolicy KarpenterControllerPolicy-demo',
    'the delete is the last write',
  )
  assert.ok(
    writes.indexOf('PutRolePolicy KarpctlUpgradeCarry-demo') <
      writes.indexOf('PutRolePolicy KarpenterControllerPolicy-demo'),
    writes.join('\n'),
  )
  // What 1.0 grants and 1.14.1 does not, as 1.0 scopes it: DescribeAvailabilityZones, and the launch
  // and instance-profile statements 1.14.1 conditions on other request tags.
  assert.deepEqual(carried[0]?.Statement.flatMap((st) => st.Action as string[]).sort(), [
    'ec2:CreateFleet',
    'ec2:CreateLaunchTemplate',
    'ec2:CreateTags',
    'ec2:DescribeAvailabilityZones',
    'ec2:RunInstances',
    'iam:CreateInstanceProfile',
    'iam:TagInstanceProfile',
  ])
  // Each new policy put once, the carry once; the old one only ever rewritten (narrowed) before its delete.
  const puts = writes.filter((w) => w.startsWith('Put')).map((w) => w.slice('PutRolePolicy '.length))
  for (const p of [...target.map((t) => t.name), 'KarpctlUpgradeCarry-demo'])
    assert.equal(puts.filter((n) => n === p).length, 1, p)
  assert.ok(
    puts.every(
      (n) =>
        n === 'KarpenterControllerPolicy-demo' ||
        target.some((t) => t.name === n) ||
        n === 'KarpctlUpgradeCarry-demo',
    ),
  )
  assert.ok(!writes.some((w) => w.includes(TENANT_POLICY.name)))
  assert.deepEqual(
    [...held.keys()].sort(),
    [...target.map((p) => p.name), TENANT_POLICY.name, 'KarpctlUpgradeCarry-demo'].sort(),
  )
  // Taken away by a step after the controller's, however the run got there.
  const [carry] = step.after?.('helm.karpenter') ?? []
  assert.equal(carry?.address, 'iam-inline-policy.upgrade-carry')
  assert.deepEqual(carry?.dependsOn, ['helm.karpenter'])
  assert.equal(carry?.name, `${role.role.name}/KarpctlUpgradeCarry-demo`)
  // Planned as a delete before the IAM step has put it (the executor applies only changing steps).
  assert.equal(carry?.verdict({ roleExists: true, document: null }).action, 'delete')
  // Nothing to carry (the role already the target's) and none there: nothing to do.
  const done = controllerIamStep(
    healthyFacts((f) => {
      karpctlRole10(f)
      controllerRole.role(f).inline = ok(target.map((p) => ({ name: p.name, document: p.document })))
    }),
    '1.0.14',
    '1.14.1',
  )
  assert.equal(
    done.after?.('helm.karpenter')[0]?.verdict({ roleExists: true, document: null }).action,
    'unchanged',
  )

  // The same run again (the role now the target's): nothing to do.
  const after = {
    ...cur,
    inline: Object.fromEntries([
      ...target.map((p) => [p.name, p.document]),
      [TENANT_POLICY.name, TENANT_POLICY.document],
    ]),
  }
  assert.deepEqual(step.resource.verdict(after).action, 'unchanged')
})

test('IAM: a controller role a CloudFormation stack owns is blocked, naming the stack and its update command', () => {
  const step = controllerIamStep(
    healthyFacts((f) => {
      v10(f)
      ownedBy(f, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')
    }),
    '1.0.14',
    '1.14.1',
  )
  const blocked = step.resource.verdict(null).blocked ?? ''
  assert.match(
    blocked,
    new RegExp(`controller role ${CONTROLLER_ROLE} belongs to CloudFormation stack ${EKSCTL_STACK}`),
  )
  assert.match(blocked, new RegExp(`aws cloudformation update-stack --stack-name ${EKSCTL_STACK}`))
  assert.ok(
    step.resource.documents?.['KarpctlUpgrade-1.14'],
    '--show-policies prints what to add in the stack',
  )
})

test("the plan on an install karpctl did not make: both releases labelled as karpctl's upgrade, the CRD handover not recorded; on karpctl's own: its created mark, recorded", async () => {
  const theirs = upgradePlan(healthyFacts(v10), { target: '1.14.1', releaseLabels: {} })
  const ours = upgradePlan(healthyFacts(v10), {
    target: '1.14.1',
    releaseLabels: { 'karpctl.io/managed-by': 'karpctl' },
  })
  const step = (p: ReturnType<typeof upgradePlan>, address: string) =>
    p.resources.find((r) => r.address === address)!
  /** The labels helm is given for each release, over the release as it is (labelled `labels`). */
  const helmLabels = async (p: ReturnType<typeof upgradePlan>, labels: Record<string, string>) => {
    const got: Record<string, unknown> = {}
    const env = {
      helm: async () => ({
        upgradeInstall: async (u: { release: string; labels: unknown }) => void (got[u.release] = u.labels),
      }),
    } as unknown as ApplyEnv
    const release = upgradePlan(healthyFacts(v10), { target: '1.14.1' }).release
    for (const a of ['helm.karpenter-crd', 'helm.karpenter'])
      await step(p, a).apply(env, { release, labels } as never)
    return got
  }
  const upgraded = { 'karpctl.io/adopted-by': 'demo', 'karpctl.io/upgraded-to': '1.14.1' }
  assert.deepEqual(await helmLabels(theirs, {}), {
    'karpenter-crd': { ...upgraded, 'karpctl.io/adopted-from-revision': 'null' },
    karpenter: { ...upgraded, 'karpctl.io/adopted-from-revision': 'null' },
  })
  const created = { 'karpctl.io/managed-by': 'karpctl' }
  assert.deepEqual(await helmLabels(ours, created), { 'karpenter-crd': created, karpenter: created })

  // The CRD handover: on another tool's install, Helm's marks only (no record for teardown to give back).
  const patches = async (p: ReturnType<typeof upgradePlan>) => {
    const bodies: unknown[] = []
    const env = { kube: { write: async (_m: string, _p: string, b: unknown) => void bodies.push(b) } }
    await step(p, 'crd-handover.karpenter-crd').apply(
      env as unknown as ApplyEnv,
      {
        crds: [{ metadata: { name: 'nodepools.karpenter.sh' } }],
      } as never,
    )
    return JSON.stringify(bodies)
  }
  assert.doesNotMatch(await patches(theirs), /karpctl\.io\/(adopted-by|replaced-marks)/)
  assert.match(await patches(ours), /karpctl\.io\/adopted-by.*karpctl\.io\/replaced-marks/)
  const crd = { crds: [{ metadata: { name: 'nodepools.karpenter.sh' } }] } as never
  assert.match(
    step(theirs, 'crd-handover.karpenter-crd').verdict(crd).note ?? '',
    /for good.*kept by teardown/,
  )
})

test("IAM: karpctl's role whose controller policies name no node role to pass is blocked, never given a PassRole on nothing", () => {
  const step = controllerIamStep(
    healthyFacts((f) => {
      karpctlRole10(f)
      controllerRole.role(f).inline = ok([TENANT_POLICY])
    }),
    '1.0.14',
    '1.14.1',
  )
  assert.match(
    step.resource.verdict(null).blocked ?? '',
    /none of karpctl's inline controller policies on it grants iam:PassRole on a node role/,
  )
})

test('no Helm release: refused, naming who applied Karpenter (a Helm upgrade would add a second controller)', () => {
  assert.throws(
    () => releaseOf(healthyFacts(withoutHelm())),
    (err: unknown) =>
      err instanceof EnvironmentError &&
      err.code === 'INSTALLED_BY_OTHER_TOOL' &&
      err.message ===
        'Karpenter 1.14.1 runs in cluster demo with no Helm release (Argo CD application "karpenter"): upgrade it where it is applied (raise the chart version it renders), then run `karpctl doctor`',
  )
  assert.throws(
    () => releaseOf(healthyFacts((f) => ((f.kube.release = ok(null)), (f.kube.rendered = ok(null))))),
    (err: unknown) => err instanceof EnvironmentError && err.code === 'NOT_INSTALLED',
  )
})
