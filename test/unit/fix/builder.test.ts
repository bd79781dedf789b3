// What every --fix builder shares: ARNs and group names from the facts, the controller Deployment a
// repair restarts, and who owns a role (its tags when CloudFormation was not asked).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import {
  arn,
  controllerDeployment,
  group,
  manualAll,
  naming,
  release,
  roleHeld,
  roleOwnership,
} from '../../../src/fix/builder.js'
import { ACCOUNT, CONTROLLER_ROLE, failed, healthyFacts, ok, REGION } from '../../helpers/facts.js'
import { EKSCTL_STACK, ownedBy } from '../../helpers/owners.js'

test('arn: the partition, region (or another, or none) and account of the facts', () => {
  const facts = healthyFacts((f) => {
    f.meta.partition = 'aws-us-gov'
  })
  assert.equal(arn(facts, 'sqs', 'q'), `arn:aws-us-gov:sqs:${REGION}:${ACCOUNT}:q`)
  assert.equal(arn(facts, 'iam', 'role/r', ''), `arn:aws-us-gov:iam::${ACCOUNT}:role/r`)
  facts.meta.accountId = undefined
  assert.equal(arn(facts, 'sqs', 'q', 'eu-west-1'), 'arn:aws-us-gov:sqs:eu-west-1::q')
  assert.equal(group('node-role'), 'fix: node-role')
})

test('release and controllerDeployment: the release read, the Deployment by its own name and namespace', () => {
  const facts = healthyFacts((f) => {
    if (f.kube.deployment.ok && f.kube.deployment.value) f.kube.deployment.value.metadata.name = 'kp'
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.namespace = 'karpenter'
  })
  assert.equal(release(facts)?.name, 'karpenter')
  assert.deepEqual(controllerDeployment(facts), { namespace: 'karpenter', name: 'kp' })
  facts.kube.release = failed('release')
  assert.equal(release(facts), null)
})

test('manualAll: every finding manual, each with the one reason', () => {
  const a: Finding = { status: 'fail', message: 'a' }
  const b: Finding = { status: 'fail', message: 'b' }
  const built = manualAll([a, b], 'why')
  assert.deepEqual(built.resources, [])
  assert.deepEqual(built.manual, [a, b])
  assert.deepEqual(
    [...built.why!.entries()],
    [
      [a, 'why'],
      [b, 'why'],
    ],
  )
})

test("roleOwnership: CloudFormation's answer, else the role's own stack tags, else none; roleHeld says why", () => {
  const tagged = healthyFacts((f) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (r?.ok && r.value) r.value.role.tags['aws:cloudformation:stack-name'] = 'Tagged'
  })
  assert.deepEqual(roleOwnership(tagged, CONTROLLER_ROLE), {
    kind: 'stack',
    owner: { stackName: 'Tagged', stackId: '', logicalId: '', resourceType: '', resourceStatus: '' },
  })
  assert.equal(
    roleHeld(tagged, CONTROLLER_ROLE),
    `role ${CONTROLLER_ROLE} belongs to CloudFormation stack Tagged: change it in the stack, a direct change is drift the stack reverts`,
  )
  assert.deepEqual(roleOwnership(healthyFacts(), CONTROLLER_ROLE), { kind: 'none' })
  assert.equal(roleHeld(healthyFacts(), CONTROLLER_ROLE), null)
  // A role not read, or read as absent: no tags to go by.
  for (const read of [failed('role'), ok(null)])
    assert.deepEqual(
      roleOwnership(
        healthyFacts((f) => {
          f.iam.roles[CONTROLLER_ROLE] = read as (typeof f.iam.roles)[string]
        }),
        CONTROLLER_ROLE,
      ),
      { kind: 'none' },
    )
  const stack = healthyFacts((f) => ownedBy(f, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role'))
  assert.equal(roleOwnership(stack, CONTROLLER_ROLE).kind, 'stack')
})

test('naming: a stack-owned finding names the stack and what to do there; any other is unchanged', () => {
  const f: Finding = { status: 'fail', message: 'lacks x' }
  const o = roleOwnership(
    healthyFacts((x) => ownedBy(x, CONTROLLER_ROLE, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')),
    CONTROLLER_ROLE,
  )
  assert.deepEqual(naming(f, o), {
    status: 'fail',
    message: `lacks x (managed by CloudFormation stack ${EKSCTL_STACK}: change it there)`,
  })
  assert.equal(
    naming(f, o, 'add it there').message,
    `lacks x (managed by CloudFormation stack ${EKSCTL_STACK}: add it there)`,
  )
  assert.equal(naming(f, { kind: 'none' }), f)
})

test('roleOwnership of a role the facts do not hold: none', () => {
  assert.deepEqual(roleOwnership(healthyFacts(), 'NotRead'), { kind: 'none' })
})
