// The conditions cluster-autoscaler judges, one at a time (issue 12, item 8: mutation testing): how
// --nodes and --node-group-auto-discovery are read (a flag without a value, an empty or colon-holding
// ASG, the same group named twice, a spec that is not asg:tag=), node groups not read, which node
// groups run the Karpenter controller (its pods' nodes), and the exact warning, evidence and fix.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clusterAutoscaler, discoveryScope } from '../../../src/checks/cluster-autoscaler.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { ca, CA_ASG, CA_AUTO, withCa } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, healthyNodePool, ok } from '../../helpers/facts.js'

const SUBJECT = 'kube-system/cluster-autoscaler'
const CA = `cluster-autoscaler ${SUBJECT}`
const COMPETE =
  'both answer the same pending pods with new nodes, and cluster-autoscaler scales its groups down under pods Karpenter placed'
const SPEC = CA_AUTO.slice('--node-group-auto-discovery='.length)
const only = (f: Facts) => {
  const r = runCheck(clusterAutoscaler, f)
  assert.equal(r.findings.length, 1)
  return r.findings[0]!
}
const message = (f: Facts) => only(f).message
const fixFor = (replicas: number) => ({
  summary: `scale ${SUBJECT} to 0 (the annotation records its replicas, so karpctl teardown gives them back); keep the node groups at a fixed size for the Karpenter controller`,
  commands: [
    `kubectl -n kube-system annotate deployment cluster-autoscaler karpctl.io/scaled-down-from-replicas=${replicas} --overwrite`,
    'kubectl -n kube-system scale deployment cluster-autoscaler --replicas=0',
  ],
})
/** The controller's second pod runs on a node of node group `group`. */
const secondPodOn =
  (group: string, ...more: ((f: Facts) => void)[]) =>
  (f: Facts) => {
    assert.ok(f.kube.nodes.ok && f.kube.pods.ok)
    f.kube.nodes.value.push({
      name: 'ip-10-0-2-2',
      labels: { 'eks.amazonaws.com/nodegroup': group },
      taints: [],
      ready: true,
      karpenter: false,
    })
    f.kube.pods.value.push({
      metadata: { name: 'karpenter-def', namespace: 'kube-system' },
      nodeName: 'ip-10-0-2-2',
      containerStatuses: [],
    })
    more.forEach((fn) => fn(f))
  }

test('cluster-autoscaler is a warning-severity cluster check', () => {
  assert.equal(clusterAutoscaler.meta.id, 'cluster-autoscaler')
  assert.equal(clusterAutoscaler.meta.severity, 'warning')
  assert.equal(clusterAutoscaler.meta.category, 'cluster')
})

test('one ASG by --nodes, off the controller: warn, the exact finding (no controller note, no caveats)', () => {
  const args = ['--nodes=1:10:eks-batch-0000']
  assert.deepEqual(only(withCa(ca(args))), {
    status: 'warn',
    subject: SUBJECT,
    message: `${CA} (1 replicas) scales eks-batch-0000 (node group batch) while Karpenter provisions for NodePool default: ${COMPETE}`,
    evidence: {
      replicas: 1,
      args: ['./cluster-autoscaler', '--cloud-provider=aws', ...args],
      nodePools: ['default'],
      scaled: [{ asg: 'eks-batch-0000', nodegroup: 'batch' }],
    },
    fix: fixFor(1),
  })
})

test('auto-discovery over the controller group: the evidence names the controller node groups', () => {
  const f = only(withCa(ca([CA_AUTO], 2)))
  assert.deepEqual(f.evidence, {
    replicas: 2,
    args: ['./cluster-autoscaler', '--cloud-provider=aws', CA_AUTO],
    nodePools: ['default'],
    scaled: [
      { asg: CA_ASG, nodegroup: 'system' },
      { asg: 'eks-batch-0000', nodegroup: 'batch' },
    ],
    controllerNodegroups: ['system'],
  })
  assert.deepEqual(f.fix, fixFor(2))
  assert.equal(f.caveats, undefined)
})

test('controller pods on two node groups, two NodePools: both lists joined with commas', () => {
  const twoPools = (f: Facts) => {
    f.kube.nodePools = ok([healthyNodePool(), { ...healthyNodePool(), metadata: { name: 'spot' } }])
  }
  assert.equal(
    message(withCa(ca([CA_AUTO]), secondPodOn('batch', twoPools))),
    `${CA} (1 replicas) scales ${CA_ASG} (node group system), eks-batch-0000 (node group batch) while Karpenter provisions for NodePool default, spot: ${COMPETE} — node group system, batch runs the Karpenter controller`,
  )
})

