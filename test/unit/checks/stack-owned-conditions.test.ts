// The printed fix of each check whose repair changes an AWS resource, when CloudFormation says a stack
// owns that resource: the change goes into the stack (drift detection, then the template and an
// update), never the direct command; when no stack owns it (or the snapshot predates the question) the
// direct command, as before.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStack, ownership } from '../../../src/checks/lib/owners.js'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { interruptionRules } from '../../../src/checks/interruption-rules.js'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { nodeRole } from '../../../src/checks/node-role.js'
import { passroleNodeRole } from '../../../src/checks/passrole-node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Check, Finding } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { evaluated } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, healthyFacts, irsaTrust, NODE_ROLE, ok } from '../../helpers/facts.js'
import {
  EKSCTL_STACK,
  gettingStarted,
  GS_STACK,
  notOwned,
  ownedBy,
  ownerUnknown,
} from '../../helpers/owners.js'

const failing = (check: Check, fn: (f: Facts) => void): Finding => {
  const found = runCheck(check, healthyFacts(fn)).findings.filter((f) => f.status === 'fail')
  assert.ok(found.length >= 1, `${check.meta.id} fails`)
  return found[0]!
}
const stackCommands = (stack: string) => [
  `aws cloudformation detect-stack-drift --stack-name ${stack}`,
  `aws cloudformation describe-stack-resource-drifts --stack-name ${stack} --stack-resource-drift-status-filters MODIFIED DELETED`,
  `aws cloudformation get-template --stack-name ${stack} --query TemplateBody --output json > ${stack}.template.json`,
  `aws cloudformation update-stack --stack-name ${stack} --template-body file://${stack}.template.json --parameters <each parameter as ParameterKey=NAME,UsePreviousValue=true> --capabilities CAPABILITY_NAMED_IAM`,
]

/** The same breakage with and without the stack: the stack's fix, then the direct one. */
function both(check: Check, br: (f: Facts) => void, own: (f: Facts) => void, stack: string, direct: RegExp) {
  const owned = failing(check, (f) => {
    own(f)
    br(f)
  })
  assert.deepEqual(owned.fix?.commands, stackCommands(stack))
  assert.match(owned.fix!.summary, new RegExp(`belongs to CloudFormation stack ${stack}`))
  const free = failing(check, br)
  assert.match(free.fix!.commands![0]!, direct)
}

const eksctl = (f: Facts) => ownedBy(f, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')

test("irsa-trust-policy: eksctl's role has its trust changed in eksctl's stack", () => {
  both(
    irsaTrustPolicy,
    (f) => {
      const r = f.iam.roles[CONTROLLER_ROLE]
      if (r?.ok && r.value) r.value.role.trust = irsaTrust('kube-system', 'other-sa')
    },
    eksctl,
    EKSCTL_STACK,
    /^aws iam update-assume-role-policy --role-name KarpenterControllerRole-demo /,
  )
})

test("passrole-node-role: the grant goes into the controller role's stack", () => {
  both(
    passroleNodeRole,
    evaluated({ decision: 'implicitDeny', matchedStatements: [] }),
    eksctl,
    EKSCTL_STACK,
    /^aws iam put-role-policy --role-name KarpenterControllerRole-demo /,
  )
})

test("interruption-queue: the getting-started queue's policy is the stack's", () => {
  both(
    interruptionQueue,
    (f) => {
      if (f.sqs.queue.ok && f.sqs.queue.value) f.sqs.queue.value.policy = { Statement: [] }
    },
    gettingStarted,
    GS_STACK,
    /^aws sqs set-queue-attributes /,
  )
})

test("node-role: the getting-started node role's policies are attached in the stack", () => {
  both(
    nodeRole,
    (f) => {
      const r = f.iam.roles[NODE_ROLE]
      if (r?.ok && r.value && r.value.attached.ok)
        r.value.attached = ok(r.value.attached.value.filter((p) => /CNI/.test(p.name)))
    },
    gettingStarted,
    GS_STACK,
    /^aws iam attach-role-policy --role-name KarpenterNodeRole-demo /,
  )
})

test("interruption-rules: the stack's disabled rule is enabled in the stack", () => {
  both(
    interruptionRules,
    (f) => {
      if (f.events.rules.ok)
        f.events.rules = ok(
          f.events.rules.value.map((r) =>
            /SpotInterruption/.test(r.name) ? { ...r, state: 'DISABLED' } : r,
          ),
        )
    },
    gettingStarted,
    GS_STACK,
    /^aws events enable-rule --name Karpenter-demo-SpotInterruptionRule /,
  )
})

test('inStack: no stack (CloudFormation said so, or never asked) leaves the fix as it is; the logical id is named', () => {
  const fix = { summary: 'do it', commands: ['aws iam x'] }
  assert.equal(inStack(fix, { kind: 'none' }, 'role r'), fix)
  const f = healthyFacts((x) => notOwned(x, CONTROLLER_ROLE))
  assert.equal(inStack(fix, ownership(f, CONTROLLER_ROLE), 'role r'), fix)
  const owned = inStack(fix, ownership(healthyFacts(eksctl), CONTROLLER_ROLE), 'role r')
  assert.match(
    owned.summary,
    /^role r belongs to CloudFormation stack eksctl-demo-podidentityrole-kube-system-karpenter \(Role1\): do it in the stack's template/,
  )
})

test('ownership: CloudFormation first, then aws:cloudformation tags (SQS carries them), then unknown, then none', () => {
  const tags = { 'aws:cloudformation:stack-name': 'tagged', 'aws:cloudformation:logical-id': 'Q' }
  assert.equal(ownership(healthyFacts(eksctl), CONTROLLER_ROLE, tags).kind, 'stack')
  const byAnswer = ownership(healthyFacts(eksctl), CONTROLLER_ROLE, tags)
  assert.equal(byAnswer.kind === 'stack' && byAnswer.owner.stackName, EKSCTL_STACK)
  const byTag = ownership(healthyFacts(), 'anything', tags)
  assert.equal(byTag.kind === 'stack' && byTag.owner.logicalId, 'Q')
  const unknown = ownership(
    healthyFacts((x) => ownerUnknown(x, 'anything')),
    'anything',
  )
  assert.equal(unknown.kind === 'unknown' && unknown.error.kind, 'denied')
  assert.deepEqual(ownership(healthyFacts(), 'anything'), { kind: 'none' })
})
