import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  allocatableOf,
  nodeSettings,
  catalogOf,
  judgeInstanceTypes,
  labelsOf,
  reservedCpu,
} from '../../../src/why/instance-types.js'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import { exitCodeOf } from '../../../src/why/why.js'
import { INSTANCE_TYPES, OFFERINGS, pendingPod, pools, whyFacts } from '../../helpers/why.js'

const MiB = 2 ** 20
const type = (name: string) => INSTANCE_TYPES.find((t) => t.name === name)!
const verdicts = (f: ReturnType<typeof whyFacts>) => {
  const r = judge(f, 'snapshot', new Date(0))
  return { r, v: (r.groups[0] as PodVerdict).nodePools[0]! }
}
const asks = (cpu: string, memory: string) =>
  pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu, memory } } }] })

test("Karpenter's labels of a type, from its name and EC2's description", () => {
  assert.deepEqual(labelsOf(type('c6g.large')), {
    'node.kubernetes.io/instance-type': ['c6g.large'],
    'karpenter.k8s.aws/instance-family': ['c6g'],
    'karpenter.k8s.aws/instance-size': ['large'],
    'karpenter.k8s.aws/instance-category': ['c'],
    'karpenter.k8s.aws/instance-generation': ['6'],
    'karpenter.k8s.aws/instance-cpu': ['2'],
    'karpenter.k8s.aws/instance-memory': ['4096'],
    'kubernetes.io/arch': ['arm64'],
    'kubernetes.io/os': ['linux'],
    'karpenter.k8s.aws/instance-capability-flex': ['false'],
    'karpenter.k8s.aws/instance-tenancy': ['default', 'dedicated'],
    'karpenter.k8s.aws/instance-gpu-name': [],
    'karpenter.k8s.aws/instance-gpu-manufacturer': [],
    'karpenter.k8s.aws/instance-gpu-count': [],
    'node.kubernetes.io/windows-build': [],
  })
})

test('reserved resources, pinned for real types (Karpenter AWS types.go arithmetic)', () => {
  // cpu: 60m for the first core, 10m the second, 5m each for cores 3-4, 2.5m each beyond.
  assert.equal(Math.round(reservedCpu(2) * 1000), 70)
  assert.equal(Math.round(reservedCpu(4) * 1000), 80)
  assert.equal(Math.round(reservedCpu(8) * 1000), 90)
  // m5.large: 8192 MiB − ceil(8192 × 0.075)=615 − (11 × 29 + 255)=574 − 100 eviction = 6903 MiB; 29 pods.
  assert.deepEqual(allocatableOf(type('m5.large'), undefined), { cpu: 1.93, memory: 6903 * MiB, pods: 29 })
  // m5.xlarge: 16384 − 1229 − (11 × 58 + 255)=893 − 100 = 14162 MiB; 4 ENIs × 14 + 2 = 58 pods.
  assert.deepEqual(allocatableOf(type('m5.xlarge'), undefined), { cpu: 3.92, memory: 14162 * MiB, pods: 58 })
  // t3.micro: 1024 − 77 − (11 × 4 + 255)=299 − 100 = 548 MiB; 2 ENIs × 1 + 2 = 4 pods.
  assert.deepEqual(allocatableOf(type('t3.micro'), undefined), { cpu: 1.93, memory: 548 * MiB, pods: 4 })
  // The EC2NodeClass's kubelet replaces the defaults: maxPods, kube- and system-reserved, eviction.
  const a = allocatableOf(type('m5.large'), {
    maxPods: 110,
    kubeReserved: { cpu: '200m', memory: '1Gi' },
    systemReserved: { cpu: '100m' },
    evictionHard: { 'memory.available': '5%' },
  })
  assert.equal(a.pods, 110)
  assert.equal(Math.round(a.cpu * 1000), 1700)
  assert.equal(a.memory, 7577 * MiB - 1024 * MiB - 7577 * MiB * 0.05)
})

