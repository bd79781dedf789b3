// Each --fix builder against facts broken one way: the resources it plans (install's kinds, names and
// documents), and what it leaves manual and why. The plan's apply is proven with nock and on the bed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { editedValues, valueTypeEdits } from '../../../src/fix/helm-values.js'
import { usesReservations } from '../../helpers/check-fixtures.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  healthyFacts,
  NODE_ROLE,
  ok,
  QUEUE_ARN,
  REGION,
} from '../../helpers/facts.js'

const plan = (facts: Facts) => fixSet(facts, runChecks(catalog, facts))
const addresses = (facts: Facts) => plan(facts).resources.map((r) => r.address)
const release = (f: Facts) => {
  if (!f.kube.release.ok || !f.kube.release.value) throw new Error('no release')
  return f.kube.release.value
}
const controllerPolicies = (f: Facts) => {
  const r = f.iam.roles[CONTROLLER_ROLE]
  if (!r?.ok || !r.value || !r.value.attached.ok) throw new Error('no controller role')
  return r.value.attached.value
}

test('a toleration value that is a boolean: one Helm repair, the user values kept and the value a string', () => {
  const facts = healthyFacts((f) => {
    const r = release(f)
    r.status = 'failed'
    r.values.tolerations = [
      { key: 'dedicated', operator: 'Equal', value: true, effect: 'NoSchedule' },
      { key: 'other', operator: 'Exists' },
    ]
  })
  const fs = plan(facts)
  const helm = fs.resources.find((r) => r.address === 'helm.karpenter.repair')
  assert.ok(helm, JSON.stringify(fs.resources.map((r) => r.address)))
  const values = helm.desired.values as Record<string, unknown>
  assert.deepEqual(values.tolerations, [
    { key: 'dedicated', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
    { key: 'other', operator: 'Exists' },
  ])
  assert.deepEqual(values.settings, release(facts).values.settings, 'the rest of the values kept')
  assert.equal(helm.desired.version, '1.14.1', 'the same chart version')
  assert.equal(typeof release(facts).values.tolerations, 'object', 'the facts are not mutated')
  assert.equal((release(facts).values.tolerations as { value: unknown }[])[0]!.value, true)
  assert.ok(fs.touched.includes('toleration-value-types'))
})

test('the STS annotation as a boolean and a toleration: both checks share the one Helm repair', () => {
  const facts = healthyFacts((f) => {
    const r = release(f)
    r.values.serviceAccount = {
      annotations: {
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo',
        'eks.amazonaws.com/sts-regional-endpoints': true,
      },
    }
    r.values.tolerations = [{ key: 'a', operator: 'Equal', value: 1, effect: 'NoSchedule' }]
  })
  const fs = plan(facts)
  const helm = fs.resources.filter((r) => r.kind === 'Helm release')
  assert.equal(helm.length, 1)
  const v = helm[0]!.desired.values as {
    serviceAccount: { annotations: Record<string, unknown> }
    tolerations: { value: unknown }[]
  }
  assert.equal(v.serviceAccount.annotations['eks.amazonaws.com/sts-regional-endpoints'], 'true')
  assert.equal(v.tolerations[0]!.value, '1')
  assert.match(helm[0]!.group, /sts-regional-annotation/)
  assert.match(helm[0]!.group, /toleration-value-types/)
})

test('valueTypeEdits covers only findings whose path is in the user values', () => {
  const facts = healthyFacts((f) => {
    release(f).values.tolerations = [{ key: 'a', value: false }]
  })
  const r = release(facts)
  const edits = valueTypeEdits(r, [
    { status: 'fail', message: 'x', evidence: { path: 'tolerations[0].value' } },
    { status: 'fail', message: 'y', evidence: { path: 'nodeSelector.zone' } },
  ])
  assert.equal(edits.length, 1)
  assert.deepEqual((editedValues(r, edits).tolerations as unknown[])[0], { key: 'a', value: 'false' })
})

test('a controller policy without two reference actions: one inline policy holding exactly those', () => {
  const facts = healthyFacts((f) => {
    for (const p of controllerPolicies(f))
      for (const s of (p.document as PolicyDocument).Statement)
        if (Array.isArray(s.Action))
          s.Action = s.Action.filter((a) => a !== 'ec2:CreateFleet' && a !== 'ec2:DescribeSubnets')
  })
  const fs = plan(facts)
  const pol = fs.resources.find((r) => r.address === 'iam-policy.controller-missing')
  assert.ok(pol, JSON.stringify(fs.manual))
  assert.equal(pol.name, `${CONTROLLER_ROLE}/KarpenterControllerMissing-demo`)
  const doc = Object.values(pol.documents!)[0] as PolicyDocument
  const actions = [...new Set(doc.Statement.flatMap((s) => s.Action as string[]))].sort()
  assert.deepEqual(actions, ['ec2:CreateFleet', 'ec2:DescribeSubnets'])
  // The reference scope comes along: CreateFleet keeps each of its statements' resources and conditions.
  assert.ok(
    doc.Statement.filter((s) => (s.Action as string[]).includes('ec2:CreateFleet')).every(
      (s) => s.Resource && s.Resource !== '*',
    ),
  )
})

test('a controller policy whose missing action is explicitly denied, or a CloudFormation role: manual', () => {
  const denied = healthyFacts((f) => {
    const p = controllerPolicies(f)[0]!
    ;(p.document as PolicyDocument).Statement.push({
      Effect: 'Deny',
      Action: 'ec2:CreateFleet',
      Resource: '*',
    })
  })
  assert.ok(!addresses(denied).includes('iam-policy.controller-missing'))
  assert.ok(plan(denied).manual.some((m) => m.check === 'controller-policy'))

  const stack = healthyFacts((f) => {
    for (const p of controllerPolicies(f))
      for (const s of (p.document as PolicyDocument).Statement)
        if (Array.isArray(s.Action)) s.Action = s.Action.filter((a) => a !== 'ec2:CreateFleet')
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (r?.ok && r.value) r.value.role.tags['aws:cloudformation:stack-name'] = 'Karpenter-demo'
  })
  assert.ok(!addresses(stack).includes('iam-policy.controller-missing'))
  const m = plan(stack).manual.find((x) => x.check === 'controller-policy')!
  assert.match(m.message, /CloudFormation stack Karpenter-demo/)
})

test('a node role without the worker-node and ECR policies: those two attached, recorded; SSM (a warning) not', () => {
  const facts = healthyFacts((f) => {
    const r = f.iam.roles[NODE_ROLE]
    if (!r?.ok || !r.value || !r.value.attached.ok) throw new Error('no node role')
    r.value.attached = ok(r.value.attached.value.filter((p) => /CNI/.test(p.name)))
  })
  const fs = plan(facts)
  const res = fs.resources.find((r) => r.address === `iam-role-policies.${NODE_ROLE}`)
  assert.ok(res, JSON.stringify(fs.manual))
  assert.deepEqual(res.desired.attached, [
    'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
    'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
  ])
  assert.ok(!fs.manual.some((m) => m.check === 'node-role'))
})

test('a queue that does not exist: created as install makes it, with the five rules after it', () => {
  const facts = healthyFacts((f) => {
    f.sqs.queue = ok(null)
    f.events.rules = ok([])
  })
  const fs = plan(facts)
  const q = fs.resources.find((r) => r.address === 'sqs-queue.interruption')
  assert.ok(q, JSON.stringify(fs.manual))
  assert.equal(q.name, 'demo')
  assert.equal((q.desired.tags as Record<string, string>)['karpctl.io/managed-by'], 'karpctl')
  const rules = fs.resources.filter((r) => r.address.startsWith('events-rule.'))
  assert.equal(rules.length, 5)
  assert.ok(rules.every((r) => r.dependsOn.includes('sqs-queue.interruption')))
  assert.ok(rules.every((r) => r.desired.target === QUEUE_ARN))
})

test('a queue whose policy does not let EventBridge send: its statements kept, the reference ones added', () => {
  const facts = healthyFacts((f) => {
    if (f.sqs.queue.ok && f.sqs.queue.value)
      f.sqs.queue.value.policy = {
        Version: '2012-10-17',
        Statement: [
          { Sid: 'Mine', Effect: 'Allow', Principal: { AWS: ACCOUNT }, Action: 'sqs:*', Resource: QUEUE_ARN },
        ],
      }
  })
  const fs = plan(facts)
  assert.ok(addresses(facts).includes('sqs-queue-policy.interruption'), JSON.stringify(fs.manual))
  assert.ok(!addresses(facts).includes('sqs-queue.interruption'), 'a foreign queue is not taken over')
})

test("the queue's ARN in settings.interruptionQueue: the name, set in the Helm repair", () => {
  const facts = healthyFacts((f) => {
    for (const v of [release(f).values, release(f).computedValues])
      (v.settings as Record<string, unknown>).interruptionQueue = QUEUE_ARN
  })
  const fs = plan(facts)
  const helm = fs.resources.find((r) => r.address === 'helm.karpenter.repair')
  assert.ok(helm, JSON.stringify(fs.manual))
  assert.equal(
    (helm.desired.values as { settings: Record<string, unknown> }).settings.interruptionQueue,
    'demo',
  )
  assert.match(helm.group, /interruption-queue/)
})

test('rules that send to an old queue: repaired in place with its target id, the stale target removed', () => {
  const old = `arn:aws:sqs:${REGION}:${ACCOUNT}:old-queue`
  const facts = healthyFacts((f) => {
    if (f.events.rules.ok)
      f.events.rules = ok(
        f.events.rules.value.map((r) => ({
          ...r,
          targetArns: [old],
          targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: old }],
        })),
      )
    usesReservations(f) // the fifth rule is judged only where reservations are used
  })
  const fs = plan(facts)
  const repairs = fs.resources.filter((r) => r.address.startsWith('events-rule-repair.'))
  assert.equal(repairs.length, 5, JSON.stringify(fs.manual))
  assert.ok(!fs.resources.some((r) => r.address.startsWith('events-rule.')), 'no second set of rules')
  assert.deepEqual(repairs[0]!.desired, { target: QUEUE_ARN, state: 'ENABLED' })
})

