// Instance types: which EC2 types a NodePool could launch for the pod (offered in its subnets' zones,
// allowed by the NodePool's and the pod's requirements), and whether any has room for the pod's
// requests plus the DaemonSets' overhead once Karpenter's reserved resources are taken off.
//
// The arithmetic is Karpenter's for AWS, karpenter-provider-aws pkg/providers/instancetype/types.go
// (v1.0–v1.x, functions memory, kubeReservedResources, evictionThreshold, ENILimitedPods):
//   memory capacity = MiB − ceil(MiB × vmMemoryOverheadPercent) MiB (setting VM_MEMORY_OVERHEAD_PERCENT, default 0.075),
//     of MiB less 64 on Graviton (arm64)
//   kube-reserved cpu = 6% of the first core, 1% of the second, 0.5% of cores 3–4, 0.25% of every core beyond
//   kube-reserved memory = 11 MiB × ENI-limited pods + 255 MiB (AL2, AL2023; maxPods on Bottlerocket and Windows)
//   eviction threshold (memory.available) = 100 MiB
//   maxPods = ENIs × (IPv4 addresses per ENI − 1) + 2, unless the EC2NodeClass's kubelet.maxPods sets it
// and an EC2NodeClass's kubelet.kubeReserved / systemReserved / evictionHard replace those defaults.
// A type whose capacity (vCPUs, memory less the VM overhead, maxPods) exceeds what is left of one of
// the NodePool's limits is not launched at all (the scheduler's filterByRemainingResources, "all
// available instance types exceed limits for nodepool").
import type { Fix } from '../checks/types.js'
import { shellQuote } from '../checks/lib/facts.js'
import type { EC2NodeClass } from '../facts/types.js'
import { limitFix, removeRequirementsCommand } from './fix.js'
import { newLimit, type LimitLeft } from './limits.js'
import { ZONE_LABEL } from './pod.js'
import { formatAmounts, formatQuantity, parseQuantity, type Amounts } from './quantity.js'
import { describe, within, type Origin, type Requirement, type Requirements } from './requirements.js'
import type { InstanceTypeDetails, InstanceTypeInfo, InstanceTypeOffering } from './types.js'

export const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075
const MiB = 2 ** 20
const AWS = 'karpenter.k8s.aws/'
export const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type'
export const ARCH_LABEL = 'kubernetes.io/arch'
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type'

/** EC2's architecture names as Kubernetes' `kubernetes.io/arch` (Karpenter launches no other). */
const ARCH: Record<string, string> = { x86_64: 'amd64', arm64: 'arm64' }
/** The purchase options Karpenter launches (capacity blocks need a reservation: not judged). */
const CAPACITY_TYPES = ['on-demand', 'spot']

/** Karpenter's instanceTypeScheme: category, an optional `-NNtb` (u-6tb1), generation. */
const TYPE_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./
const kebab = (s: string) => s.toLowerCase().replace(/ /g, '-')

/**
 * The labels Karpenter derives from the type alone (zone and capacity type are per offering), as
 * computeRequirements in the AWS provider's instancetype/types.go sets them. An empty list is a label
 * the type does not have. Linux nodes: a Windows EC2NodeClass's OS labels are not judged (see judge.ts).
 */
export function labelsOf(it: InstanceTypeInfo, region?: string): Record<string, string[]> {
  const [family = '', sz = ''] = it.name.split('.')
  const m = TYPE_SCHEME.exec(it.name)
  // GPU labels only for a type with one kind of GPU; none for an older snapshot without devices.
  const gpu = it.gpus?.length === 1 ? it.gpus[0] : undefined
  return {
    [INSTANCE_TYPE_LABEL]: [it.name],
    [`${AWS}instance-family`]: [family],
    [`${AWS}instance-size`]: [sz],
    [`${AWS}instance-category`]: m?.[1] ? [m[1]] : [],
    [`${AWS}instance-generation`]: m?.[3] ? [m[3]] : [],
    [`${AWS}instance-cpu`]: [String(it.vcpus)],
    [`${AWS}instance-memory`]: [String(it.memoryMiB)],
    [ARCH_LABEL]: [...new Set(it.architectures.map((a) => ARCH[a]).filter((a): a is string => !!a))],
    [OS_LABEL]: ['linux'],
    [`${AWS}instance-capability-flex`]: [String(family.includes('-flex'))],
    [`${AWS}instance-tenancy`]: ['default', 'dedicated'],
    [`${AWS}instance-gpu-name`]: gpu ? [kebab(gpu.name)] : [],
    [`${AWS}instance-gpu-manufacturer`]: gpu ? [kebab(gpu.manufacturer)] : [],
    [`${AWS}instance-gpu-count`]: gpu ? [String(gpu.count)] : [],
    [WINDOWS_BUILD_LABEL]: [],
    ...(region ? { [REGION_LABEL]: [region] } : {}),
    ...(it.details ? detailLabels(it, it.details, gpu) : {}),
  }
}

