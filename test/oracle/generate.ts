// The seeded case generator of `npm run test:oracle`: one why snapshot per seed — EC2NodeClasses,
// NodePools (requirements over every operator and Karpenter's well-known labels, minValues, taints,
// template labels, limits against NodeClaims, weights), DaemonSets and pending pods (requests of every
// kind, init and sidecar containers, overhead, node selectors and affinity, pod (anti-)affinity, topology
// spread, volumes in zones, host ports) — over a catalogue of real DescribeInstanceTypes answers.
// Shapes follow the field reports the `why` tests cite (e.g. aws/karpenter-provider-aws#5161 minValues,
// kubernetes-sigs/karpenter#1239 daemonset overhead, aws/karpenter-provider-aws#2400 zonal volumes).
import type { EC2NodeClass, NodePool, NodeSelectorRequirement, Taint } from '../../src/facts/types.js'
import type {
  ContainerSpec,
  DaemonSet,
  InstanceTypeInfo,
  InstanceTypeOffering,
  NodeClaim,
  PersistentVolume,
  PersistentVolumeClaim,
  PlacedPod,
  PodSpec,
  VpcSubnet,
  WhyFacts,
  WorkloadPod,
} from '../../src/why/types.js'
import { healthyNodeClass } from '../helpers/facts.js'
import { pendingPod as helperPod, whyFacts } from '../helpers/why.js'

/** mulberry32: a small seeded PRNG, so a seed names a case for good. */
export function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
  const chance = (p: number) => next() < p
  const some = <T>(xs: readonly T[], min = 1, max = xs.length): T[] => {
    const n = int(min, Math.min(max, xs.length))
    return [...xs].sort(() => next() - 0.5).slice(0, n)
  }
  return { next, int, pick, chance, some }
}
export type Rng = ReturnType<typeof rng>

export const REGION = 'us-west-2'
export const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d']
const AWS = 'karpenter.k8s.aws/'
const ZONE = 'topology.kubernetes.io/zone'

/** The catalogue: the AWS provider's test types (real EC2 answers) and a few families around them. */
export function catalogue(real: { instanceTypes: InstanceTypeInfo[] }): {
  instanceTypes: InstanceTypeInfo[]
  offerings: InstanceTypeOffering[]
} {
  const byName = new Map(real.instanceTypes.map((t) => [t.name, t]))
  const sizes: [string, number][] = [
    ['large', 2],
    ['xlarge', 4],
    ['2xlarge', 8],
    ['4xlarge', 16],
  ]
  // Family, MiB per vCPU, architecture, processor (as DescribeInstanceTypes names them).
  const families: [string, number, string, string, number][] = [
    ['c5', 2048, 'x86_64', 'Intel', 3.6],
    ['c7g', 2048, 'arm64', 'AWS', 2.6],
    ['r6i', 8192, 'x86_64', 'Intel', 3.5],
    ['m6a', 4096, 'x86_64', 'AMD', 3.6],
  ]
  for (const [family, perCpu, arch, manufacturer, ghz] of families)
    for (const [size, vcpus] of sizes)
      if (!byName.has(`${family}.${size}`))
        byName.set(`${family}.${size}`, {
          name: `${family}.${size}`,
          vcpus,
          memoryMiB: vcpus * perCpu,
          architectures: [arch],
          usageClasses: ['on-demand', 'spot'],
          maxEnis: Math.min(8, 2 + vcpus / 2),
          ipv4PerEni: Math.min(30, 8 + vcpus),
          gpus: [],
          neuronDevices: [],
          efaInterfaces: 0,
          instanceStorageGB: 0,
          details: {
            processor: { manufacturer, sustainedClockGhz: ghz },
            hypervisor: 'nitro',
            encryptionInTransit: family !== 'c5',
            ebsBandwidthMbps: vcpus * 1250,
            gpuMemoryMiB: [],
            accelerators: [],
            neuronNames: [],
          },
        })
  const instanceTypes = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  // Offerings: most types in most zones; a few in fewer (deterministic, by name).
  const r = rng(7)
  const offerings = instanceTypes.flatMap((t) =>
    ZONES.filter(() => r.chance(0.8)).map((zone) => ({ instanceType: t.name, zone })),
  )
  return { instanceTypes, offerings }
}

