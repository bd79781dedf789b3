// Required topology spread on zones (`whenUnsatisfiable: DoNotSchedule`, topologyKey
// topology.kubernetes.io/zone), as Karpenter's scheduler applies it (sigs.k8s.io/karpenter
// pkg/controllers/provisioning/scheduling/topologygroup.go, nextDomainTopologySpread): the pods
// already placed that match the constraint's selector are counted per zone; the minimum is taken over
// every zone the cluster can have a node in (its NodePools' and its nodes'), narrowed by the pod's own
// zone requirement; a NodePool can take the pod only in a zone it can launch in whose count, with the
// pod itself when it matches, stays within maxSkew of that minimum. Those zones become the pod's zone
// requirement for the instance types.
import type { Fix } from '../checks/types.js'
import { shellQuote } from '../checks/lib/facts.js'
import { selects, selectorString } from './selector.js'
import { ZONE_LABEL } from './pod.js'
import { intersect, size, type Requirement } from './requirements.js'
import type {
  LabelSelector,
  NodeSelectorRequirement,
  PlacedPod,
  TopologySpreadConstraint,
  WorkloadPod,
} from './types.js'

/** The constraints this judgement covers: required, on the zone key. */
export function zoneSpreads(pod: WorkloadPod): TopologySpreadConstraint[] {
  return (pod.spec.topologySpreadConstraints ?? []).filter(
    (c) => c.topologyKey === ZONE_LABEL && c.whenUnsatisfiable === 'DoNotSchedule',
  )
}

/** Placed pods indexed once per run: counts per (namespace, selector) are memoized. */
export interface SpreadIndex {
  byNamespace: Map<string, PlacedPod[]>
  zoneOfNode: Map<string, string>
  labelsOfNode: Map<string, Record<string, string>>
  counts: Map<string, Map<string, number>>
}

export function spreadIndex(
  placed: PlacedPod[],
  nodes: { name: string; labels: Record<string, string> }[],
): SpreadIndex {
  const byNamespace = new Map<string, PlacedPod[]>()
  for (const p of placed) {
    const list = byNamespace.get(p.namespace)
    if (list) list.push(p)
    else byNamespace.set(p.namespace, [p])
  }
  const zoneOfNode = new Map<string, string>()
  const labelsOfNode = new Map<string, Record<string, string>>()
  for (const n of nodes) {
    const z = n.labels[ZONE_LABEL]
    if (z) zoneOfNode.set(n.name, z)
    labelsOfNode.set(n.name, n.labels)
  }
  return { byNamespace, zoneOfNode, labelsOfNode, counts: new Map() }
}

/** Whether a node's labels meet one node selector requirement (Kubernetes' operators). */
function meets(labels: Record<string, string>, r: NodeSelectorRequirement): boolean {
  const v = labels[r.key]
  const values = r.values ?? []
  switch (r.operator) {
    case 'In':
      return v !== undefined && values.includes(v)
    case 'NotIn':
      return v === undefined || !values.includes(v)
    case 'Exists':
      return v !== undefined
    case 'DoesNotExist':
      return v === undefined
    case 'Gt':
    case 'Lt': {
      const n = Number(v)
      const bound = Number(values[0])
      return v !== undefined && Number.isInteger(n) && (r.operator === 'Gt' ? n > bound : n < bound)
    }
    default:
      return false
  }
}

/**
 * Whether a node is counted for the pod's spread: with nodeAffinityPolicy Honor (the default) only
 * nodes that meet the pod's nodeSelector and required node affinity are (Karpenter's
 * TopologyNodeFilter, as kube-scheduler's PodTopologySpread).
 */
function counted(pod: WorkloadPod, c: TopologySpreadConstraint, labels: Record<string, string>): boolean {
  if (c.nodeAffinityPolicy === 'Ignore') return true
  if (!Object.entries(pod.spec.nodeSelector ?? {}).every(([k, v]) => labels[k] === v)) return false
  const terms =
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms
  return !terms?.length || terms.some((t) => (t.matchExpressions ?? []).every((r) => meets(labels, r)))
}

