// fixSet from hand-made check results: which checks are fixed or selected, the reason each manual
// finding shows (the builder's, the finding's own, the check's usual one, or the default), its commands,
// one resource per address, and every check's Helm edits in one repair that may settle a failed release.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CheckResult, Finding } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { CLUSTER_SG, failed, healthyFacts, NODE_SG } from '../../helpers/facts.js'

const result = (id: string, ...findings: Finding[]): CheckResult => ({
  meta: { id, title: id, category: 'cluster', severity: 'error', docs: '' },
  status: findings.some((f) => f.status === 'fail') ? 'fail' : 'pass',
  findings,
})
const fail = (message: string, over: Partial<Finding> = {}): Finding => ({ status: 'fail', message, ...over })
const withToleration = (f: Facts) => {
  if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.values.tolerations = [{ value: true }]
}
const typed = fail('tolerations[0].value is a boolean', { evidence: { path: 'tolerations[0].value' } })

test("each check without a builder is manual with the check's usual reason, its commands and alternative", () => {
  const alternative = { label: 'without eksctl', commands: ['aws x'] }
  const results = [
    result('helm-release', fail('failed', { fix: { summary: 's', commands: ['helm rollback karpenter'] } })),
    result('karpenter-version', fail('old')),
    result('tenant-isolation', fail('shared')),
    result('ebs-kms-key', fail('key', { fix: { summary: 's', commands: ['a'], alternative } })),
    result('unknown-check', fail('odd')),
    result('quiet', { status: 'warn', message: 'only a warning' }, { status: 'pass', message: 'ok' }),
  ]
  const fs = fixSet(healthyFacts(), results)
  assert.deepEqual(fs, {
    resources: [],
    touched: [],
    manual: [
      {
        check: 'helm-release',
        message: 'failed',
        why: 'a Helm release needs a decision (roll back, or upgrade with corrected values)',
        commands: ['helm rollback karpenter'],
      },
      {
        check: 'karpenter-version',
        message: 'old',
        why: 'an upgrade of Karpenter is a planned change, not a repair',
        commands: [],
      },
      {
        check: 'tenant-isolation',
        message: 'shared',
        why: "a tenant's NodePool is that tenant's design",
        commands: [],
      },
      {
        check: 'ebs-kms-key',
        message: 'key',
        why: "a KMS key policy is its owner's: apply the statements there, or run the command (below)",
        commands: ['a'],
        alternative,
      },
      { check: 'unknown-check', message: 'odd', why: 'needs a human decision', commands: [] },
    ],
  })
})

test("the finding's own reason (evidence.manualBecause, a string) comes before the check's; a builder's before both", () => {
  const own = fail('immutable', { evidence: { manualBecause: 'it is immutable' } })
  const notString = fail('x', { evidence: { manualBecause: 3 } })
  const fs = fixSet(healthyFacts(), [result('helm-release', own, notString)])
  assert.deepEqual(
    fs.manual.map((m) => m.why),
    ['it is immutable', 'a Helm release needs a decision (roll back, or upgrade with corrected values)'],
  )
  // A chart-default value the values do not hold: toleration-value-types' own reason.
  const chartDefault = fail('default', { evidence: { path: 'podAnnotations.x' } })
  const tv = fixSet(healthyFacts(), [result('toleration-value-types', chartDefault)])
  assert.deepEqual(
    tv.manual.map((m) => m.why),
    ['the value is not in your Helm values (a chart default): set it in your values'],
  )
  // controller-policy without a document: its usual reason.
  const cp = fixSet(healthyFacts(), [result('controller-policy', fail('lacks'))])
  assert.deepEqual(
    cp.manual.map((m) => m.why),
    [
      'an explicit Deny, a permissions boundary or the stack that manages the role decides: change it there (below)',
    ],
  )
})

