import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clash, hostPorts } from '../../../src/why/host-ports.js'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import type { ContainerPort, DaemonSet } from '../../../src/why/types.js'
import { exitCodeOf } from '../../../src/why/why.js'
import { pendingPod, pools, whyFacts } from '../../helpers/why.js'

const exporter = (
  ports: ContainerPort[],
  extra: Partial<DaemonSet['spec']['template']['spec']> = {},
): DaemonSet => ({
  metadata: { name: 'node-exporter', namespace: 'monitoring' },
  spec: {
    template: {
      spec: { containers: [{ name: 'exporter', ports }], tolerations: [{ operator: 'Exists' }], ...extra },
    },
  },
})
const binding = (ports: ContainerPort[]) =>
  pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '500m' } }, ports }] })
const verdict = (
  pod: ReturnType<typeof pendingPod>,
  ds: DaemonSet[],
  mutate?: (f: ReturnType<typeof whyFacts>) => void,
) => {
  const f = whyFacts([pod], (x) => {
    x.daemonSets = { ok: true, value: ds }
    mutate?.(x)
  })
  const r = judge(f, 'snapshot', new Date(0))
  return { r, v: (r.groups[0] as PodVerdict).nodePools[0]! }
}

test('host ports clash on the same port and protocol, when the addresses are equal or either is every address', () => {
  const [tcp] = hostPorts(binding([{ containerPort: 80, hostPort: 8080 }]).spec)
  assert.deepEqual(tcp, { port: 8080, protocol: 'TCP', ip: '0.0.0.0', container: 'app', at: [0, 0] })
  const p = (port: number, protocol = 'TCP', ip = '0.0.0.0') => ({ port, protocol, ip, container: 'c' })
  assert.equal(clash(p(8080), p(8080)), true)
  assert.equal(clash(p(8080), p(8081)), false)
  assert.equal(clash(p(8080), p(8080, 'UDP')), false)
  assert.equal(clash(p(8080, 'TCP', '10.0.0.1'), p(8080)), true)
  assert.equal(clash(p(8080, 'TCP', '10.0.0.1'), p(8080, 'TCP', '10.0.0.2')), false)
  assert.equal(clash(p(8080, 'TCP', '10.0.0.1'), p(8080, 'TCP', '10.0.0.1')), true)
  // A containerPort without a hostPort binds nothing on the node.
  assert.deepEqual(hostPorts(binding([{ containerPort: 80 }]).spec), [])
})

test("a pod asking for a DaemonSet's host port: no node of the NodePool can take it", () => {
  const { v, r } = verdict(binding([{ containerPort: 9100, hostPort: 9100 }]), [
    exporter([{ containerPort: 9100, hostPort: 9100 }]),
  ])
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'host-ports')
  assert.equal(
    v.message,
    'hostPort 9100/TCP (container app) is taken by DaemonSet monitoring/node-exporter (container exporter, hostPort 9100/TCP), which runs on every node of NodePool default: no node it launches can take the pod',
  )
  assert.match(v.fix!.summary, /^give deployment\/web another hostPort than 9100\/TCP/)
  // The printed patch drops the pod's hostPort (oracle: host-ports fixes were words only).
  assert.deepEqual(v.fix!.commands, [
    `kubectl -n shop patch deployment web --type json -p '[{"op":"remove","path":"/spec/template/spec/containers/0/ports/0/hostPort"}]'`,
  ])
  assert.equal(exitCodeOf(r), 1)
})

test('another port, another protocol, or a DaemonSet that does not run on the NodePool: no clash', () => {
  const ds = exporter([{ containerPort: 9100, hostPort: 9100 }])
  assert.equal(verdict(binding([{ containerPort: 9101, hostPort: 9101 }]), [ds]).v.status, 'fits')
  assert.equal(
    verdict(binding([{ containerPort: 9100, hostPort: 9100, protocol: 'UDP' }]), [ds]).v.status,
    'fits',
  )
  const elsewhere = exporter([{ containerPort: 9100, hostPort: 9100 }], { nodeSelector: { team: 'other' } })
  assert.equal(verdict(binding([{ containerPort: 9100, hostPort: 9100 }]), [elsewhere]).v.status, 'fits')
})

test("Karpenter's order: a taint is named before a host port, a host port before requirements", () => {
  const ds = [exporter([{ containerPort: 9100, hostPort: 9100 }])]
  const pod = binding([{ containerPort: 9100, hostPort: 9100 }])
  const tainted = verdict(pod, ds, (f) => {
    pools(f)[0]!.spec.template.spec.taints = [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]
  })
  assert.equal(tainted.v.rule, 'taints')
  const selecting = { ...pod, spec: { ...pod.spec, nodeSelector: { team: 'payments' } } }
  assert.equal(verdict(selecting, ds).v.rule, 'host-ports')
})