/** Pods matching the selector in the namespace, per zone, on the nodes the pod's spread counts. */
export function zoneCounts(
  index: SpreadIndex,
  namespace: string,
  sel: LabelSelector | undefined,
  pod?: WorkloadPod,
  c?: TopologySpreadConstraint,
) {
  const honor = pod && c && c.nodeAffinityPolicy !== 'Ignore'
  const key = JSON.stringify([
    namespace,
    sel ?? null,
    honor ? [pod.spec.nodeSelector, pod.spec.affinity?.nodeAffinity] : null,
  ])
  let counts = index.counts.get(key)
  if (!counts) {
    counts = new Map()
    for (const p of index.byNamespace.get(namespace) ?? []) {
      const zone = index.zoneOfNode.get(p.nodeName)
      if (!zone || !selects(sel, p.labels)) continue
      if (pod && c && !counted(pod, c, index.labelsOfNode.get(p.nodeName) ?? {})) continue
      counts.set(zone, (counts.get(zone) ?? 0) + 1)
    }
    index.counts.set(key, counts)
  }
  return counts
}

export interface SpreadQuestion {
  pool: string
  pod: WorkloadPod
  constraints: TopologySpreadConstraint[]
  /** The pod's own zone requirement (its nodeSelector, affinity term, volumes), if any. */
  podZones: Requirement | undefined
  /** The zones the NodePool can launch the pod in (its and the pod's requirements, its subnets). */
  nodeZones: string[]
  /**
   * The NodeClaim's zone requirement before subnets and offerings narrow it (the NodePool's and the
   * pod's): the domains Karpenter chooses among.
   */
  claimZones?: Requirement
  /** Every zone the cluster can have a node in. */
  clusterZones: string[]
  index: SpreadIndex
  /** Where the NodePool's zone requirement is, for the fix. */
  zoneRequirement?: { index: number; values: string[] }
}

export type SpreadVerdict =
  { zones: string[]; unknown?: string } | { message: string; fix: Fix; unknown?: undefined }

const allows = (r: Requirement | undefined, zone: string) =>
  !r || size(intersect(r, { key: ZONE_LABEL, complement: false, values: [zone] })) > 0

/**
 * The zones left for the pod in this NodePool, or why there is none. Karpenter puts a new NodeClaim in
 * one domain: of the zones its requirements allow and the skew permits, one holding the fewest matching
 * pods (topologygroup.go nextDomainTopologySpread), ties broken by Go's map order. When that zone is one
 * the NodePool cannot launch in (no subnet or offering there), the launch fails; when only some of the
 * tied zones can launch, whether it fails is chance: unknown.
 */