/** The labels computeRequirements derives from the details (an empty list: the type has none). */
function detailLabels(
  it: InstanceTypeInfo,
  d: InstanceTypeDetails,
  gpu: NonNullable<InstanceTypeInfo['gpus']>[number] | undefined,
): Record<string, string[]> {
  const one = <T>(xs: T[] | undefined) => (xs?.length === 1 ? xs[0] : undefined)
  // Neuron devices first; other inference accelerators only on a type without Neuron.
  const neuron = one(it.neuronDevices)
  const inference = it.neuronDevices?.length ? undefined : one(d.accelerators)
  const accelerator = neuron
    ? { name: d.neuronNames[0] ?? '', manufacturer: 'aws', count: neuron.count }
    : inference
  return {
    [`${AWS}instance-cpu-manufacturer`]: d.processor ? [kebab(d.processor.manufacturer)] : [],
    [`${AWS}instance-cpu-sustained-clock-speed-mhz`]: d.processor
      ? [String(Math.round(d.processor.sustainedClockGhz * 1000))]
      : [],
    [`${AWS}instance-hypervisor`]: [d.hypervisor],
    [`${AWS}instance-encryption-in-transit-supported`]: [String(d.encryptionInTransit)],
    [`${AWS}instance-local-nvme`]:
      d.nvmeSupport !== undefined && d.nvmeSupport !== 'unsupported'
        ? [String(it.instanceStorageGB ?? 0)]
        : [],
    [`${AWS}instance-ebs-bandwidth`]: d.ebsBandwidthMbps !== undefined ? [String(d.ebsBandwidthMbps)] : [],
    [`${AWS}instance-gpu-memory`]: gpu ? [String(d.gpuMemoryMiB[0] ?? 0)] : [],
    [`${AWS}instance-accelerator-name`]: accelerator ? [kebab(accelerator.name)] : [],
    [`${AWS}instance-accelerator-manufacturer`]: accelerator ? [kebab(accelerator.manufacturer)] : [],
    [`${AWS}instance-accelerator-count`]: accelerator ? [String(accelerator.count)] : [],
  }
}

/** The labels labelsOf derives from InstanceTypeDetails: judged when every type of the catalogue has them. */
export const DETAIL_LABELS = [
  'instance-cpu-manufacturer',
  'instance-cpu-sustained-clock-speed-mhz',
  'instance-hypervisor',
  'instance-encryption-in-transit-supported',
  'instance-local-nvme',
  'instance-ebs-bandwidth',
  'instance-gpu-memory',
  'instance-accelerator-name',
  'instance-accelerator-manufacturer',
  'instance-accelerator-count',
].map((l) => `${AWS}${l}`)

export const REGION_LABEL = 'topology.kubernetes.io/region'

export const OS_LABEL = 'kubernetes.io/os'
export const WINDOWS_BUILD_LABEL = 'node.kubernetes.io/windows-build'

/**
 * Labels Karpenter gives instance types from what a snapshot does not keep — network bandwidth (a table
 * built into the provider), zone IDs and capacity reservations — and, in facts without the types'
 * details (an older karpctl), DETAIL_LABELS: a requirement on one is not judged, so a NodePool that
 * would otherwise fit gets ?, never ✔ (proven against Karpenter's scheduler by `npm run test:oracle`).
 */
export const UNJUDGED_TYPE_LABELS = new Set([
  ...[
    'instance-network-bandwidth',
    'capacity-reservation-id',
    'capacity-reservation-type',
    'capacity-reservation-interruptible',
  ].map((l) => `${AWS}${l}`),
  'topology.k8s.aws/zone-id',
  'karpenter.sh/capacity-reservation-id',
])

/** Whether `why` cannot judge a requirement on the label against this catalogue's types. */
export const unjudgedTypeLabel = (key: string, catalog: Catalog | undefined) =>
  UNJUDGED_TYPE_LABELS.has(key) || (DETAIL_LABELS.includes(key) && !catalog?.detailed)

/**
 * Whether the requirement allows one of the values (Karpenter's operators, Gt/Lt bounds included):
 * `intersect` with the values is not empty, without building the intersection (this runs for every
 * type of every filter).
 */
export const allowsAny = (r: Requirement, values: string[]) =>
  values.some((v) => r.complement !== r.values.includes(v) && within(r, v))

export interface Allocatable {
  /** cores */
  cpu: number
  /** bytes */
  memory: number
  pods: number
}

type Kubelet = NonNullable<EC2NodeClass['spec']['kubelet']>

/**
 * What sizes a node besides its type: the EC2NodeClass's kubelet and the AMI family's flags
 * (amifamily FeatureFlags: Bottlerocket reserves memory for its maxPods and ignores podsPerCore;
 * Windows has 110 pods unless maxPods says; AL2, AL2023 and Custom reserve memory for the ENI-limited
 * pod count even when maxPods is set — UsesENILimitedMemoryOverhead).
 */
export type NodeSettings = Kubelet & { family?: 'bottlerocket' | 'windows' }

const settingsMemo = new WeakMap<EC2NodeClass, NodeSettings | undefined>()

