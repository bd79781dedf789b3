// doctor --fix and CloudFormation: a resource a stack owns (as DescribeStackResources said) is never
// changed by --fix — no inline policy, trust, PassRole grant, node-role attachment, queue policy or rule
// repair is planned on it — and the manual list says why and what to run; an owner that could not be
// asked blocks too, an endpoint that cannot answer at all (an emulator) does not.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { controllerRole, evaluated, withoutPolicies } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, healthyFacts, irsaTrust, NODE_ROLE, ok } from '../../helpers/facts.js'
import {
  EKSCTL_STACK,
  gettingStarted,
  GS_STACK,
  notOwned,
  ownedBy,
  ownerUnknown,
  policyArn,
  QUEUE_URL,
  STACK_POLICIES,
} from '../../helpers/owners.js'

const plan = (facts: Facts) => fixSet(facts, runChecks(catalog, facts))
const manualOf = (facts: Facts, check: string) => {
  const fs = plan(facts)
  const m = fs.manual.find((x) => x.check === check)
  assert.ok(m, `${check} is manual: ${JSON.stringify(fs.manual, null, 2)}`)
  return { fs, m }
}
const eksctlRole = (f: Facts) => ownedBy(f, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')
const missingCreateFleet = controllerRole.dropActions('ec2:CreateFleet')

test("missing actions on eksctl's stack role: no KarpenterControllerMissing drift, manual naming the stack and its commands", () => {
  const { fs, m } = manualOf(
    healthyFacts((f) => {
      eksctlRole(f)
      missingCreateFleet(f)
    }),
    'controller-policy',
  )
  assert.ok(!fs.resources.some((r) => r.address === 'iam-policy.controller-missing'))
  assert.equal(
    m.why,
    `controller role ${CONTROLLER_ROLE} belongs to CloudFormation stack ${EKSCTL_STACK}: change it in the stack, a direct change is drift the stack reverts`,
  )
  assert.match(m.message, new RegExp(`managed by CloudFormation stack ${EKSCTL_STACK}: add them there`))
  assert.ok(
    m.commands.some((c) => c.startsWith(`aws cloudformation update-stack --stack-name ${EKSCTL_STACK}`)),
  )
  assert.ok(!m.commands.some((c) => c.includes('put-role-policy')))
})

test("the stack's policy detached from a role no stack owns: manual, re-attach it (not a copy beside it)", () => {
  const lifecycle = STACK_POLICIES.NodeLifecyclePolicy!
  const { fs, m } = manualOf(
    healthyFacts((f) => {
      gettingStarted(f)
      notOwned(f, CONTROLLER_ROLE)
      withoutPolicies(CONTROLLER_ROLE, lifecycle)(f)
    }),
    'controller-policy',
  )
  assert.ok(!fs.resources.some((r) => r.address === 'iam-policy.controller-missing'))
  assert.match(m.why, /CloudFormation stack's own managed policies: re-attach them or update the stack/)
  assert.deepEqual(m.commands, [
    `aws iam attach-role-policy --role-name ${CONTROLLER_ROLE} --policy-arn ${policyArn(lifecycle)}`,
  ])
})

test('owner unknown (DescribeStackResources denied): nothing written, manual saying what to allow', () => {
  const { fs, m } = manualOf(
    healthyFacts((f) => {
      ownerUnknown(f, CONTROLLER_ROLE)
      missingCreateFleet(f)
    }),
    'controller-policy',
  )
  assert.ok(!fs.resources.some((r) => r.address === 'iam-policy.controller-missing'))
  assert.match(
    m.why,
    /whether a CloudFormation stack owns controller role KarpenterControllerRole-demo is not known/,
  )
  assert.match(m.why, /allow cloudformation:DescribeStackResources/)
})

test('an endpoint without the lookup (unsupported), or no stack: the inline fix is planned as before', () => {
  for (const mark of [
    (f: Facts) => ownerUnknown(f, CONTROLLER_ROLE, 'unsupported'),
    (f: Facts) => notOwned(f, CONTROLLER_ROLE),
  ]) {
    const fs = plan(
      healthyFacts((f) => {
        mark(f)
        missingCreateFleet(f)
      }),
    )
    assert.ok(
      fs.resources.some((r) => r.address === 'iam-policy.controller-missing'),
      JSON.stringify(fs.manual),
    )
  }
})

test("a stack's controller role: no PassRole grant and no trust rewrite on it", () => {
  const facts = healthyFacts((f) => {
    eksctlRole(f)
    evaluated({ decision: 'implicitDeny', matchedStatements: [] })(f)
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (r?.ok && r.value) r.value.role.trust = irsaTrust('kube-system', 'other-sa')
  })
  const fs = plan(facts)
  assert.ok(!fs.resources.some((r) => r.address === 'iam-policy.passrole-fix'))
  assert.ok(!fs.resources.some((r) => r.address === 'iam-trust.controller'))
  for (const check of ['passrole-node-role', 'irsa-trust-policy']) {
    const m = fs.manual.find((x) => x.check === check)
    assert.ok(m, check)
    assert.match(m.why, new RegExp(`belongs to CloudFormation stack ${EKSCTL_STACK}`))
  }
})

test("the getting-started stack's node role without its policies: not attached by --fix, manual", () => {
  const facts = healthyFacts((f) => {
    gettingStarted(f)
    const r = f.iam.roles[NODE_ROLE]
    if (r?.ok && r.value && r.value.attached.ok)
      r.value.attached = ok(r.value.attached.value.filter((p) => /CNI/.test(p.name)))
  })
  const fs = plan(facts)
  assert.ok(!fs.resources.some((r) => r.address === `iam-role-policies.${NODE_ROLE}`))
  const m = fs.manual.find((x) => x.check === 'node-role' && /lacks/.test(x.message))
  assert.ok(m, JSON.stringify(fs.manual, null, 2))
  assert.match(m.why, new RegExp(`node role ${NODE_ROLE} belongs to CloudFormation stack ${GS_STACK}`))
})

test("the stack's queue without the EventBridge statements: no queue policy written, manual", () => {
  const facts = healthyFacts((f) => {
    gettingStarted(f)
    if (f.sqs.queue.ok && f.sqs.queue.value)
      f.sqs.queue.value.policy = { Version: '2012-10-17', Statement: [] }
  })
  const fs = plan(facts)
  assert.ok(!fs.resources.some((r) => r.address === 'sqs-queue-policy.interruption'))
  const m = fs.manual.find((x) => x.check === 'interruption-queue')
  assert.ok(m, JSON.stringify(fs.manual, null, 2))
  assert.match(m.why, new RegExp(`queue demo belongs to CloudFormation stack ${GS_STACK}`))
  // The same queue owned by no stack: the statements are added, as before.
  const free = healthyFacts((f) => {
    notOwned(f, QUEUE_URL)
    if (f.sqs.queue.ok && f.sqs.queue.value)
      f.sqs.queue.value.policy = { Version: '2012-10-17', Statement: [] }
  })
  assert.ok(plan(free).resources.some((r) => r.address === 'sqs-queue-policy.interruption'))
})

test("the stack's rule that lost its target: not repaired by --fix, manual; a rule of no stack still is", () => {
  const facts = healthyFacts((f) => {
    gettingStarted(f)
    notOwned(f, 'Karpenter-demo-RebalanceRule')
    if (f.events.rules.ok)
      f.events.rules = ok(
        f.events.rules.value.map((r) =>
          /SpotInterruption|Rebalance/.test(r.name) ? { ...r, targetArns: [], targets: [] } : r,
        ),
      )
  })
  const fs = plan(facts)
  const repairs = fs.resources.filter((r) => r.address.startsWith('events-rule-repair.')).map((r) => r.name)
  assert.deepEqual(repairs, ['Karpenter-demo-RebalanceRule'])
  const m = fs.manual.filter((x) => x.check === 'interruption-rules')
  assert.equal(m.length, 1, JSON.stringify(m, null, 2))
  assert.match(
    m[0]!.why,
    new RegExp(`rule Karpenter-demo-SpotInterruptionRule belongs to CloudFormation stack ${GS_STACK}`),
  )
})
