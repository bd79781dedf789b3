import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Deployment, Facts, KubeNode, Pod } from '../../../src/facts/types.js'
import { controllerReady } from '../../../src/checks/controller-ready.js'
import { runCheck } from '../../../src/checks/run.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

const deployment = (f: Facts): Deployment => {
  if (!f.kube.deployment.ok || !f.kube.deployment.value) throw new Error('fixture has no deployment')
  return f.kube.deployment.value
}
const pods = (f: Facts): Pod[] => (f.kube.pods.ok ? f.kube.pods.value : [])
const nodes = (f: Facts): KubeNode[] => (f.kube.nodes.ok ? f.kube.nodes.value : [])
const karpenterNode = (name: string): KubeNode => ({
  name,
  labels: { 'karpenter.sh/nodepool': 'default' },
  taints: [],
  ready: true,
  karpenter: true,
})

test('healthy controller passes', () => {
  const r = runCheck(controllerReady, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.deepEqual(
    r.findings.map((f) => f.status),
    ['pass', 'pass', 'pass'],
  )
  assert.match(r.findings[0]?.message ?? '', /kube-system\/karpenter is available \(2\/2\)/)
})

test('no available replica fails with the condition and the debug commands', () => {
  const f = healthyFacts((f) => {
    Object.assign(deployment(f), {
      availableReplicas: 0,
      readyReplicas: 0,
      conditions: [
        {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
      ],
    })
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings[0]!
  assert.equal(finding.subject, 'kube-system/karpenter')
  assert.match(finding.message, /0\/2 replicas available: MinimumReplicasUnavailable/)
  assert.deepEqual(finding.fix?.commands?.slice(0, 2), [
    'kubectl -n kube-system logs deploy/karpenter -c controller',
    'kubectl -n kube-system describe deploy karpenter',
  ])
})

test('one of two replicas available warns', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (deployment(f).availableReplicas = 1)),
  )
  assert.equal(r.status, 'warn')
  assert.match(r.findings[0]?.message ?? '', /1\/2 replicas available/)
})

test('scaled to zero fails', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => Object.assign(deployment(f), { replicas: 0, availableReplicas: 0 })),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]?.message ?? '', /scaled to 0/)
})

test('a crash-looping container fails, naming the pod', () => {
  const f = healthyFacts((f) => {
    pods(f)[1]!.containerStatuses = [
      { name: 'controller', restartCount: 3, ready: false, waitingReason: 'CrashLoopBackOff' },
    ]
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings.find((x) => x.subject === 'kube-system/karpenter-def')!
  assert.match(finding.message, /karpenter-def container controller is in CrashLoopBackOff \(3 restarts\)/)
  assert.equal(finding.evidence?.node, 'ip-10-0-2-1')
  assert.equal(
    finding.fix?.commands?.[0],
    'kubectl -n kube-system logs karpenter-def -c controller --previous',
  )
})

test('more than five restarts fails even when running', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (pods(f)[0]!.containerStatuses[0]!.restartCount = 6)),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[1]?.message ?? '',
    /karpenter-abc container controller keeps restarting \(6 restarts\)/,
  )
})

test('five restarts is still fine', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (pods(f)[0]!.containerStatuses[0]!.restartCount = 5)),
  )
  assert.equal(r.status, 'pass')
})

test('only Karpenter-managed nodes: fails, explaining it must not run on nodes it manages', () => {
  const f = healthyFacts((f) => {
    f.kube.nodes = ok([karpenterNode('ip-10-0-9-1'), karpenterNode('ip-10-0-9-2')])
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'fail')
  const finding = r.findings[2]!
  assert.match(
    finding.message,
    /0 ready nodes not managed by Karpenter for 2 controller replicas \(one per node by anti-affinity\): the controller must not run on nodes it manages/,
  )
  assert.deepEqual(finding.evidence?.karpenterNodes, ['ip-10-0-9-1', 'ip-10-0-9-2'])
  assert.ok(
    finding.fix?.commands?.some((c) =>
      c.startsWith('eksctl create nodegroup --cluster demo --region us-west-2'),
    ),
  )
})

test('one system node for two replicas warns and offers to scale the node group', () => {
  const f = healthyFacts((f) => {
    nodes(f)[1]!.ready = false
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'warn')
  const finding = r.findings[2]!
  assert.deepEqual(finding.evidence?.notReady, ['ip-10-0-2-1'])
  assert.ok(
    finding.fix?.commands?.includes(
      'aws eks update-nodegroup-config --cluster-name demo --nodegroup-name system --scaling-config minSize=2,desiredSize=2 --region us-west-2',
    ),
  )
})

test('a taint the chart does not tolerate removes a node; CriticalAddonsOnly does not', () => {
  const tainted = healthyFacts((f) => {
    nodes(f)[0]!.taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]
  })
  assert.equal(runCheck(controllerReady, tainted).status, 'warn')
  const critical = healthyFacts((f) => {
    for (const n of nodes(f)) n.taints = [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }]
  })
  assert.equal(runCheck(controllerReady, critical).status, 'pass')
})