/** The label values a generated requirement draws from: Karpenter's labels of the catalogue's types. */
function labelDomains(types: InstanceTypeInfo[]): Record<string, string[]> {
  const uniq = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => !!x))].sort()
  const fam = (t: InstanceTypeInfo) => t.name.split('.')[0] ?? ''
  return {
    [ZONE]: [...ZONES, 'us-west-2z'],
    'topology.kubernetes.io/region': [REGION, 'us-east-1'],
    'kubernetes.io/arch': ['amd64', 'arm64'],
    'kubernetes.io/os': ['linux', 'windows'],
    'karpenter.sh/capacity-type': ['on-demand', 'spot'],
    'node.kubernetes.io/instance-type': uniq(types.map((t) => t.name)),
    [`${AWS}instance-category`]: uniq(types.map((t) => /^([a-z]+)/.exec(t.name)?.[1])),
    [`${AWS}instance-family`]: uniq(types.map(fam)),
    [`${AWS}instance-generation`]: uniq(types.map((t) => /^[a-z]+(\d+)/.exec(t.name)?.[1])),
    [`${AWS}instance-size`]: uniq(types.map((t) => t.name.split('.')[1])),
    [`${AWS}instance-cpu`]: uniq(types.map((t) => String(t.vcpus))),
    [`${AWS}instance-memory`]: uniq(types.map((t) => String(t.memoryMiB))),
    [`${AWS}instance-gpu-count`]: ['1', '4', '8'],
    [`${AWS}instance-gpu-manufacturer`]: ['nvidia', 'amd'],
    [`${AWS}instance-gpu-name`]: ['t4', 'a10g', 'radeon-pro-v520'],
    [`${AWS}instance-local-nvme`]: ['100', '225', '900'],
    [`${AWS}instance-hypervisor`]: ['nitro', 'xen'],
    [`${AWS}instance-cpu-manufacturer`]: ['intel', 'amd', 'aws'],
    [`${AWS}instance-cpu-sustained-clock-speed-mhz`]: ['2500', '3100', '3500'],
    [`${AWS}instance-encryption-in-transit-supported`]: ['true', 'false'],
    [`${AWS}instance-ebs-bandwidth`]: ['4750', '10000', '19000'],
    [`${AWS}instance-gpu-memory`]: ['16384', '24576'],
    [`${AWS}instance-accelerator-name`]: ['inferentia', 'inferentia2', 'trainium'],
    [`${AWS}instance-accelerator-manufacturer`]: ['aws', 'nvidia'],
    [`${AWS}instance-accelerator-count`]: ['1', '6'],
    'example.com/team': ['a', 'b'],
  }
}

/** Keys whose values are integers: Gt and Lt apply. */
const NUMERIC = new Set(
  [
    'instance-generation',
    'instance-cpu',
    'instance-memory',
    'instance-gpu-count',
    'instance-local-nvme',
    'instance-cpu-sustained-clock-speed-mhz',
    'instance-ebs-bandwidth',
    'instance-gpu-memory',
    'instance-accelerator-count',
  ].map((k) => `${AWS}${k}`),
)

function requirement(
  r: Rng,
  domains: Record<string, string[]>,
  key: string,
  pool: boolean,
): NodeSelectorRequirement {
  const values = domains[key] ?? ['x']
  const ops = NUMERIC.has(key)
    ? ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']
    : ['In', 'In', 'NotIn', 'Exists', 'DoesNotExist']
  const op = r.pick(ops)
  if (op === 'Exists' || op === 'DoesNotExist') {
    const req: NodeSelectorRequirement = { key, operator: op }
    if (pool && op === 'Exists' && r.chance(0.15)) req.minValues = r.int(1, 3)
    return req
  }
  if (op === 'Gt' || op === 'Lt') {
    const nums = values.map(Number).sort((a, b) => a - b)
    return { key, operator: op, values: [String(r.pick(nums) + r.int(-1, 1))] }
  }
  const req: NodeSelectorRequirement = { key, operator: op, values: r.some(values, 1, 4) }
  if (pool && op === 'In' && r.chance(0.2)) req.minValues = r.int(1, (req.values ?? []).length + 1)
  return req
}

