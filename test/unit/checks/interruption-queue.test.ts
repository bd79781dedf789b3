import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts, PolicyDocument } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'

const setQueueSetting = (value: unknown) => (f: Facts) => {
  if (!f.kube.release.ok || !f.kube.release.value) return
  const settings = f.kube.release.value.computedValues.settings as Record<string, unknown>
  settings.interruptionQueue = value
  if (f.kube.deployment.ok && f.kube.deployment.value) delete f.kube.deployment.value.env.INTERRUPTION_QUEUE
}

const setPolicy = (policy: PolicyDocument | null) => (f: Facts) => {
  if (f.sqs.queue.ok && f.sqs.queue.value) f.sqs.queue.value.policy = policy
}

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
  assert.deepEqual(fail.evidence, { value: url })
  assert.match(fail.fix!.commands![0]!, /--set settings.interruptionQueue=demo$/)
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