test('too big for every type: the largest left, what it has, what the node needs; exit 1', () => {
  const f = whyFacts([asks('4', '1Gi')])
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-size',
    operator: 'In',
    values: ['large'],
  })
  const { r, v } = verdicts(f)
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'instance-types')
  assert.equal(
    v.message,
    'no instance type has room: the largest left of 2, m5.large, has 1930m cpu / 6.7Gi memory / 29 pods allocatable, a node for the pod needs 4 cpu',
  )
  assert.equal(
    v.fix?.summary,
    "allow larger instance types, so that m5.2xlarge (7910m cpu / 28.6Gi memory / 58 pods allocatable) is left: remove NodePool default's requirement on karpenter.k8s.aws/instance-size (spec.template.spec.requirements[1])",
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch nodepool default --type json -p '[{"op":"remove","path":"/spec/template/spec/requirements/1"}]'`,
  ])
  assert.equal(exitCodeOf(r), 1)
  // Nothing to widen: lower the requests.
  const huge = verdicts(whyFacts([asks('64', '1Gi')])).v
  assert.equal(
    huge.message,
    'no instance type has room: the largest left of 5, m5.2xlarge, has 7910m cpu / 28.6Gi memory / 58 pods allocatable, a node for the pod needs 64 cpu',
  )
  assert.match(huge.fix?.summary ?? '', /^lower the pod's requests to fit m5.2xlarge's/)
})

test('DaemonSet overhead counts against the type: cpu and memory named with what the pod asks', () => {
  const f = whyFacts([asks('1500m', '6Gi')])
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'node.kubernetes.io/instance-type',
    operator: 'In',
    values: ['m5.large'],
  })
  f.daemonSets = {
    ok: true,
    value: [
      {
        metadata: { name: 'agent', namespace: 'kube-system' },
        spec: {
          template: {
            spec: { containers: [{ name: 'a', resources: { requests: { cpu: '500m', memory: '1Gi' } } }] },
          },
        },
      },
    ],
  }
  assert.equal(
    verdicts(f).v.message,
    'no instance type has room: the largest left of 1, m5.large, has 1930m cpu / 6.7Gi memory / 29 pods allocatable, a node for the pod needs 2 cpu (the pod 1500m, DaemonSets the rest), 7Gi memory (the pod 6Gi, DaemonSets the rest)',
  )
})

test('an arch no type offered has: the requirement named with the values there are', () => {
  const { v, r } = verdicts(whyFacts([pendingPod({ nodeSelector: { 'kubernetes.io/arch': 's390x' } })]))
  assert.equal(v.status, 'ruled-out')
  assert.equal(
    v.message,
    'no instance type matches kubernetes.io/arch In [s390x]: the 5 types offered in [us-west-2a us-west-2b] have kubernetes.io/arch amd64, arm64',
  )
  assert.equal(exitCodeOf(r), 1)
  // arm64 is there (c6g.large): it fits.
  const arm = verdicts(whyFacts([pendingPod({ nodeSelector: { 'kubernetes.io/arch': 'arm64' } })])).v
  assert.equal(arm.status, 'fits')
  assert.match(arm.message, /^1 of 1 instance types have room, the smallest c6g\.large/)
})

test('a zone where the type is not offered: arm64 in us-west-2b only', () => {
  const { v } = verdicts(
    whyFacts([
      pendingPod({
        nodeSelector: { 'kubernetes.io/arch': 'arm64', 'topology.kubernetes.io/zone': 'us-west-2b' },
      }),
    ]),
  )
  assert.equal(v.status, 'ruled-out')
  assert.equal(
    v.message,
    'no instance type matches kubernetes.io/arch In [arm64]: the 4 types offered in [us-west-2a us-west-2b] have kubernetes.io/arch amd64',
  )
  // No type offered in the zone at all.
  const none = judgeInstanceTypes({
    pool: 'default',
    merged: {
      byKey: new Map([
        [
          'topology.kubernetes.io/zone',
          { key: 'topology.kubernetes.io/zone', complement: false, values: ['us-west-2b'] },
        ],
      ]),
      origin: new Map(),
    },
    nodeClass: undefined,
    need: { cpu: 0.5, pods: 1 },
    podAsks: { cpu: 0.5, pods: 1 },
    catalog: catalogOf(
      INSTANCE_TYPES,
      OFFERINGS.filter((o) => o.zone === 'us-west-2a'),
    ),
  })
  assert.equal(
    none.message,
    'no instance type is offered in [us-west-2a] for topology.kubernetes.io/zone In [us-west-2b] (of 5 types EC2 describes)',
  )
})

test('maxPods exhausted by the DaemonSets: kubelet.maxPods named', () => {
  const f = whyFacts([asks('100m', '100Mi')])
  for (const nc of f.kube.nodeClasses.ok ? f.kube.nodeClasses.value : []) nc.spec.kubelet = { maxPods: 3 }
  const ds = (name: string) => ({
    metadata: { name, namespace: 'kube-system' },
    spec: { template: { spec: { containers: [{ name: 'a' }] } } },
  })
  f.daemonSets = { ok: true, value: [ds('a'), ds('b'), ds('c')] }
  const { v } = verdicts(f)
  assert.equal(
    v.message,
    // AL2023 reserves kube memory for the ENI-limited 58 pods whatever maxPods says (oracle seed 1228)
    'no instance type has room: the largest left of 5, m5.2xlarge, has 7910m cpu / 28.6Gi memory / 3 pods allocatable, a node for the pod needs one pod more than its 3 pods (EC2NodeClass kubelet.maxPods) after 3 DaemonSet pods',
  )
})

// amifamily FeatureFlags (v1.14.1): UsesENILimitedMemoryOverhead on AL2/AL2023/Custom, not on
// Bottlerocket or Windows; PodsPerCoreEnabled except on Bottlerocket; Windows defaults to 110 pods.
test('node settings by AMI family: kube-reserved memory, podsPerCore, Windows pods', () => {
  const nc = (spec: Record<string, unknown>) =>
    ({ metadata: { name: 'x' }, spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], ...spec } }) as never
  const m5 = type('m5.2xlarge')
  const al2023 = allocatableOf(m5, nodeSettings(nc({ kubelet: { maxPods: 3 } })))
  const bottlerocket = allocatableOf(
    m5,
    nodeSettings(nc({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], kubelet: { maxPods: 3 } })),
  )
  assert.equal(bottlerocket.memory - al2023.memory, 11 * (58 - 3) * MiB)
  assert.equal(allocatableOf(m5, nodeSettings(nc({ kubelet: { podsPerCore: 2 } }))).pods, 16)
  assert.equal(
    allocatableOf(m5, nodeSettings(nc({ amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 2 } }))).pods,
    58,
  )
  assert.equal(
    allocatableOf(m5, nodeSettings(nc({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] }))).pods,
    110,
  )
})

/** NodePool default with limits cpu 4 and a NodeClaim holding 2 cpu: 2 cpu left for a new node. */
const capped = (pod: ReturnType<typeof asks>) =>
  whyFacts([pod], (x) => {
    x.nodeClaims = {
      ok: true,
      value: [
        {
          metadata: { name: 'default-a', labels: { 'karpenter.sh/nodepool': 'default' } },
          status: { capacity: { cpu: '2', memory: '8Gi' } },
        },
      ],
    }
    pools(x)[0]!.spec.limits = { nodes: '10', cpu: '4' }
  })

test('limits: every allowed type is bigger than what is left of limit cpu: ruled out, the limit to raise', () => {
  // 2 + 1900m fits under limit cpu 4, but every type instance-cpu allows has 4 or 8 vCPU: none can launch.
  const f = capped(asks('1900m', '1Gi'))
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-cpu',
    operator: 'In',
    values: ['4', '8'],
  })
  const { r, v } = verdicts(f)
  assert.equal(v.status, 'ruled-out')
  assert.equal(v.rule, 'instance-types')
  assert.equal(
    v.message,
    'no instance type fits what is left of limit cpu 4: its NodeClaims hold 2, leaving 2, and the smallest of the 2 types left, m5.xlarge, has 4 cpu',
  )
  assert.deepEqual(v.fix?.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"6"}}}'`,
  ])
  assert.equal(exitCodeOf(r), 1)
})