const TAINTS: Taint[] = [
  { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
  { key: 'team', value: 'a', effect: 'NoExecute' },
  { key: 'spot', effect: 'PreferNoSchedule' },
]

function nodeClass(r: Rng, name: string): EC2NodeClass {
  const nc = healthyNodeClass()
  nc.metadata = { name }
  if (r.chance(0.2)) nc.spec.amiSelectorTerms = [{ alias: 'bottlerocket@latest' }]
  if (r.chance(0.2)) nc.spec.instanceStorePolicy = 'RAID0'
  if (r.chance(0.2)) nc.spec.kubelet = { maxPods: r.pick([4, 8, 20, 110]) }
  if (r.chance(0.1)) nc.spec.kubelet = { ...nc.spec.kubelet, kubeReserved: { cpu: '500m', memory: '1Gi' } }
  if (r.chance(0.1))
    nc.spec.blockDeviceMappings = [
      { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: r.pick(['10Gi', '50Gi', '200Gi']) } },
    ]
  const zones = r.some(ZONES, 1, 3).sort()
  // Each class selects its own subnets (two tags, ANDed by Karpenter): their zones differ.
  nc.spec.subnetSelectorTerms = [{ tags: { 'karpenter.sh/discovery': 'demo', 'example.com/class': name } }]
  // Not Ready as Karpenter leaves a class whose selector matches no subnet (nodeclass/subnet.go), the
  // other dependents of Ready (apis/v1 EC2NodeClass StatusConditions) resolved.
  const ready = r.chance(0.93)
  nc.status = {
    conditions: [
      ...NODECLASS_DEPENDENTS.map((type) =>
        type === 'SubnetsReady' && !ready
          ? {
              type,
              status: 'False',
              reason: 'SubnetsNotFound',
              message: 'SubnetSelector did not match any Subnets',
            }
          : { type, status: 'True' },
      ),
      { type: 'Ready', status: ready ? 'True' : 'False' },
    ],
    ...(ready ? { subnets: zones.map((zone) => ({ id: subnetId(name, zone), zone })) } : {}),
  }
  return nc
}

const NODECLASS_DEPENDENTS = [
  'AMIsReady',
  'SubnetsReady',
  'SecurityGroupsReady',
  'InstanceProfileReady',
  'ValidationSucceeded',
  'PlacementGroupReady',
]

const subnetId = (nodeClass: string, zone: string, kind = '') =>
  `subnet-${nodeClass}-${zone.slice(-1)}${kind}`

/**
 * The cluster's VPC: for every class a private subnet in each zone, tagged for the class where its
 * status lists one, and an untagged public subnet beside it (a fix must not pick that one). No random
 * draw: the cases of every seed stay the same.
 */
function vpcSubnets(classes: EC2NodeClass[]): VpcSubnet[] {
  return classes.flatMap((nc) => {
    const terms = nc.spec.subnetSelectorTerms[0]?.tags ?? {}
    const listed = new Set((nc.status?.subnets ?? []).map((s) => s.zone))
    return ZONES.flatMap((zone, i) => [
      {
        id: subnetId(nc.metadata.name, zone),
        zone,
        vpcId: 'vpc-1',
        availableIps: 200 + 10 * i,
        tags: listed.has(zone) ? { ...terms } : {},
      },
      {
        id: subnetId(nc.metadata.name, zone, 'p'),
        zone,
        vpcId: 'vpc-1',
        availableIps: 4000,
        public: true,
        tags: {},
      },
    ])
  })
}

function nodePool(r: Rng, name: string, classes: string[], domains: Record<string, string[]>): NodePool {
  const keys = r.some(
    Object.keys(domains).filter((k) => k !== 'example.com/team'),
    0,
    4,
  )
  const np: NodePool = {
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: r.pick(classes) },
          requirements: keys.map((k) => requirement(r, domains, k, true)),
        },
      },
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }
  if (r.chance(0.25)) np.spec.template.spec.taints = [r.pick(TAINTS)]
  if (r.chance(0.25)) np.spec.template.metadata = { labels: { 'example.com/team': r.pick(['a', 'b']) } }
  if (r.chance(0.3))
    np.spec.limits = r.pick<Record<string, string>>([
      { cpu: String(r.int(2, 40)) },
      { memory: `${r.int(4, 96)}Gi` },
      { nodes: String(r.int(1, 3)) },
    ])
  if (r.chance(0.3)) np.spec.weight = r.int(1, 100)
  return np
}

function nodeClaims(r: Rng, pools: NodePool[]): NodeClaim[] {
  return pools.flatMap((np) =>
    np.spec.limits && r.chance(0.7)
      ? Array.from({ length: r.int(1, 3) }, (_, i) => ({
          metadata: {
            name: `${np.metadata.name}-claim-${i}`,
            labels: { 'karpenter.sh/nodepool': np.metadata.name },
          },
          spec: { nodeClassRef: { name: np.spec.template.spec.nodeClassRef.name } },
          status: {
            capacity: {
              cpu: String(r.pick([2, 4, 8, 16])),
              memory: `${r.pick([4, 8, 16, 32])}Gi`,
              pods: '29',
            },
          },
        }))
      : [],
  )
}

