// Node requirements as Karpenter's scheduler holds them (sigs.k8s.io/karpenter pkg/scheduling):
// each key is a set of allowed values, or its complement, with optional numeric bounds (Gt, Lt).
// A pod is compatible with a NodePool when every key they share has a value in common, and every
// custom key the pod asks for is one the NodePool defines; Karpenter's well-known labels may be left
// undefined by the NodePool (every value is then possible, subject to the instance types).
import type { NodeSelectorRequirement } from './types.js'

export interface Requirement {
  key: string
  /** true: every value except `values` (NotIn, Exists, Gt, Lt); false: exactly `values` (In, DoesNotExist). */
  complement: boolean
  values: string[]
  gt?: number
  lt?: number
  /** A NodePool requirement's minValues: the types launched must span at least this many values. */
  minValues?: number
}

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'

/**
 * Labels Karpenter (core v1 and the AWS provider) knows the values of from its instance types and
 * offerings: a pod may ask for them although the NodePool does not mention them.
 */
export const WELL_KNOWN_LABELS = new Set([
  'karpenter.sh/nodepool',
  'karpenter.sh/capacity-type',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'node.kubernetes.io/windows-build',
  'topology.k8s.aws/zone-id',
  ...[
    'instance-hypervisor',
    'instance-encryption-in-transit-supported',
    'instance-category',
    'instance-family',
    'instance-generation',
    'instance-local-nvme',
    'instance-size',
    'instance-cpu',
    'instance-cpu-manufacturer',
    'instance-cpu-sustained-clock-speed-mhz',
    'instance-memory',
    'instance-ebs-bandwidth',
    'instance-network-bandwidth',
    'instance-gpu-name',
    'instance-gpu-manufacturer',
    'instance-gpu-count',
    'instance-gpu-memory',
    'instance-accelerator-name',
    'instance-accelerator-manufacturer',
    'instance-accelerator-count',
    'instance-capability-flex',
    'capacity-reservation-id',
    'capacity-reservation-type',
  ].map((l) => `karpenter.k8s.aws/${l}`),
])

const int = (v: string | undefined): number | undefined => {
  const n = Number(v)
  return v !== undefined && /^-?\d+$/.test(v.trim()) && Number.isSafeInteger(n) ? n : undefined
}

/** A NodeSelectorRequirement as a Requirement; an unknown operator is undefined (the API server would refuse it). */
export function fromSelector(r: NodeSelectorRequirement): Requirement | undefined {
  const req = fromOperator(r)
  return req && r.minValues !== undefined ? { ...req, minValues: r.minValues } : req
}

function fromOperator(r: NodeSelectorRequirement): Requirement | undefined {
  const values = [...new Set(r.values ?? [])]
  switch (r.operator) {
    case 'In':
      return { key: r.key, complement: false, values }
    case 'NotIn':
      return { key: r.key, complement: true, values }
    case 'Exists':
      return { key: r.key, complement: true, values: [] }
    case 'DoesNotExist':
      return { key: r.key, complement: false, values: [] }
    case 'Gt': {
      const gt = int(values[0])
      return gt === undefined ? undefined : { key: r.key, complement: true, values: [], gt }
    }
    case 'Lt': {
      const lt = int(values[0])
      return lt === undefined ? undefined : { key: r.key, complement: true, values: [], lt }
    }
    default:
      return undefined
  }
}

/** Whether a value is within the requirement's numeric bounds (Gt, Lt); any value when it has none. */
export const within = (r: Requirement, v: string) => {
  if (r.gt === undefined && r.lt === undefined) return true
  const n = int(v)
  if (n === undefined) return false
  return (r.gt === undefined || n > r.gt) && (r.lt === undefined || n < r.lt)
}

/** The values both allow, as Karpenter's Requirement.Intersection computes them. */
export function intersect(a: Requirement, b: Requirement): Requirement {
  const r = intersectValues(a, b)
  const minValues = Math.max(a.minValues ?? 0, b.minValues ?? 0)
  return minValues ? { ...r, minValues } : r
}

function intersectValues(a: Requirement, b: Requirement): Requirement {
  const gt = a.gt === undefined ? b.gt : b.gt === undefined ? a.gt : Math.max(a.gt, b.gt)
  const lt = a.lt === undefined ? b.lt : b.lt === undefined ? a.lt : Math.min(a.lt, b.lt)
  const bounds = { ...(gt === undefined ? {} : { gt }), ...(lt === undefined ? {} : { lt }) }
  const bounded = { key: a.key, complement: false, values: [] as string[], ...bounds }
  if (a.complement && b.complement) {
    // An empty numeric range leaves no value, whatever else is excluded.
    if (gt !== undefined && lt !== undefined && gt >= lt - 1)
      return { key: a.key, complement: false, values: [] }
    return {
      key: a.key,
      complement: true,
      values: [...new Set([...a.values, ...b.values])].sort(),
      ...bounds,
    }
  }
  const [set, other] = a.complement ? [b, a] : [a, b]
  const keep = set.values.filter((v) =>
    other.complement ? !other.values.includes(v) : other.values.includes(v),
  )
  return { ...bounded, values: keep.filter((v) => within(bounded, v)) }
}