test('an affinity without hostname anti-affinity needs only one node', () => {
  const f = healthyFacts((f) => {
    nodes(f)[1]!.ready = false
    if (f.kube.release.ok && f.kube.release.value)
      f.kube.release.value.computedValues.affinity = { nodeAffinity: {} }
  })
  assert.equal(runCheck(controllerReady, f).status, 'pass')
})

test('a controller on Fargate skips the node count', () => {
  const f = healthyFacts((f) => {
    f.kube.nodes = ok(
      ['fargate-ip-10-0-1-1', 'fargate-ip-10-0-2-1'].map((name) => ({
        name,
        labels: { 'eks.amazonaws.com/compute-type': 'fargate' },
        taints: [{ key: 'eks.amazonaws.com/compute-type', value: 'fargate', effect: 'NoSchedule' }],
        ready: true,
        karpenter: false,
      })),
    )
    pods(f)[0]!.nodeName = 'fargate-ip-10-0-1-1'
    pods(f)[1]!.nodeName = 'fargate-ip-10-0-2-1'
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[2]?.status, 'skipped')
  assert.match(r.findings[2]?.message ?? '', /EKS Fargate/)
})

test('a failed deployment read is unknown', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (f.kube.deployment = failed('kube:get deployment kube-system/karpenter'))),
  )
  assert.equal(r.status, 'unknown')
})

test('a failed pods read leaves crash loops unknown', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (f.kube.pods = failed('kube:list pods kube-system'))),
  )
  assert.equal(r.status, 'unknown')
  assert.deepEqual(
    r.findings.map((x) => x.status),
    ['pass', 'unknown', 'pass'],
  )
})

test('release without its Deployment fails', () => {
  const r = runCheck(
    controllerReady,
    healthyFacts((f) => (f.kube.deployment = ok(null))),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]?.message ?? '',
    /Helm release kube-system\/karpenter exists but its controller Deployment was not found/,
  )
})

test('nothing installed: skipped', () => {
  const f = healthyFacts((f) => {
    f.kube.deployment = ok(null)
    f.kube.release = ok(null)
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]?.message ?? '', /not installed/)
})

test("without the release's values the chart's default toleration still applies", () => {
  const f = healthyFacts((f) => {
    f.kube.release = failed('kube:list secrets kube-system')
    for (const n of nodes(f)) n.taints = [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }]
  })
  const r = runCheck(controllerReady, f)
  assert.equal(r.findings[2]?.status, 'pass')
})

test('a one-node group whose max size is 1: the printed scaling raises the max too (EKS refuses desired > max; field corpus)', () => {
  const f = healthyFacts((f) => {
    nodes(f)[1]!.ready = false
    f.eks.nodegroups = { ok: true, value: [{ name: 'system', maxSize: 1, autoScalingGroups: [] }] }
  })
  const finding = runCheck(controllerReady, f).findings[2]!
  assert.ok(
    finding.fix?.commands?.includes(
      'aws eks update-nodegroup-config --cluster-name demo --nodegroup-name system --scaling-config minSize=2,maxSize=2,desiredSize=2 --region us-west-2',
    ),
    JSON.stringify(finding.fix?.commands),
  )
  // A max already above: never lowered.
  f.eks.nodegroups = { ok: true, value: [{ name: 'system', maxSize: 5, autoScalingGroups: [] }] }
  assert.match(runCheck(controllerReady, f).findings[2]!.fix?.commands?.[0] ?? '', /minSize=2,desiredSize=2 /)
})
