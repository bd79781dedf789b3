// Shapes of other tools' installs the install matrix (test/e2e/install-matrix.e2e.test.ts) found judged wrong.
// Issue 35 (install matrix): eksctl's `karpenter:` policy (eksctl-io/eksctl pkg/cfn/builder/karpenter.go)
// and terraform-aws-eks v20's lack ec2:DescribePlacementGroups, which the 1.14 template grants. Karpenter
// v1.14.1 resolves a placement group only for an EC2NodeClass with `placementGroupSelector`
// (pkg/providers/placementgroup/provider.go: Get returns nothing without one), so the action is needed
// only then — and asked for when the EC2NodeClasses cannot be read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicy } from '../../../src/checks/controller-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { controllerRole } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts } from '../../helpers/facts.js'

const noPlacementAction = controllerRole.dropActions('ec2:DescribePlacementGroups')
const selecting = (f: Facts) => {
  if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.spec.placementGroupSelector = { name: 'hpc' }
}

test('no EC2NodeClass selects a placement group: ec2:DescribePlacementGroups is not needed', () => {
  const r = runCheck(controllerPolicy, healthyFacts(noPlacementAction))
  assert.equal(r.status, 'pass', r.findings.map((f) => f.message).join(' | '))
})

test('an EC2NodeClass with placementGroupSelector: the action is needed, and named', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      noPlacementAction(f)
      selecting(f)
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.message,
    /lacks 1 action\(s\) Karpenter 1\.14\.1 needs: ec2:DescribePlacementGroups/,
  )
})

test('EC2NodeClasses unreadable: not proven unused, the action is asked for', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      noPlacementAction(f)
      f.kube.nodeClasses = failed('list karpenter.k8s.aws/v1 ec2nodeclasses', 'Forbidden')
    }),
  )
  assert.notEqual(r.status, 'pass')
  assert.match(JSON.stringify(r.findings), /ec2:DescribePlacementGroups/)
})

// Issue 35 (install matrix): terraform-aws-eks v21's controller role is found only through its Pod
// Identity association; an endpoint that cannot list associations leaves the role unknown, not absent.
test('no IRSA, Pod Identity associations unreadable: unknown with the read, not skipped', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      f.iam.controllerRoleName = null
      f.iam.controllerIdentity = 'none'
      f.eks.podIdentityAssociations = failed(
        'eks:ListPodIdentityAssociations demo',
        'NotFound',
        'unsupported',
      )
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /eks:ListPodIdentityAssociations/)
})
