// The conditions interruption-rules judges, one at a time (issue 12, item 8: mutation testing):
// which Karpenter versions need the capacity-reservation rule, when the check skips (and says why),
// which of several rules for an event is repaired, and the exact message, evidence and fix of a
// rule without a target, with several stale queues, with a reference id taken, or missing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import type { EventRule, Facts } from '../../../src/facts/types.js'
import {
  editRules,
  isSpotRule,
  OLD_QUEUE_ARN,
  setChartVersion,
  setQueueSetting,
  usesReservations,
} from '../../helpers/check-fixtures.js'
import { healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'

const SPOT = 'Karpenter-demo-SpotInterruptionRule'
const SPOT_ARN = `arn:aws:events:us-west-2:123456789012:rule/${SPOT}`
const SPOT_EVENT = 'EC2 Spot Instance Interruption Warning'
const QUEUE = `demo (${QUEUE_ARN})`
const OLD2_ARN = `${OLD_QUEUE_ARN}2`
const LAMBDA = 'arn:aws:lambda:us-west-2:123456789012:function:audit'
const PUT_TARGETS = (rule: string, id = 'KarpenterInterruptionQueueTarget') =>
  `aws events put-targets --rule ${rule} --targets Id=${id},Arn=${QUEUE_ARN} --region us-west-2`

/** The spot interruption rule changed by `over`. */
const spot = (over: Partial<EventRule>) =>
  editRules((rules) => rules.map((r) => (isSpotRule(r) ? { ...r, ...over } : r)))
const run = (fn?: (f: Facts) => void) => runCheck(interruptionRules, healthyFacts(fn)).findings
const failing = (fn: (f: Facts) => void) => {
  const found = run(fn).filter((f) => f.status !== 'pass')
  assert.equal(found.length, 1)
  return found[0]!
}
const skipped = (fn: (f: Facts) => void) => {
  const findings = run(fn)
  assert.deepEqual(
    findings.map((f) => f.status),
    ['skipped'],
  )
  return findings[0]!.message
}

test('interruption-rules is an error-severity interruption check', () => {
  assert.equal(interruptionRules.meta.id, 'interruption-rules')
  assert.equal(interruptionRules.meta.severity, 'error')
  assert.equal(interruptionRules.meta.category, 'interruption')
})

test('healthy: each rule passes, naming itself and its event', () => {
  assert.deepEqual(
    run().find((f) => f.subject === SPOT_ARN),
    {
      status: 'pass',
      subject: SPOT_ARN,
      message: `rule ${SPOT} sends "${SPOT_EVENT}" to the queue`,
    },
  )
})

test('the capacity-reservation rule is judged from 1.11 on, as the templates declare it (2.x included), not before (0.x included)', () => {
  const count = (version: string) => run(setChartVersion(version, version)).length
  assert.equal(count('1.12.0'), 5)
  assert.equal(count('2.0.0'), 5)
  assert.equal(count('1.11.3'), 5)
  // policies/cloudformation-v1.10.2.yaml has four rules: a 1.10 install is not asked for the fifth.
  assert.equal(count('1.10.2'), 4)
  assert.equal(count('0.37.0'), 4)
})

test('skipped, saying why: a setting that names no queue; a queue that does not exist', () => {
  assert.equal(
    skipped((f) => {
      setQueueSetting('my queue!')(f)
      f.sqs.queue = ok(null)
    }),
    'settings.interruptionQueue (my queue!) names no queue: see interruption-queue',
  )
  assert.equal(
    skipped((f) => (f.sqs.queue = ok(null))),
    'interruption queue demo does not exist: see interruption-queue',
  )
})

test('a queue ARN in another region (not read here): the rules are still judged against it', () => {
  const arn = 'arn:aws:sqs:eu-west-1:123456789012:demo'
  const findings = run((f) => {
    setQueueSetting(arn)(f)
    f.sqs.queue = ok(null)
    usesReservations(f)
  })
  assert.equal(findings.length, 5)
  for (const f of findings) {
    assert.equal(f.status, 'fail')
    assert.equal(f.evidence?.queueArn, arn)
  }
})

test('of two rules for the event targeting other queues, the enabled one is repaired before one named for the cluster', () => {
  const other = (name: string, state: string): EventRule => ({
    name,
    arn: `arn:aws:events:us-west-2:123456789012:rule/${name}`,
    state,
    eventPattern: { source: ['aws.ec2'], 'detail-type': [SPOT_EVENT] },
    targetArns: [OLD_QUEUE_ARN],
    targets: [{ id: 'T', arn: OLD_QUEUE_ARN }],
  })
  const f = failing(
    editRules((rules) => [
      ...rules.filter((x) => !isSpotRule(x)),
      other('someone-elses-spot-rule', 'ENABLED'),
      other('Karpenter-demo-Spot', 'DISABLED'),
    ]),
  )
  assert.equal(f.evidence?.rule, 'someone-elses-spot-rule')
})

test('disabled and without any target: the exact finding (add the queue, then enable)', () => {
  assert.deepEqual(failing(spot({ state: 'DISABLED', targetArns: [], targets: [] })), {
    status: 'fail',
    subject: SPOT_ARN,
    message: `rule ${SPOT} for "${SPOT_EVENT}" is DISABLED and does not target the interruption queue ${QUEUE} (it has no target): those events never reach the queue`,
    code: 'rule-repair',
    evidence: {
      rule: SPOT,
      state: 'DISABLED',
      targets: [],
      queueArn: QUEUE_ARN,
      targetId: 'KarpenterInterruptionQueueTarget',
    },
    fix: {
      summary: `add the queue as a target of ${SPOT}, then enable ${SPOT} (the rule is kept, not duplicated)`,
      commands: [PUT_TARGETS(SPOT), `aws events enable-rule --name ${SPOT} --region us-west-2`],
    },
  })
})

test('two targets that are not queues: both listed, and the queue is added', () => {
  const sns = 'arn:aws:sns:us-west-2:123456789012:audit'
  const f = failing(
    spot({
      targetArns: [LAMBDA, sns],
      targets: [
        { id: 'L', arn: LAMBDA },
        { id: 'S', arn: sns },
      ],
    }),
  )
  assert.equal(
    f.message,
    `rule ${SPOT} for "${SPOT_EVENT}" does not target the interruption queue ${QUEUE} (targets: ${LAMBDA}, ${sns}): those events never reach the queue`,
  )
  assert.equal(f.fix?.summary, `add the queue as a target of ${SPOT} (the rule is kept, not duplicated)`)
})

test('two stale queues under their own ids: both named, both removed, no "list-targets" hint', () => {
  const f = failing(
    spot({
      targetArns: [OLD_QUEUE_ARN, OLD2_ARN],
      targets: [
        { id: 'A', arn: OLD_QUEUE_ARN },
        { id: 'B', arn: OLD2_ARN },
      ],
    }),
  )
  assert.equal(
    f.message,
    `rule ${SPOT} for "${SPOT_EVENT}" sends to queue demo-old (${OLD_QUEUE_ARN}), queue demo-old2 (${OLD2_ARN}), not to the interruption queue ${QUEUE}: those events never reach the queue`,
  )
  assert.deepEqual(f.fix, {
    summary: `point ${SPOT} at demo instead of demo-old, demo-old2 (the rule is kept, not duplicated)`,
    commands: [PUT_TARGETS(SPOT), `aws events remove-targets --rule ${SPOT} --ids A B --region us-west-2`],
  })
})

test('the reference target id held by another target on a long-named cluster: the new id is cut to 64 characters', () => {
  const cluster = 'a-cluster-name-that-is-long-enough-to-overflow'
  // The rule is this cluster's (a rule named for another cluster is never re-targeted).
  const name = `Karpenter-${cluster}-SpotInterruptionRule`
  const f = failing((f) => {
    f.meta.clusterName = cluster
    spot({ name, targetArns: [LAMBDA], targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: LAMBDA }] })(
      f,
    )
  })
  const id = `KarpenterInterruptionQueueTarget-${cluster}`.slice(0, 64)
  assert.equal(id.length, 64)
  assert.deepEqual(f.fix?.commands, [PUT_TARGETS(name, id)])
  assert.equal(f.evidence?.targetId, id)
})