/** The node settings of an EC2NodeClass, one object per class (memo keys depend on its identity). */
export function nodeSettings(nc: EC2NodeClass | undefined): NodeSettings | undefined {
  if (!nc) return undefined
  if (settingsMemo.has(nc)) return settingsMemo.get(nc)
  const named = `${nc.spec.amiFamily ?? ''} ${(nc.spec.amiSelectorTerms ?? []).map((t) => t.alias ?? '').join(' ')}`
  const family = /bottlerocket/i.test(named) ? 'bottlerocket' : /windows/i.test(named) ? 'windows' : undefined
  const settings =
    nc.spec.kubelet || family ? { ...nc.spec.kubelet, ...(family ? { family } : {}) } : undefined
  settingsMemo.set(nc, settings as NodeSettings | undefined)
  return settings as NodeSettings | undefined
}

/** The pods a node of the type takes (Karpenter's `pods`): maxPods, else the ENI limit (110 on Windows), capped by podsPerCore. */
function podsOf(it: InstanceTypeInfo, kubelet: NodeSettings | undefined): number {
  const count = kubelet?.maxPods ?? (kubelet?.family === 'windows' ? 110 : eniMaxPods(it))
  const perCore = kubelet?.podsPerCore ?? 0
  return perCore > 0 && kubelet?.family !== 'bottlerocket' ? Math.min(perCore * it.vcpus, count) : count
}

/** Karpenter's default kube-reserved cpu for a number of cores, in cores (see the file comment). */
export function reservedCpu(vcpus: number): number {
  const milli = vcpus * 1000
  const ranges: [number, number, number][] = [
    [0, 1000, 0.06],
    [1000, 2000, 0.01],
    [2000, 4000, 0.005],
    [4000, Infinity, 0.0025],
  ]
  let reserved = 0
  for (const [start, end, pct] of ranges) if (milli > start) reserved += (Math.min(milli, end) - start) * pct
  return reserved / 1000
}

export const eniMaxPods = (it: InstanceTypeInfo) => it.maxEnis * (it.ipv4PerEni - 1) + 2

/** A node's capacity of this type, as Karpenter computes it (what NodePool limits are compared with). */
export function capacityOf(
  it: InstanceTypeInfo,
  kubelet: NodeSettings | undefined,
  vmMemoryOverheadPercent = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
): Allocatable {
  // Gravitons keep 64 MiB of CMA memory the kernel cannot hand out (types.go memory, oracle seed 1679)
  const mib = it.memoryMiB - (it.architectures[0] === 'arm64' ? 64 : 0)
  return {
    cpu: it.vcpus,
    memory: (mib - Math.ceil(mib * vmMemoryOverheadPercent)) * MiB,
    pods: podsOf(it, kubelet),
  }
}

/** What the scheduler may place on a node of this type, as Karpenter computes it. */
export function allocatableOf(
  it: InstanceTypeInfo,
  kubelet: NodeSettings | undefined,
  vmMemoryOverheadPercent = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
): Allocatable {
  const { pods, memory } = capacityOf(it, kubelet, vmMemoryOverheadPercent)
  const q = (list: Record<string, string> | undefined, k: string) => parseQuantity(list?.[k])
  const kubeCpu = q(kubelet?.kubeReserved, 'cpu') ?? reservedCpu(it.vcpus)
  const reservedFor = kubelet?.family ? pods : eniMaxPods(it)
  const kubeMemory = q(kubelet?.kubeReserved, 'memory') ?? (11 * reservedFor + 255) * MiB
  const hard = kubelet?.evictionHard?.['memory.available']
  // A percentage threshold is of the node's capacity.
  const eviction = hard?.endsWith('%')
    ? (memory * Number(hard.slice(0, -1))) / 100
    : (parseQuantity(hard) ?? 100 * MiB)
  return {
    cpu: it.vcpus - kubeCpu - (q(kubelet?.systemReserved, 'cpu') ?? 0),
    memory: memory - kubeMemory - (q(kubelet?.systemReserved, 'memory') ?? 0) - eviction,
    pods,
  }
}

/** The type → zones index of the offerings, built once per run. */
export function offeringZones(offerings: InstanceTypeOffering[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const o of offerings) {
    let zones = out.get(o.instanceType)
    if (!zones) out.set(o.instanceType, (zones = new Set()))
    zones.add(o.zone)
  }
  return out
}

/**
 * EC2's types as one run judges them: indexed once, and the work that depends only on a NodePool's
 * (merged) requirements or its EC2NodeClass's kubelet memoized, so a thousand pods cost one filter each.
 */
export interface Catalog {
  types: InstanceTypeInfo[]
  zones: Map<string, Set<string>>
  labels: Map<string, Record<string, string[]>>
  /** Every type has its details (DETAIL_LABELS are judged). */
  detailed: boolean
  vmMemoryOverheadPercent: number
  filtered: Map<
    string,
    { inZones: InstanceTypeInfo[]; masks: number[]; left: InstanceTypeInfo[]; rooms: Allocatable[] }
  >
  allocatable: Map<string, Allocatable>
  /** Per filtered list and NodePool limits left: the limit each type's capacity exceeds, if any. */
  overLimits: Map<string, (LimitLeft | undefined)[]>
}

