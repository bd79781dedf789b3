import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { runCheck, runChecks } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { setQueuePolicy as setPolicy, setQueueSetting } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'

/** The JSON a `--attributes '{...}'` argument carries. */
const attributesOf = (cmd: string) =>
  JSON.parse(cmd.slice(cmd.indexOf("--attributes '") + 14, -1)) as Record<string, string>

test('healthy: the queue exists and its policy lets EventBridge and SQS send', () => {
  const r = runCheck(interruptionQueue, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 2)
  assert.equal(r.findings[0]!.subject, QUEUE_ARN)
})

test('no queue configured: warn that interruptions are not handled, with a fix', () => {
  const r = runCheck(interruptionQueue, healthyFacts(setQueueSetting('')))
  assert.equal(r.status, 'warn')
  const warn = r.findings[0]!
  assert.equal(warn.subject, 'settings.interruptionQueue')
  assert.match(warn.fix!.commands![0]!, /^aws sqs create-queue --queue-name demo --region us-west-2/)
  assert.match(
    warn.fix!.commands![1]!,
    /^helm upgrade karpenter oci:\/\/public.ecr.aws\/karpenter\/karpenter --version 1.14.1 --namespace kube-system --reuse-values --set settings.interruptionQueue=demo$/,
  )
})

test('a queue URL instead of a name fails and the fix sets the name', () => {
  const url = 'https://sqs.us-west-2.amazonaws.com/123456789012/demo'
  const r = runCheck(interruptionQueue, healthyFacts(setQueueSetting(url)))
  assert.equal(r.status, 'fail')
  const fail = r.findings[0]!
  assert.match(fail.message, /is a queue URL/)
  assert.deepEqual(fail.evidence, {
    value: url,
    source: 'settings.interruptionQueue',
    form: 'url',
    queueName: 'demo',
  })
  assert.deepEqual(fail.fix!.commands, [
    'helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --reuse-values --set settings.interruptionQueue=demo',
  ])
  // The queue meant (demo) exists: its policy is still judged, and passes.
  assert.deepEqual(
    r.findings.map((x) => x.status),
    ['fail', 'pass'],
  )
})

test('a queue ARN instead of a name fails', () => {
  const r = runCheck(interruptionQueue, healthyFacts(setQueueSetting(QUEUE_ARN)))
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /is a queue ARN/)
})

test('a queue that does not exist fails with create-queue carrying the reference policy', () => {
  const r = runCheck(
    interruptionQueue,
    healthyFacts((f) => (f.sqs.queue = ok(null))),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings[0]!
  assert.equal(fail.subject, 'demo')
  const attrs = attributesOf(fail.fix!.commands![0]!)
  assert.equal(attrs.MessageRetentionPeriod, '300')
  const policy = JSON.parse(attrs.Policy!) as PolicyDocument
  assert.deepEqual(policy.Statement[0]!.Principal, { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] })
  assert.equal(policy.Statement[0]!.Resource, QUEUE_ARN)
})

test('a policy without events.amazonaws.com fails; the fix keeps existing statements', () => {
  const r = runCheck(
    interruptionQueue,
    healthyFacts(
      setPolicy({
        Statement: [
          {
            Sid: 'Mine',
            Effect: 'Allow',
            Principal: { Service: 'sqs.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Resource: QUEUE_ARN,
          },
        ],
      }),
    ),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, QUEUE_ARN)
  assert.deepEqual(fail.evidence?.missing, ['events.amazonaws.com'])
  const cmd = fail.fix!.commands![0]!
  assert.match(
    cmd,
    /^aws sqs set-queue-attributes --queue-url https:\/\/sqs.us-west-2.amazonaws.com\/123456789012\/demo --region us-west-2/,
  )
  const policy = JSON.parse(attributesOf(cmd).Policy!) as PolicyDocument
  assert.equal(policy.Statement[0]!.Sid, 'Mine')
  assert.ok(
    policy.Statement.some(
      (s) => s.Effect === 'Allow' && JSON.stringify(s.Principal).includes('events.amazonaws.com'),
    ),
  )
})

test('no queue policy at all fails for both senders', () => {
  const r = runCheck(interruptionQueue, healthyFacts(setPolicy(null)))
  assert.equal(r.status, 'fail')
  assert.deepEqual(r.findings.find((x) => x.status === 'fail')!.evidence?.missing, [
    'events.amazonaws.com',
    'sqs.amazonaws.com',
  ])
})

test('a policy granting SendMessage on another queue does not count', () => {
  const r = runCheck(
    interruptionQueue,
    healthyFacts(
      setPolicy({
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] },
            Action: 'sqs:*',
            Resource: 'arn:aws:sqs:us-west-2:123456789012:other',
          },
        ],
      }),
    ),
  )
  assert.equal(r.status, 'fail')
})

test('a failed queue read makes the check unknown', () => {
  const r = runCheck(
    interruptionQueue,
    healthyFacts((f) => (f.sqs.queue = failed('sqs:GetQueueUrl demo'))),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /sqs:GetQueueUrl demo/)
})

test('no Karpenter release: skipped', () => {
  const r = runCheck(
    interruptionQueue,
    healthyFacts((f) => (f.kube.release = ok(null))),
  )
  assert.equal(r.status, 'skipped')
})

// ---- one malformed setting, one failing check (issue 12, item 1) ----

const allChecks = (f: Facts) => runChecks(catalog, f)
const failingIds = (f: Facts) =>
  allChecks(f)
    .filter((r) => r.status === 'fail')
    .map((r) => r.meta.id)

