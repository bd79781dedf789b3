import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import type { EventRule, Facts } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'

const editRules = (edit: (rules: EventRule[]) => EventRule[]) => (f: Facts) => {
  if (f.events.rules.ok) f.events.rules = ok(edit(f.events.rules.value))
}

const isSpot = (r: EventRule) => r.name.endsWith('SpotInterruptionRule')

test('healthy: the five rules are enabled and target the queue', () => {
  const r = runCheck(interruptionRules, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 5)
})

test('a missing spot interruption rule fails with put-rule and put-targets', () => {
  const r = runCheck(interruptionRules, healthyFacts(editRules((rules) => rules.filter((x) => !isSpot(x)))))
  assert.equal(r.status, 'fail')
  const fails = r.findings.filter((x) => x.status === 'fail')
  assert.equal(fails.length, 1)
  const fail = fails[0]!
  assert.equal(fail.subject, 'aws.ec2 / EC2 Spot Instance Interruption Warning')
  assert.deepEqual(fail.fix!.commands, [
    `aws events put-rule --name Karpenter-demo-SpotInterruptionRule --event-pattern '{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}' --region us-west-2`,
    `aws events put-targets --rule Karpenter-demo-SpotInterruptionRule --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
  ])
})

test('a disabled rule fails with enable-rule', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts(editRules((rules) => rules.map((x) => (isSpot(x) ? { ...x, state: 'DISABLED' } : x)))),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.match(fail.subject!, /rule\/Karpenter-demo-SpotInterruptionRule$/)
  assert.deepEqual(fail.evidence, { rule: 'Karpenter-demo-SpotInterruptionRule', state: 'DISABLED' })
  assert.equal(
    fail.fix!.commands![0],
    'aws events enable-rule --name Karpenter-demo-SpotInterruptionRule --region us-west-2',
  )
})

test('a rule targeting another queue fails with put-targets', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts(
      editRules((rules) =>
        rules.map((x) => (isSpot(x) ? { ...x, targetArns: ['arn:aws:sqs:us-west-2:123456789012:old'] } : x)),
      ),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings.find((x) => x.status === 'fail')!.fix!.commands![0]!,
    /put-targets --rule Karpenter-demo-SpotInterruptionRule/,
  )
})

test('one rule carrying several detail-types covers each of them', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts(
      editRules((rules) => [
        ...rules.filter((x) => x.eventPattern?.source?.toString() === 'aws.health'),
        {
          name: 'all-ec2',
          arn: 'arn:aws:events:us-west-2:123456789012:rule/all-ec2',
          state: 'ENABLED',
          eventPattern: { source: ['aws.ec2'] },
          targetArns: [QUEUE_ARN],
        },
      ]),
    ),
  )
  assert.equal(r.status, 'pass')
})

test('Karpenter 1.5 does not need the capacity-reservation rule', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts((f) => {
      if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.chartVersion = '1.5.0'
      editRules((rules) => rules.filter((x) => !x.name.endsWith('CapacityReservationInterruptionRule')))(f)
    }),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 4)
})

test('no interruption queue configured: skipped', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts((f) => {
      if (f.kube.release.ok && f.kube.release.value)
        (f.kube.release.value.computedValues.settings as Record<string, unknown>).interruptionQueue = ''
      if (f.kube.deployment.ok && f.kube.deployment.value)
        delete f.kube.deployment.value.env.INTERRUPTION_QUEUE
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no interruption queue is configured/)
})

test('a failed rules read makes the check unknown', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts((f) => (f.events.rules = failed('events:ListRuleNamesByTarget', 'AccessDeniedException'))),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /AccessDeniedException/)
})
