// controller-policy's printed fix where CloudFormation owns things, one condition at a time: the
// stack's own managed policy detached from the role is re-attached (the stack declares it: no drift);
// a stack's attached policy older than the controller means updating the stack to the installed
// version's template; a role a stack owns is edited in that stack; no stack: the inline policy.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicy } from '../../../src/checks/controller-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Finding } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { controllerRole, withoutPolicies } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, healthyFacts } from '../../helpers/facts.js'
import {
  EKSCTL_STACK,
  gettingStarted,
  GS_STACK,
  notOwned,
  ownedBy,
  policyArn,
  STACK_POLICIES,
} from '../../helpers/owners.js'

const LIFECYCLE = STACK_POLICIES.NodeLifecyclePolicy!
const failing = (fn: (f: Facts) => void): Finding => {
  const found = runCheck(controllerPolicy, healthyFacts(fn)).findings.filter((f) => f.status === 'fail')
  assert.equal(found.length, 1, JSON.stringify(found, null, 2))
  return found[0]!
}
const UPDATE = [
  'curl -fsSL https://raw.githubusercontent.com/aws/karpenter-provider-aws/v1.14.1/website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml -o karpenter-1.14.1-cloudformation.yaml',
  `aws cloudformation update-stack --stack-name ${GS_STACK} --template-body file://karpenter-1.14.1-cloudformation.yaml --parameters ParameterKey=ClusterName,UsePreviousValue=true --capabilities CAPABILITY_NAMED_IAM`,
]

test("the getting-started stack's policy detached from eksctl's role: re-attach it, nothing inline", () => {
  const f = failing((x) => {
    gettingStarted(x)
    withoutPolicies(CONTROLLER_ROLE, LIFECYCLE)(x)
  })
  assert.deepEqual(f.fix?.commands, [
    `aws iam attach-role-policy --role-name ${CONTROLLER_ROLE} --policy-arn ${policyArn(LIFECYCLE)}`,
  ])
  assert.match(
    f.fix!.summary,
    /re-attach the stack's own managed policies KarpenterControllerNodeLifecyclePolicy-demo/,
  )
  assert.match(f.fix!.summary, /not drift/)
  const e = f.evidence as { reattach?: string[]; roleStack?: string; document?: unknown }
  assert.deepEqual(e.reattach, [policyArn(LIFECYCLE)])
  assert.equal(e.roleStack, EKSCTL_STACK)
  assert.ok(e.document, 'the missing statements stay in the evidence')
})

test('a stack policy attached but older than the controller (an action missing from it): update the stack to the installed template', () => {
  const f = failing((x) => {
    gettingStarted(x)
    controllerRole.dropActions('ec2:CreateFleet')(x)
  })
  assert.deepEqual(f.fix?.commands, UPDATE)
  assert.deepEqual((f.evidence as { updateStacks?: string[] }).updateStacks, [GS_STACK])
  assert.match(
    f.fix!.summary,
    /update stack Karpenter-demo to the getting-started template of Karpenter 1\.14\.1/,
  )
})

test("a role eksctl's stack owns, policies of no stack: edit the role's stack, with the statements", () => {
  const f = failing((x) => {
    ownedBy(x, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')
    controllerRole.dropActions('ec2:CreateFleet')(x)
  })
  assert.ok(
    f.fix!.commands!.every((c) => c.startsWith('aws cloudformation ')),
    f.fix!.commands!.join('\n'),
  )
  assert.ok(f.fix!.commands!.some((c) => c.includes(`get-template --stack-name ${EKSCTL_STACK}`)))
  assert.ok(f.fix!.commands!.some((c) => c.includes(`update-stack --stack-name ${EKSCTL_STACK}`)))
  assert.match(f.fix!.snippet!.text, /ec2:CreateFleet/)
  assert.ok(!f.fix!.commands!.some((c) => c.includes('put-role-policy')))
})

test('CloudFormation says no stack owns the role or policies: the inline policy, as before', () => {
  const f = failing((x) => {
    notOwned(x, CONTROLLER_ROLE)
    controllerRole.dropActions('ec2:CreateFleet')(x)
  })
  assert.match(
    f.fix!.commands![0]!,
    /^aws iam put-role-policy --role-name KarpenterControllerRole-demo --policy-name KarpenterControllerMissing-demo /,
  )
  assert.equal((f.evidence as { roleStack?: string }).roleStack, undefined)
})

test('a denied action is never "re-attached" away: the Deny is in the way, the role is not a stack one', () => {
  const f = failing((x) => {
    gettingStarted(x)
    notOwned(x, CONTROLLER_ROLE)
    withoutPolicies(CONTROLLER_ROLE, LIFECYCLE)(x)
    const p = controllerRole.attachedOf(x)[0]!
    p.document!.Statement.push({ Effect: 'Deny', Action: 'ec2:CreateFleet', Resource: '*' })
  })
  const e = f.evidence as { reattach?: string[]; missing: { action: string; deniedBy?: string }[] }
  assert.ok(e.missing.some((m) => m.action === 'ec2:CreateFleet' && m.deniedBy))
  // The other actions of the detached policy are still re-attached; CreateFleet needs the Deny gone.
  assert.deepEqual(e.reattach, [policyArn(LIFECYCLE)])
  assert.ok(f.fix!.commands!.some((c) => c.includes('put-role-policy')))
})