export function catalogOf(
  types: InstanceTypeInfo[],
  offerings: InstanceTypeOffering[],
  vmMemoryOverheadPercent = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
  region?: string,
): Catalog {
  return {
    types,
    zones: offeringZones(offerings),
    labels: new Map(types.map((it) => [it.name, labelsOf(it, region)])),
    detailed: types.length > 0 && types.every((it) => !!it.details),
    vmMemoryOverheadPercent,
    filtered: new Map(),
    allocatable: new Map(),
    overLimits: new Map(),
  }
}

const kubeletKeys = new WeakMap<NodeSettings, string>()

function kubeletKey(kubelet: NodeSettings | undefined): string {
  if (!kubelet) return 'null'
  let k = kubeletKeys.get(kubelet)
  if (k === undefined) kubeletKeys.set(kubelet, (k = JSON.stringify(kubelet)))
  return k
}

function roomOf(catalog: Catalog, it: InstanceTypeInfo, kubelet: NodeSettings | undefined): Allocatable {
  const key = `${it.name}\u0000${kubeletKey(kubelet)}`
  let a = catalog.allocatable.get(key)
  if (!a) catalog.allocatable.set(key, (a = allocatableOf(it, kubelet, catalog.vmMemoryOverheadPercent)))
  return a
}

export interface InstanceTypeVerdict {
  status: 'fits' | 'ruled-out'
  message: string
  fix?: Fix
  /** How many types have room. */
  fitting: number
  /** The types with room, when it fits. */
  types?: InstanceTypeInfo[]
}

/** The keys a type has a value for, in the order a message names the one that leaves none. */
export const TYPE_KEYS = [
  ARCH_LABEL,
  INSTANCE_TYPE_LABEL,
  `${AWS}instance-category`,
  `${AWS}instance-family`,
  `${AWS}instance-generation`,
  `${AWS}instance-size`,
  `${AWS}instance-cpu`,
  `${AWS}instance-memory`,
  OS_LABEL,
  `${AWS}instance-capability-flex`,
  `${AWS}instance-tenancy`,
  `${AWS}instance-gpu-name`,
  `${AWS}instance-gpu-manufacturer`,
  `${AWS}instance-gpu-count`,
  WINDOWS_BUILD_LABEL,
  REGION_LABEL,
  ...DETAIL_LABELS,
]

/**
 * Whether a type with these values of a label meets the requirement, as Karpenter's Intersects does:
 * a type without the label meets only a requirement that asks for nothing (NotIn, DoesNotExist).
 */
function typeMeets(r: Requirement, values: string[]): boolean {
  if (values.length) return allowsAny(r, values)
  // NotIn (without bounds) or DoesNotExist: a node without the label meets it.
  return r.complement
    ? r.values.length > 0 && r.gt === undefined && r.lt === undefined
    : r.values.length === 0
}

/** Whether the type has an offering the requirements allow: a zone of the subnets EC2 offers it in, a capacity type. */
function offered(it: InstanceTypeInfo, catalog: Catalog, subnetZones: string[], reqs: Requirements): boolean {
  const zones = catalog.zones.get(it.name)
  const usable = subnetZones.filter((z) => zones?.has(z))
  const zoneReq = reqs.byKey.get(ZONE_LABEL)
  if (usable.length === 0 || (zoneReq && !allowsAny(zoneReq, usable))) return false
  const ct = reqs.byKey.get(CAPACITY_TYPE_LABEL)
  const classes = it.usageClasses.filter((c) => CAPACITY_TYPES.includes(c))
  return classes.length > 0 && (!ct || allowsAny(ct, classes))
}

/** Whether the type's labels meet every type requirement (Karpenter's `it.Requirements.Intersects`). */
export const typeMeetsAll = (catalog: Catalog, it: InstanceTypeInfo, reqs: Requirements) =>
  failures(catalog, it, reqs) === 0

/** The requirements a type fails, one bit per TYPE_KEYS entry (0: the type is left). */
function failures(catalog: Catalog, it: InstanceTypeInfo, reqs: Requirements): number {
  const labels = catalog.labels.get(it.name) ?? labelsOf(it)
  let mask = 0
  TYPE_KEYS.forEach((key, bit) => {
    const r = reqs.byKey.get(key)
    const values = labels[key]
    // A label not derived (the region of a catalogue built without one) is not judged here.
    if (r && values && !typeMeets(r, values)) mask |= 1 << bit
  })
  return mask
}

const bySize = (a: InstanceTypeInfo, b: InstanceTypeInfo) =>
  a.vcpus - b.vcpus || a.memoryMiB - b.memoryMiB || a.name.localeCompare(b.name)

const hasRoom = (a: Allocatable, need: Amounts) =>
  (need.cpu ?? 0) <= a.cpu && (need.memory ?? 0) <= a.memory && (need.pods ?? 1) <= a.pods

/** What a node of the type lacks for the pod (empty: it has room). */
function lacks(a: Allocatable, need: Amounts): string[] {
  const out: string[] = []
  if ((need.cpu ?? 0) > a.cpu) out.push('cpu')
  if ((need.memory ?? 0) > a.memory) out.push('memory')
  if ((need.pods ?? 1) > a.pods) out.push('pods')
  return out
}