export function judgeTopologySpread(q: SpreadQuestion): SpreadVerdict {
  let zones = q.nodeZones
  let unknown: string | undefined
  let claim = q.claimZones
  for (const c of q.constraints) {
    const counts = zoneCounts(q.index, q.pod.metadata.namespace ?? '', c.labelSelector, q.pod, c)
    const domains = q.clusterZones.filter((z) => allows(q.podZones, z))
    let min = domains.length ? Math.min(...domains.map((z) => counts.get(z) ?? 0)) : 0
    // Fewer eligible zones than minDomains: the global minimum counts as 0.
    if (c.minDomains !== undefined && domains.length < c.minDomains) min = 0
    const self = selects(c.labelSelector, q.pod.metadata.labels ?? {}) ? 1 : 0
    const left = zones.filter((z) => (counts.get(z) ?? 0) + self - min <= c.maxSkew)
    if (left.length === 0) {
      const sel = selectorString(c.labelSelector) || 'nothing'
      const held = zones.map((z) => `${z} ${counts.get(z) ?? 0}`).join(', ')
      const emptiest = domains.filter((z) => (counts.get(z) ?? 0) === min && !zones.includes(z))
      return {
        message: `topology spread on ${ZONE_LABEL} (maxSkew ${c.maxSkew}, DoNotSchedule): the zones NodePool ${q.pool} can launch in hold ${held} pods matching ${sel}, the emptiest zone ${emptiest.length ? `(${emptiest.join(', ')}) ` : ''}holds ${min}: one more would make the skew ${Math.min(...zones.map((z) => counts.get(z) ?? 0)) + self - min} > ${c.maxSkew}`,
        fix: spreadFix(q, emptiest, c.maxSkew),
      }
    }
    const counted = (z: string) => (counts.get(z) ?? 0) + self
    const valid = q.clusterZones.filter((z) => allows(claim, z) && counted(z) - min <= c.maxSkew)
    const fewest = Math.min(...valid.map(counted))
    const chosen = valid.filter((z) => counted(z) === fewest)
    const launchable = chosen.filter((z) => left.includes(z))
    if (launchable.length === 0) {
      const sel = selectorString(c.labelSelector) || 'nothing'
      return {
        message: `topology spread on ${ZONE_LABEL} (maxSkew ${c.maxSkew}, DoNotSchedule): Karpenter puts the node in the zone with the fewest pods matching ${sel} that its requirements allow, ${chosen.join(' or ')} (${fewest - self}), where NodePool ${q.pool} cannot launch (it launches in ${q.nodeZones.join(', ')})`,
        fix: narrowFix(q, c.maxSkew),
      }
    }
    if (launchable.length < chosen.length)
      unknown ??= `topology spread: Karpenter picks one of ${chosen.join(', ')} (fewest matching pods) at random, and NodePool ${q.pool} cannot launch in ${chosen.filter((z) => !left.includes(z)).join(', ')}`
    zones = launchable
    claim = { key: ZONE_LABEL, complement: false, values: launchable }
  }
  return { zones, ...(unknown ? { unknown } : {}) }
}

/** Keep the NodePool's zone requirement to the zones it can launch in, so Karpenter chooses among those. */
function narrowFix(q: SpreadQuestion, maxSkew: number): Fix {
  const r = q.zoneRequirement
  const relax = `or raise maxSkew above ${maxSkew} / set whenUnsatisfiable: ScheduleAnyway on the pod's constraint`
  if (!r || q.nodeZones.length === 0)
    return { summary: `give NodePool ${q.pool} a subnet in the zone Karpenter picks, ${relax}` }
  const op = { op: 'replace', path: `/spec/template/spec/requirements/${r.index}/values`, value: q.nodeZones }
  return {
    summary: `limit NodePool ${q.pool}'s zone requirement to the zones it can launch in, ${q.nodeZones.join(', ')} (spec.template.spec.requirements[${r.index}]), ${relax}`,
    commands: [
      `kubectl patch nodepool ${shellQuote(q.pool)} --type json -p ${shellQuote(JSON.stringify([op]))}`,
    ],
  }
}

function spreadFix(q: SpreadQuestion, emptiest: string[], maxSkew: number): Fix {
  const relax = `or raise maxSkew above ${maxSkew} / set whenUnsatisfiable: ScheduleAnyway on the pod's constraint`
  const r = q.zoneRequirement
  if (emptiest.length && r) {
    const values = [...new Set([...r.values, ...emptiest])]
    const op = { op: 'replace', path: `/spec/template/spec/requirements/${r.index}/values`, value: values }
    return {
      summary: `let NodePool ${q.pool} launch in ${emptiest.join(', ')} (spec.template.spec.requirements[${r.index}]), ${relax}`,
      commands: [
        `kubectl patch nodepool ${shellQuote(q.pool)} --type json -p ${shellQuote(JSON.stringify([op]))}`,
      ],
    }
  }
  return {
    summary: emptiest.length
      ? `let NodePool ${q.pool} launch in ${emptiest.join(', ')} (a subnet there for its EC2NodeClass, or its zone requirement), ${relax}`
      : `${relax.slice(3)}: the pods already placed leave no zone within the skew`,
  }
}
