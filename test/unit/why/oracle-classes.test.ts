// The classes of disagreement `npm run test:oracle` found between `why` and Karpenter v1.14.1's own
// scheduler, one test each; the seed is the generated case that showed it (KARPCTL_ORACLE_SEED=<seed>
// KARPCTL_ORACLE_CASES=1 npm run test:oracle reproduces the case).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judge, type PodVerdict } from '../../../src/why/judge.js'
import { catalogOf, labelsOf } from '../../../src/why/instance-types.js'
import type { WhyFacts } from '../../../src/why/types.js'
import { pendingPod, pools, whyFacts, withDeviceTypes } from '../../helpers/why.js'

const verdict = (f: WhyFacts) => (judge(f, 'snapshot').groups[0] as PodVerdict).nodePools[0]

test('seed 67: a PreferNoSchedule taint does not keep a pod off a NodePool (Karpenter relaxes it)', () => {
  const f = whyFacts()
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'spot', effect: 'PreferNoSchedule' }]
  assert.equal(verdict(f)?.status, 'fits')
  // A NoSchedule taint still does.
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'spot', effect: 'NoSchedule' }]
  assert.equal(verdict(f)?.rule, 'taints')
})

test('seed 174: with a PreferNoSchedule taint only the last node-affinity term is tried', () => {
  const terms = (first: string, last: string) => ({
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: [first] }] },
          { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: [last] }] },
        ],
      },
    },
  })
  const f = whyFacts([pendingPod({ affinity: terms('amd64', 's390x') })])
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'spot', effect: 'PreferNoSchedule' }]
  // Karpenter drops the amd64 term before it tolerates the taint: the s390x term alone leaves nothing.
  assert.equal(verdict(f)?.status, 'ruled-out')
  const g = whyFacts([pendingPod({ affinity: terms('s390x', 'amd64') })])
  pools(g)[0]!.spec.template.spec.taints = [{ key: 'spot', effect: 'PreferNoSchedule' }]
  assert.equal(verdict(g)?.status, 'fits')
})

test('seed 173: labels Karpenter gives every type are judged — OS, region, GPU, tenancy, flex, u-6tb1 generation', () => {
  const os = whyFacts([
    pendingPod({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'kubernetes.io/os', operator: 'NotIn', values: ['linux', 'windows'] },
                ],
              },
            ],
          },
        },
      },
    }),
  ])
  assert.equal(verdict(os)?.status, 'ruled-out')
  const region = whyFacts([pendingPod({ nodeSelector: { 'topology.kubernetes.io/region': 'us-east-1' } })])
  assert.equal(verdict(region)?.status, 'ruled-out')
  const gpu = whyFacts([pendingPod({ nodeSelector: { 'karpenter.k8s.aws/instance-gpu-name': 'a10g' } })])
  withDeviceTypes(gpu)
  assert.equal(verdict(gpu)?.status, 'fits')
  assert.match(verdict(gpu)?.message ?? '', /g5\.xlarge/)
  const labels = labelsOf({
    name: 'u-6tb1.56xlarge',
    vcpus: 224,
    memoryMiB: 6291456,
    architectures: ['x86_64'],
    usageClasses: ['on-demand'],
    maxEnis: 15,
    ipv4PerEni: 50,
  })
  assert.deepEqual(labels['karpenter.k8s.aws/instance-category'], ['u'])
  assert.deepEqual(labels['karpenter.k8s.aws/instance-generation'], ['1'])
  assert.ok(catalogOf([], [], 0.075, 'us-west-2'))
})

test('seed 142: a requirement on a label a snapshot does not hold is ?, never ✔', () => {
  const f = whyFacts([pendingPod({ nodeSelector: { 'karpenter.k8s.aws/instance-hypervisor': 'nitro' } })])
  const v = verdict(f)
  assert.equal(v?.status, 'unknown')
  assert.match(v?.message ?? '', /instance-hypervisor not judged/)
})