test('a disabled rule that targets the queue: enabled in place (not manual), its target id kept', () => {
  const facts = healthyFacts((f) => {
    if (f.events.rules.ok)
      f.events.rules = ok(
        f.events.rules.value.map((r) => (/SpotInterruption/.test(r.name) ? { ...r, state: 'DISABLED' } : r)),
      )
  })
  const fs = plan(facts)
  assert.deepEqual(
    fs.manual.filter((m) => m.check === 'interruption-rules'),
    [],
  )
  const [repair, ...more] = fs.resources.filter((r) => r.address.startsWith('events-rule-repair.'))
  assert.equal(more.length, 0)
  assert.equal(repair?.address, 'events-rule-repair.Karpenter-demo-SpotInterruptionRule')
  assert.ok(fs.touched.includes('interruption-rules'))
  const v = repair.verdict({
    arn: repair.permissions[0]!.resource,
    state: 'DISABLED',
    pattern: null,
    targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE_ARN }],
    tags: {},
  })
  assert.deepEqual(v.changes, [{ field: 'state', from: 'DISABLED', to: 'ENABLED' }])
  assert.match(v.note ?? '', /its state DISABLED recorded as the karpctl\.io\/retargeted-from tag/)
})

test('no Pod Identity association: one to the controller role, with a controller restart', () => {
  const facts = healthyFacts((f) => {
    f.iam.controllerIdentity = 'pod-identity'
    const r = release(f)
    r.values.serviceAccount = {}
    f.kube.serviceAccount = ok({ metadata: { name: 'karpenter', namespace: 'kube-system', annotations: {} } })
  })
  const fs = plan(facts)
  const a = fs.resources.find((r) => r.address === 'eks-pod-identity.controller')
  assert.ok(a, JSON.stringify(fs.manual.filter((m) => m.check === 'pod-identity')))
  assert.equal(a.desired.roleArn, `arn:aws:iam::${ACCOUNT}:role/${CONTROLLER_ROLE}`)
  const v = a.verdict(null)
  assert.ok(v.changes.some((c) => c.field === 'restart'))
})

