// Install beside an install karpctl did not make: what is found is used by its real name (the stack's or
// eksctl's controller role, the queue in the settings, the rules that already deliver to it), nothing is
// planned a second time, and the release's own values stay under karpctl's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { existingFrom } from '../../../src/install/existing.js'
import { installResources } from '../../../src/install/resources.js'
import type { Facts } from '../../../src/facts/types.js'
import { ACCOUNT, CONTROLLER_ROLE, healthyFacts, QUEUE_ARN, REGION } from '../../helpers/facts.js'
import { spec } from '../../helpers/install-spec.js'

const stackShaped = (f: Facts) => {
  // The getting-started stack names its rules <stack>-<Logical>-<suffix>; eksctl names the role <c>-karpenter.
  if (f.events.rules.ok)
    for (const r of f.events.rules.value) {
      r.name = `Karpenter-demo-${r.name.slice('Karpenter-demo-'.length)}-ABC123`
      r.arn = `arn:aws:events:${REGION}:${ACCOUNT}:rule/${r.name}`
    }
  if (f.kube.release.ok && f.kube.release.value)
    f.kube.release.value.values.controller = { resources: { requests: { cpu: '1', memory: '1Gi' } } }
}

test('existingFrom: the release, the controller role, the queue and every rule delivering to it', () => {
  const e = existingFrom(healthyFacts(stackShaped))!
  assert.equal(e.controllerRoleName, CONTROLLER_ROLE)
  assert.equal(e.identity, 'irsa')
  assert.equal(e.queueName, 'demo')
  assert.deepEqual(e.controllerProblems, [])
  assert.equal(Object.keys(e.ruleNames).length, 5)
  assert.equal(e.ruleNames.SpotInterruptionRule, 'Karpenter-demo-SpotInterruptionRule-ABC123')
  assert.match(
    e.summary,
    /^Karpenter 1\.14\.1 from Helm release kube-system\/karpenter \(not karpctl's\); controller role KarpenterControllerRole-demo \(IRSA\); queue demo, 5 of 5 rules delivering to it$/,
  )
  // A rule that delivers to another queue is not this install's.
  const other = existingFrom(
    healthyFacts((f) => {
      if (f.events.rules.ok) f.events.rules.value[0]!.targetArns = ['arn:aws:sqs:us-west-2:1:other']
    }),
  )!
  assert.equal(Object.keys(other.ruleNames).length, 4)
  assert.equal(existingFrom(healthyFacts((f) => (f.kube.release = { ok: true, value: null }))), null)
})

test('a controller role that lacks what Karpenter needs is named as a problem (the plan blocks on it)', () => {
  const e = existingFrom(
    healthyFacts((f) => {
      const r = f.iam.roles[CONTROLLER_ROLE]
      if (r?.ok && r.value && r.value.inline.ok) r.value.inline = { ok: true, value: [] }
      if (r?.ok && r.value) r.value.attached = { ok: true, value: [] }
    }),
  )!
  assert.ok(e.controllerProblems.some((p) => p.startsWith('controller-policy: ')))
})

test('the plan beside an existing install: no second controller role, queue or rule set; the release keeps its values', () => {
  const e = existingFrom(healthyFacts(stackShaped))!
  const s = spec({
    existing: {
      controllerRoleName: 'demo-karpenter',
      controllerProblems: [],
      queueName: e.queueName,
      ruleNames: e.ruleNames,
      releaseValues: e.release.values,
      summary: e.summary,
    },
  })
  const rs = installResources(s)
  const role = rs.find((r) => r.address === 'iam-role.controller')!
  assert.equal(role.name, 'demo-karpenter')
  assert.equal(role.verdict(null).action, 'unchanged')
  assert.match(role.verdict(null).note ?? '', /^in use \(the controller runs as it: IRSA annotation\)/)
  assert.ok(!rs.some((r) => r.name === 'KarpenterControllerRole-demo'))
  assert.deepEqual(
    rs
      .filter((r) => r.address.startsWith('events-rule.'))
      .map((r) => r.name)
      .sort(),
    Object.values(e.ruleNames).sort(),
  )
  assert.equal(rs.find((r) => r.address === 'sqs-queue.interruption')!.name, 'demo')
  const values = rs.find((r) => r.address === 'helm.karpenter')!.desired.values as {
    controller: unknown
    serviceAccount: { annotations: Record<string, string> }
    settings: Record<string, string>
  }
  assert.deepEqual(values.controller, { resources: { requests: { cpu: '1', memory: '1Gi' } } })
  assert.equal(
    values.serviceAccount.annotations['eks.amazonaws.com/role-arn'],
    `arn:aws:iam::${ACCOUNT}:role/demo-karpenter`,
  )
  assert.equal(values.settings.interruptionQueue, 'demo')
  // The controller's policy names the queue found.
  assert.ok(QUEUE_ARN.endsWith(':demo'))

  const blocked = installResources(
    spec({ existing: { ...s.existing!, controllerProblems: ['controller-policy: lacks 3 actions'] } }),
  ).find((r) => r.address === 'iam-role.controller')!
  assert.match(
    blocked.verdict(null).blocked ?? '',
    /^controller-policy: lacks 3 actions: karpctl does not rewrite another tool's role: run `karpctl doctor --fix`/,
  )
})
