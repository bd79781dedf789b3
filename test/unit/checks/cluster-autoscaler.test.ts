import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clusterAutoscaler, discoveryScope, flagValues } from '../../../src/checks/cluster-autoscaler.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { CA_ASG as ASG, CA_AUTO as AUTO, ca, withCa } from '../../helpers/check-fixtures.js'
import { failed, ok } from '../../helpers/facts.js'

const run = (f: Facts) => runCheck(clusterAutoscaler, f)

test('no cluster-autoscaler: pass', () => {
  const r = run(withCa(null))
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /no cluster-autoscaler Deployment/)
})

test('auto-discovery by the tags EKS puts on managed node groups: warn, naming every group and the controller’s', () => {
  const r = run(withCa(ca([AUTO], 2)))
  assert.equal(r.status, 'warn')
  const f = r.findings[0]!
  assert.equal(f.subject, 'kube-system/cluster-autoscaler')
  assert.match(
    f.message,
    new RegExp(
      `scales ${ASG} \\(node group system\\), eks-batch-0000 \\(node group batch\\) while Karpenter provisions for NodePool default`,
    ),
  )
  assert.match(f.message, /node group system runs the Karpenter controller/)
  assert.deepEqual(f.fix!.commands, [
    'kubectl -n kube-system annotate deployment cluster-autoscaler karpctl.io/scaled-down-from-replicas=2 --overwrite',
    'kubectl -n kube-system scale deployment cluster-autoscaler --replicas=0',
  ])
})

test('--nodes names one ASG (also written as two args): warn for that group only', () => {
  for (const args of [[`--nodes=1:10:eks-batch-0000`], ['--nodes', '1:10:eks-batch-0000']]) {
    const r = run(withCa(ca(args)))
    assert.equal(r.status, 'warn')
    assert.match(r.findings[0]!.message, /scales eks-batch-0000 \(node group batch\) while/)
    assert.doesNotMatch(r.findings[0]!.message, /runs the Karpenter controller/)
  }
})

test('--nodes naming a self-managed ASG (no managed node group): still warns, by ASG name', () => {
  const r = run(withCa(ca(['--nodes=0:5:my-self-managed-asg'])))
  assert.equal(r.status, 'warn')
  assert.match(r.findings[0]!.message, /scales my-self-managed-asg while/)
})

test('scaled to 0: pass', () => {
  const r = run(withCa(ca([AUTO], 0)))
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /scaled to 0/)
})

test('no NodePool: Karpenter provisions nothing, pass', () => {
  const r = run(withCa(ca([AUTO]), (f) => (f.kube.nodePools = ok([]))))
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /Karpenter has no NodePool/)
})

test("auto-discovery of another cluster's tags: pass", () => {
  const r = run(
    withCa(
      ca([
        '--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/other',
      ]),
    ),
  )
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /only another cluster's node groups/)
})

test('neither --nodes nor auto-discovery: pass', () => {
  const r = run(withCa(ca(['--scale-down-enabled=true'])))
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /scales no node group/)
})

test('auto-discovery by custom tags karpctl cannot match: unknown, not pass', () => {
  const r = run(withCa(ca(['--node-group-auto-discovery=asg:tag=team=payments'])))
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /by tags karpctl does not read/)
})

test('node groups unreadable with auto-discovery: unknown with the reason; with --nodes too, still warn (caveat)', () => {
  const denied = (f: Facts) => (f.eks.nodegroups = failed('eks:ListNodegroups demo'))
  const r = run(withCa(ca([AUTO]), denied))
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /permission denied/)
  const both = run(withCa(ca([AUTO, '--nodes=1:3:eks-batch-0000']), denied))
  assert.equal(both.status, 'warn')
  assert.match(both.findings[0]!.caveats![0]!, /permission denied/)
  const notRead = run(withCa(ca([AUTO]), (f) => delete f.eks.nodegroups))
  assert.equal(notRead.status, 'unknown')
})

test('the Deployments could not be listed: unknown; a snapshot without them: unknown', () => {
  const r = run(
    withCa(null, (f) => (f.kube.clusterAutoscalers = failed('kubernetes: cluster-autoscaler Deployments'))),
  )
  assert.equal(r.status, 'unknown')
  const old = run(withCa(null, (f) => delete f.kube.clusterAutoscalers))
  assert.equal(old.status, 'unknown')
  assert.match(old.findings[0]!.message, /not collected/)
})

test('discoveryScope: only the EKS tags (with or without their values) match managed node groups', () => {
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/enabled', 'demo'), 'managed')
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/demo=owned', 'demo'), 'managed')
  assert.equal(
    discoveryScope('asg:tag=k8s.io/cluster-autoscaler/enabled=true,k8s.io/cluster-autoscaler/demo', 'demo'),
    'managed',
  )
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/enabled=false', 'demo'), 'unknown')
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/demo,team=x', 'demo'), 'unknown')
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/prod', 'demo'), 'other-cluster')
  assert.equal(discoveryScope('mig:namePrefix=x', 'demo'), 'unknown')
})

test('flagValues: --flag=value and --flag value, every occurrence', () => {
  assert.deepEqual(flagValues(['--nodes=1:2:a', '--nodes', '1:2:b', '--nodesx=3'], '--nodes'), [
    '1:2:a',
    '1:2:b',
  ])
})
