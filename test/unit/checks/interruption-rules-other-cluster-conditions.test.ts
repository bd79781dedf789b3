// Another cluster's rule is never a candidate for this cluster's verdict or repair (issue 19, item 1):
// with this cluster's SpotInterruption rule gone, the other cluster's rule (to its own queue) is left
// alone and this cluster's own rule is the fix.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules, otherCluster } from '../../../src/checks/interruption-rules.js'
import type { EventRule } from '../../../src/facts/types.js'
import { ACCOUNT, healthyFacts, REGION } from '../../helpers/facts.js'
import { editRules, isSpotRule } from '../../helpers/check-fixtures.js'

const OTHER_QUEUE = `arn:aws:sqs:${REGION}:${ACCOUNT}:other`
const otherRule: EventRule = {
  name: 'Karpenter-other-SpotInterruption',
  arn: `arn:aws:events:${REGION}:${ACCOUNT}:rule/Karpenter-other-SpotInterruption`,
  state: 'ENABLED',
  eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
  targetArns: [OTHER_QUEUE],
  targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: OTHER_QUEUE }],
}

const spotFinding = (rules: (r: EventRule[]) => EventRule[]) =>
  interruptionRules
    .run(healthyFacts(editRules(rules)))
    .find(
      (f) =>
        f.subject?.includes('Spot Instance Interruption') || f.message.includes('Spot Instance Interruption'),
    )

test('otherCluster: karpctl’s and the getting-started stack’s names, for this cluster or another', () => {
  assert.equal(otherCluster('Karpenter-other-SpotInterruption', 'demo'), 'other')
  assert.equal(otherCluster('Karpenter-other-SpotInterruptionRule-1A2B3C', 'demo'), 'other')
  assert.equal(otherCluster('Karpenter-demo-2-Rebalance', 'demo'), 'demo-2')
  assert.equal(otherCluster('Karpenter-demo-SpotInterruption', 'demo'), undefined)
  assert.equal(otherCluster('Karpenter-demo-ScheduledChangeRule-XYZ', 'demo'), undefined)
  // Names that say no cluster (Terraform's module) are judged as before.
  assert.equal(otherCluster('KarpenterSpotInterrupt-20240101', 'demo'), undefined)
})

test("this cluster's rule gone, another cluster's present: the verdict is a missing rule, its fix creates this cluster's own", () => {
  const f = spotFinding((rules) => [...rules.filter((r) => !isSpotRule(r)), otherRule])!
  assert.equal(f.status, 'fail')
  assert.match(f.message, /^no EventBridge rule matches "EC2 Spot Instance Interruption Warning"/)
  assert.ok(!(f.fix?.commands ?? []).some((c) => c.includes('Karpenter-other-')))
  assert.ok((f.fix?.commands ?? []).some((c) => c.includes('--name Karpenter-demo-SpotInterruption ')))
})

test('a rule named for another cluster that already delivers to this queue still counts', () => {
  const f = spotFinding((rules) => [
    ...rules.filter((r) => !isSpotRule(r)),
    { ...otherRule, targetArns: [`arn:aws:sqs:${REGION}:${ACCOUNT}:demo`] },
  ])!
  assert.equal(f.status, 'pass')
})

test('a rule named for no cluster that sends elsewhere is still repaired in place (not duplicated)', () => {
  const f = spotFinding((rules) => [
    ...rules.filter((r) => !isSpotRule(r)),
    { ...otherRule, name: 'KarpenterSpotInterrupt-20240101' },
  ])!
  assert.equal(f.status, 'fail')
  assert.match(f.message, /^rule KarpenterSpotInterrupt-20240101 /)
})
