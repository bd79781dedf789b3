// An SSE-KMS interruption queue (issue 21 item 1): interruption-queue judges whether EventBridge may
// use the key (the key policy alone decides for a service principal), controller-policy whether the
// controller role may decrypt (the key policy, or IAM where the key policy defers to the account).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicy } from '../../../src/checks/controller-policy.js'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { catalog } from '../../../src/checks/catalog.js'
import { runCheck, runChecks } from '../../../src/checks/run.js'
import { fixSet } from '../../../src/fix/fixes.js'
import type { Finding } from '../../../src/checks/types.js'
import type { Facts, KmsKey } from '../../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  failed,
  healthyFacts,
  ok,
  QUEUE_ARN,
  REGION,
} from '../../helpers/facts.js'
import {
  customerKey,
  KEY_ARN,
  keyAdmin,
  policyDoc,
  roleOf,
  rootStatement,
} from '../../helpers/check-fixtures.js'

const QUEUE_KEY = 'alias/karpenter-queue'
const QUEUE_URL = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/demo`

/** The queue encrypted with `key` (by the alias `id`), the key as DescribeKey resolved it. */
const encrypted =
  (key: KmsKey | null | ReturnType<typeof failed<KmsKey | null>>, id = QUEUE_KEY) =>
  (f: Facts) => {
    if (f.sqs.queue.ok && f.sqs.queue.value) f.sqs.queue.value.kmsMasterKeyId = id
    f.kms = { keys: { [id]: key !== null && 'ok' in key ? key : ok(key) } }
  }

const eventsStatement = (condition?: PolicyStatement['Condition']): PolicyStatement => ({
  Sid: 'EventBridge',
  Effect: 'Allow',
  Principal: { Service: 'events.amazonaws.com' },
  Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
  Resource: '*',
  ...(condition ? { Condition: condition } : {}),
})

const controllerStatement: PolicyStatement = {
  Sid: 'Controller',
  Effect: 'Allow',
  Principal: { AWS: CONTROLLER_ROLE_ARN },
  Action: 'kms:Decrypt',
  Resource: '*',
}

const keyFindings = (check: typeof interruptionQueue, facts: Facts): Finding[] =>
  runCheck(check, facts).findings.filter(
    (f) => f.subject === KEY_ARN || /queue-key/.test(f.code ?? '') || /KMS key|key policy/.test(f.message),
  )

/** The policy a printed `aws kms put-key-policy … --policy '<json>'` sets. */
function putPolicy(command: string): PolicyDocument {
  const m = /--policy '(.*)' --region/.exec(command)
  assert.ok(m, command)
  return JSON.parse(m[1]!.replace(/'\\''/g, "'")) as PolicyDocument
}

test('a queue without KmsMasterKeyId (SSE-SQS): no key finding, both checks as before', () => {
  const facts = healthyFacts()
  assert.deepEqual(keyFindings(interruptionQueue, facts), [])
  assert.deepEqual(keyFindings(controllerPolicy, facts), [])
})

test('a key policy that names neither EventBridge nor the controller: both fail, with one put-key-policy that keeps every statement', () => {
  const facts = healthyFacts(encrypted(customerKey(policyDoc(keyAdmin))))
  const q = runCheck(interruptionQueue, facts)
  assert.equal(q.status, 'fail')
  const events = q.findings.find((f) => f.code === 'queue-key-events-denied')!
  assert.equal(events.subject, KEY_ARN)
  assert.match(
    events.message,
    /does not let events\.amazonaws\.com use it for kms:GenerateDataKey, kms:Decrypt/,
  )
  const c = runCheck(controllerPolicy, facts)
  assert.equal(c.status, 'fail')
  const controller = c.findings.find((f) => f.code === 'queue-key-controller-denied')!
  assert.equal(controller.subject, CONTROLLER_ROLE_ARN)
  assert.match(controller.message, /does not allow it and does not let IAM policies grant it/)
  // The same command on both findings: the current policy plus the two statements, nothing dropped.
  assert.equal(events.fix!.commands!.length, 1)
  assert.deepEqual(events.fix!.commands, controller.fix!.commands)
  assert.match(events.fix!.summary, /put-key-policy replaces the whole policy/)
  const policy = putPolicy(events.fix!.commands![0]!)
  assert.deepEqual(policy.Statement[0], keyAdmin)
  assert.deepEqual(
    policy.Statement.map((s) => s.Sid),
    ['KeyAdmins', 'KarpenterInterruptionEventBridge', 'KarpenterInterruptionQueueDecrypt'],
  )
  // Applied, both pass.
  const fixed = healthyFacts(encrypted(customerKey(policy)))
  assert.equal(runCheck(interruptionQueue, fixed).status, 'pass')
  const after = keyFindings(controllerPolicy, fixed)
  assert.equal(after.length, 1)
  assert.equal(after[0]!.status, 'pass')
  assert.match(after[0]!.message, /allowed by the key policy/)
})

test('the default key policy (root kms:*): EventBridge fails (IAM cannot grant a service), the controller is judged by its IAM policies', () => {
  const facts = healthyFacts(encrypted(customerKey(policyDoc(rootStatement))))
  const events = keyFindings(interruptionQueue, facts)
  assert.equal(events.length, 1)
  assert.equal(events[0]!.status, 'fail')
  // Only EventBridge's statement is added to the key policy: the controller's way is IAM.
  assert.deepEqual(
    putPolicy(events[0]!.fix!.commands![0]!).Statement.map((s) => s.Sid),
    ['Enable IAM User Permissions', 'KarpenterInterruptionEventBridge'],
  )
  const controller = keyFindings(controllerPolicy, facts)
  assert.equal(controller.length, 1)
  assert.equal(controller[0]!.status, 'fail')
  assert.match(controller[0]!.message, /the key policy defers to IAM, and no policy of the role allows it/)
  const command = controller[0]!.fix!.commands![0]!
  assert.match(
    command,
    /^aws iam put-role-policy --role-name KarpenterControllerRole-demo --policy-name KarpenterInterruptionQueueKey --policy-document '/,
  )
  // The inline policy it puts makes the controller pass.
  const doc = JSON.parse(/--policy-document '(.*)'$/.exec(command)![1]!) as PolicyDocument
  const fixed = healthyFacts((f) => {
    encrypted(customerKey(policyDoc(rootStatement, eventsStatement())))(f)
    const role = roleOf(f, CONTROLLER_ROLE)
    if (role.inline.ok) role.inline.value.push({ name: 'KarpenterInterruptionQueueKey', document: doc })
  })
  const after = keyFindings(controllerPolicy, fixed)
  assert.equal(after[0]!.status, 'pass', after[0]!.message)
  assert.match(after[0]!.message, /its IAM policies \(the key policy defers to IAM\)/)
  assert.equal(keyFindings(interruptionQueue, fixed)[0]!.status, 'pass')
})

test('EventBridge and the controller both named by the key policy: pass, with the caveats said', () => {
  const facts = healthyFacts(
    encrypted(
      customerKey(
        policyDoc(
          keyAdmin,
          eventsStatement({ StringEquals: { 'aws:SourceAccount': ACCOUNT } }),
          controllerStatement,
        ),
      ),
    ),
  )
  const events = keyFindings(interruptionQueue, facts)
  assert.equal(events.length, 1)
  assert.equal(events[0]!.status, 'pass')
  assert.ok(events[0]!.caveats!.some((c) => /grants on the key/.test(c)))
  assert.equal(keyFindings(controllerPolicy, facts)[0]!.status, 'pass')
})

test('a key policy that lets EventBridge use the key for one rule only (aws:SourceArn): fail, the other rules cannot deliver', () => {
  const one = `arn:aws:events:${REGION}:${ACCOUNT}:rule/Karpenter-demo-SpotInterruptionRule`
  const facts = healthyFacts(
    encrypted(customerKey(policyDoc(keyAdmin, eventsStatement({ ArnEquals: { 'aws:SourceArn': one } })))),
  )
  const events = keyFindings(interruptionQueue, facts)
  assert.equal(events[0]!.status, 'fail')
})

test('a condition on a key karpctl cannot know (aws:SourceOrgID): unknown, never pass', () => {
  const facts = healthyFacts(
    encrypted(
      customerKey(policyDoc(keyAdmin, eventsStatement({ StringEquals: { 'aws:SourceOrgID': 'o-1' } }))),
    ),
  )
  const events = keyFindings(interruptionQueue, facts)
  assert.equal(events.length, 1)
  assert.equal(events[0]!.status, 'unknown')
  assert.equal(runCheck(interruptionQueue, facts).status, 'unknown')
})

test('the AWS managed key aws/sqs: EventBridge can never use it — fail, switching to SSE-SQS; the controller is not blamed', () => {
  const aws = { ...customerKey(policyDoc()), keyManager: 'AWS' as const }
  delete aws.policy
  const facts = healthyFacts(encrypted(aws, 'alias/aws/sqs'))
  const events = keyFindings(interruptionQueue, facts)
  assert.equal(events.length, 1)
  assert.equal(events[0]!.status, 'fail')
  assert.equal(events[0]!.code, 'queue-key-aws-managed')
  assert.match(events[0]!.message, /AWS managed key alias\/aws\/sqs .*never events\.amazonaws\.com/)
  assert.deepEqual(events[0]!.fix!.commands, [
    `aws sqs set-queue-attributes --queue-url ${QUEUE_URL} --region ${REGION} --attributes '{"KmsMasterKeyId":""}'`,
    `aws sqs set-queue-attributes --queue-url ${QUEUE_URL} --region ${REGION} --attributes '{"SqsManagedSseEnabled":"true"}'`,
  ])
  assert.deepEqual(keyFindings(controllerPolicy, facts), [])
})

test('a queue key that does not exist or is disabled: fail in interruption-queue', () => {
  const missing = keyFindings(interruptionQueue, healthyFacts(encrypted(null)))
  assert.equal(missing[0]!.code, 'queue-key-missing')
  const disabled = keyFindings(
    interruptionQueue,
    healthyFacts(encrypted(customerKey(policyDoc(keyAdmin), { keyState: 'Disabled' }))),
  )
  assert.equal(disabled[0]!.code, 'queue-key-disabled')
  assert.deepEqual(disabled[0]!.fix!.commands, [`aws kms enable-key --key-id ${KEY_ARN} --region ${REGION}`])
})

test('the key policy cannot be read (AccessDenied): both checks unknown with the reason, never pass', () => {
  const key = customerKey(policyDoc(), { policy: failed(`kms:GetKeyPolicy ${KEY_ARN}`) })
  const facts = healthyFacts(encrypted(key))
  for (const check of [interruptionQueue, controllerPolicy]) {
    const r = runCheck(check, facts)
    assert.equal(r.status, 'unknown', check.meta.id)
    const f = r.findings.find((x) => x.status === 'unknown')!
    assert.match(f.message, /^key policy of .* \(queue demo\): could not read kms:GetKeyPolicy/)
  }
})

test('DescribeKey of the queue key failed, or a snapshot without KMS facts: unknown', () => {
  const denied = runCheck(interruptionQueue, healthyFacts(encrypted(failed(`kms:DescribeKey ${QUEUE_KEY}`))))
  assert.equal(denied.status, 'unknown')
  const old = runCheck(
    interruptionQueue,
    healthyFacts((f) => {
      encrypted(null)(f)
      delete f.kms
    }),
  )
  assert.equal(old.status, 'unknown')
  assert.match(old.findings.find((x) => x.status === 'unknown')!.message, /was not collected/)
  assert.equal(QUEUE_ARN.endsWith(':demo'), true)
})

test('doctor --fix leaves the queue key findings manual, carrying the printed command (a key policy is its owner’s)', () => {
  const facts = healthyFacts(encrypted(customerKey(policyDoc(keyAdmin))))
  const fs = fixSet(facts, runChecks(catalog, facts))
  assert.deepEqual(fs.resources, [])
  const manual = fs.manual.filter((m) => /KMS key|key policy/.test(m.message))
  assert.deepEqual(manual.map((m) => m.check).sort(), ['controller-policy', 'interruption-queue'])
  for (const m of manual) assert.match(m.commands[0]!, /^aws kms put-key-policy /)
})
