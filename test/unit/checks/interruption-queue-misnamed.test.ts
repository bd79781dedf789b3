// interruption-queue when the setting misnames an existing queue (issue 35, items 3 and 6): on a
// terraform-aws-eks modules/karpenter install the queue is `Karpenter-<cluster>` (module's
// `queue_name` default) and its four rules deliver there; a getting-started `settings.interruptionQueue:
// demo` names a queue that does not exist. The queue meant is the one the rules deliver to and the
// controller may read: name it, set the setting — never create `demo` and a second rule set.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck } from '../../../src/checks/run.js'
import { deliveredQueueNames } from '../../../src/facts/collect-interruption.js'
import type { Facts, QueueFacts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { editRules, roleOf } from '../../helpers/check-fixtures.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  failed,
  healthyFacts,
  ok,
  QUEUE_ARN,
  queuePolicy,
  REGION,
  withoutHelm,
} from '../../helpers/facts.js'

const MODULE_QUEUE = 'Karpenter-demo'
const MODULE_ARN = `arn:aws:sqs:${REGION}:${ACCOUNT}:${MODULE_QUEUE}`
const moduleQueue = (name = MODULE_QUEUE): QueueFacts => ({
  name,
  url: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`,
  arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`,
  policy: queuePolicy(),
  sseEnabled: true,
})

/** The module's queue and rules, the controller's policy scoped to it, and the setting still `demo`. */
const misnamed = (more?: (f: Facts) => void) =>
  healthyFacts((f) => {
    f.sqs.queue = ok(null)
    f.sqs.deliveredTo = { [MODULE_QUEUE]: ok(moduleQueue()) }
    editRules((rules) =>
      rules.map((r) => ({
        ...r,
        targetArns: [MODULE_ARN],
        targets: [{ id: 'KarpenterInterruptionQueueTarget', arn: MODULE_ARN }],
      })),
    )(f)
    const role = roleOf(f, CONTROLLER_ROLE)
    if (role.attached.ok)
      role.attached = ok(JSON.parse(JSON.stringify(role.attached.value).replaceAll(QUEUE_ARN, MODULE_ARN)))
    more?.(f)
  })

test('the queue the rules deliver to and the controller may read is named; the fix sets the setting', () => {
  const [f, ...rest] = runCheck(interruptionQueue, misnamed()).findings
  assert.equal(rest.length, 0)
  assert.equal(f!.status, 'fail')
  assert.equal(f!.code, 'queue-misnamed')
  assert.equal(
    f!.message,
    `interruption queue demo does not exist in us-west-2, but the interruption rules deliver to queue ${MODULE_QUEUE} (${MODULE_ARN}), which the controller may read: settings.interruptionQueue should name it`,
  )
  assert.deepEqual(f!.fix!.commands, [
    `helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --reuse-values --set settings.interruptionQueue=${MODULE_QUEUE}`,
  ])
})

test('--fix edits the Helm value only: no queue, no rule is created (item 6)', () => {
  const facts = misnamed()
  const fs = fixSet(facts, [runCheck(interruptionQueue, facts), runCheck(interruptionRules, facts)])
  assert.deepEqual(
    fs.resources.map((r) => r.address.split('.')[0]),
    ['helm'],
  )
  assert.ok(!fs.resources.some((r) => /sqs-queue|events-rule/.test(r.address)))
})

test('the same module install applied by Argo CD (no Helm release): the setting is set in the live env, --fix leaves it to the user', () => {
  const facts = misnamed(withoutHelm())
  const f = runCheck(interruptionQueue, facts).findings[0]!
  assert.equal(f.code, 'queue-misnamed')
  assert.deepEqual(f.fix!.commands, [
    `kubectl set env deployment/karpenter --namespace kube-system INTERRUPTION_QUEUE=${MODULE_QUEUE}`,
  ])
  assert.match(
    f.fix!.summary,
    /Argo CD application "karpenter"\): make the same change in the Helm values it renders/,
  )
  // No Helm release to repair, no queue or rule made beside the module's: one manual step, named why.
  const fs = fixSet(facts, [runCheck(interruptionQueue, facts), runCheck(interruptionRules, facts)])
  assert.deepEqual(fs.resources, [])
  assert.deepEqual(
    fs.manual.map((m) => [m.check, m.why, m.commands]),
    [
      [
        'interruption-queue',
        'Karpenter has no Helm release here: karpctl does not change objects another tool applied',
        [`kubectl set env deployment/karpenter --namespace kube-system INTERRUPTION_QUEUE=${MODULE_QUEUE}`],
      ],
    ],
  )
})

test('a queue the controller may not read is not the one meant: the old finding (queue missing)', () => {
  const f = runCheck(
    interruptionQueue,
    misnamed((x) => {
      const role = roleOf(x, CONTROLLER_ROLE)
      if (role.attached.ok)
        role.attached = ok(JSON.parse(JSON.stringify(role.attached.value).replaceAll(MODULE_ARN, QUEUE_ARN)))
    }),
  ).findings[0]!
  assert.equal(f.code, 'queue-missing')
})

test('two such queues: both named, nothing created or set automatically', () => {
  const facts = misnamed((x) => {
    x.sqs.deliveredTo = { [MODULE_QUEUE]: ok(moduleQueue()), other: ok(moduleQueue('other')) }
    const role = roleOf(x, CONTROLLER_ROLE)
    if (role.attached.ok)
      role.attached = ok(
        JSON.parse(
          JSON.stringify(role.attached.value).replaceAll(MODULE_ARN, `arn:aws:sqs:${REGION}:${ACCOUNT}:*`),
        ),
      )
  })
  const f = runCheck(interruptionQueue, facts).findings[0]!
  assert.equal(f.code, 'queue-ambiguous')
  assert.match(f.message, /deliver to Karpenter-demo and other/)
  const fs = fixSet(facts, [runCheck(interruptionQueue, facts)])
  assert.deepEqual(fs.resources, [])
  assert.equal(fs.manual.length, 1)
})

test('the controller role unreadable, or the delivered queue unreadable: the old finding, no guess', () => {
  assert.equal(
    runCheck(
      interruptionQueue,
      misnamed((x) => (x.iam.roles[CONTROLLER_ROLE] = failed('iam:GetRole'))),
    ).findings[0]!.code,
    'queue-missing',
  )
  assert.equal(
    runCheck(
      interruptionQueue,
      misnamed((x) => (x.sqs.deliveredTo = { [MODULE_QUEUE]: failed('sqs:GetQueueUrl') })),
    ).findings[0]!.code,
    'queue-missing',
  )
})

test('deliveredQueueNames: enabled interruption rules, this account and region, not the named one, distinct', () => {
  const prefix = `arn:aws:sqs:${REGION}:${ACCOUNT}:`
  const rule = (
    targets: string[],
    state = 'ENABLED',
    pattern: Record<string, unknown> = { source: ['aws.ec2'] },
  ) => ({
    name: 'r',
    arn: 'arn:aws:events:us-west-2:123456789012:rule/r',
    state,
    eventPattern: pattern,
    targetArns: targets,
  })
  assert.deepEqual(
    deliveredQueueNames(
      [
        rule([MODULE_ARN, 'arn:aws:lambda:us-west-2:123456789012:function:f']),
        rule([MODULE_ARN]),
        rule([QUEUE_ARN]),
        rule(['arn:aws:sqs:eu-west-1:123456789012:far']),
        rule([`${prefix}disabled`], 'DISABLED'),
        rule([`${prefix}unrelated`], 'ENABLED', { source: ['aws.s3'] }),
      ],
      'demo',
      prefix,
    ),
    [MODULE_QUEUE],
  )
})
