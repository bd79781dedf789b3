// interruption-rules and the fifth rule (issue 35, item 1): "EC2 Capacity Reservation Instance
// Interruption Warning" concerns only a cluster that may launch into interruptible capacity
// reservations (aws/karpenter-provider-aws PR #9019). terraform-aws-eks's modules/karpenter creates
// four rules (`local.events` in modules/karpenter/main.tf: Karpenter{HealthEvent,SpotInterrupt,
// InstanceRebalance,InstanceStateChange}-<suffix>) and the v1.10 getting-started template four too
// (policies/cloudformation-v1.10.2.yaml): on such an install with no reservation in use, no rule is
// missing and --fix adds nothing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import type { EventRule, Facts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { editRules, nodePool, setChartVersion, usesReservations } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, QUEUE_ARN } from '../../helpers/facts.js'

const RESERVATION = 'EC2 Capacity Reservation Instance Interruption Warning'
const SUFFIX = '20250101000000000000000001'

/** The four rules of terraform-aws-eks modules/karpenter (v20 and v21), named as `local.events` names them. */
const moduleRules = (): EventRule[] =>
  (
    [
      ['HealthEvent', { source: ['aws.health'], 'detail-type': ['AWS Health Event'] }],
      ['SpotInterrupt', { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] }],
      [
        'InstanceRebalance',
        { source: ['aws.ec2'], 'detail-type': ['EC2 Instance Rebalance Recommendation'] },
      ],
      [
        'InstanceStateChange',
        { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'] },
      ],
    ] as const
  ).map(([key, eventPattern]) => {
    const name = `Karpenter${key}-${SUFFIX}`
    return {
      name,
      arn: `arn:aws:events:us-west-2:123456789012:rule/${name}`,
      state: 'ENABLED',
      eventPattern: { ...eventPattern },
      targetArns: [QUEUE_ARN],
      targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: QUEUE_ARN }],
    }
  })

const moduleInstall = (more?: (f: Facts) => void) =>
  healthyFacts((f) => {
    editRules(() => moduleRules())(f)
    more?.(f)
  })
const reservationFinding = (facts: Facts) =>
  runCheck(interruptionRules, facts).findings.find((x) => x.message.includes(RESERVATION))!

test('the module four rules, no reservation in use: every finding passes, the fifth says it is not needed', () => {
  const r = runCheck(interruptionRules, moduleInstall())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 5)
  const fifth = reservationFinding(moduleInstall())
  assert.equal(fifth.code, 'rule-not-needed')
  assert.match(fifth.message, /no NodePool allows karpenter.sh\/capacity-type reserved/)
  assert.equal(fifth.fix, undefined)
})

test('--fix builds nothing for a rule the cluster does not need (item 6)', () => {
  const facts = moduleInstall()
  const fs = fixSet(facts, [runCheck(interruptionRules, facts)])
  assert.deepEqual(fs, { resources: [], manual: [], touched: [] })
})

test('a NodePool allowing reserved: the missing fifth rule fails and names the pool', () => {
  const facts = moduleInstall((f) => {
    nodePool(f).spec.template.spec.requirements = [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved', 'on-demand'] },
    ]
  })
  const fifth = reservationFinding(facts)
  assert.equal(fifth.status, 'fail')
  assert.equal(fifth.code, 'rule-missing')
  assert.match(fifth.message, /capacity reservations used by NodePool default/)
  // and --fix creates exactly that one rule, as install names it
  const fs = fixSet(facts, [runCheck(interruptionRules, facts)])
  assert.deepEqual(
    fs.resources.map((x) => x.name),
    ['Karpenter-demo-CapacityReservationInterruption'],
  )
})

test('an EC2NodeClass selecting capacity reservations: the fifth rule fails and names the class', () => {
  const fifth = reservationFinding(moduleInstall(usesReservations))
  assert.equal(fifth.status, 'fail')
  assert.match(fifth.message, /capacity reservations used by EC2NodeClass default/)
})

test('NodePools that could not be read: whether the fifth rule is needed is unknown, never passed', () => {
  const fifth = reservationFinding(
    moduleInstall((f) => (f.kube.nodePools = failed('kubernetes: NodePools', 'Forbidden'))),
  )
  assert.equal(fifth.status, 'unknown')
  assert.match(fifth.message, /is not known: could not read kubernetes: NodePools/)
})

test('a NodePool that excludes only spot (NotIn) allows reserved: the rule is needed', () => {
  const fifth = reservationFinding(
    moduleInstall((f) => {
      nodePool(f).spec.template.spec.requirements = [
        { key: 'karpenter.sh/capacity-type', operator: 'NotIn', values: ['spot'] },
      ]
    }),
  )
  assert.equal(fifth.status, 'fail')
})

test('a 1.10 install (four-rule template) with reservations is not asked for the fifth rule', () => {
  const r = runCheck(
    interruptionRules,
    moduleInstall((f) => {
      setChartVersion('1.10.2', '1.10.2')(f)
      usesReservations(f)
    }),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 4)
})

test('the fifth rule present and healthy passes as before, reservations or not', () => {
  const facts = healthyFacts()
  assert.equal(reservationFinding(facts).status, 'pass')
  assert.equal(reservationFinding(facts).code, undefined)
})