test("a controller pod whose node is not listed, or is listed after another group's node: only the pod's own group counts", () => {
  const podOnUnlisted = (f: Facts) => {
    assert.ok(f.kube.pods.ok)
    f.kube.pods.value[0]!.nodeName = 'ip-10-9-9-9'
  }
  const onlyBatch = ['--nodes=1:10:eks-batch-0000']
  const unlisted = only(withCa(ca([CA_AUTO]), podOnUnlisted))
  assert.equal(unlisted.status, 'warn')
  assert.equal(unlisted.evidence?.controllerNodegroups, undefined)
  // the system node comes first; the pod on batch's node makes batch (only) the controller's group
  const onBatch = (f: Facts) => {
    assert.ok(f.kube.pods.ok)
    f.kube.pods.value.shift()
  }
  assert.match(
    message(withCa(ca(onlyBatch), secondPodOn('batch', onBatch))),
    /— node group batch runs the Karpenter controller$/,
  )
  assert.doesNotMatch(
    message(withCa(ca([`--nodes=1:10:${CA_ASG}`]), secondPodOn('batch', onBatch))),
    /runs the Karpenter controller/,
  )
})

test('pods or nodes unreadable: the warning stands, without a controller note', () => {
  for (const unread of [
    (f: Facts) => (f.kube.pods = failed('kubernetes: pods')),
    (f: Facts) => (f.kube.nodes = failed('kubernetes: nodes')),
  ]) {
    const f = only(withCa(ca([CA_AUTO]), unread))
    assert.equal(f.status, 'warn')
    assert.doesNotMatch(f.message, /runs the Karpenter controller/)
    assert.equal(f.evidence?.controllerNodegroups, undefined)
  }
})

test('an ASG named by --nodes and found again by auto-discovery is listed once', () => {
  const f = only(withCa(ca([`--nodes=1:3:${CA_ASG}`, CA_AUTO])))
  assert.deepEqual(f.evidence?.scaled, [
    { asg: CA_ASG, nodegroup: 'system' },
    { asg: 'eks-batch-0000', nodegroup: 'batch' },
  ])
})

test('--nodes: an ASG name holding a colon is kept whole; no ASG at all, or no value after the flag, scales nothing', () => {
  assert.match(message(withCa(ca(['--nodes=1:10:my:asg']))), /scales my:asg while/)
  for (const args of [['--nodes=1:10'], ['--nodes']]) {
    assert.deepEqual(only(withCa(ca(args))), {
      status: 'pass',
      subject: SUBJECT,
      message: `${CA} scales no node group (neither --nodes nor --node-group-auto-discovery)`,
      evidence: {
        replicas: 1,
        args: ['./cluster-autoscaler', '--cloud-provider=aws', ...args],
        nodePools: ['default'],
      },
    })
  }
})

test('discoveryScope: a spec that is not asg:tag= is unknown, whatever tags follow', () => {
  assert.equal(discoveryScope('mig:tag=k8s.io/cluster-autoscaler/enabled', 'demo'), 'unknown')
  assert.equal(discoveryScope('asg:tag=k8s.io/cluster-autoscaler/enabled', 'demo'), 'managed')
})

test('the node groups not collected (an older snapshot): unknown, saying so for the spec', () => {
  assert.equal(
    message(withCa(ca([CA_AUTO]), (f) => delete f.eks.nodegroups)),
    `${CA} runs (1 replicas) beside Karpenter; whether it scales this cluster's node groups is not known: the managed node groups were not read, so what ${SPEC} discovers is not known`,
  )
})

test('two unknown discoveries: both reasons, joined with "; "', () => {
  assert.equal(
    message(
      withCa(
        ca(['--node-group-auto-discovery=asg:tag=team=a', '--node-group-auto-discovery=asg:tag=team=b']),
      ),
    ),
    `${CA} runs (1 replicas) beside Karpenter; whether it scales this cluster's node groups is not known: --node-group-auto-discovery=asg:tag=team=a selects Auto Scaling groups by tags karpctl does not read; --node-group-auto-discovery=asg:tag=team=b selects Auto Scaling groups by tags karpctl does not read`,
  )
})

test("two other clusters' discoveries: both named, joined with commas", () => {
  const other = (c: string) => `asg:tag=k8s.io/cluster-autoscaler/${c}`
  assert.equal(
    message(
      withCa(ca([`--node-group-auto-discovery=${other('a')}`, `--node-group-auto-discovery=${other('b')}`])),
    ),
    `${CA} discovers only another cluster's node groups (${other('a')}, ${other('b')}): it scales nothing of demo`,
  )
})

test('the healthy fixture has no cluster-autoscaler: one pass', () => {
  assert.deepEqual(runCheck(clusterAutoscaler, healthyFacts()).findings, [
    {
      status: 'pass',
      message: 'no cluster-autoscaler Deployment runs in the cluster',
    },
  ])
})