test('a missing rule: the exact finding, nothing said about unsearched rules', () => {
  const f = failing(editRules((rules) => rules.filter((r) => !isSpotRule(r))))
  assert.deepEqual(
    { ...f, fix: f.fix?.summary },
    {
      status: 'fail',
      subject: `aws.ec2 / ${SPOT_EVENT}`,
      message: `no EventBridge rule matches "${SPOT_EVENT}" (aws.ec2) and sends it to the interruption queue`,
      code: 'rule-missing',
      evidence: {
        expected: { source: 'aws.ec2', detailType: SPOT_EVENT },
        queueArn: QUEUE_ARN,
        rulesFound: [
          'Karpenter-demo-ScheduledChangeRule',
          'Karpenter-demo-RebalanceRule',
          'Karpenter-demo-InstanceStateChangeRule',
          'Karpenter-demo-CapacityReservationInterruptionRule',
        ],
      },
      fix: 'create the SpotInterruptionRule rule and target the queue',
    },
  )
})

test('two searches that failed: both reasons, joined with "; "', () => {
  const f = failing((f) => {
    editRules((rules) => rules.filter((r) => !isSpotRule(r)))(f)
    f.events.partial = ['events:ListRules', 'events:ListRuleNamesByTarget'].map((read) => ({
      code: 'AccessDeniedException',
      kind: 'denied',
      message: '',
      read,
    }))
  })
  assert.match(
    f.message,
    /could not all be searched: could not read events:ListRules \(permission denied: AccessDeniedException\); could not read events:ListRuleNamesByTarget \(permission denied: AccessDeniedException\)\)$/,
  )
  assert.deepEqual(f.evidence?.unsearched, ['events:ListRules', 'events:ListRuleNamesByTarget'])
})