const roomTexts = new WeakMap<Allocatable, string>()
/** Written once per memoized allocatable: every fitting pod names its type's. */
function roomText(a: Allocatable): string {
  let t = roomTexts.get(a)
  if (t === undefined)
    roomTexts.set(
      a,
      (t = `${formatQuantity('cpu', round(a.cpu))} cpu / ${gib(a.memory)} memory / ${a.pods} pods allocatable`),
    )
  return t
}
const round = (cores: number) => Math.floor(cores * 1000) / 1000
const gib = (bytes: number) => `${(Math.floor((bytes / 2 ** 30) * 10) / 10).toFixed(1)}Gi`

export interface InstanceTypeQuestion {
  pool: string
  /** The NodePool's requirements with the pod's (one node-affinity term) merged in. */
  merged: Requirements
  nodeClass: EC2NodeClass | undefined
  /** The pod's requests (pods: 1) plus the DaemonSets' (pods: one per DaemonSet). */
  need: Amounts
  /** The pod's own requests, for the message. */
  podAsks: Amounts
  catalog: Catalog
  /** What is left of the NodePool's limits (limitsLeft): a type whose capacity exceeds one is not launched. */
  limits?: LimitLeft[]
  /** minValues is counted by the caller over several groups of types (type-daemons.ts). */
  skipMinValues?: boolean
  /** The command that drops the pod's own requirement on a key, where its workload can be patched. */
  podFix?: PodFix
  /** The command that lowers the pod's requests, where its workload can be patched. */
  lowerRequests?: LowerRequests
  /** Which types a fix may let in (those with the devices asked for): why narrowed to them. */
  admits?: (it: InstanceTypeInfo) => boolean
}

export type PodFix = (key: string, origin: Origin, because?: string) => Fix | undefined

/** Lower the pod's requests for these resources to at most these amounts (fix.ts lowerRequestsFix). */
export type LowerRequests = (to: Record<string, number>, summary: string) => Fix | undefined

/** The first limit the type's capacity exceeds what is left of, or undefined. */
function exceeded(cap: Allocatable, limits: LimitLeft[]): LimitLeft | undefined {
  return limits.find((l) => {
    const has = (cap as unknown as Record<string, number | undefined>)[l.resource]
    return has !== undefined && has > l.left
  })
}

const limitText = (l: LimitLeft) => `limit ${l.resource} ${formatQuantity(l.resource, l.limit)}`
const heldText = (l: LimitLeft) =>
  `its NodeClaims hold ${formatQuantity(l.resource, l.used)}, leaving ${formatQuantity(l.resource, l.left)}`

/** The fix that lets a type of this capacity launch: the limit raised by what it holds. */
function raiseFor(pool: string, l: LimitLeft, cap: Allocatable): { fix: Fix } {
  const has = (cap as unknown as Record<string, number>)[l.resource] ?? 0
  return {
    fix: limitFix(pool, l.resource, formatQuantity(l.resource, newLimit(l.resource, l.used + has))),
  }
}

/**
 * Requirements as a memo key. Copies share their Requirement objects (a NodePool's are the same for
 * every pod), so each one is written out once per run, not once per pod.
 */
const requirementKeys = new WeakMap<Requirement, string>()
const requirementsKeys = new WeakMap<Requirements, string>()
function requirementsKey(reqs: Requirements): string {
  const known = requirementsKeys.get(reqs)
  if (known !== undefined) return known
  const parts: string[] = []
  for (const r of reqs.byKey.values()) {
    let k = requirementKeys.get(r)
    if (k === undefined) requirementKeys.set(r, (k = JSON.stringify(r)))
    parts.push(k)
  }
  const key = parts.sort().join('\u0001')
  requirementsKeys.set(reqs, key)
  return key
}

const zoneLists = new WeakMap<object, string[]>()

/** The EC2NodeClass's subnet zones, once per run; without them every zone EC2 offers counts (zones are judged on their own). */
function zonesOf(nodeClass: EC2NodeClass | undefined, catalog: Catalog): string[] {
  const on = nodeClass ?? catalog
  let zones = zoneLists.get(on)
  if (!zones) {
    const subnetZones = [...new Set((nodeClass?.status?.subnets ?? []).map((s) => s.zone))].sort()
    zones = subnetZones.length
      ? subnetZones
      : [...new Set([...catalog.zones.values()].flatMap((z) => [...z]))].sort()
    zoneLists.set(on, zones)
  }
  return zones
}

/** The offered types the requirements leave (memoized per zones, requirements and kubelet). */
export function typesLeft(q: Pick<InstanceTypeQuestion, 'merged' | 'nodeClass' | 'catalog'>) {
  const { merged, catalog } = q
  const zonesFor = zonesOf(q.nodeClass, catalog)
  const kubelet = nodeSettings(q.nodeClass)
  const template = merged.template
  const memoKey = `${zonesFor.join(' ')}\u0000${requirementsKey(merged)}\u0000${template ? requirementsKey(template) : ''}\u0000${kubeletKey(kubelet)}`
  let memo = catalog.filtered.get(memoKey)
  if (!memo) {
    const inZones = catalog.types.filter((it) => offered(it, catalog, zonesFor, merged))
    // A type the NodePool's own requirements rule out fails on the same key whatever the pod asks.
    const masks = inZones.map(
      (it) => failures(catalog, it, merged) | (template ? failures(catalog, it, template) : 0),
    )
    const left = inZones.filter((_, i) => masks[i] === 0).sort(bySize)
    memo = { inZones, masks, left, rooms: left.map((it) => roomOf(catalog, it, kubelet)) }
    catalog.filtered.set(memoKey, memo)
  }
  return { ...memo, zonesFor, kubelet, memoKey }
}

