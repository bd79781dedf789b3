// interruption-rules' duplicate condition, one case at a time: two enabled rules delivering the same
// event to the queue (a getting-started stack beside a second install) are a warning naming both, with
// the copy to delete and its owner's command; a disabled copy, a copy sending elsewhere, or one rule
// per event are not.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Finding } from '../../../src/checks/types.js'
import type { EventRule, Facts } from '../../../src/facts/types.js'
import { editRules, isSpotRule, OLD_QUEUE_ARN } from '../../helpers/check-fixtures.js'
import { healthyFacts, QUEUE_ARN } from '../../helpers/facts.js'
import { GS_STACK, ownedBy, ownerUnknown } from '../../helpers/owners.js'

const SPOT_EVENT = 'EC2 Spot Instance Interruption Warning'
const OURS = 'Karpenter-demo-SpotInterruptionRule'
const STACKS = `${GS_STACK}-SpotInterruptionRule-1XK9Q2`

/** A second spot rule beside the fixture's, delivering to `target` (the queue by default). */
const copy = (over: Partial<EventRule> = {}) =>
  editRules((rules) => {
    const spot = rules.find(isSpotRule)!
    return [
      ...rules,
      {
        ...spot,
        name: STACKS,
        arn: `arn:aws:events:us-west-2:123456789012:rule/${STACKS}`,
        targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: QUEUE_ARN }],
        ...over,
      },
    ]
  })
const warnings = (fn: (f: Facts) => void): Finding[] =>
  runCheck(interruptionRules, healthyFacts(fn)).findings.filter((f) => f.status === 'warn')

test('one rule per event: no duplicate warning', () => {
  assert.deepEqual(
    warnings(() => {}),
    [],
  )
})

test("the stack's rule and a copy deliver spot warnings twice: a warning naming both; the copy (not the stack's) is deleted", () => {
  const [w, ...rest] = warnings((f) => {
    copy()(f)
    ownedBy(f, STACKS, GS_STACK, 'SpotInterruptionRule', 'AWS::Events::Rule')
  })
  assert.equal(rest.length, 0)
  assert.deepEqual(w, {
    status: 'warn',
    subject: `${QUEUE_ARN} / ${SPOT_EVENT}`,
    message: `2 enabled rules deliver "${SPOT_EVENT}" to the interruption queue: ${OURS} and ${STACKS} (CloudFormation stack ${GS_STACK}); Karpenter receives each event 2 times`,
    evidence: {
      event: { source: 'aws.ec2', detailType: SPOT_EVENT },
      queueArn: QUEUE_ARN,
      rules: [
        { name: OURS, arn: `arn:aws:events:us-west-2:123456789012:rule/${OURS}` },
        { name: STACKS, arn: `arn:aws:events:us-west-2:123456789012:rule/${STACKS}`, stack: GS_STACK },
      ],
      keep: STACKS,
    },
    fix: {
      summary: `keep ${STACKS} (its stack declares it) and delete ${OURS} with its owner's command: delete-rule (below), or remove it from the Terraform configuration that made it`,
      commands: [
        `aws events remove-targets --rule ${OURS} --ids KarpenterInterruptionQueueTarget --region us-west-2`,
        `aws events delete-rule --name ${OURS} --region us-west-2`,
      ],
    },
  })
})

test('two copies, no stack: the first is kept, the second deleted', () => {
  const [w] = warnings(copy())
  assert.equal((w?.evidence as { keep: string }).keep, OURS)
  assert.deepEqual(w?.fix?.commands, [
    `aws events remove-targets --rule ${STACKS} --ids KarpenterInterruptionQueueTarget --region us-west-2`,
    `aws events delete-rule --name ${STACKS} --region us-west-2`,
  ])
})

test("two stacks' rules: the copy is removed from its stack's template, never deleted by hand", () => {
  const [w] = warnings((f) => {
    copy()(f)
    ownedBy(f, OURS, 'other-stack', 'SpotRule', 'AWS::Events::Rule')
    ownedBy(f, STACKS, GS_STACK, 'SpotInterruptionRule', 'AWS::Events::Rule')
  })
  assert.equal((w?.evidence as { keep: string }).keep, OURS)
  assert.match(w!.fix!.summary, new RegExp(`remove it from the template of stack ${GS_STACK}`))
  assert.ok(
    w!.fix!.commands!.every((c) => c.startsWith('aws cloudformation ')),
    w!.fix!.commands!.join('\n'),
  )
  assert.ok(w!.fix!.commands!.some((c) => c.includes(`update-stack --stack-name ${GS_STACK}`)))
})

test('an owner that could not be asked is said so in the warning', () => {
  const [w] = warnings((f) => {
    copy()(f)
    ownerUnknown(f, STACKS)
  })
  assert.match(
    w!.message,
    new RegExp(
      `${STACKS} \\(owner not known: could not read cloudformation:DescribeStackResources ${STACKS} \\(permission denied`,
    ),
  )
})

test('a disabled copy, or one sending to another queue, delivers nothing twice: no warning', () => {
  assert.deepEqual(warnings(copy({ state: 'DISABLED' })), [])
  assert.deepEqual(
    warnings(copy({ targetArns: [OLD_QUEUE_ARN], targets: [{ id: 'x', arn: OLD_QUEUE_ARN }] })),
    [],
  )
})

test('a rule matching every EC2 event beside the specific ones: one warning per event it doubles', () => {
  const found = warnings(
    editRules((rules) => [
      ...rules,
      {
        name: 'all-ec2',
        arn: 'arn:aws:events:us-west-2:123456789012:rule/all-ec2',
        state: 'ENABLED',
        eventPattern: { source: ['aws.ec2'] },
        targetArns: [QUEUE_ARN],
        targets: [{ id: 't', arn: QUEUE_ARN }],
      },
    ]),
  )
  // Spot, rebalance, state change and capacity reservation: the four aws.ec2 events.
  assert.equal(found.length, 4)
  assert.ok(found.every((w) => w.message.includes('all-ec2')))
})
