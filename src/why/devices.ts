// Devices: the extended resources Karpenter's AWS provider gives an instance type from EC2's own data
// (karpenter-provider-aws pkg/providers/instancetype/types.go, computeCapacity): GPUs by manufacturer,
// Neuron devices and their cores, EFA interfaces. A pod asking for one fits only the types that have
// enough of it, so only NodePools whose requirements allow such types.
import type { Fix } from '../checks/types.js'
import { shellQuote } from '../checks/lib/facts.js'
import { allowsAny } from './instance-types.js'
import { formatQuantity, type Amounts } from './quantity.js'
import { describe, type Origin, type Requirements } from './requirements.js'
import type { InstanceTypeInfo } from './types.js'

const GPU_BY_MANUFACTURER: Record<string, string> = {
  NVIDIA: 'nvidia.com/gpu',
  AMD: 'amd.com/gpu',
  Habana: 'habana.ai/gaudi',
}
export const NEURON = 'aws.amazon.com/neuron'
export const NEURON_CORE = 'aws.amazon.com/neuroncore'
export const EFA = 'vpc.amazonaws.com/efa'

/** The extended resources karpctl knows an instance type's capacity of. */
export const DEVICE_RESOURCES = new Set([...Object.values(GPU_BY_MANUFACTURER), NEURON, NEURON_CORE, EFA])

/** Per type, computed once: a run asks for every pod and NodePool. */
const capacities = new WeakMap<InstanceTypeInfo, Amounts | null>()

/** The devices of a type as Karpenter counts them, or undefined when the facts predate reading them. */
export function deviceCapacity(it: InstanceTypeInfo): Amounts | undefined {
  let c = capacities.get(it)
  if (c === undefined) capacities.set(it, (c = countDevices(it) ?? null))
  return c ?? undefined
}

function countDevices(it: InstanceTypeInfo): Amounts | undefined {
  if (!it.gpus || !it.neuronDevices || it.efaInterfaces === undefined) return undefined
  const out: Amounts = {}
  for (const g of it.gpus) {
    const key = GPU_BY_MANUFACTURER[g.manufacturer]
    if (key) out[key] = (out[key] ?? 0) + g.count
  }
  for (const d of it.neuronDevices) {
    out[NEURON] = (out[NEURON] ?? 0) + d.count
    out[NEURON_CORE] = (out[NEURON_CORE] ?? 0) + d.count * d.coresPerDevice
  }
  if (it.efaInterfaces > 0) out[EFA] = it.efaInterfaces
  return out
}

/** The devices a pod (with its DaemonSets) asks for, in a stable order. */
export function devicesAsked(need: Amounts): [string, number][] {
  return Object.entries(need)
    .filter(([k, v]) => DEVICE_RESOURCES.has(k) && v > 0)
    .sort(([a], [b]) => a.localeCompare(b))
}

export const hasDevices = (it: InstanceTypeInfo, asked: [string, number][]) => {
  const cap = deviceCapacity(it)
  return !!cap && asked.every(([k, n]) => (cap[k] ?? 0) >= n)
}

export interface DeviceQuestion {
  pool: string
  /** The NodePool's requirements with the pod's merged in. */
  merged: Requirements
  /** The devices asked for (devicesAsked). */
  asked: [string, number][]
  /** The types EC2 offers in the NodePool's zones, and those the merged requirements leave. */
  offered: InstanceTypeInfo[]
  left: InstanceTypeInfo[]
  /** The requirement keys a type's labels are judged on, in the order a fix names them. */
  typeKeys: string[]
  /** Karpenter's labels of a type (the run's catalogue has them indexed). */
  labels: (it: InstanceTypeInfo) => Record<string, string[]>
  where: string
}

/** Ruled out (why, and what to allow), or the types that have the devices. */
export type DeviceVerdict =
  | { message: string; fix: Fix; podSide?: { key: string; origin: Origin }; noneOffered?: true }
  | { only: InstanceTypeInfo[] }

const natural = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })
const list = (values: string[], n = 6) =>
  values.slice(0, n).join(', ') + (values.length > n ? `, … (${values.length} in all)` : '')