test('seed 35: a NodePool minValues its types with room do not span rules it out, with the fix', () => {
  const f = whyFacts()
  pools(f)[0]!.spec.template.spec.requirements = [
    { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 9 },
  ]
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out')
  assert.match(
    v?.message ?? '',
    /minValues requirement is not met for label node.kubernetes.io\/instance-type/,
  )
  assert.match(
    v?.fix?.commands?.[0] ?? '',
    /"op":"replace","path":"\/spec\/template\/spec\/requirements\/0\/minValues"/,
  )
  pools(f)[0]!.spec.template.spec.requirements = [
    { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
  ]
  assert.equal(verdict(f)?.status, 'fits')
})

/** A DaemonSet that runs on the types of one architecture only, with a hostPort. */
function archDaemonSet(arch: string, cpu: string, hostPort?: number) {
  return {
    metadata: { name: 'agent', namespace: 'kube-system' },
    spec: {
      template: {
        spec: {
          nodeSelector: { 'kubernetes.io/arch': arch },
          containers: [
            {
              name: 'a',
              resources: { requests: { cpu } },
              ...(hostPort ? { ports: [{ containerPort: hostPort, hostPort }] } : {}),
            },
          ],
        },
      },
    },
  }
}

// Karpenter groups types by the DaemonSets that would run on them and adds each group's overhead to
// that group alone (scheduling buildDaemonOverheadGroups / filterInstanceTypesByRequirements, v1.14.1):
// seed 291 of the oracle, where why used to say ? for every DaemonSet that selects an architecture.
test('seed 291: a DaemonSet that runs on arm64 only does not count against the amd64 types (the pod fits)', () => {
  const f = whyFacts([
    pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '7500m' } } }] }),
  ])
  f.daemonSets = { ok: true, value: [archDaemonSet('arm64', '1')] }
  const v = verdict(f)
  assert.equal(v?.status, 'fits', v?.message)
  assert.match(v?.message ?? '', /m5\.2xlarge/)
})

test('a DaemonSet that runs on amd64 counts on the amd64 types: no room there, and arm64 is too small', () => {
  const f = whyFacts([
    pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '7500m' } } }] }),
  ])
  f.daemonSets = { ok: true, value: [archDaemonSet('amd64', '1')] }
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.equal(v?.rule, 'instance-types')
})

test('a hostPort held by an arm64-only DaemonSet rules out the arm64 types only (oracle seeds 1587, 1903)', () => {
  const pod = pendingPod({
    containers: [
      {
        name: 'app',
        ports: [{ containerPort: 9100, hostPort: 9100 }],
        resources: { requests: { cpu: '500m' } },
      },
    ],
  })
  const f = whyFacts([pod])
  f.daemonSets = { ok: true, value: [archDaemonSet('arm64', '100m', 9100)] }
  assert.equal(verdict(f)?.status, 'fits', verdict(f)?.message)
  f.daemonSets = { ok: true, value: [archDaemonSet('amd64', '100m', 9100)] }
  // Every type but c6g.large runs it; c6g.large has room for 500m.
  const v = verdict(f)
  assert.equal(v?.status, 'fits', v?.message)
  assert.match(v?.message ?? '', /c6g\.large/)
})

// Karpenter's types have capacity for cpu, memory, ephemeral-storage, pods, pod ENIs and the AWS devices
// only (computeCapacity, v1.14.1); resources.Fits then fails any other request. Only a NodeOverlay (a
// feature gate, off by default) adds capacity. Oracle seeds with hugepages-2Mi or example.com/widget.
test('a request for hugepages or a custom resource: ✖ while NodeOverlay is off, ? when it is on or unread', () => {
  for (const resource of ['hugepages-2Mi', 'example.com/widget']) {
    const f = whyFacts([
      pendingPod({
        containers: [
          { name: 'app', resources: { requests: { cpu: '100m', memory: '128Mi', [resource]: '1' } } },
        ],
      }),
    ])
    const off = verdict(f)
    assert.equal(off?.status, 'ruled-out', off?.message)
    assert.match(off?.message ?? '', new RegExp(`no instance type has ${resource}`))
    assert.match(off?.fix?.summary ?? '', /NodeOverlay/)
    const dep = f.kube.deployment as { ok: true; value: { env: Record<string, string> } }
    dep.value.env = { ...dep.value.env, FEATURE_GATES: 'NodeRepair=false,NodeOverlay=true' }
    assert.equal(verdict(f)?.status, 'unknown')
    f.kube.deployment = { ok: true, value: null }
    assert.equal(verdict(f)?.status, 'unknown')
  }
  // A zero request asks for nothing
  const zero = whyFacts([
    pendingPod({
      containers: [{ name: 'app', resources: { requests: { cpu: '100m', 'example.com/widget': '0' } } }],
    }),
  ])
  assert.equal(verdict(zero)?.status, 'fits')
})

