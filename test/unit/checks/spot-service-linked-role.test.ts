import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { allowsSpot, spotServiceLinkedRole } from '../../../src/checks/spot-service-linked-role.js'
import type { Facts, NodePool, NodeSelectorRequirement } from '../../../src/facts/types.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const pool = (requirements?: NodeSelectorRequirement[]): NodePool => ({
  metadata: { name: 'p' },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements,
      },
    },
  },
})

const capacity = (operator: string, values?: string[]) => [
  { key: 'karpenter.sh/capacity-type', operator, values },
]

const setRequirements = (requirements?: NodeSelectorRequirement[]) => (f: Facts) => {
  if (f.kube.nodePools.ok) f.kube.nodePools.value[0]!.spec.template.spec.requirements = requirements
}

test('allowsSpot follows In / NotIn / Exists and defaults to on-demand', () => {
  assert.equal(allowsSpot(pool(capacity('In', ['spot', 'on-demand']))), true)
  assert.equal(allowsSpot(pool(capacity('In', ['on-demand']))), false)
  assert.equal(allowsSpot(pool(capacity('NotIn', ['on-demand']))), true)
  assert.equal(allowsSpot(pool(capacity('NotIn', ['spot']))), false)
  assert.equal(allowsSpot(pool(capacity('Exists'))), true)
  assert.equal(allowsSpot(pool([])), false)
  assert.equal(allowsSpot(pool(undefined)), false)
  // requirements on one key are ANDed
  assert.equal(allowsSpot(pool([...capacity('Exists'), ...capacity('NotIn', ['spot'])])), false)
})

test('healthy: spot allowed and the service-linked role exists', () => {
  const r = runCheck(spotServiceLinkedRole, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.subject!, /AWSServiceRoleForEC2Spot$/)
})

test('spot allowed without the service-linked role fails with create-service-linked-role', () => {
  const r = runCheck(
    spotServiceLinkedRole,
    healthyFacts((f) => (f.iam.spotServiceLinkedRole = ok(null))),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings[0]!
  assert.equal(fail.subject, 'account 123456789012')
  assert.deepEqual(fail.evidence?.nodePools, ['default'])
  assert.deepEqual(fail.fix!.commands, [
    'aws iam create-service-linked-role --aws-service-name spot.amazonaws.com',
  ])
})

test('no NodePool allows spot: skipped even when the role is missing', () => {
  for (const reqs of [capacity('In', ['on-demand']), undefined]) {
    const r = runCheck(
      spotServiceLinkedRole,
      healthyFacts((f) => {
        setRequirements(reqs)(f)
        f.iam.spotServiceLinkedRole = ok(null)
      }),
    )
    assert.equal(r.status, 'skipped')
    assert.match(r.findings[0]!.message, /no NodePool allows spot/)
  }
})

test('a failed role read makes the check unknown, not pass', () => {
  const r = runCheck(
    spotServiceLinkedRole,
    healthyFacts(
      (f) => (f.iam.spotServiceLinkedRole = failed('iam:ListRoles /aws-service-role/spot.amazonaws.com/')),
    ),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /AccessDenied/)
})

test('a failed NodePool list makes the check unknown', () => {
  const r = runCheck(
    spotServiceLinkedRole,
    healthyFacts((f) => (f.kube.nodePools = failed('list nodepools', 'Forbidden'))),
  )
  assert.equal(r.status, 'unknown')
})