/** The judgement, pure: the offered types the requirements leave, then the first with room. */
export function judgeInstanceTypes(q: InstanceTypeQuestion): InstanceTypeVerdict {
  const { pool, merged, catalog, need } = q
  const { inZones, masks, left, rooms, zonesFor, kubelet, memoKey } = typesLeft(q)
  const vmPct = catalog.vmMemoryOverheadPercent
  let over: (LimitLeft | undefined)[] | undefined
  if (q.limits?.length) {
    const limits = q.limits
    const key = `${memoKey}\u0000${JSON.stringify(limits)}`
    over = catalog.overLimits.get(key)
    if (!over)
      catalog.overLimits.set(key, (over = left.map((it) => exceeded(capacityOf(it, kubelet, vmPct), limits))))
  }
  const where = `in [${zonesFor.join(' ')}]`
  if (inZones.length === 0) {
    const zoneReq = merged.byKey.get(ZONE_LABEL)
    const ct = merged.byKey.get(CAPACITY_TYPE_LABEL)
    const asked = [zoneReq, ct].filter((r): r is Requirement => !!r).map(describe)
    // The zone or capacity-type requirement that, dropped, leaves an offered type: the one to widen.
    const culprit = [CAPACITY_TYPE_LABEL, ZONE_LABEL].find((k) => {
      if (!merged.byKey.has(k)) return false
      const without = { ...merged, byKey: new Map(merged.byKey) }
      without.byKey.delete(k)
      return catalog.types.some((it) => offered(it, catalog, zonesFor, without))
    })
    return {
      status: 'ruled-out',
      fitting: 0,
      message: `no instance type is offered ${where}${asked.length ? ` for ${asked.join(', ')}` : ''} (of ${catalog.types.length} types EC2 describes)`,
      ...(culprit ? widenFix(pool, merged, culprit, q.podFix) : {}),
    }
  }
  if (left.length === 0) {
    // Name the first requirement that alone leaves nothing, as a user would widen it.
    const key =
      TYPE_KEYS.find((k, bit) => merged.byKey.has(k) && masks.every((m) => m & (1 << bit))) ??
      TYPE_KEYS.find((k) => merged.byKey.has(k))
    const r = key ? merged.byKey.get(key) : undefined
    const own = key ? merged.template?.byKey.get(key) : undefined
    // Named only where the NodePool's own requirement is what rules out types the merged one allows
    // (an Exists the merge turned into a NotIn), not where the merged one is merely narrower.
    const bit = key ? 1 << TYPE_KEYS.indexOf(key) : 0
    const inOwn =
      own && r && inZones.some((it) => !(failures(catalog, it, merged) & bit))
        ? ` within the NodePool's own ${describe(own)}`
        : ''
    const have = key
      ? [...new Set(inZones.flatMap((it) => catalog.labels.get(it.name)?.[key] ?? []))]
          .sort(natural)
          .slice(0, 8)
      : []
    return {
      status: 'ruled-out',
      fitting: 0,
      message: r
        ? `no instance type matches ${describe(r)}${inOwn}: the ${inZones.length} types offered ${where} have ${key} ${have.join(', ')}${have.length === 8 ? ', …' : ''}`
        : `no instance type is left ${where}`,
      ...(key ? widenFix(pool, merged, key, q.podFix) : {}),
    }
  }
  // A count and the smallest: this runs for every pod and NodePool, over every type left.
  let fitting = 0
  let smallestAt = -1
  let largestWithin = -1
  let excluded = 0
  let firstOver: LimitLeft | undefined
  const fitIdx: number[] = []
  for (let i = 0; i < left.length; i++) {
    const o = over?.[i]
    if (o) {
      excluded++
      firstOver ??= o
      continue
    }
    largestWithin = i
    if (hasRoom(rooms[i] as Allocatable, need)) {
      fitting++
      fitIdx.push(i)
      if (smallestAt < 0) smallestAt = i
    }
  }
  const unmet =
    fitting && !q.skipMinValues
      ? unmetMinValues(
          merged,
          fitIdx.map((i) => left[i] as InstanceTypeInfo),
          catalog,
          zonesFor,
        )
      : undefined
  if (unmet) return { status: 'ruled-out', fitting: 0, ...minValuesVerdict(pool, unmet, fitting) }
  if (fitting) {
    const smallest = left[smallestAt] as InstanceTypeInfo
    return {
      status: 'fits',
      fitting,
      types: fitIdx.map((i) => left[i] as InstanceTypeInfo),
      message:
        `${fitting} of ${left.length} instance types have room, the smallest ${smallest.name} (${roomText(rooms[smallestAt] as Allocatable)}; a node needs ${formatAmounts(need, ['cpu', 'memory', 'pods'])})` +
        (firstOver
          ? `; ${excluded} others exceed what is left of ${limitText(firstOver)} (${heldText(firstOver)})`
          : ''),
    }
  }
  if (largestWithin < 0) {
    // Every type left is bigger than what is left of a limit: Karpenter launches none of them.
    const smallest = left[0] as InstanceTypeInfo
    const l = over?.[0] as LimitLeft
    const cap = capacityOf(smallest, kubelet, vmPct)
    const has = (cap as unknown as Record<string, number>)[l.resource] ?? 0
    return {
      status: 'ruled-out',
      fitting: 0,
      message: `no instance type fits what is left of ${limitText(l)}: ${heldText(l)}, and the smallest of the ${left.length} types left, ${smallest.name}, has ${formatQuantity(l.resource, has)} ${l.resource}`,
      ...raiseFor(pool, l, cap),
    }
  }
  const largest = left[largestWithin] as InstanceTypeInfo
  const room = roomOf(catalog, largest, kubelet)
  const short = lacks(room, need)
  const dsPods = (need.pods ?? 1) - 1
  const asks = short
    .map((k) =>
      k === 'pods'
        ? `one pod more than its ${room.pods} pods${kubelet?.maxPods !== undefined ? ` (EC2NodeClass kubelet.maxPods)` : ' (ENI limit)'} after ${dsPods} DaemonSet pods`
        : `${formatQuantity(k, need[k] ?? 0)} ${k}${q.podAsks[k] !== need[k] ? ` (the pod ${formatQuantity(k, q.podAsks[k] ?? 0)}, DaemonSets the rest)` : ''}`,
    )
    .join(', ')
  // A type the limits keep out that has room: raising that limit is the fix.
  const roomy = over ? left.findIndex((_, i) => over[i] && hasRoom(rooms[i] as Allocatable, need)) : -1
  const within = (it: InstanceTypeInfo) =>
    !q.limits?.length || !exceeded(capacityOf(it, kubelet, vmPct), q.limits)
  // The fewest requirements whose removal would leave a type with room (within the limits).
  const lift = liftFix(
    pool,
    merged,
    catalog,
    kubelet,
    need,
    inZones.filter(within).sort(bySize),
    q.podFix,
    q.admits,
  )
  const has = `${largest.name}, has ${roomText(room)}, a node for the pod needs ${asks}`
  return {
    status: 'ruled-out',
    fitting: 0,
    message: firstOver
      ? `no instance type within what is left of ${limitText(firstOver)} has room (${heldText(firstOver)}): the largest that fits it, ${has}`
      : `no instance type has room: the largest left of ${left.length}, ${has}`,
    ...(roomy >= 0
      ? raiseFor(
          pool,
          over?.[roomy] as LimitLeft,
          capacityOf(left[roomy] as InstanceTypeInfo, kubelet, vmPct),
        )
      : lift
        ? { fix: lift }
        : { fix: lowerFix(q, short, room, largest.name, pool) }),
  }
}