test("--fix records its 8443 rule and discovery tags as repairs, which teardown's restore does not match", () => {
  const facts = healthyFacts((f) => {
    // Untagged: the NodeClass's tag selector finds no subnet.
    f.ec2.subnetsByNodeClass.default = ok([])
  })
  const tags = fixSet(facts, runChecks(catalog, facts)).resources.find(
    (r) => r.address === 'ec2-tags.discovery',
  )
  assert.ok(tags)
  const v = tags.verdict({ 'subnet-0a': {}, 'subnet-0b': {}, 'subnet-0c': {} })
  assert.match(v.note ?? '', /karpctl\.io\/repaired-tags \(a repair: teardown keeps it\)/)
})

test("a NodePool's immutable nodeClassRef.group: manual, and --fix says why from the finding's data", () => {
  const facts = healthyFacts((f) => {
    if (f.kube.nodePools.ok) f.kube.nodePools.value[0]!.spec.template.spec.nodeClassRef.group = 'karpenter.sh'
  })
  const [m, ...more] = plan(facts).manual.filter((x) => x.check === 'nodeclass-ready')
  assert.equal(more.length, 0)
  assert.match(m!.why, /nodeClassRef\.group and \.kind are immutable .*must be deleted and created again/)
  assert.ok(m!.commands.includes('kubectl delete nodepool default'))
})
