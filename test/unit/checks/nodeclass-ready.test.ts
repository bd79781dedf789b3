import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { nodeclassReady } from '../../../src/checks/nodeclass-ready.js'
import { runCheck } from '../../../src/checks/run.js'
import { nodeClass, nodePool } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

test('healthy EC2NodeClass and NodePool pass', () => {
  const r = runCheck(nodeclassReady, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.deepEqual(
    r.findings.map((f) => f.subject),
    ['ec2nodeclass/default', 'nodepool/default'],
  )
})

test('an EC2NodeClass whose subnets do not resolve fails with the reason and a subnet query', () => {
  const f = healthyFacts((f) => {
    nodeClass(f).status = {
      conditions: [
        {
          type: 'SubnetsReady',
          status: 'False',
          reason: 'SubnetsNotFound',
          message: 'SubnetSelector did not match any Subnets',
        },
        { type: 'SecurityGroupsReady', status: 'True' },
        { type: 'Ready', status: 'False', reason: 'UnhealthyDependents', message: 'SubnetsReady=False' },
      ],
    }
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings[0]!
  assert.equal(finding.subject, 'ec2nodeclass/default')
  assert.equal(
    finding.message,
    'EC2NodeClass default is not Ready: SubnetsReady=False (SubnetsNotFound: SubnetSelector did not match any Subnets)',
  )
  assert.equal(finding.evidence?.role, 'KarpenterNodeRole-demo')
  assert.ok(
    finding.fix?.commands?.includes(
      "aws ec2 describe-subnets --filters Name=tag:karpenter.sh/discovery,Values=demo --region us-west-2 --query 'Subnets[].[SubnetId,VpcId,AvailabilityZone]'",
    ),
  )
  assert.match(finding.fix?.summary ?? '', /discovery-tags/)
})

test('instance profile not resolved: the role query', () => {
  const f = healthyFacts((f) => {
    nodeClass(f).status = {
      conditions: [
        {
          type: 'InstanceProfileReady',
          status: 'False',
          reason: 'InstanceProfileCreateFailed',
          message: 'AccessDenied: iam:PassRole',
        },
        { type: 'Ready', status: 'False', reason: 'UnhealthyDependents' },
      ],
    }
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'fail')
  assert.ok(r.findings[0]?.fix?.commands?.includes('aws iam get-role --role-name KarpenterNodeRole-demo'))
})

test('an EC2NodeClass with no conditions yet warns', () => {
  const r = runCheck(
    nodeclassReady,
    healthyFacts((f) => (nodeClass(f).status = undefined)),
  )
  assert.equal(r.status, 'warn')
  assert.match(r.findings[0]?.message ?? '', /no Ready condition/)
})

test('a NodePool pointing at a missing EC2NodeClass fails', () => {
  const f = healthyFacts((f) => {
    nodePool(f).spec.template.spec.nodeClassRef.name = 'gpu'
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings.find((x) => x.subject === 'nodepool/default')!
  assert.equal(finding.message, 'NodePool default references EC2NodeClass gpu, which does not exist')
  assert.deepEqual(finding.evidence?.existing, ['default'])
  assert.match(
    finding.fix?.commands?.[0] ?? '',
    /^kubectl patch nodepool default --type merge -p '.*"name":"default"/,
  )
})

test('a NodePool referencing the wrong group fails', () => {
  const f = healthyFacts((f) => {
    nodePool(f).spec.template.spec.nodeClassRef = {
      group: 'karpenter.sh',
      kind: 'EC2NodeClass',
      name: 'default',
    }
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[1]?.message ?? '',
    /group karpenter\.sh, not an EC2NodeClass \(karpenter\.k8s\.aws\)/,
  )
})

test('a NodePool that is not Ready fails with its message', () => {
  const f = healthyFacts((f) => {
    nodePool(f).status = {
      conditions: [
        { type: 'Ready', status: 'False', reason: 'NodeClassNotReady', message: 'NodeClass is not ready' },
      ],
    }
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'fail')
  assert.equal(
    r.findings[1]?.message,
    'NodePool default is not Ready: Ready=False (NodeClassNotReady: NodeClass is not ready)',
  )
})

test('no NodePool warns with a minimal NodePool that uses the existing EC2NodeClass', () => {
  const r = runCheck(
    nodeclassReady,
    healthyFacts((f) => (f.kube.nodePools = ok([]))),
  )
  assert.equal(r.status, 'warn')
  const finding = r.findings.find((x) => x.status === 'warn')!
  assert.match(finding.message, /Karpenter will launch nothing/)
  const docs = parseAllDocuments(finding.fix?.snippet?.text ?? '').map((d) => d.toJS())
  assert.equal(docs.length, 1)
  assert.equal(docs[0].kind, 'NodePool')
  assert.equal(docs[0].apiVersion, 'karpenter.sh/v1')
  assert.deepEqual(docs[0].spec.template.spec.nodeClassRef, {
    group: 'karpenter.k8s.aws',
    kind: 'EC2NodeClass',
    name: 'default',
  })
})

test('no NodePool and no EC2NodeClass: both in the snippet', () => {
  const f = healthyFacts((f) => {
    f.kube.nodePools = ok([])
    f.kube.nodeClasses = ok([])
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'warn')
  const docs = parseAllDocuments(r.findings[0]?.fix?.snippet?.text ?? '').map((d) => d.toJS())
  assert.deepEqual(
    docs.map((d) => d.kind),
    ['NodePool', 'EC2NodeClass'],
  )
  assert.equal(docs[1].spec.role, 'KarpenterNodeRole-demo')
})

test('a failed read is unknown', () => {
  const r = runCheck(
    nodeclassReady,
    healthyFacts((f) => (f.kube.nodeClasses = failed('kube:list ec2nodeclasses'))),
  )
  assert.equal(r.status, 'unknown')
})

test('v0.x install: skipped (Provisioners are karpenter-version’s subject)', () => {
  const f = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.chartVersion = '0.30.0'
  })
  const r = runCheck(nodeclassReady, f)
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]?.message ?? '', /Provisioners/)
})

test('nothing installed: skipped', () => {
  const f = healthyFacts((f) => {
    f.kube.release = ok(null)
    f.kube.nodePools = ok([])
    f.kube.nodeClasses = ok([])
  })
  assert.equal(runCheck(nodeclassReady, f).status, 'skipped')
})