/**
 * Lower the pod's requests to what the largest type left has room for beside the DaemonSets, where
 * cpu or memory is short (a pod count is not the pod's to lower).
 */
function lowerFix(
  q: InstanceTypeQuestion,
  short: string[],
  room: Allocatable,
  type: string,
  pool: string,
): Fix {
  const summary = `lower the pod's requests to fit ${type}'s ${roomText(room)} (minus the DaemonSets'), or allow larger instance types in NodePool ${pool}`
  if (short.includes('pods')) return { summary }
  const to: Record<string, number> = {}
  for (const k of short) {
    const daemons = (q.need[k] ?? 0) - (q.podAsks[k] ?? 0)
    const most = (room as unknown as Record<string, number>)[k] ?? 0
    if (most - daemons <= 0) return { summary }
    to[k] = most - daemons
  }
  return q.lowerRequests?.(to, `${summary}; here the pod's requests are lowered`) ?? { summary }
}

const natural = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })

/** Remove the NodePool's requirement on `key` (or, from the pod's side, say so). */
export function widenFix(pool: string, merged: Requirements, key: string, podFix?: PodFix): { fix: Fix } {
  const origin = merged.origin.get(key)
  if (origin?.kind === 'requirement')
    return {
      fix: {
        summary: `widen NodePool ${pool}'s requirement on ${key} (spec.template.spec.requirements[${origin.index}]): here it is removed`,
        commands: [removeRequirementsCommand(pool, [origin.index])],
      },
    }
  const own = origin && podFix?.(key, origin)
  return {
    fix: own ?? { summary: `the pod's own ${key} requirement leaves no instance type: widen or drop it` },
  }
}

/**
 * Allow larger instance types: of the offered types with room that requirements rule out, the one the
 * fewest removals let in — the pod's own requirements kept where the NodePool's can go instead. The
 * NodePool's requirements go in one patch (highest index first, so each path still names its entry);
 * at most one of the pod's is dropped per fix (its indices move with each removal), and `why` then
 * names the next if one is left.
 */