/** How many values are allowed: Infinity for a complement (within bounds that leave any). */
export const size = (r: Requirement): number => (r.complement ? Infinity : r.values.length)

export function operator(r: Requirement): Operator {
  if (r.complement) return r.values.length > 0 ? 'NotIn' : 'Exists'
  return r.values.length > 0 ? 'In' : 'DoesNotExist'
}

/** As Karpenter prints a requirement in its scheduling errors: `key In [a b]`, `key Exists >3`. */
export function describe(r: Requirement): string {
  const op = operator(r)
  let values = [...r.values].sort()
  if (values.length > 5) values = [...values.slice(0, 5), `and ${values.length - 5} others`]
  let s = op === 'Exists' || op === 'DoesNotExist' ? `${r.key} ${op}` : `${r.key} ${op} [${values.join(' ')}]`
  if (r.gt !== undefined) s += ` >${r.gt}`
  if (r.lt !== undefined) s += ` <${r.lt}`
  return s
}

/** Where a NodePool's requirement on a key comes from: what a fix must change. */
export type Origin =
  | { kind: 'requirement'; index: number }
  | { kind: 'label' }
  | { kind: 'nodepool-name' }
  | { kind: 'volume'; name: string }
  | { kind: 'nodeSelector' }
  | { kind: 'affinity'; term: number }

export interface Requirements {
  byKey: Map<string, Requirement>
  origin: Map<string, Origin>
  /**
   * The NodePool's own requirements, when these are a pod's merged into them. Karpenter picks a
   * NodeClaim's types among those the NodePool's own requirements leave, and only then narrows them by
   * the pod's: merging loses what `Exists` asks (Exists ∩ NotIn is a NotIn, which a type without the
   * label meets), the template's own filter does not (oracle seed 1505).
   */
  template?: Requirements
  /**
   * The requirements before `why` narrowed them to a list of types (the types with a device, with
   * room for ephemeral storage, of one DaemonSet group): what a fix that widens them starts from.
   */
  narrowed?: Requirements
}

export const emptyRequirements = (): Requirements => ({ byKey: new Map(), origin: new Map() })

/** Adds a requirement; one on a key already present narrows it (Karpenter's Requirements.Add). */
export function addRequirement(set: Requirements, r: Requirement, origin: Origin): void {
  const existing = set.byKey.get(r.key)
  set.byKey.set(r.key, existing ? intersect(existing, r) : r)
  if (!set.origin.has(r.key)) set.origin.set(r.key, origin)
}

export function copyRequirements(set: Requirements): Requirements {
  return {
    byKey: new Map(set.byKey),
    origin: new Map(set.origin),
    ...(set.template ? { template: set.template } : {}),
    ...(set.narrowed ? { narrowed: set.narrowed } : {}),
  }
}

/** Why a pod's requirements do not fit a NodePool's, as Karpenter words it, with both sides. */
export type Incompatibility =
  | { kind: 'undefined-label'; key: string; pod: Requirement; message: string }
  | { kind: 'no-common-value'; key: string; pod: Requirement; nodePool: Requirement; message: string }

const isNegative = (r: Requirement) => {
  const op = operator(r)
  return op === 'NotIn' || op === 'DoesNotExist'
}

/**
 * Karpenter's `Requirements.Compatible(pod, AllowUndefinedWellKnownLabels)`: every problem, in the
 * order of the pod's keys (Karpenter reports them in map order; this order is stable).
 */
export function incompatibilities(nodePool: Requirements, pod: Requirements): Incompatibility[] {
  const out: Incompatibility[] = []
  for (const [key, p] of pod.byKey) {
    const n = nodePool.byKey.get(key)
    if (!n) {
      // Custom labels must be defined by the NodePool; a pod that only excludes values asks for nothing.
      if (!WELL_KNOWN_LABELS.has(key) && !isNegative(p))
        out.push({
          kind: 'undefined-label',
          key,
          pod: p,
          message: `label "${key}" does not have known values`,
        })
      continue
    }
    if (size(intersect(n, p)) > 0) continue
    // Both sides only exclude values: a node without the label satisfies both.
    if (isNegative(p) && isNegative(n)) continue
    out.push({
      kind: 'no-common-value',
      key,
      pod: p,
      nodePool: n,
      message: `incompatible requirements, key ${key}, ${describe(p)} not in ${describe(n)}`,
    })
  }
  return out
}