test('limits: the types within what is left of the limits decide; the larger ones are named as excluded', () => {
  const { v } = verdicts(capped(asks('1900m', '1Gi')))
  assert.equal(v.status, 'fits')
  assert.equal(
    v.message,
    '2 of 5 instance types have room, the smallest c6g.large (1930m cpu / 2.9Gi memory / 29 pods allocatable; a node needs cpu 1900m, memory 1Gi, pods 1); 2 others exceed what is left of limit cpu 4 (its NodeClaims hold 2, leaving 2)',
  )
  // Within the limits, none has room: the largest that fits them, and the limit that keeps out one with room.
  const { v: w } = verdicts(capped(asks('1950m', '1Gi')))
  assert.equal(w.status, 'ruled-out')
  assert.equal(
    w.message,
    'no instance type within what is left of limit cpu 4 has room (its NodeClaims hold 2, leaving 2): the largest that fits it, m5.large, has 1930m cpu / 6.7Gi memory / 29 pods allocatable, a node for the pod needs 1950m cpu',
  )
  assert.deepEqual(w.fix?.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"6"}}}'`,
  ])
  // A memory limit is compared with the type's memory capacity (less vmMemoryOverheadPercent).
  const m = capped(asks('500m', '1Gi'))
  pools(m)[0]!.spec.limits = { memory: '16Gi' }
  // 8Gi held, 8Gi left: m5.large (8192 MiB − 615) fits, m5.xlarge (16384 MiB − 1229) does not.
  assert.match(
    verdicts(m).v.message,
    /^2 of 5 instance types have room.*; 2 others exceed what is left of limit memory 16Gi \(its NodeClaims hold 8Gi, leaving 8Gi\)$/,
  )
})