function liftFix(
  pool: string,
  merged: Requirements,
  catalog: Catalog,
  kubelet: NodeSettings | undefined,
  need: Amounts,
  candidates: InstanceTypeInfo[],
  podFix?: PodFix,
  admits?: (it: InstanceTypeInfo) => boolean,
): Fix | undefined {
  // A narrowing to a list of types is why's own, not a requirement anyone can remove.
  const reqs = merged.narrowed ?? merged
  const template = reqs.template
  let best: { it: InstanceTypeInfo; removed: Map<number, string>; podKeys: string[]; pod?: Fix } | undefined
  const cost = (b: { removed: Map<number, string>; podKeys: string[] }) =>
    b.podKeys.length * 1000 + b.removed.size + b.podKeys.length
  for (const it of candidates) {
    if (!hasRoom(roomOf(catalog, it, kubelet), need)) continue
    if (admits && !admits(it)) continue
    const own = template ? failures(catalog, it, template) : 0
    const all = failures(catalog, it, reqs) | own
    // Left out by why's own narrowing (another DaemonSet group's type): no requirement to remove.
    if (!all) continue
    const removed = new Map<number, string>()
    const podKeys: string[] = []
    let liftable = true
    TYPE_KEYS.forEach((key, bit) => {
      if (!(all & (1 << bit))) return
      const o = own & (1 << bit) ? template?.origin.get(key) : reqs.origin.get(key)
      if (o?.kind === 'requirement') removed.set(o.index, key)
      else if (o?.kind === 'nodeSelector' || o?.kind === 'affinity') podKeys.push(key)
      else liftable = false
    })
    if (!liftable || (best && cost({ removed, podKeys }) >= cost(best))) continue
    const key = podKeys[0]
    const o = key ? reqs.origin.get(key) : undefined
    const pod = key && o ? podFix?.(key, o, `it rules out ${it.name}, which has room`) : undefined
    if (key && !pod) continue
    best = { it, removed, podKeys, ...(pod ? { pod } : {}) }
  }
  if (!best) return undefined
  const indices = [...best.removed.keys()].sort((a, b) => b - a)
  const removal = indices.length
    ? `remove NodePool ${pool}'s requirement${indices.length > 1 ? 's' : ''} on ${indices.map((i) => `${best.removed.get(i)} (spec.template.spec.requirements[${i}])`).join(', ')}`
    : undefined
  return {
    summary: `allow larger instance types, so that ${best.it.name} (${roomText(roomOf(catalog, best.it, kubelet))}) is left: ${[removal, best.pod?.summary].filter(Boolean).join('; and ')}`,
    commands: [
      ...(indices.length ? [removeRequirementsCommand(pool, indices)] : []),
      ...(best.pod?.commands ?? []),
    ],
  }
}

interface UnmetMinValues {
  requirement: Requirement
  origin: Origin | undefined
  values: string[]
}

/**
 * The first NodePool requirement whose minValues the types with room do not span (Karpenter's
 * InstanceTypes.SatisfiesMinValues: the union of each type's own values of the key; a type's zones are
 * its offered subnet zones, its capacity types the ones EC2 sells it as). Karpenter also keeps only the
 * 60 cheapest types of a NodeClaim; without prices that cut is not judged.
 */
export function unmetMinValues(
  merged: Requirements,
  types: InstanceTypeInfo[],
  catalog: Catalog,
  zones: string[],
): UnmetMinValues | undefined {
  for (const [key, r] of merged.byKey) {
    if (!r.minValues || unjudgedTypeLabel(key, catalog)) continue
    const values = new Set<string>()
    for (const it of types) {
      const own =
        key === ZONE_LABEL
          ? zones.filter((z) => catalog.zones.get(it.name)?.has(z))
          : key === CAPACITY_TYPE_LABEL
            ? it.usageClasses.filter((c) => CAPACITY_TYPES.includes(c))
            : (catalog.labels.get(it.name)?.[key] ?? [])
      for (const v of own) values.add(v)
    }
    if (values.size < r.minValues)
      return { requirement: r, origin: merged.origin.get(key), values: [...values].sort(natural) }
  }
  return undefined
}

export function minValuesVerdict(
  pool: string,
  u: UnmetMinValues,
  fitting: number,
): { message: string; fix?: Fix } {
  const { requirement: r, origin, values } = u
  const message = `minValues requirement is not met for label ${r.key}: it asks for ${r.minValues} values, the ${fitting} types with room have ${values.length}${values.length ? ` (${values.slice(0, 8).join(', ')}${values.length > 8 ? ', …' : ''})` : ''}`
  if (origin?.kind !== 'requirement') return { message }
  const path = `/spec/template/spec/requirements/${origin.index}/minValues`
  const op = values.length ? { op: 'replace', path, value: values.length } : { op: 'remove', path }
  return {
    message,
    fix: {
      summary: `lower NodePool ${pool}'s minValues on ${r.key} to the ${values.length} values its types with room have (spec.template.spec.requirements[${origin.index}].minValues)`,
      commands: [
        `kubectl patch nodepool ${shellQuote(pool)} --type json -p ${shellQuote(JSON.stringify([op]))}`,
      ],
    },
  }
}