function container(r: Rng, name: string, big = false): ContainerSpec {
  const requests: Record<string, string> = {
    cpu: r.pick(['100m', '250m', '500m', '1', '2', '3500m', '7', '15', '40']),
    memory: r.pick(['128Mi', '512Mi', '1Gi', '3Gi', '7Gi', '14Gi', '30Gi', '100Gi']),
  }
  if (big) requests.cpu = r.pick(['4', '12', '60'])
  return { name, resources: { requests } }
}

/** Resources beyond cpu and memory, each with how often a pod asks for it. */
const EXTRA: [string, string[], number][] = [
  ['ephemeral-storage', ['1Gi', '15Gi', '60Gi', '500Gi'], 0.15],
  ['nvidia.com/gpu', ['1', '4', '8'], 0.06],
  ['aws.amazon.com/neuron', ['1', '2'], 0.04],
  ['vpc.amazonaws.com/efa', ['1'], 0.03],
  ['hugepages-2Mi', ['64Mi'], 0.04],
  ['example.com/widget', ['1'], 0.03],
]

function podSpec(r: Rng, domains: Record<string, string[]>, pools: NodePool[]): PodSpec {
  const spec: PodSpec = { containers: [container(r, 'app')] }
  const reqs = (spec.containers[0] as ContainerSpec).resources?.requests as Record<string, string>
  for (const [res, amounts, p] of EXTRA) if (r.chance(p)) reqs[res] = r.pick(amounts)
  if (r.chance(0.1)) spec.containers.push(container(r, 'helper'))
  if (r.chance(0.12)) spec.initContainers = [container(r, 'init', true)]
  if (r.chance(0.08))
    spec.initContainers = [
      ...(spec.initContainers ?? []),
      { ...container(r, 'proxy'), restartPolicy: 'Always' },
    ]
  if (r.chance(0.06)) spec.overhead = { cpu: '250m', memory: '160Mi' }
  const keys = Object.keys(domains)
  if (r.chance(0.35)) {
    spec.nodeSelector = {}
    for (const k of r.some(keys, 1, 2)) spec.nodeSelector[k] = r.pick(domains[k] ?? ['x'])
  }
  if (r.chance(0.35))
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: Array.from({ length: r.int(1, 2) }, () => ({
            matchExpressions: r.some(keys, 1, 2).map((k) => requirement(r, domains, k, false)),
          })),
        },
      },
    }
  const taints = pools.flatMap((np) => np.spec.template.spec.taints ?? [])
  if (taints.length && r.chance(0.5))
    spec.tolerations = r
      .some(taints, 1)
      .map((t) =>
        r.chance(0.3)
          ? { key: t.key, operator: 'Exists' }
          : { key: t.key, operator: 'Equal', value: t.value, effect: t.effect },
      )
  return spec
}

interface Extra {
  nodes: { name: string; labels: Record<string, string> }[]
  pvcs: PersistentVolumeClaim[]
  pvs: PersistentVolume[]
  placed: PlacedPod[]
}