test('checks not selected, and checks with no failure, are left alone; a resource two checks plan is planned once', () => {
  const sg = fail('no 8443', { evidence: { securityGroup: NODE_SG, clusterSecurityGroup: CLUSTER_SG } })
  const results = [result('sg-webhook-8443', sg), result('karpenter-version', fail('old'))]
  const fs = fixSet(healthyFacts(), results, { selected: (id) => id === 'sg-webhook-8443' })
  assert.deepEqual(
    fs.resources.map((r) => r.address),
    [`ec2-ingress.webhook-8443.${NODE_SG}`],
  )
  const twice = fixSet(healthyFacts(), [result('sg-webhook-8443', sg), result('sg-webhook-8443', sg)])
  assert.deepEqual(
    twice.resources.map((r) => r.address),
    [`ec2-ingress.webhook-8443.${NODE_SG}`],
  )
  assert.deepEqual(twice.touched, ['sg-webhook-8443', 'sg-webhook-8443'])
  assert.deepEqual(fs.touched, ['sg-webhook-8443'])
  assert.deepEqual(fs.manual, [])
})

test("every check's Helm edits go into one repair grouped by both; a failed release's manual finding says it may settle", () => {
  const facts = healthyFacts((f) => {
    withToleration(f)
    if (f.kube.release.ok && f.kube.release.value)
      (f.kube.release.value.values.settings as Record<string, unknown>).interruptionQueue = 'arn:q'
  })
  const ref = fail('arn', {
    code: 'queue-reference',
    evidence: { queueName: 'demo', source: 'settings.interruptionQueue' },
  })
  const fs = fixSet(facts, [
    result('toleration-value-types', typed),
    result('interruption-queue', ref),
    result('helm-release', fail('failed')),
  ])
  assert.deepEqual(
    fs.resources.map((r) => [r.address, r.group]),
    [['helm.karpenter.repair', 'fix: toleration-value-types, interruption-queue']],
  )
  const values = fs.resources[0]!.desired.values as Record<string, Record<string, unknown>>
  assert.equal(values.settings!.interruptionQueue, 'demo')
  assert.deepEqual(values.tolerations, [{ value: 'true' }])
  assert.deepEqual(fs.touched, ['toleration-value-types', 'interruption-queue', 'helm-release'])
  assert.deepEqual(fs.manual, [
    {
      check: 'helm-release',
      message: 'failed',
      why: 'a Helm release needs a decision (roll back, or upgrade with corrected values); the Helm repair in this plan makes a new revision, which settles it if it deploys',
      commands: [],
    },
  ])
})

test('one check with two edits names itself once; without a failed release nothing more is judged', () => {
  const facts = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value)
      f.kube.release.value.values.tolerations = [{ value: true }, { value: 1 }]
  })
  const second = fail('1', { evidence: { path: 'tolerations[1].value' } })
  const fs = fixSet(facts, [result('toleration-value-types', typed, second)])
  assert.deepEqual(
    fs.resources.map((r) => r.group),
    ['fix: toleration-value-types'],
  )
  assert.deepEqual(fs.touched, ['toleration-value-types'])
})

test('no release read: no Helm repair, and the helm-release finding keeps its plain reason', () => {
  const facts = healthyFacts((f) => {
    withToleration(f)
    f.kube.release = failed('release')
  })
  const fs = fixSet(facts, [result('toleration-value-types', typed), result('helm-release', fail('failed'))])
  assert.deepEqual(fs.resources, [])
  assert.deepEqual(fs.touched, [])
  assert.deepEqual(
    fs.manual.map((m) => [m.check, m.why]),
    [
      [
        'toleration-value-types',
        'the value is not in your Helm values (a chart default): set it in your values',
      ],
      ['helm-release', 'a Helm release needs a decision (roll back, or upgrade with corrected values)'],
    ],
  )
})

test("a Helm repair amends only the failed release's reason, and judges helm-release again only when it failed", () => {
  const fs = fixSet(healthyFacts(withToleration), [
    result('toleration-value-types', typed),
    result('karpenter-version', fail('old')),
  ])
  assert.deepEqual(
    fs.manual.map((m) => m.why),
    ['an upgrade of Karpenter is a planned change, not a repair'],
  )
  assert.deepEqual(fs.touched, ['toleration-value-types'])
})
