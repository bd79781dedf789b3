// Facts for `karpctl why` tests: the healthy `demo` cluster of test/helpers/facts.ts (its NodePool and
// EC2NodeClass `default`, subnets in us-west-2a and us-west-2b) and one Pending, unschedulable pod.
import type { InstanceTypeInfo, InstanceTypeOffering, WhyFacts, WorkloadPod } from '../../src/why/types.js'
import { healthyFacts } from './facts.js'
import type { Xml } from './mock-cluster.js'

export function pendingPod(
  over: Partial<WorkloadPod['spec']> = {},
  name = 'web-6d4cf56db6-abcde',
): WorkloadPod {
  return {
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      labels: { app: 'web', 'pod-template-hash': '6d4cf56db6' },
      ownerReferences: [{ kind: 'ReplicaSet', name: 'web-6d4cf56db6', controller: true }],
    },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: '500m', memory: '1Gi' } } }], ...over },
    status: {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available',
        },
      ],
    },
  }
}

/** What DescribeInstanceTypes says of a type without GPUs, Neuron devices, EFA or instance store. */
const NO_DEVICES = { gpus: [], neuronDevices: [], efaInterfaces: 0, instanceStorageGB: 0 }

/** Real EC2 data (DescribeInstanceTypes, us-west-2) for a few types: two sizes of m5, a Graviton, a t3.micro. */
export const INSTANCE_TYPES: InstanceTypeInfo[] = [
  {
    name: 't3.micro',
    vcpus: 2,
    memoryMiB: 1024,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 2,
    ipv4PerEni: 2,
    ...NO_DEVICES,
  },
  {
    name: 'm5.large',
    vcpus: 2,
    memoryMiB: 8192,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 3,
    ipv4PerEni: 10,
    ...NO_DEVICES,
  },
  {
    name: 'm5.xlarge',
    vcpus: 4,
    memoryMiB: 16384,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 4,
    ipv4PerEni: 15,
    ...NO_DEVICES,
  },
  {
    name: 'm5.2xlarge',
    vcpus: 8,
    memoryMiB: 32768,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 4,
    ipv4PerEni: 15,
    ...NO_DEVICES,
  },
  {
    name: 'c6g.large',
    vcpus: 2,
    memoryMiB: 4096,
    architectures: ['arm64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 3,
    ipv4PerEni: 10,
    ...NO_DEVICES,
  },
]

/**
 * Real EC2 data (DescribeInstanceTypes, us-west-2) for types with devices: an NVIDIA A10G, eight A100s
 * with EFA, an Inferentia2 and sixteen Trainium devices with EFA.
 */
export const DEVICE_TYPES: InstanceTypeInfo[] = [
  {
    name: 'g5.xlarge',
    vcpus: 4,
    memoryMiB: 16384,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 4,
    ipv4PerEni: 15,
    gpus: [{ manufacturer: 'NVIDIA', name: 'A10G', count: 1 }],
    neuronDevices: [],
    efaInterfaces: 0,
    instanceStorageGB: 250,
  },
  {
    name: 'p4d.24xlarge',
    vcpus: 96,
    memoryMiB: 1179648,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 60,
    ipv4PerEni: 50,
    gpus: [{ manufacturer: 'NVIDIA', name: 'A100', count: 8 }],
    neuronDevices: [],
    efaInterfaces: 4,
    instanceStorageGB: 8000,
  },
  {
    name: 'inf2.xlarge',
    vcpus: 4,
    memoryMiB: 16384,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 4,
    ipv4PerEni: 15,
    gpus: [],
    neuronDevices: [{ count: 1, coresPerDevice: 2 }],
    efaInterfaces: 0,
    instanceStorageGB: 0,
  },
  {
    name: 'trn1.32xlarge',
    vcpus: 128,
    memoryMiB: 524288,
    architectures: ['x86_64'],
    usageClasses: ['on-demand', 'spot'],
    maxEnis: 40,
    ipv4PerEni: 50,
    gpus: [],
    neuronDevices: [{ count: 16, coresPerDevice: 2 }],
    efaInterfaces: 8,
    instanceStorageGB: 7600,
  },
]

/** Facts whose EC2 also describes (and offers in both zones) the types with devices. */
export function withDeviceTypes(f: WhyFacts): void {
  f.instanceTypes = { ok: true, value: [...INSTANCE_TYPES, ...DEVICE_TYPES] }
  f.offerings = {
    ok: true,
    value: [
      ...OFFERINGS,
      ...DEVICE_TYPES.flatMap((it) =>
        ['us-west-2a', 'us-west-2b'].map((zone) => ({ instanceType: it.name, zone })),
      ),
    ],
  }
}

/** Every type in both subnet zones, but c6g.large only in us-west-2a. */
export const OFFERINGS: InstanceTypeOffering[] = INSTANCE_TYPES.flatMap((it) =>
  (it.name === 'c6g.large' ? ['us-west-2a'] : ['us-west-2a', 'us-west-2b']).map((zone) => ({
    instanceType: it.name,
    zone,
  })),
)

export function whyFacts(pods: WorkloadPod[] = [pendingPod()], mutate?: (f: WhyFacts) => void): WhyFacts {
  const kube = healthyFacts((f) => {
    if (f.kube.nodeClasses.ok)
      for (const nc of f.kube.nodeClasses.value)
        nc.status = {
          ...nc.status,
          subnets: [
            { id: 'subnet-a', zone: 'us-west-2a' },
            { id: 'subnet-b', zone: 'us-west-2b' },
          ],
        }
  }).kube
  const facts: WhyFacts = {
    schema: 'karpctl.why-facts/v1',
    meta: {
      clusterName: 'demo',
      region: 'us-west-2',
      collectedAt: '2025-01-01T00:00:00.000Z',
      karpctlVersion: '0.0.0-test',
      selector: { kind: 'all-pending', namespace: 'shop' },
    },
    kube,
    pods: { ok: true, value: pods },
    nodeClaims: { ok: true, value: [] },
    daemonSets: { ok: true, value: [] },
    pvcs: { ok: true, value: [] },
    pvs: { ok: true, value: [] },
    storageClasses: { ok: true, value: [] },
    events: { ok: true, value: [] },
    instanceTypes: { ok: true, value: INSTANCE_TYPES },
    offerings: { ok: true, value: OFFERINGS },
  }
  mutate?.(facts)
  return facts
}

/** The NodePools of the facts (a live array: tests change them in place). */
export function pools(f: WhyFacts) {
  if (!f.kube.nodePools.ok) throw new Error('no NodePools')
  return f.kube.nodePools.value
}

/** An instance type as EC2's DescribeInstanceTypes item (the XML shape ec2Answer serialises). */
export function describedType(t: InstanceTypeInfo): Xml {
  return {
    instanceType: t.name,
    vCpuInfo: { defaultVCpus: t.vcpus },
    memoryInfo: { sizeInMiB: t.memoryMiB },
    processorInfo: { supportedArchitectures: t.architectures },
    supportedUsageClasses: t.usageClasses,
    networkInfo: {
      maximumNetworkInterfaces: t.maxEnis,
      ipv4AddressesPerInterface: t.ipv4PerEni,
      ...(t.efaInterfaces ? { efaSupported: true, efaInfo: { maximumEfaInterfaces: t.efaInterfaces } } : {}),
    },
    ...(t.gpus?.length ? { gpuInfo: { gpus: t.gpus.map((g) => ({ ...g })) } } : {}),
    ...(t.neuronDevices?.length
      ? {
          neuronInfo: {
            neuronDevices: t.neuronDevices.map((d) => ({
              count: d.count,
              coreInfo: { count: d.coresPerDevice },
            })),
          },
        }
      : {}),
    ...(t.instanceStorageGB ? { instanceStorageInfo: { totalSizeInGB: t.instanceStorageGB } } : {}),
  }
}