function pendingPod(
  r: Rng,
  i: number,
  domains: Record<string, string[]>,
  pools: NodePool[],
  extra: Extra,
): WorkloadPod {
  const app = `app${i}`
  const spec = podSpec(r, domains, pools)
  // The helpers' pending, unschedulable pod, as the app's ReplicaSet made it.
  const pod = helperPod(spec, `${app}-7c9d-${i}`)
  pod.metadata = {
    ...pod.metadata,
    uid: `uid-${i}`,
    labels: { app },
    ownerReferences: [{ kind: 'ReplicaSet', name: `${app}-7c9d`, controller: true }],
  }
  if (r.chance(0.15)) {
    // Placed pods of the same app in some zones; a zone (or hostname) spread over them.
    for (const [n, zone] of r.some(ZONES, 1, 3).entries()) {
      const node = `node-${i}-${n}`
      extra.nodes.push({ name: node, labels: { [ZONE]: zone, 'kubernetes.io/hostname': node } })
      for (let k = r.int(1, 3); k > 0; k--)
        extra.placed.push({ namespace: 'shop', nodeName: node, labels: { app } })
    }
    spec.topologySpreadConstraints = [
      {
        topologyKey: r.chance(0.8) ? ZONE : 'kubernetes.io/hostname',
        whenUnsatisfiable: r.chance(0.85) ? 'DoNotSchedule' : 'ScheduleAnyway',
        maxSkew: r.int(1, 2),
        labelSelector: { matchLabels: { app } },
        ...(r.chance(0.2) ? { minDomains: r.int(2, 5) } : {}),
      },
    ]
  }
  if (r.chance(0.06)) {
    const term = {
      labelSelector: { matchLabels: { app: r.chance(0.5) ? app : 'db' } },
      topologyKey: r.pick([ZONE, 'kubernetes.io/hostname']),
    }
    spec.affinity ??= {} as NonNullable<PodSpec['affinity']>
    ;(spec.affinity as Record<string, unknown>)[r.chance(0.5) ? 'podAffinity' : 'podAntiAffinity'] = {
      requiredDuringSchedulingIgnoredDuringExecution: [term],
    }
  }
  if (r.chance(0.08)) {
    const zone = r.pick(ZONES)
    const claim = `data-${i}`
    extra.pvcs.push({
      metadata: { name: claim, namespace: 'shop' },
      spec: { volumeName: `pv-${i}`, storageClassName: 'gp3' },
      status: { phase: 'Bound' },
    } as PersistentVolumeClaim)
    extra.pvs.push({
      metadata: { name: `pv-${i}` },
      spec: {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] }],
          },
        },
      },
    } as PersistentVolume)
    spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: claim } }]
  }
  if (r.chance(0.05))
    (spec.containers[0] as ContainerSpec).ports = [{ containerPort: 8080, hostPort: r.pick([8080, 9100]) }]
  return pod
}

function daemonSet(r: Rng, i: number, domains: Record<string, string[]>, pools: NodePool[]): DaemonSet {
  const spec = podSpec(r, domains, pools)
  delete spec.affinity
  const c = spec.containers[0] as ContainerSpec
  c.resources = { requests: { cpu: r.pick(['50m', '200m', '1']), memory: r.pick(['64Mi', '256Mi', '2Gi']) } }
  spec.containers = [c]
  delete spec.initContainers
  if (r.chance(0.3)) spec.nodeSelector = { 'kubernetes.io/arch': r.pick(['amd64', 'arm64']) }
  else delete spec.nodeSelector
  if (r.chance(0.3)) c.ports = [{ containerPort: 9100, hostPort: 9100 }]
  return { metadata: { name: `ds-${i}`, namespace: 'kube-system' }, spec: { template: { spec } } }
}

/** One case: the why snapshot of the seed. */
export function generate(seed: number, cat: ReturnType<typeof catalogue>): WhyFacts {
  const r = rng(seed)
  const domains = labelDomains(cat.instanceTypes)
  const classes = Array.from({ length: r.int(1, 2) }, (_, i) => nodeClass(r, i ? `class-${i}` : 'default'))
  const pools = Array.from({ length: r.int(1, 3) }, (_, i) =>
    nodePool(
      r,
      `pool-${String.fromCharCode(97 + i)}`,
      classes.map((c) => c.metadata.name),
      domains,
    ),
  )
  const extra: Extra = { nodes: [], pvcs: [], pvs: [], placed: [] }
  const pods = Array.from({ length: r.int(1, 3) }, (_, i) => pendingPod(r, i, domains, pools, extra))
  return whyFacts(pods, (f) => {
    f.meta.region = REGION
    f.kube.nodeClasses = { ok: true, value: classes }
    f.kube.nodePools = { ok: true, value: pools }
    f.kube.nodes = {
      ok: true,
      value: extra.nodes.map((n) => ({
        name: n.name,
        labels: n.labels,
        taints: [],
        ready: true,
        karpenter: false,
      })),
    }
    f.nodeClaims = { ok: true, value: nodeClaims(r, pools) }
    f.daemonSets = {
      ok: true,
      value: Array.from({ length: r.int(0, 2) }, (_, i) => daemonSet(r, i, domains, pools)),
    }
    f.pvcs = { ok: true, value: extra.pvcs }
    f.pvs = { ok: true, value: extra.pvs }
    f.storageClasses = {
      ok: true,
      value: [{ metadata: { name: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer' }],
    }
    f.placedPods = { ok: true, value: extra.placed }
    f.subnets = { ok: true, value: vpcSubnets(classes) }
    f.instanceTypes = { ok: true, value: cat.instanceTypes }
    f.offerings = { ok: true, value: cat.offerings }
  })
}
