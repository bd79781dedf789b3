// What doctor asks CloudFormation about (ownedIds, on hand-built facts), how an answer is read
// (isNoStack), and the teardown's kept note (ownerCommand). The wire is in test/integration/owners.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isNoStack, ownedIds, ownerCommand } from '../../../src/facts/collect-owners.js'
import { loadSnapshot } from '../../../src/facts/snapshot.js'
import {
  CONTROLLER_ROLE,
  controllerRole,
  healthyFacts,
  NODE_ROLE,
  OIDC_ARN,
  ok,
  QUEUE_ARN,
} from '../../helpers/facts.js'
import { editRules, isSpotRule, OLD_QUEUE_ARN } from '../../helpers/check-fixtures.js'
import { gettingStarted, GS_STACK, policyArn, QUEUE_URL, STACK_POLICIES } from '../../helpers/owners.js'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const RULES = [
  'Karpenter-demo-ScheduledChangeRule',
  'Karpenter-demo-SpotInterruptionRule',
  'Karpenter-demo-RebalanceRule',
  'Karpenter-demo-InstanceStateChangeRule',
  'Karpenter-demo-CapacityReservationInterruptionRule',
]

test('ownedIds: the controller role and its customer managed policies, the node role, the queue URL, the rules to the queue, the IRSA provider', () => {
  const attached = controllerRole().attached
  assert.ok(attached.ok)
  assert.deepEqual(ownedIds(healthyFacts()), [
    CONTROLLER_ROLE,
    ...attached.value.map((p) => p.arn),
    NODE_ROLE,
    QUEUE_URL,
    ...RULES,
    OIDC_ARN,
  ])
  // Those are the template's six policies.
  assert.deepEqual(
    attached.value.map((p) => p.arn).sort(),
    Object.values(STACK_POLICIES).map(policyArn).sort(),
  )
})

test("ownedIds: AWS managed policies (the node role's) are never asked about: AWS owns them", () => {
  const ids = ownedIds(healthyFacts())
  assert.ok(!ids.some((id) => id.startsWith('arn:aws:iam::aws:')), ids.join('\n'))
})

test('ownedIds: a role that does not exist, a missing queue, a Pod Identity controller: not asked about', () => {
  const ids = ownedIds(
    healthyFacts((f) => {
      f.iam.roles[NODE_ROLE] = ok(null)
      f.sqs.queue = ok(null)
      f.iam.controllerIdentity = 'pod-identity'
    }),
  )
  assert.ok(!ids.includes(NODE_ROLE))
  assert.ok(!ids.includes(QUEUE_URL))
  assert.ok(!ids.includes(OIDC_ARN))
  // No queue: no rule delivers to it, so every interruption rule found is a repair candidate.
  assert.deepEqual(
    ids.filter((id) => id.startsWith('Karpenter-demo-')),
    RULES,
  )
})

test('ownedIds: a rule that sends elsewhere is asked about only while no rule delivers its event to the queue', () => {
  const other = {
    name: 'other-cluster-spot',
    arn: 'arn:aws:events:us-west-2:123456789012:rule/other-cluster-spot',
    state: 'ENABLED',
    eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    targetArns: [OLD_QUEUE_ARN],
  }
  const covered = ownedIds(healthyFacts(editRules((rules) => [...rules, other])))
  assert.ok(!covered.includes('other-cluster-spot'))
  const uncovered = ownedIds(
    healthyFacts(editRules((rules) => [...rules.filter((r) => !isSpotRule(r)), other])),
  )
  assert.ok(uncovered.includes('other-cluster-spot'))
  assert.ok(uncovered.includes('Karpenter-demo-RebalanceRule'))
})

test('ownedIds: a role whose attached policies could not be listed is still asked about, its policies not', () => {
  const ids = ownedIds(
    healthyFacts((f) => {
      const r = f.iam.roles[CONTROLLER_ROLE]
      if (r?.ok && r.value)
        r.value.attached = {
          ok: false,
          error: {
            code: 'AccessDenied',
            kind: 'denied',
            message: 'no',
            read: 'iam:ListAttachedRolePolicies',
          },
        }
    }),
  )
  assert.ok(ids.includes(CONTROLLER_ROLE))
  assert.ok(!ids.some((id) => id.includes(':policy/')))
  assert.equal(ids.length, new Set(ids).size)
  assert.ok(ids.includes(QUEUE_URL) && !ids.includes(QUEUE_ARN))
})

test('isNoStack: only the ValidationError "Stack for <id> does not exist" means no stack owns it', () => {
  const err = (name: string, message: string) => Object.assign(new Error(message), { name })
  assert.equal(
    isNoStack(err('ValidationError', 'Stack for KarpenterControllerRole-demo does not exist')),
    true,
  )
  assert.equal(isNoStack(err('ValidationError', 'Stack with id None does not exist')), false)
  assert.equal(isNoStack(err('ValidationError', '1 validation error detected: PhysicalResourceId')), false)
  assert.equal(isNoStack(err('AccessDenied', 'Stack for x does not exist')), false)
  assert.equal(isNoStack(undefined), false)
})

test('ownerCommand: the kept note names the stack and its delete-stack command', () => {
  const f = healthyFacts(gettingStarted)
  const r = f.cloudformation?.owners[QUEUE_URL]
  assert.ok(r?.ok && r.value)
  assert.equal(
    ownerCommand(r.value),
    `kept: made by CloudFormation stack ${GS_STACK} (\`aws cloudformation delete-stack --stack-name ${GS_STACK}\`)`,
  )
})

test('snapshots: one with owners round-trips through the schema; the shipped ones (without) still load', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-owners-'))
  const file = join(dir, 'f.json')
  const facts = healthyFacts(gettingStarted)
  writeFileSync(file, JSON.stringify(facts))
  const loaded = await loadSnapshot(file)
  assert.deepEqual(loaded.cloudformation, facts.cloudformation)
  for (const example of readdirSync('examples').filter((e) => e.endsWith('.json'))) {
    const old = await loadSnapshot(join('examples', example))
    assert.equal(old.cloudformation, undefined, example)
  }
})