// The details a snapshot keeps since the oracle showed 645 `?` on them (computeRequirements, v1.14.1).
const DETAILED = {
  processor: { manufacturer: 'AWS', sustainedClockGhz: 2.5 },
  hypervisor: 'nitro',
  encryptionInTransit: true,
  nvmeSupport: 'required',
  ebsBandwidthMbps: 4750,
  gpuMemoryMiB: [],
  accelerators: [],
  neuronNames: [],
}

test('the details give the labels Karpenter derives from them; without details those labels are absent (not judged)', () => {
  const it = { ...type('c6g.large'), instanceStorageGB: 118, details: DETAILED }
  const l = labelsOf(it)
  assert.deepEqual(l['karpenter.k8s.aws/instance-cpu-manufacturer'], ['aws'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz'], ['2500'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-hypervisor'], ['nitro'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-encryption-in-transit-supported'], ['true'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-local-nvme'], ['118'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-ebs-bandwidth'], ['4750'])
  assert.deepEqual(l['karpenter.k8s.aws/instance-accelerator-name'], [])
  // An instance store without NVMe (c3, m3) has no local-nvme label
  assert.deepEqual(
    labelsOf({ ...it, details: { ...DETAILED, nvmeSupport: 'unsupported' } })[
      'karpenter.k8s.aws/instance-local-nvme'
    ],
    [],
  )
  // A single Neuron device: the accelerator labels, manufacturer aws
  const inf = labelsOf({
    ...type('c6g.large'),
    neuronDevices: [{ count: 1, coresPerDevice: 2 }],
    details: { ...DETAILED, neuronNames: ['Inferentia2'] },
  })
  assert.deepEqual(
    ['name', 'manufacturer', 'count'].map((k) => inf[`karpenter.k8s.aws/instance-accelerator-${k}`]),
    [['inferentia2'], ['aws'], ['1']],
  )
  assert.equal(labelsOf(type('c6g.large'))['karpenter.k8s.aws/instance-hypervisor'], undefined)
})

test('a requirement on a detail label is judged when every type has details, ? when the facts lack them', () => {
  const pod = pendingPod({
    nodeSelector: { 'karpenter.k8s.aws/instance-cpu-manufacturer': 'intel' },
    containers: [{ name: 'app', resources: { requests: { cpu: '100m' } } }],
  })
  const old = whyFacts([pod])
  assert.equal(verdicts(old).v.status, 'unknown')
  assert.match(verdicts(old).v.message, /instance-cpu-manufacturer not judged/)
  const detailed = whyFacts([pod])
  detailed.instanceTypes = { ok: true, value: INSTANCE_TYPES.map((t) => ({ ...t, details: DETAILED })) }
  const v = verdicts(detailed).v
  assert.equal(v.status, 'ruled-out', v.message)
  assert.match(v.message, /instance-cpu-manufacturer In \[intel\]/)
  const intel = { ...DETAILED, processor: { manufacturer: 'Intel', sustainedClockGhz: 3.1 } }
  detailed.instanceTypes = {
    ok: true,
    value: INSTANCE_TYPES.map((t) => ({ ...t, details: t.name === 'm5.large' ? intel : DETAILED })),
  }
  assert.equal(verdicts(detailed).v.status, 'fits', verdicts(detailed).v.message)
})