// Oracle seed 12: Karpenter tolerates PreferNoSchedule for a DaemonSet's pod too when it counts its
// overhead (scheduler.go isDaemonPodCompatible → toleratePreferNoScheduleTaints, v1.14.1).
test('seed 12: a DaemonSet counts on a NodePool whose only taint is PreferNoSchedule', () => {
  const f = whyFacts([
    pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '7500m' } } }] }),
  ])
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'spot', effect: 'PreferNoSchedule' }]
  f.daemonSets = {
    ok: true,
    value: [
      {
        ...archDaemonSet('amd64', '1'),
        spec: { template: { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] } } },
      },
    ],
  }
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.match(v?.message ?? '', /needs 8500m cpu/)
})

// Oracle seed 1505: Karpenter sizes each NodePool without a pod first (NewScheduler); a NodePool whose
// own requirements leave no type is skipped, even where a pod's NotIn would have narrowed Exists.
test('seed 1505: a NodePool whose own requirements leave no type is ruled out whatever the pod asks', () => {
  const f = whyFacts([
    pendingPod({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'karpenter.k8s.aws/instance-gpu-name', operator: 'NotIn', values: ['t4'] },
                ],
              },
            ],
          },
        },
      },
    }),
  ])
  pools(f)[0]!.spec.template.spec.requirements = [
    { key: 'karpenter.k8s.aws/instance-gpu-name', operator: 'Exists' },
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'] },
  ]
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.match(v?.message ?? '', /own requirements leave no instance type/)
})

// Karpenter counts minValues over the types every DaemonSet group leaves together
// (filterInstanceTypesByRequirements' `remaining`), not per group: 4 oracle seeds said ? before.
test('minValues across DaemonSet groups: counted over the union of the groups with room', () => {
  const f = whyFacts([
    pendingPod({ containers: [{ name: 'app', resources: { requests: { cpu: '500m' } } }] }),
  ])
  pools(f)[0]!.spec.template.spec.requirements = [
    { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'], minValues: 2 },
  ]
  f.daemonSets = { ok: true, value: [archDaemonSet('arm64', '100m')] }
  // amd64 types (no DaemonSet) and arm64 types (with it) both have room: two arch values together
  assert.equal(verdict(f)?.status, 'fits', verdict(f)?.message)
  // The arm64 group loses its room to the DaemonSet: one value left, minValues 2 is not met
  f.daemonSets = { ok: true, value: [archDaemonSet('arm64', '1900m')] }
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.match(v?.message ?? '', /minValues requirement is not met for label kubernetes\.io\/arch/)
})

test('seed 1505: types come from those the NodePool’s own requirements leave (Exists ∩ a pod’s NotIn keeps asking for the label)', () => {
  const notNvidia = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'karpenter.k8s.aws/instance-gpu-manufacturer', operator: 'NotIn', values: ['nvidia'] },
            ],
          },
        ],
      },
    },
  }
  const f = whyFacts([pendingPod({ affinity: notNvidia })])
  withDeviceTypes(f)
  pools(f)[0]!.spec.template.spec.requirements!.push({
    key: 'karpenter.k8s.aws/instance-gpu-manufacturer',
    operator: 'Exists',
  })
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.match(
    v?.message ?? '',
    /NotIn \[nvidia\] within the NodePool's own karpenter\.k8s\.aws\/instance-gpu-manufacturer Exists/,
  )
  // The printed fix drops the pod's own requirement (its only term goes with it), and then it fits.
  assert.deepEqual(v?.fix?.commands, [
    `kubectl -n shop patch deployment web --type json -p '[{"op":"remove","path":"/spec/template/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"}]'`,
  ])
  const pod = (f.pods.ok ? f.pods.value : [])[0]!
  delete pod.spec.affinity
  assert.equal(verdict(f)?.status, 'fits')
})

test('a pod’s own nodeSelector that leaves no type: the fix removes that key (JSON-pointer escaped)', () => {
  const f = whyFacts([pendingPod({ nodeSelector: { 'karpenter.k8s.aws/instance-family': 'x9z' } })])
  const v = verdict(f)
  assert.equal(v?.status, 'ruled-out', v?.message)
  assert.deepEqual(v?.fix?.commands, [
    `kubectl -n shop patch deployment web --type json -p '[{"op":"remove","path":"/spec/template/spec/nodeSelector/karpenter.k8s.aws~1instance-family"}]'`,
  ])
})