for (const [form, value] of [
  ['ARN', QUEUE_ARN],
  ['URL', 'https://sqs.us-west-2.amazonaws.com/123456789012/demo'],
] as const) {
  test(`the queue's ${form} as settings.interruptionQueue fails interruption-queue only: controller-policy and the rules judge queue demo`, () => {
    const f = healthyFacts(setQueueSetting(value))
    assert.deepEqual(failingIds(f), ['interruption-queue'])
    const results = allChecks(f)
    const policy = results.find((r) => r.meta.id === 'controller-policy')!
    assert.equal(policy.status, 'pass', JSON.stringify(policy.findings))
    assert.doesNotMatch(JSON.stringify(policy), /sqs:[a-z0-9-]+:\d+:arn:|sqs:[a-z0-9-]+:\d+:https/)
    assert.equal(results.find((r) => r.meta.id === 'interruption-rules')!.status, 'pass')
  })
}

test('the ARN as the setting and the queue unread (GetQueueUrl refused it): controller-policy still judges the ARN meant, not one glued from it', () => {
  for (const queue of [
    ok(null),
    failed<null>('sqs:GetQueueUrl demo', 'InvalidParameterValue', 'unsupported'),
  ]) {
    const f = healthyFacts((facts) => {
      setQueueSetting(QUEUE_ARN)(facts)
      facts.sqs.queue = queue
    })
    const policy = allChecks(f).find((r) => r.meta.id === 'controller-policy')!
    assert.equal(policy.status, 'pass', JSON.stringify(policy.findings))
    assert.deepEqual(failingIds(f), ['interruption-queue'])
  }
})

test('a malformed setting does not excuse a role that really lacks the SQS actions on the queue meant', () => {
  const f = healthyFacts((facts) => {
    setQueueSetting(QUEUE_ARN)(facts)
    const role = facts.iam.roles['KarpenterControllerRole-demo']
    if (role?.ok && role.value && role.value.attached.ok)
      for (const p of role.value.attached.value)
        if (p.document)
          p.document = {
            ...p.document,
            Statement: p.document.Statement.filter(
              (s) => ![s.Action].flat().some((a) => a?.startsWith('sqs:')),
            ),
          }
  })
  const policy = allChecks(f).find((r) => r.meta.id === 'controller-policy')!
  assert.equal(policy.status, 'fail')
  const fail = policy.findings.find((x) => x.status === 'fail')!
  assert.match(fail.message, /sqs:DeleteMessage/)
  // The fix scopes the statement to the real queue ARN, not to an ARN made of the ARN.
  assert.ok(fail.fix!.commands![0]!.includes(`"Resource":["${QUEUE_ARN}"]`), fail.fix!.commands![0])
})

test('a malformed setting naming a queue that does not exist: the one fix creates it and sets the name', () => {
  const f = healthyFacts((facts) => {
    setQueueSetting('arn:aws:sqs:us-west-2:123456789012:gone')(facts)
    facts.sqs.queue = ok(null)
  })
  const r = runCheck(interruptionQueue, f)
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1)
  const fail = r.findings[0]!
  assert.match(fail.message, /is a queue ARN .*e\.g\. gone \(no queue gone exists in us-west-2 either\)/)
  assert.match(fail.fix!.commands![0]!, /^aws sqs create-queue --queue-name gone /)
  assert.match(fail.fix!.commands![1]!, /--set settings.interruptionQueue=gone$/)
  // interruption-rules does not pile on: the queue does not exist, interruption-queue says so.
  assert.equal(runCheck(interruptionRules, f).status, 'skipped')
})

test('a setting that names no queue at all: interruption-queue fails, controller-policy needs no SQS action, rules skipped', () => {
  const f = healthyFacts((facts) => {
    setQueueSetting('my queue!')(facts)
    facts.sqs.queue = ok(null)
  })
  const r = runCheck(interruptionQueue, f)
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /is not a valid SQS queue name \(my queue!\)/)
  assert.match(r.findings[0]!.fix!.commands![0]!, /--set settings.interruptionQueue='<queue-name>'$/)
  assert.deepEqual(failingIds(f), ['interruption-queue'])
  assert.equal(runCheck(interruptionRules, f).status, 'skipped')
})

test('INTERRUPTION_QUEUE set on the Deployment as an ARN: the fix sets the env var, not the chart value', () => {
  const f = healthyFacts((facts) => {
    setQueueSetting('')(facts)
    if (facts.kube.deployment.ok && facts.kube.deployment.value)
      facts.kube.deployment.value.env.INTERRUPTION_QUEUE = QUEUE_ARN
  })
  const r = runCheck(interruptionQueue, f)
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /^INTERRUPTION_QUEUE of the controller is a queue ARN/)
  assert.deepEqual(r.findings[0]!.fix!.commands, [
    'kubectl set env deployment/karpenter --namespace kube-system INTERRUPTION_QUEUE=demo',
  ])
  assert.deepEqual(failingIds(f), ['interruption-queue'])
})

test('a malformed setting with the queue read failing: still one failing finding, and no pass on unread data', () => {
  const f = healthyFacts((facts) => {
    setQueueSetting(QUEUE_ARN)(facts)
    facts.sqs.queue = failed('sqs:GetQueueUrl demo')
  })
  const r = runCheck(interruptionQueue, f)
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1)
  assert.equal(runCheck(interruptionRules, f).status, 'unknown')
})
