import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import type { EventRule } from '../../../src/facts/types.js'
import {
  editRules,
  isSpotRule as isSpot,
  OLD_QUEUE_ARN,
  usesReservations,
} from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, QUEUE_ARN } from '../../helpers/facts.js'

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
    // The name `karpctl install` gives the rule, so a later install finds it.
    `aws events put-rule --name Karpenter-demo-SpotInterruption --event-pattern '{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}' --region us-west-2`,
    `aws events put-targets --rule Karpenter-demo-SpotInterruption --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
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
  assert.match(fail.message, /is DISABLED: those events never reach the queue$/)
  // The repair keys on the code and needs the queue target's id, though it only enables the rule.
  assert.equal(fail.code, 'rule-repair')
  assert.deepEqual(fail.evidence, {
    rule: 'Karpenter-demo-SpotInterruptionRule',
    state: 'DISABLED',
    targets: [QUEUE_ARN],
    queueArn: QUEUE_ARN,
    targetId: 'KarpenterInterruptionQueueTarget',
  })
  assert.deepEqual(fail.fix!.commands, [
    'aws events enable-rule --name Karpenter-demo-SpotInterruptionRule --region us-west-2',
  ])
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

// ---- rules that exist but target another queue (issue 12, item 3) ----

/** Every rule sends to `arn` instead (the target keeps `id`). */
const retarget = (arn: string, id = 'KarpenterInterruptionQueueTarget') =>
  editRules((rules) => rules.map((x) => ({ ...x, targetArns: [arn], targets: [{ id, arn }] })))

test('the five rules all sending to an old queue: each is named with that queue, fixed in place by put-targets, no new rule', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts((f) => {
      retarget(OLD_QUEUE_ARN)(f)
      usesReservations(f)
    }),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 5)
  for (const f of r.findings) {
    assert.equal(f.status, 'fail')
    assert.match(f.subject!, /^arn:aws:events:us-west-2:123456789012:rule\/Karpenter-demo-/)
    assert.match(
      f.message,
      new RegExp(
        `^rule Karpenter-demo-\\w+ for ".+" sends to queue demo-old \\(${OLD_QUEUE_ARN}\\), not to the interruption queue demo \\(${QUEUE_ARN}\\)`,
      ),
    )
    assert.deepEqual(f.evidence?.otherQueues, [OLD_QUEUE_ARN])
    const commands = f.fix!.commands!
    assert.ok(!commands.some((c) => c.includes('put-rule')), commands.join('\n'))
    // Same target id: put-targets replaces the old queue's target, nothing to remove.
    assert.deepEqual(commands, [
      `aws events put-targets --rule ${f.evidence!.rule} --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
    ])
    assert.match(f.fix!.summary, /point Karpenter-demo-\w+ at demo instead of demo-old/)
  }
})

test('a stale target under another id is removed after the queue is added', () => {
  const r = runCheck(interruptionRules, healthyFacts(retarget(OLD_QUEUE_ARN, 'OldQueue')))
  const f = r.findings.find((x) => x.evidence?.rule === 'Karpenter-demo-SpotInterruptionRule')!
  assert.deepEqual(f.fix!.commands, [
    `aws events put-targets --rule Karpenter-demo-SpotInterruptionRule --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
    'aws events remove-targets --rule Karpenter-demo-SpotInterruptionRule --ids OldQueue --region us-west-2',
  ])
})

test('a rule whose only target is not a queue: the queue is added, the other target is kept', () => {
  const lambda = 'arn:aws:lambda:us-west-2:123456789012:function:audit'
  const r = runCheck(
    interruptionRules,
    healthyFacts(
      editRules((rules) =>
        rules.map((x) =>
          isSpot(x)
            ? {
                ...x,
                targetArns: [lambda],
                targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: lambda }],
              }
            : x,
        ),
      ),
    ),
  )
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.match(f.message, /does not target the interruption queue demo .*\(targets: arn:aws:lambda/)
  // The lambda holds the reference id: the queue gets another one, and nothing is removed.
  assert.deepEqual(f.fix!.commands, [
    `aws events put-targets --rule Karpenter-demo-SpotInterruptionRule --targets Id=KarpenterInterruptionQueueTarget-demo,Arn=${QUEUE_ARN} --region us-west-2`,
  ])
})

test('disabled and sending to another queue: one finding, re-target then enable', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts(
      editRules((rules) =>
        rules.map((x) =>
          isSpot(x)
            ? {
                ...x,
                state: 'DISABLED',
                targetArns: [OLD_QUEUE_ARN],
                targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: OLD_QUEUE_ARN }],
              }
            : x,
        ),
      ),
    ),
  )
  const fails = r.findings.filter((x) => x.status === 'fail')
  assert.equal(fails.length, 1)
  assert.match(fails[0]!.message, /is DISABLED and sends to queue demo-old/)
  assert.deepEqual(fails[0]!.fix!.commands, [
    `aws events put-targets --rule Karpenter-demo-SpotInterruptionRule --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
    'aws events enable-rule --name Karpenter-demo-SpotInterruptionRule --region us-west-2',
  ])
})

test('of two rules for the event, the one named for this cluster is repaired; one already on the queue passes', () => {
  const other = (name: string): EventRule => ({
    name,
    arn: `arn:aws:events:us-west-2:123456789012:rule/${name}`,
    state: 'ENABLED',
    eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    targetArns: [OLD_QUEUE_ARN],
    targets: [{ id: 'T', arn: OLD_QUEUE_ARN }],
  })
  const facts = healthyFacts(
    editRules((rules) => [
      ...rules.filter((x) => !isSpot(x)),
      other('someone-elses-spot-rule'),
      other('Karpenter-demo-Spot'),
    ]),
  )
  const fail = runCheck(interruptionRules, facts).findings.find((x) => x.status === 'fail')!
  assert.equal(fail.evidence?.rule, 'Karpenter-demo-Spot')
  const passing = healthyFacts(editRules((rules) => [...rules, other('Karpenter-demo-OldSpot')]))
  assert.equal(runCheck(interruptionRules, passing).status, 'pass')
})

test('a snapshot without target ids: the fix says how to find the stale target', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts(
      editRules((rules) =>
        rules.map((x) => {
          const { targets: _targets, ...rest } = x
          return isSpot(x) ? { ...rest, targetArns: [OLD_QUEUE_ARN] } : x
        }),
      ),
    ),
  )
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.equal(f.fix!.commands!.length, 1)
  assert.match(f.fix!.summary, /aws events list-targets-by-rule --rule Karpenter-demo-SpotInterruptionRule/)
})

test('ListRules denied and no rule on the queue: fail, and the message says other rules could not be searched', () => {
  const r = runCheck(
    interruptionRules,
    healthyFacts((f) => {
      editRules((rules) => rules.filter((x) => !isSpot(x)))(f)
      f.events.partial = [
        { code: 'AccessDeniedException', kind: 'denied', message: 'no', read: 'events:ListRules' },
      ]
    }),
  )
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.match(f.message, /could not all be searched: could not read events:ListRules \(permission denied/)
  assert.deepEqual(f.evidence?.unsearched, ['events:ListRules'])
})
