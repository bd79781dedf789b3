// The conditions spot-service-linked-role judges, one at a time (issue 12, item 8: mutation testing):
// which capacity-type requirements allow spot (each operator, ANDed, values missing), when the check
// does not apply, and the role's presence. Each finding is pinned exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { allowsSpot, spotServiceLinkedRole } from '../../../src/checks/spot-service-linked-role.js'
import type { Facts, NodeSelectorRequirement } from '../../../src/facts/types.js'
import { healthyFacts, healthyNodePool, ok } from '../../helpers/facts.js'

const SPOT_ARN = 'arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot'
const requiring = (...requirements: NodeSelectorRequirement[]) => {
  const p = healthyNodePool()
  p.spec.template.spec.requirements = requirements
  return p
}
const capacity = (operator: string, values?: string[]): NodeSelectorRequirement => ({
  key: 'karpenter.sh/capacity-type',
  operator,
  values,
})
const named = (name: string, ...requirements: NodeSelectorRequirement[]) => {
  const p = requiring(...requirements)
  p.metadata.name = name
  return p
}
const run = (fn?: (f: Facts) => void) => runCheck(spotServiceLinkedRole, healthyFacts(fn)).findings
const noRole = (f: Facts) => {
  f.iam.spotServiceLinkedRole = ok(null)
}

test('spot-service-linked-role is an error-severity iam check', () => {
  assert.equal(spotServiceLinkedRole.meta.id, 'spot-service-linked-role')
  assert.equal(spotServiceLinkedRole.meta.severity, 'error')
  assert.equal(spotServiceLinkedRole.meta.category, 'iam')
})

test('only capacity-type requirements count: spot on another key does not allow it', () => {
  assert.equal(
    allowsSpot(requiring({ key: 'node.kubernetes.io/lifecycle', operator: 'In', values: ['spot'] })),
    false,
  )
  assert.equal(
    allowsSpot(
      requiring({ key: 'kubernetes.io/arch', operator: 'NotIn', values: ['arm64'] }, capacity('Exists')),
    ),
    true,
  )
})

test('values missing: In allows nothing, NotIn excludes nothing', () => {
  assert.equal(allowsSpot(requiring(capacity('In'))), false)
  assert.equal(allowsSpot(requiring(capacity('NotIn'))), true)
})

test('operators other than In, NotIn and Exists never allow spot', () => {
  for (const op of ['DoesNotExist', 'Gt', 'Lt', 'in'])
    assert.equal(allowsSpot(requiring(capacity(op, ['spot']))), false, op)
})

test('every capacity-type requirement must allow spot (AND), in any order', () => {
  assert.equal(allowsSpot(requiring(capacity('In', ['spot']), capacity('NotIn', ['on-demand']))), true)
  assert.equal(allowsSpot(requiring(capacity('NotIn', ['spot']), capacity('Exists'))), false)
  assert.equal(allowsSpot(requiring(capacity('In', ['on-demand']), capacity('In', ['spot']))), false)
})

test('healthy: the role exists, named with the NodePool that allows spot', () => {
  assert.deepEqual(run(), [
    {
      status: 'pass',
      subject: SPOT_ARN,
      message: 'spot service-linked role AWSServiceRoleForEC2Spot exists (spot allowed by NodePool default)',
    },
  ])
})

test('two spot NodePools and the role: the pass names both', () => {
  const findings = run(
    (f) => (f.kube.nodePools = ok([named('a', capacity('Exists')), named('b', capacity('In', ['spot']))])),
  )
  assert.equal(
    findings[0]?.message,
    'spot service-linked role AWSServiceRoleForEC2Spot exists (spot allowed by NodePool a, b)',
  )
})

test('two spot NodePools, no role: fail, both named, exact', () => {
  const findings = run((f) => {
    noRole(f)
    f.kube.nodePools = ok([
      named('a', capacity('Exists')),
      named('od', capacity('In', ['on-demand'])),
      named('b', capacity('In', ['spot'])),
    ])
  })
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'account 123456789012',
      message:
        'NodePool a, b allow spot, but the account has no EC2 Spot service-linked role: spot launches fail',
      evidence: { nodePools: ['a', 'b'], expectedRole: 'AWSServiceRoleForEC2Spot' },
      fix: {
        summary:
          'create the service-linked role once per account (an "already exists" error means it is there)',
        commands: ['aws iam create-service-linked-role --aws-service-name spot.amazonaws.com'],
      },
    },
  ])
})

test('one spot NodePool, no role, no account id: "allows", the subject without an id', () => {
  const findings = run((f) => {
    noRole(f)
    f.meta.accountId = undefined
  })
  assert.equal(findings[0]?.subject, 'account')
  assert.equal(
    findings[0]?.message,
    'NodePool default allows spot, but the account has no EC2 Spot service-linked role: spot launches fail',
  )
})

test('no NodePool at all: skipped as such, whatever the role', () => {
  assert.deepEqual(
    run((f) => {
      noRole(f)
      f.kube.nodePools = ok([])
    }),
    [{ status: 'skipped', message: 'no NodePool found' }],
  )
})

test('NodePools that do not allow spot: skipped, saying why', () => {
  assert.deepEqual(
    run((f) => (f.kube.nodePools = ok([requiring(capacity('In', ['on-demand']))]))),
    [
      {
        status: 'skipped',
        message:
          'no NodePool allows spot (karpenter.sh/capacity-type not requiring spot means on-demand only)',
      },
    ],
  )
})