/** The types the requirements leave that have the devices; when none, why not and what to allow. */
/** Per list of types (the memoized lists a NodePool's requirements leave) and resource: the few with one. */
const withDevice = new WeakMap<InstanceTypeInfo[], Map<string, InstanceTypeInfo[]>>()

function typesWith(types: InstanceTypeInfo[], resource: string): InstanceTypeInfo[] {
  let m = withDevice.get(types)
  if (!m) withDevice.set(types, (m = new Map()))
  let out = m.get(resource)
  if (!out) m.set(resource, (out = types.filter((it) => (deviceCapacity(it)?.[resource] ?? 0) > 0)))
  return out
}

export function judgeDevices(q: DeviceQuestion): DeviceVerdict {
  const first = q.asked[0]?.[0] ?? ''
  const only = typesWith(q.left, first).filter((it) => hasDevices(it, q.asked))
  if (only.length) return { only }
  const what = q.asked.map(([k, n]) => `${k} ${formatQuantity(k, n)}`).join(', ')
  const capable = typesWith(q.offered, first).filter((it) => hasDevices(it, q.asked))
  if (capable.length === 0)
    return {
      message: `no instance type offered ${q.where} has ${what} (none of the ${q.offered.length} types there)`,
      fix: {
        summary: `lower the pod's ${q.asked.map(([k]) => k).join(', ')} request, or give the EC2NodeClass a subnet in a zone EC2 offers a type with ${what} in`,
      },
      noneOffered: true,
    }
  // The first of the NodePool's (or the pod's) type requirements that excludes every capable type.
  const labels = capable.map(q.labels)
  const key = q.typeKeys.find((k) => {
    const r = q.merged.byKey.get(k)
    return r && labels.every((l) => !allowsAny(r, l[k] ?? []))
  })
  const values = (k: string) => [...new Set(labels.flatMap((l) => l[k] ?? []))].sort(natural)
  const categories = values('karpenter.k8s.aws/instance-category')
  const families = values('karpenter.k8s.aws/instance-family')
  const r = key ? q.merged.byKey.get(key) : undefined
  const origin = key ? q.merged.origin.get(key) : undefined
  const message = `no instance type NodePool ${q.pool} allows has ${what}: ${r ? `${describe(r)} leaves` : 'its requirements leave'} ${q.left.length} types ${q.where}, none with it; the types that have it are instance-category ${list(categories)} (families ${list(families)})`
  if (key && origin?.kind === 'requirement') {
    const wanted = key === 'karpenter.k8s.aws/instance-category' ? categories : values(key)
    // An `In` grows by the values the capable types carry; when they carry none (an NVIDIA type has no
    // accelerator-name), no value lets them in: the requirement goes.
    const next =
      r && !r.complement && r.values.length && wanted.length
        ? [...new Set([...r.values, ...wanted])]
        : undefined
    const path = `/spec/template/spec/requirements/${origin.index}`
    const op = next ? { op: 'replace', path: `${path}/values`, value: next } : { op: 'remove', path }
    return {
      message,
      fix: {
        summary: `${next ? `add ${list(wanted)} to` : 'remove'} NodePool ${q.pool}'s requirement on ${key} (spec.template.spec.requirements[${origin.index}]) so it allows the types with ${what}: instance-category ${list(categories)} (families ${list(families)})`,
        commands: [
          `kubectl patch nodepool ${shellQuote(q.pool)} --type json -p ${shellQuote(JSON.stringify([op]))}`,
        ],
      },
    }
  }
  return {
    message,
    fix: {
      summary: key
        ? `the pod's own requirement on ${key} excludes every type with ${what}: allow instance-category ${list(categories)} there, or use a NodePool that allows them`
        : `allow instance-category ${list(categories)} (families ${list(families)}) in NodePool ${q.pool}'s requirements`,
    },
    // The pod's own requirement: the caller, who knows the pod, prints the patch that drops it.
    ...(key && origin && origin.kind !== 'requirement' ? { podSide: { key, origin } } : {}),
  }
}
