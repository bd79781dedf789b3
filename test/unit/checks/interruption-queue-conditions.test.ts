// The conditions interruption-queue judges, one at a time (issue 12, item 8: mutation testing): the
// setting unset, malformed (where it was set, whether the queue meant exists, whether it lives in
// another region and so was not read here), the queue missing, and its policy, each finding exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Finding } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { setQueuePolicy, setQueueSetting } from '../../helpers/check-fixtures.js'
import { healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'

const URL = 'https://sqs.us-west-2.amazonaws.com/123456789012/demo'
const HELM_SET = (name: string) =>
  `helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --reuse-values --set settings.interruptionQueue=${name}`
const POLICY_PASS: Finding = {
  status: 'pass',
  subject: QUEUE_ARN,
  message: 'policy of demo lets events.amazonaws.com and sqs.amazonaws.com send',
}
const run = (fn?: (f: Facts) => void) => runCheck(interruptionQueue, healthyFacts(fn)).findings
/** The findings without their fix commands (pinned by the check's own tests), summaries kept. */
const judged = (fn?: (f: Facts) => void) =>
  run(fn).map(({ fix, ...rest }) => (fix ? { ...rest, fix: fix.summary } : rest))
const commandsOf = (fn: (f: Facts) => void) => run(fn)[0]!.fix!.commands!

test('interruption-queue is an error-severity interruption check', () => {
  assert.equal(interruptionQueue.meta.id, 'interruption-queue')
  assert.equal(interruptionQueue.meta.severity, 'error')
  assert.equal(interruptionQueue.meta.category, 'interruption')
})

test('healthy: the queue exists (with its URL) and its policy lets both senders send', () => {
  assert.deepEqual(run(), [
    {
      status: 'pass',
      subject: QUEUE_ARN,
      message: 'interruption queue demo exists',
      evidence: { url: URL },
    },
    POLICY_PASS,
  ])
})

test('the setting unset: warn, create a queue and set it', () => {
  assert.deepEqual(judged(setQueueSetting('')), [
    {
      status: 'warn',
      subject: 'settings.interruptionQueue',
      message:
        'settings.interruptionQueue is not set: Karpenter does not handle spot interruptions, rebalance recommendations or scheduled maintenance',
      fix: 'create a queue (and the EventBridge rules, see interruption-rules) and tell Karpenter its name',
    },
  ])
})

test('a URL naming the queue, which exists: fail saying where it was set, no "does not exist", and its policy judged', () => {
  assert.deepEqual(judged(setQueueSetting(URL)), [
    {
      status: 'fail',
      subject: 'settings.interruptionQueue',
      message: `settings.interruptionQueue is a queue URL (${URL}); Karpenter expects the queue name, e.g. demo`,
      code: 'queue-reference',
      evidence: {
        value: URL,
        source: 'settings.interruptionQueue',
        form: 'url',
        queueName: 'demo',
      },
      fix: 'set the queue name instead',
    },
    POLICY_PASS,
  ])
})

test('an ARN of a queue in another region: Karpenter would read another queue here, so one is created here and named', () => {
  const arn = 'arn:aws:sqs:eu-west-1:123456789012:demo'
  const elsewhere = (queueRead: Facts['sqs']['queue']) => (f: Facts) => {
    setQueueSetting(arn)(f)
    f.sqs.queue = queueRead
  }
  const expected = [
    {
      status: 'fail',
      subject: 'settings.interruptionQueue',
      message: `settings.interruptionQueue is a queue ARN (${arn}) of a queue in eu-west-1; Karpenter takes a queue name and reads that queue in us-west-2 of account 123456789012, so the controller does not receive that queue's messages`,
      evidence: {
        value: arn,
        source: 'settings.interruptionQueue',
        form: 'arn',
        queueName: 'demo',
        elsewhere: true,
      },
      fix: 'create queue demo in us-west-2 (as karpctl install makes it) and set its name',
    },
  ]
  // what the collector reads for a queue elsewhere: nothing
  assert.deepEqual(judged(elsewhere(ok(null))), expected)
  const commands = commandsOf(elsewhere(ok(null)))
  assert.equal(commands.length, 2)
  assert.match(commands[0]!, /^aws sqs create-queue --queue-name demo --region us-west-2 --attributes /)
  assert.equal(commands[1], HELM_SET('demo'))
  // a queue of that name read in this region is another queue: its policy is not judged for it
  const here = healthyFacts().sqs.queue
  assert.deepEqual(judged(elsewhere(here)), expected)
  // another account: said too
  const other = (f: Facts) => {
    setQueueSetting('arn:aws:sqs:us-west-2:999999999999:demo')(f)
    f.sqs.queue = ok(null)
  }
  assert.match(
    run(other)[0]!.message,
    /of a queue in us-west-2 of account 999999999999; Karpenter takes a queue name/,
  )
})

test('a malformed setting naming a queue that does not exist: the summary says create and set', () => {
  const gone = (f: Facts) => {
    setQueueSetting('arn:aws:sqs:us-west-2:123456789012:gone')(f)
    f.sqs.queue = ok(null)
  }
  assert.equal(run(gone)[0]!.fix!.summary, 'create queue gone and set its name')
})

test('a setting that is no queue name at all: set the name of the interruption queue', () => {
  const invalid = (f: Facts) => {
    setQueueSetting('my queue!')(f)
    f.sqs.queue = ok(null)
  }
  assert.equal(run(invalid)[0]!.fix!.summary, 'set the name of the interruption queue')
})

test('the queue missing: fail with the reference create-queue', () => {
  const findings = judged((f) => (f.sqs.queue = ok(null)))
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'demo',
      message:
        'interruption queue demo does not exist in us-west-2: the controller logs errors and handles no interruptions',
      code: 'queue-missing',
      evidence: { interruptionQueue: 'demo', region: 'us-west-2' },
      fix: 'create queue demo with the reference policy',
    },
  ])
})

test('no queue policy: fail naming both senders, joined with "and"', () => {
  assert.deepEqual(judged(setQueuePolicy(null))[1], {
    status: 'fail',
    subject: QUEUE_ARN,
    message:
      'policy of queue demo does not let events.amazonaws.com and sqs.amazonaws.com send messages: interruption events never arrive',
    evidence: {
      missing: ['events.amazonaws.com', 'sqs.amazonaws.com'],
      policy: null,
    },
    fix: "let EventBridge and SQS send to demo (the queue's other statements are kept)",
  })
})
