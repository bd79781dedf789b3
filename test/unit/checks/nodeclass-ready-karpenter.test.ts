// nodeclass-ready on the shapes the real Karpenter v1.14.1 controller writes (seen on the e2e bed,
// test/e2e/doctor-karpenter.e2e.test.ts): AMIsReady=False (AMINotFound) for an AMI that does not exist,
// with a fix Karpenter then resolves; InstanceProfileReady left Unknown while the rest resolved (a role
// that does not exist: the reconciler returns its error and sets nothing), which is not "not running".
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeclassReady } from '../../../src/checks/nodeclass-ready.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Condition, EC2NodeClass, Facts } from '../../../src/facts/types.js'
import { both, nodeClass, nodePool } from '../../helpers/check-fixtures.js'
import { healthyFacts } from '../../helpers/facts.js'

const first = (...fns: ((f: Facts) => void)[]) =>
  runCheck(nodeclassReady, healthyFacts(both(...fns))).findings[0]!
const conditions =
  (...c: Condition[]) =>
  (f: Facts) => {
    nodeClass(f).status = { conditions: c }
  }
const spec = (s: Partial<EC2NodeClass['spec']>) => (f: Facts) => {
  Object.assign(nodeClass(f).spec, s)
}
const amiNotFound = conditions(
  {
    type: 'AMIsReady',
    status: 'False',
    reason: 'AMINotFound',
    message: 'AMISelector did not match any AMIs',
  },
  { type: 'SubnetsReady', status: 'True' },
  { type: 'Ready', status: 'False', reason: 'UnhealthyDependents' },
)
const PATCH = (alias: string) =>
  `kubectl patch ec2nodeclass default --type merge -p '{"spec":{"amiSelectorTerms":[{"alias":"${alias}"}]}}'`

test('AMIsReady=False on an id that does not exist: the ids looked up by filter, and the family’s alias at @latest', () => {
  const f = first(
    amiNotFound,
    spec({ amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-0a' }, { id: 'ami-0b' }] }),
  )
  assert.equal(f.status, 'fail')
  assert.equal(
    f.message,
    'EC2NodeClass default is not Ready: AMIsReady=False (AMINotFound: AMISelector did not match any AMIs)',
  )
  assert.deepEqual(f.fix?.commands?.slice(2), [
    "aws ec2 describe-images --filters Name=image-id,Values=ami-0a,ami-0b --query 'Images[].[ImageId,Name,State]'",
    PATCH('al2023@latest'),
  ])
  assert.match(f.fix!.summary, /EKS-optimized AMI of the same family at @latest/)
})

test('AMIsReady=False on an alias version SSM does not have: the same family at @latest; no family (Custom): no patch', () => {
  const pinned = first(amiNotFound, spec({ amiSelectorTerms: [{ alias: 'bottlerocket@v1.99.0' }] }))
  assert.deepEqual(pinned.fix?.commands?.slice(2), [PATCH('bottlerocket@latest')])
  const custom = first(
    amiNotFound,
    spec({ amiFamily: 'Custom', amiSelectorTerms: [{ tags: { team: 'x' } }] }),
  )
  assert.deepEqual(custom.fix?.commands?.slice(2), [])
})

test('InstanceProfileReady=Unknown while the rest resolved: a warning naming it, pointing at the role, not at a stopped controller', () => {
  const f = first(
    conditions(
      { type: 'SubnetsReady', status: 'True' },
      { type: 'AMIsReady', status: 'True' },
      {
        type: 'InstanceProfileReady',
        status: 'Unknown',
        reason: 'AwaitingReconciliation',
        message: 'object is awaiting reconciliation',
      },
      { type: 'Ready', status: 'Unknown', reason: 'UnhealthyDependents' },
    ),
  )
  assert.equal(f.status, 'warn')
  assert.equal(
    f.message,
    "EC2NodeClass default has Ready=Unknown (UnhealthyDependents): Karpenter resolved the rest but not InstanceProfileReady=Unknown (AwaitingReconciliation: object is awaiting reconciliation) (the controller's log says why)",
  )
  assert.deepEqual(f.fix?.commands?.slice(2), ['aws iam get-role --role-name KarpenterNodeRole-demo'])
  assert.match(f.fix!.summary, /see also node-role and passrole-node-role/)
})

test('every condition Unknown (nothing resolved yet): still the controller that has not reconciled it', () => {
  const f = first(
    conditions(
      { type: 'SubnetsReady', status: 'Unknown' },
      { type: 'Ready', status: 'Unknown', reason: 'AwaitingReconciliation' },
    ),
  )
  assert.match(f.message, /the controller has not reconciled it \(is it running\?\)/)
})

test('a NodePool not Ready only because its EC2NodeClass is not resolved yet (NodeClassReadinessUnknown): a warning, not a failure', () => {
  // Seen on the bed: doctor right after install, the class not reconciled yet, failed install (exit 1).
  const pool = (f: Facts) => {
    nodePool(f).status = {
      conditions: [
        {
          type: 'NodeClassReady',
          status: 'False',
          reason: 'NodeClassReadinessUnknown',
          message: 'Node Class Readiness Unknown',
        },
        { type: 'Ready', status: 'False', reason: 'UnhealthyDependents', message: 'NodeClassReady=False' },
      ],
    }
  }
  const findings = runCheck(nodeclassReady, healthyFacts(both(conditions(), pool))).findings
  assert.deepEqual(
    findings.map((f) => [f.status, f.subject]),
    [
      ['warn', 'ec2nodeclass/default'],
      ['warn', 'nodepool/default'],
    ],
  )
  assert.equal(
    findings[1]!.message,
    'NodePool default is not Ready (NodeClassReady=False (NodeClassReadinessUnknown: Node Class Readiness Unknown)): it waits for EC2NodeClass default, which Karpenter has not resolved yet',
  )
  // The class failing: the NodePool fails with it (nothing launches from it).
  const failing = runCheck(
    nodeclassReady,
    healthyFacts(both(conditions({ type: 'Ready', status: 'False', reason: 'UnhealthyDependents' }), pool)),
  ).findings
  assert.equal(failing.find((f) => f.subject === 'nodepool/default')?.status, 'fail')
})
