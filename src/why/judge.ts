// The `why` judgement: for each pod (or group of pods with the same scheduling spec), every NodePool
// in the order Karpenter tries them, and the first rule that rules each out, as Karpenter's scheduler
// applies them: the NodePool is usable (EC2NodeClass Ready), its taints are tolerated, no DaemonSet of
// its nodes holds the pod's host ports, its requirements are compatible with the pod's, a zone is left
// among its subnets', the pod's required zone spread leaves one, its limits leave room, and an instance
// type EC2 offers there has the pod's devices, ephemeral storage and room for the pod and the
// DaemonSets. Without EC2's instance types (a read failed) a NodePool no other rule rules out is
// `unknown`, never `fits`.
import type { Fix } from '../checks/types.js'
import type { EC2NodeClass, NodePool } from '../facts/types.js'
import { ignoredBecause, isAbout, stamp, type Ignored } from './ignored.js'
import { judgeLimits, limitsLeft, type LimitLeft } from './limits.js'
import { nodeClassFindings, nodeClassProblem } from './nodeclass.js'
import { podRequests, podRequirementTerms, ownerOf, volumeRequirements, type Owner } from './pod.js'
import { add, formatAmounts, type Amounts } from './quantity.js'
import {
  addRequirement,
  copyRequirements,
  describe,
  emptyRequirements,
  fromSelector,
  incompatibilities,
  type Incompatibility,
  type Requirement,
  type Requirements,
} from './requirements.js'
import {
  dropAffinityTermFix,
  dropRequestsFix,
  lowerRequestsFix,
  labelFix,
  nodeSelectorFix,
  podRequirementFix,
  removeRequirementFix,
  requirementFix,
  tolerationFix,
} from './fix.js'
import { taintText, tolerationFor, untolerated } from './taints.js'
import type { DaemonSet, KubeEvent, NodeClaim, Taint, WorkloadPod, WhyFacts } from './types.js'
import type { SchedulingLine } from './controller-log.js'
import { judgeWithDaemons } from './fit.js'
import type { TypeDaemon } from './type-daemons.js'
import { judgeZones } from './zones.js'
import { tagSubnetsFix } from './subnets.js'
import { judgePodAffinity, type AffinityDomains } from './pod-affinity.js'
import {
  allowsAny,
  catalogOf,
  DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
  OS_LABEL,
  TYPE_KEYS,
  unjudgedTypeLabel,
  judgeInstanceTypes,
  WINDOWS_BUILD_LABEL,
  type Catalog,
} from './instance-types.js'
import { NODEPOOL_LABEL } from './limits.js'
import { DEVICE_RESOURCES } from './devices.js'
import { EPHEMERAL_STORAGE } from './ephemeral-storage.js'
import { hostPorts, judgeHostPorts, type HostPort } from './host-ports.js'
import { selects } from './selector.js'
import { judgeTopologySpread, spreadIndex, zoneSpreads, type SpreadIndex } from './topology-spread.js'
import { ZONE_LABEL } from './pod.js'
import { redactClip } from '../redact/redact.js'
import type { PoolStatus, PoolVerdict } from './verdict.js'

export type { PoolStatus, PoolVerdict, Rule } from './verdict.js'

export type PodOutcome = 'fits' | 'none' | 'could-not-tell' | 'ignored'

export interface PodVerdict {
  namespace: string
  /** The pods of this group: identical scheduling specs get one judgement. */
  pods: string[]
  owner: Owner
  outcome: PodOutcome
  ignored?: Ignored
  requests: Record<string, string>
  nodePools: PoolVerdict[]
  /** What Karpenter itself said about the pod: its events, newest first. */
  karpenter: {
    events: { reason: string; message: string; count: number; lastSeen: string }[]
    /** The controller's newest "could not schedule pod" line naming one of the pods, NodePool by NodePool. */
    log?: SchedulingLine
    activity?: string
  }
}

export const NOT_JUDGED = {
  'extended-resources':
    "vpc.amazonaws.com/pod-eni (security groups for pods; its amount per type is a table inside Karpenter's AWS provider): a pod asking for it gets ? where the rest fits",
  'topology-spread':
    'topology spread on keys other than the zone and the hostname (a new node is an empty hostname domain: Karpenter always allows it), its matchLabelKeys and nodeTaintsPolicy: Honor, and the pods pending alongside (only placed pods are counted)',
  'host-ports': "host ports held by pods already on in-flight nodes (DaemonSets' host ports are judged)",
  'ephemeral-storage': "the kubelet's evictionSoft nodefs threshold (evictionHard's is applied)",
  'pod-affinity':
    'required pod (anti-)affinity over other namespaces or keys than the zone and the hostname, or selecting pods pending alongside (Karpenter places them in batch order), and the anti-affinity of pods already placed',
} as const

/** Type labels the requirements name whose values karpctl does not read (Windows OS labels among them). */
function unjudgedLabels(
  candidates: Requirements[],
  nodeClass: EC2NodeClass | undefined,
  catalog: Catalog,
): string[] {
  const windows = /windows/i.test(
    `${nodeClass?.spec.amiFamily ?? ''} ${(nodeClass?.spec.amiSelectorTerms ?? []).map((t) => t.alias ?? '').join(' ')}`,
  )
  const keys = new Set<string>()
  for (const c of candidates)
    for (const k of c.byKey.keys())
      if (unjudgedTypeLabel(k, catalog) || (windows && (k === OS_LABEL || k === WINDOWS_BUILD_LABEL)))
        keys.add(k)
  return [...keys].sort()
}

export interface WhyReport {
  schema: 'karpctl.why/v1'
  cluster: string
  region: string
  generatedAt: string
  source: 'live' | 'snapshot'
  /** `--with FILE`: judged as if its NodePools and EC2NodeClasses were applied. */
  with?: string
  /** The order Karpenter tries NodePools in: highest weight first, then by name. */
  order: { nodePool: string; weight: number }[]
  groups: PodVerdict[]
  /** Reads that failed: what the verdicts could not take into account. */
  unreadable: string[]
  /** Why the controller's log was not read (it only adds Karpenter's own word: the verdicts stand without it). */
  controllerLogUnread?: string
  notJudged: string[]
  summary: { pods: number; ignored: number; fits: number; none: number; couldNotTell: number }
}

const weightOf = (np: NodePool) => np.spec.weight ?? 0

/** Karpenter tries NodePools by weight, highest first, and by name among equals. */
export function nodePoolOrder(pools: NodePool[]): NodePool[] {
  return [...pools].sort(
    (a, b) => weightOf(b) - weightOf(a) || a.metadata.name.localeCompare(b.metadata.name),
  )
}

/** A NodePool's requirements: spec requirements, template labels, and its own name label. */
export function nodePoolRequirements(np: NodePool): Requirements {
  const reqs = emptyRequirements()
  ;(np.spec.template.spec.requirements ?? []).forEach((r, index) => {
    const req = fromSelector(r)
    if (req) addRequirement(reqs, req, { kind: 'requirement', index })
  })
  for (const [key, value] of Object.entries(np.spec.template.metadata?.labels ?? {}))
    addRequirement(reqs, { key, complement: false, values: [value] }, { kind: 'label' })
  addRequirement(
    reqs,
    { key: NODEPOOL_LABEL, complement: false, values: [np.metadata.name] },
    { kind: 'nodepool-name' },
  )
  return reqs
}

/** The DaemonSets a NodePool's nodes would run: they tolerate its taints and fit its requirements. */
export function daemonSetsOn(np: NodePool, daemonSets: DaemonSet[]): DaemonSet[] {
  const reqs = nodePoolRequirements(np)
  return daemonSets.filter((ds) => {
    const pod: WorkloadPod = { metadata: ds.metadata, spec: ds.spec.template.spec }
    if (untolerated(np.spec.template.spec.taints, pod.spec.tolerations, { soft: true })) return false
    return podRequirementTerms(pod).some((t) => incompatibilities(reqs, t).length === 0)
  })
}

/** What the DaemonSets a NodePool's nodes would run request (Karpenter's daemonset overhead), pods aside. */
export function daemonSetOverhead(np: NodePool, daemonSets: DaemonSet[]): Amounts {
  return requestsOf(daemonSetsOn(np, daemonSets))
}

function requestsOf(daemonSets: DaemonSet[]): Amounts {
  let total: Amounts = {}
  for (const ds of daemonSets) {
    const { pods: _pods, ...requests } = podRequests(ds.spec.template.spec)
    total = add(total, requests)
  }
  return total
}

/** A requirement that a node meets only by carrying one of some values (In, Exists, Gt, Lt). */
const asksForValues = (r: Requirement) => r.complement || r.values.length > 0

function requirementsFix(
  inc: Incompatibility,
  np: NodePool,
  npReqs: Requirements,
  term: Requirements,
  pod: WorkloadPod,
  owner: Owner,
): Fix | undefined {
  const name = np.metadata.name
  if (inc.kind === 'undefined-label') {
    const p = inc.pod
    const value = !p.complement
      ? p.values[0]
      : p.gt !== undefined
        ? String(p.gt + 1)
        : p.lt !== undefined
          ? String(p.lt - 1)
          : 'true'
    return value === undefined ? undefined : labelFix(name, inc.key, value)
  }
  const origin = npReqs.origin.get(inc.key)
  const podOrigin = term.origin.get(inc.key)
  if (origin?.kind === 'requirement') {
    const widened = requirementFix(name, origin.index, inc.nodePool, inc.pod)
    if (widened) return widened
  }
  const value = inc.nodePool.values[0]
  if (origin?.kind === 'label' && podOrigin?.kind === 'nodeSelector' && value !== undefined)
    return nodeSelectorFix(pod, owner, inc.key, value, name)
  // A pod that asks for values the NodePool's requirement shuts out (DoesNotExist, Exists, a NotIn of
  // them) gets the requirement removed; a pod that asks for what no node of this NodePool can be (its
  // own DoesNotExist on a label the NodePool sets, another value of a NodePool label) drops its own.
  const removeOwn =
    origin?.kind === 'requirement' && asksForValues(inc.pod)
      ? removeRequirementFix(name, origin.index, inc.nodePool)
      : undefined
  return (
    removeOwn ??
    (podOrigin &&
      podRequirementFix(
        pod,
        owner,
        inc.key,
        podOrigin,
        `NodePool ${name}'s ${describe(inc.nodePool)} never meets it`,
      )) ??
    (origin?.kind === 'requirement' ? removeRequirementFix(name, origin.index, inc.nodePool) : undefined)
  )
}

interface PoolFacts {
  reqs: Requirements
  overhead: Amounts
  daemonSetPods: number
  /** The DaemonSets of its nodes that bind host ports, with the ports. */
  dsPorts: { ds: DaemonSet; ports: HostPort[] }[]
  /** The zones it can launch in: its zone requirement on its EC2NodeClass's subnets (EC2's zones without them). */
  zones: string[]
  /** What its NodeClaims leave of each of its limits: no instance type bigger than that launches. */
  limitsLeft: LimitLeft[]
  /** Its DaemonSets that ask for type labels (arch, family…): they run on some of its types only. */
  typeDaemons: TypeDaemon[]
}

interface Inputs {
  facts: WhyFacts
  pools: NodePool[]
  nodeClasses: EC2NodeClass[]
  nodeClaims: NodeClaim[]
  daemonSets: DaemonSet[]
  events: KubeEvent[]
  /** EC2's instance types, or why they could not be read. */
  catalog: Catalog | { unread: string }
  /** What depends on the NodePool alone, computed once per NodePool, not once per pod. */
  perPool: Map<string, PoolFacts>
  /** The NodePool sized without a pod (templateVerdict), per NodePool; null when types are left. */
  templates: Map<string, Omit<PoolVerdict, 'nodePool' | 'weight'> | null>
  /** A node-affinity term against a NodePool, by NodePool and term (see judgePool). */
  terms: Map<string, Candidate>
  /** Placed pods and the cluster's zones for topology spread, built on first need. */
  spread?: SpreadInputs | { unread: string }
}

function poolFacts(np: NodePool, inputs: Inputs): PoolFacts {
  let f = inputs.perPool.get(np.metadata.name)
  if (!f) {
    const reqs = nodePoolRequirements(np)
    const daemonSets = daemonSetsOn(np, inputs.daemonSets)
    const typeDaemons = typeDependent(daemonSets, reqs)
    const on = daemonSets.filter((ds) => !typeDaemons.some((d) => d.ds === ds))
    const nodeClass = inputs.nodeClasses.find(
      (nc) => nc.metadata.name === np.spec.template.spec.nodeClassRef.name,
    )
    const subnets = [...new Set((nodeClass?.status?.subnets ?? []).map((s) => s.zone))]
    const catalog = inputs.catalog
    const all = subnets.length
      ? subnets
      : 'unread' in catalog
        ? []
        : [...new Set([...catalog.zones.values()].flatMap((z) => [...z]))]
    const zoneReq = reqs.byKey.get(ZONE_LABEL)
    f = {
      reqs,
      overhead: requestsOf(on),
      daemonSetPods: on.length,
      dsPorts: on
        .map((ds) => ({ ds, ports: hostPorts(ds.spec.template.spec) }))
        .filter((d) => d.ports.length),
      zones: all.filter((z) => !zoneReq || allowsAny(zoneReq, [z])).sort(),
      limitsLeft: limitsLeft(np, inputs.nodeClaims),
      typeDaemons,
    }
    inputs.perPool.set(np.metadata.name, f)
  }
  return f
}

/** The DaemonSets whose node selector or affinity names a label that varies by instance type. */
function typeDependent(daemonSets: DaemonSet[], reqs: Requirements): TypeDaemon[] {
  return daemonSets.flatMap((ds) => {
    const spec = ds.spec.template.spec
    const terms = podRequirementTerms({ metadata: ds.metadata, spec })
    if (!terms.some((t) => [...t.byKey.keys()].some((k) => TYPE_KEYS.includes(k)))) return []
    const { pods: _pods, ...requests } = podRequests(spec)
    return [
      {
        ds,
        terms: terms.filter((t) => incompatibilities(reqs, t).length === 0),
        requests,
        ports: hostPorts(spec),
      },
    ]
  })
}

interface SpreadInputs {
  index: SpreadIndex
  /** Every zone a node can be in (a spread's domains: taints ignored, Karpenter's default). */
  clusterZones: string[]
  /** The zones each ready NodePool contributes, with its taints; and the nodes' zones. */
  domains: { nodePool: string; zones: string[]; taints: Taint[] }[]
  nodeZones: string[]
}

/** The placed pods indexed and every zone a node can be in, or why the spread cannot be judged. */
function spreadInputs(inputs: Inputs): NonNullable<Inputs['spread']> {
  if (inputs.spread) return inputs.spread
  const { placedPods } = inputs.facts
  const nodes = inputs.facts.kube.nodes
  if (!placedPods) inputs.spread = { unread: 'the facts hold no placed pods (saved by an older karpctl)' }
  else if (!placedPods.ok)
    inputs.spread = { unread: `placed pods could not be read (${placedPods.error.code})` }
  else if (!nodes.ok) inputs.spread = { unread: `nodes could not be read (${nodes.error.code})` }
  else {
    // Karpenter's zone domains: where each ready NodePool launches, the values its zone requirement
    // names (launchable or not: topology.go buildDomainGroups), and the nodes' zones.
    const ready = inputs.pools.filter((np) => {
      const nc = inputs.nodeClasses.find((c) => c.metadata.name === np.spec.template.spec.nodeClassRef.name)
      return nc?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
    })
    const domains = ready.map((np) => {
      const zones = new Set(poolFacts(np, inputs).zones)
      const r = poolFacts(np, inputs).reqs.byKey.get(ZONE_LABEL)
      if (r && !r.complement) for (const z of r.values) zones.add(z)
      return { nodePool: np.metadata.name, zones: [...zones], taints: np.spec.template.spec.taints ?? [] }
    })
    const nodeZones = [
      ...new Set(nodes.value.map((n) => n.labels[ZONE_LABEL]).filter((z): z is string => !!z)),
    ]
    const zones = new Set([...domains.flatMap((d) => d.zones), ...nodeZones])
    inputs.spread = {
      index: spreadIndex(placedPods.value, nodes.value),
      clusterZones: [...zones].sort(),
      domains,
      nodeZones,
    }
  }
  return inputs.spread
}

type Candidate =
  | { merged: Requirements; verdict?: undefined; note?: string; pickZone?: boolean }
  | { merged?: undefined; verdict: PoolVerdict; note?: undefined }

/** One node-affinity term against the NodePool: requirements, zones, then the required zone spread. */
function judgeTerm(
  term: Requirements,
  np: NodePool,
  pod: WorkloadPod,
  owner: Owner,
  inputs: Inputs,
  nodeClass: EC2NodeClass | undefined,
  base: { nodePool: string; weight: number },
): Candidate {
  const { reqs: npReqs } = poolFacts(np, inputs)
  const inc = incompatibilities(npReqs, term)[0]
  if (inc) {
    const fix = requirementsFix(inc, np, npReqs, term, pod, owner)
    return {
      verdict: {
        ...base,
        status: 'ruled-out',
        rule: 'requirements',
        message: inc.message,
        ...(fix ? { fix } : {}),
      },
    }
  }
  const merged = { ...copyRequirements(npReqs), template: npReqs }
  for (const [key, r] of term.byKey)
    addRequirement(merged, r, term.origin.get(key) ?? { kind: 'nodeSelector' })
  // The zone the pod asks for is what the judgement names (a volume's, say), so the pod's origin wins.
  for (const [key, o] of term.origin) merged.origin.set(key, o)
  const zone = judgeZones(merged, nodeClass, inputs.facts)
  if (zone)
    return { verdict: { ...base, status: 'ruled-out', rule: 'zones', message: zone.message, fix: zone.fix } }
  const spreadJudged = judgeSpread(term, np, pod, inputs, base, merged)
  if (!spreadJudged.merged) return spreadJudged
  const affinity = judgeAffinity(term, np, pod, owner, inputs, base, spreadJudged.merged)
  if (!affinity.merged) return affinity
  const notes = [spreadJudged.note, affinity.note].filter(Boolean).join('; ')
  return { ...affinity, ...(notes ? { note: notes } : {}) }
}

/** The pod's required pod (anti-)affinity: a verdict, or the zones it leaves the node (pod-affinity.ts). */
function judgeAffinity(
  term: Requirements,
  np: NodePool,
  pod: WorkloadPod,
  owner: Owner,
  inputs: Inputs,
  base: { nodePool: string; weight: number },
  merged: Requirements,
): Candidate {
  const a = pod.spec.affinity
  if (
    !a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length &&
    !a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length
  )
    return { merged }
  const spread = spreadInputs(inputs)
  if ('unread' in spread) return { merged, note: `pod affinity not judged: ${spread.unread}` }
  const { zones: poolZones } = poolFacts(np, inputs)
  const mergedZone = merged.byKey.get(ZONE_LABEL)
  const podZone = term.byKey.get(ZONE_LABEL)
  const selector = inputs.facts.meta.selector
  const ns = pod.metadata.namespace
  const allPending =
    selector.kind === 'all-pending' && (selector.namespace === undefined || selector.namespace === ns)
  const v = judgePodAffinity({
    pod,
    index: spread.index,
    pending: allPending && inputs.facts.pods.ok ? inputs.facts.pods.value : undefined,
    zones: poolZones.filter((z) => !mergedZone || allowsAny(mergedZone, [z])),
    podZones: podZone ? spread.clusterZones.filter((z) => allowsAny(podZone, [z])) : undefined,
    domains: affinityDomains(spread, pod),
    nodeAllows: (z) => !mergedZone || allowsAny(mergedZone, [z]),
  })
  if ('message' in v) {
    const fix = v.tolerate
      ? tolerationFix(pod, owner, tolerationFor(v.tolerate.taint), v.tolerate.nodePool)
      : (!v.fix.commands && v.term && dropAffinityTermFix(pod, owner, v.term, v.fix.summary)) || v.fix
    return { verdict: { ...base, status: 'ruled-out', rule: 'pod-affinity', message: v.message, fix } }
  }
  if (v.zones) {
    const had = merged.origin.get(ZONE_LABEL)
    addRequirement(
      merged,
      { key: ZONE_LABEL, complement: false, values: v.zones },
      had ?? { kind: 'nodeSelector' },
    )
  }
  return { merged, ...(v.unknown ? { note: v.unknown } : {}), ...(v.pickOne ? { pickZone: true } : {}) }
}

/**
 * The zones an affinity term of this pod counts as domains: the nodes' zones, and those of the ready
 * NodePools whose every taint the pod as written tolerates — PreferNoSchedule too, since an affinity
 * group's domains are fixed before the pod is relaxed with that toleration, and a relaxed pod finds
 * its group again by hash (topologygroup.go NewTopologyGroup with no node filter, ForEachDomain;
 * topology.go Update; oracle seed 947).
 */
function affinityDomains(spread: SpreadInputs, pod: WorkloadPod): AffinityDomains {
  const zones = new Set(spread.nodeZones)
  const shut: AffinityDomains['shut'] = []
  for (const d of spread.domains) {
    const taint = untolerated(d.taints, pod.spec.tolerations)
    if (!taint) for (const z of d.zones) zones.add(z)
    else shut.push({ nodePool: d.nodePool, zones: d.zones, taint })
  }
  return { zones: [...zones].sort(), shut }
}

/** The pod's required zone spread: a verdict, or the zones it leaves the node. */
function judgeSpread(
  term: Requirements,
  np: NodePool,
  pod: WorkloadPod,
  inputs: Inputs,
  base: { nodePool: string; weight: number },
  merged: Requirements,
): Candidate {
  const { reqs: npReqs, zones: poolZones } = poolFacts(np, inputs)
  const constraints = zoneSpreads(pod)
  if (constraints.length === 0) return { merged }
  const spread = spreadInputs(inputs)
  if ('unread' in spread) return { merged, note: `topology spread not judged: ${spread.unread}` }
  if (poolZones.length === 0)
    return {
      merged,
      note: `topology spread not judged: the zones NodePool ${np.metadata.name} launches in are unknown (no EC2NodeClass subnets, no EC2 offerings)`,
    }
  const podZones = term.byKey.get(ZONE_LABEL)
  const mergedZone = merged.byKey.get(ZONE_LABEL)
  const origin = npReqs.origin.get(ZONE_LABEL)
  const npZone = npReqs.byKey.get(ZONE_LABEL)
  const v = judgeTopologySpread({
    pool: np.metadata.name,
    pod,
    constraints,
    podZones,
    nodeZones: poolZones.filter((z) => !mergedZone || allowsAny(mergedZone, [z])),
    ...(mergedZone ? { claimZones: mergedZone } : {}),
    clusterZones: spread.clusterZones,
    index: spread.index,
    ...(origin?.kind === 'requirement' && npZone && !npZone.complement
      ? { zoneRequirement: { index: origin.index, values: npZone.values } }
      : {}),
  })
  if ('message' in v)
    return {
      verdict: { ...base, status: 'ruled-out', rule: 'topology-spread', message: v.message, fix: v.fix },
    }
  const note = v.unknown
  // Karpenter narrows the pod's zone to the zones the spread leaves; the origin stays what it was.
  const had = merged.origin.get(ZONE_LABEL)
  addRequirement(
    merged,
    { key: ZONE_LABEL, complement: false, values: v.zones },
    had ?? { kind: 'nodeSelector' },
  )
  return note ? { merged, note } : { merged }
}

/** What depends on the pod alone, computed once per pod, not once per NodePool. */
interface PodFacts {
  requests: Amounts
  /** Its node-affinity alternatives, with its volumes' requirements. */
  terms: Requirements[]
  /** Each alternative as a memo key, with what else a term's verdict depends on. */
  termKeys: string[]
}

function judgePool(
  np: NodePool,
  pod: WorkloadPod,
  owner: Owner,
  inputs: Inputs,
  doctor: ReturnType<typeof nodeClassFindings>,
  { requests, terms, termKeys }: PodFacts,
): PoolVerdict {
  const base = { nodePool: np.metadata.name, weight: weightOf(np) }
  const ref = np.spec.template.spec.nodeClassRef
  const problem = nodeClassProblem(doctor, np.metadata.name, ref.name)
  const nodeClass = inputs.nodeClasses.find((nc) => nc.metadata.name === ref.name)
  if (problem) {
    const fix = (noSubnets(nodeClass) && subnetsFix(inputs.facts, nodeClass)) || problem.fix
    return {
      ...base,
      status: problem.status === 'fail' ? 'ruled-out' : 'unknown',
      rule: 'nodeclass',
      message: problem.message,
      ...(fix ? { fix } : {}),
    }
  }
  // A NodePool whose own requirements leave no type is dropped before any pod is looked at.
  if (!('unread' in inputs.catalog)) {
    const template = templateVerdict(np, nodeClass, inputs.catalog, inputs)
    if (template) return { ...base, ...template }
  }
  const taint = untolerated(np.spec.template.spec.taints, pod.spec.tolerations, { soft: true })
  if (taint)
    return {
      ...base,
      status: 'ruled-out',
      rule: 'taints',
      message: `did not tolerate taint ${taintText(taint)} (spec.template.spec.taints)`,
      fix: tolerationFix(pod, owner, tolerationFor(taint), np.metadata.name),
    }
  const { overhead, daemonSetPods, dsPorts } = poolFacts(np, inputs)
  const port = judgeHostPorts(np.metadata.name, pod.spec, owner, dsPorts, pod.metadata.namespace)
  if (port) return { ...base, status: 'ruled-out', rule: 'host-ports', message: port.message, fix: port.fix }
  let first: PoolVerdict | undefined
  const candidates: Requirements[] = []
  const picks = new Set<Requirements>()
  const notes: string[] = []
  // Karpenter tolerates a PreferNoSchedule taint only as its last relaxation, after it has dropped every
  // required node-affinity term but the last (scheduling/preferences.go Relax): only that term is tried.
  const lastOnly = terms.length > 1 && !!untolerated(np.spec.template.spec.taints, pod.spec.tolerations)
  terms.forEach((term, i) => {
    if (lastOnly && i < terms.length - 1) return
    // Pods with equal requirements (and spread, namespace and owner, which messages and fixes name)
    // share the outcome and the merged requirements: each is built once per NodePool.
    const key = `${np.metadata.name}\u0000${termKeys[i]}`
    let c = inputs.terms.get(key)
    if (!c) inputs.terms.set(key, (c = judgeTerm(term, np, pod, owner, inputs, nodeClass, base)))
    if (c.note) notes.push(c.note)
    if (c.verdict) first ??= { ...c.verdict }
    else {
      candidates.push(c.merged)
      if (c.pickZone) picks.add(c.merged)
    }
  })
  if (candidates.length === 0 && first) {
    if (terms.length > 1)
      first.message += ` (and none of the pod's other ${terms.length - 1} node-affinity terms fits)`
    return first
  }
  const need = add(requests, overhead)
  const note = Object.keys(overhead).length ? ` (with DaemonSet overhead ${formatAmounts(overhead)})` : ''
  const limit = judgeLimits(np, inputs.nodeClaims, need, note)
  if (limit) return { ...base, status: 'ruled-out', rule: 'limits', message: limit.message, fix: limit.fix }
  const catalog = inputs.catalog
  if ('unread' in catalog)
    return {
      ...base,
      status: 'unknown',
      rule: 'instance-types',
      message: `taints, requirements, zones and limits allow it; instance types unknown: ${catalog.unread} (a node needs ${formatAmounts(need, ['cpu', 'memory'])}${note})`,
    }
  const podAsks = requests
  const withPods = { ...need, pods: (podAsks.pods ?? 1) + daemonSetPods }
  let verdict: PoolVerdict | undefined
  const { limitsLeft: left, typeDaemons } = poolFacts(np, inputs)
  const judgeMerged = (merged: Requirements) =>
    judgeWithDaemons(
      merged,
      np,
      nodeClass,
      catalog,
      withPods,
      podAsks,
      base,
      left,
      typeDaemons,
      (d) => judgeHostPorts(np.metadata.name, pod.spec, owner, [d], pod.metadata.namespace),
      {
        podFix: (key, origin, because) => podRequirementFix(pod, owner, key, origin, because),
        lowerRequests: (to, summary) => lowerRequestsFix(pod, owner, to, summary),
        tagSubnets: (zones, because) =>
          nodeClass && tagSubnetsFix(inputs.facts, nodeClass, zones, { one: true, because }),
      },
    )
  // Karpenter relaxes term by term (preferences.go Relax): the pod fits when one term fits; a term
  // that fits in some scheduling loops only makes the verdict `?` unless a later term always fits.
  const rank: Record<PoolStatus, number> = { fits: 2, unknown: 1, 'ruled-out': 0, 'not-judged': 0 }
  for (const merged of candidates) {
    const v = picks.has(merged)
      ? judgePicked(merged, judgeMerged, poolFacts(np, inputs).zones)
      : judgeMerged(merged)
    if (!verdict || rank[v.status] > rank[verdict.status]) verdict = v
    if (v.status === 'fits') break
  }
  const v = verdict as PoolVerdict
  if (v.status === 'ruled-out' && candidates.length > 1)
    v.message += ` (and none of the pod's other ${candidates.length - 1} node-affinity terms fits)`
  const asked = Object.keys(podAsks).filter(
    (k) => !JUDGED_RESOURCES.has(k) && !DEVICE_RESOURCES.has(k) && (podAsks[k] ?? 0) > 0,
  )
  // Resources whose amount per type karpctl does not know (a table inside the provider): room for the
  // rest is not enough.
  const extended = asked.filter((k) => TABLED_RESOURCES.has(k))
  const absent = asked.filter((k) => !TABLED_RESOURCES.has(k))
  if (absent.length && v.status !== 'ruled-out') {
    const gate = nodeOverlayGate(inputs.facts)
    const summary = `drop the pod's request for ${absent.join(', ')}, or turn on Karpenter's NodeOverlay feature gate (settings.featureGates.nodeOverlay) and add a NodeOverlay that gives NodePool ${np.metadata.name}'s instance types that capacity`
    if (gate === false)
      return {
        ...base,
        status: 'ruled-out',
        rule: 'instance-types',
        message: `no instance type has ${absent.join(', ')}: Karpenter gives its types capacity for cpu, memory, ephemeral-storage, pods, pod ENIs and the AWS devices only (a NodeOverlay could add more, but the NodeOverlay feature gate is off)`,
        fix: dropRequestsFix(pod, owner, absent, `${summary}; here they are dropped`) ?? { summary },
      }
    extended.push(...absent)
    notes.push(
      gate
        ? `a NodeOverlay may give types ${absent.join(', ')} (the NodeOverlay feature gate is on; NodeOverlays are not read)`
        : `${absent.join(', ')}: whether a NodeOverlay gives types that capacity is unknown (the controller's feature gates were not read)`,
    )
  }
  const unjudged = unjudgedLabels(candidates, nodeClass, catalog)
  if (unjudged.length)
    notes.push(`requirements on ${unjudged.join(', ')} not judged (a snapshot does not hold them)`)
  if (v.status !== 'ruled-out' && (extended.length || notes.length))
    return {
      ...v,
      status: 'unknown',
      message: `${v.message}; ${[...(extended.length ? [`instance types not judged for ${extended.join(', ')}`] : []), ...new Set(notes)].join('; ')}`,
    }
  return v
}

/**
 * A self-selecting zone affinity with no selected pod yet: Karpenter starts the domain in zones picked
 * by Go's map order (topologygroup.go nextDomainAffinity), so the pod fits in every scheduling loop
 * only if it fits in each of them (oracle seeds 1131, 1976): in some only, `?`. A pod Karpenter can
 * relax is tried again with the next term and a new pick, so it always fits only when one term fits in
 * every pick (the caller ranks the terms): seed 1976 failed in 1 of 8 loops, where `why` said ✔.
 */
function judgePicked(
  merged: Requirements,
  judgeMerged: (m: Requirements) => PoolVerdict,
  offered: string[],
): PoolVerdict {
  const zones = merged.byKey.get(ZONE_LABEL)?.values ?? []
  const each = zones.map((z) => {
    const one = copyRequirements(merged)
    one.byKey.set(ZONE_LABEL, { key: ZONE_LABEL, complement: false, values: [z] })
    return { zone: z, v: judgeMerged(one) }
  })
  const fit = each.filter((e) => e.v.status === 'fits')
  if (fit.length === each.length) return judgeMerged(merged)
  // None fits: say why in a zone the NodePool launches in, where a fix can make it fit.
  if (!fit.length) return (each.find((e) => offered.includes(e.zone)) ?? (each[0] as (typeof each)[number])).v
  const not = each.filter((e) => e.v.status !== 'fits')
  return {
    ...(fit[0] as (typeof each)[number]).v,
    status: 'unknown',
    rule: 'pod-affinity',
    message: `the pod starts its own podAffinity zone, and Karpenter picks that zone at random among ${zones.join(', ')}: it fits in ${fit.map((e) => e.zone).join(', ')}, not in ${not.map((e) => e.zone).join(', ')} (${(not[0] as (typeof each)[number]).v.message}), so Karpenter launches in some scheduling loops only`,
  }
}

/** The EC2NodeClass's selectors match no subnet, and that is all that keeps it from Ready. */
function noSubnets(nc: EC2NodeClass | undefined): nc is EC2NodeClass {
  const failing = (nc?.status?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.status !== 'True')
  return failing.length === 1 && failing[0]?.type === 'SubnetsReady' && failing[0].status === 'False'
}

/** A subnet in each zone of the VPC, tagged for the class: it goes Ready with them. */
function subnetsFix(facts: WhyFacts, nc: EC2NodeClass) {
  return tagSubnetsFix(facts, nc, () => true, {
    because: `Karpenter then finds subnets for it (SubnetsReady) and the EC2NodeClass goes Ready`,
  })
}

/**
 * Karpenter first sizes each NodePool without any pod (scheduler.go NewScheduler: its requirements,
 * offerings and minValues alone); a NodePool whose requirements leave no type there is skipped
 * whatever a pod's own requirements would allow ("nodepool requirements filtered out all available
 * instance types", oracle seed 1505: Exists on a label narrowed by a pod's NotIn).
 */
function templateVerdict(
  np: NodePool,
  nodeClass: EC2NodeClass | undefined,
  catalog: Catalog,
  inputs: Inputs,
) {
  let v = inputs.templates.get(np.metadata.name)
  if (v === undefined) {
    const t = judgeInstanceTypes({
      pool: np.metadata.name,
      merged: nodePoolRequirements(np),
      nodeClass,
      need: {},
      podAsks: {},
      catalog,
    })
    v =
      t.status === 'fits'
        ? null
        : {
            status: 'ruled-out',
            rule: 'instance-types',
            message: `the NodePool's own requirements leave no instance type, so Karpenter skips it: ${t.message}`,
            ...(t.fix ? { fix: t.fix } : {}),
          }
    inputs.templates.set(np.metadata.name, v)
  }
  return v
}

/** The scheduling-relevant part of a pod: pods equal on it get the same verdict. */
function specKey(pod: WorkloadPod): string {
  const s = pod.spec
  return JSON.stringify([
    pod.metadata.namespace,
    ownerOf(pod),
    pod.status?.phase,
    s.nodeName,
    s.schedulerName,
    s.nodeSelector,
    s.affinity,
    s.tolerations,
    s.containers.map((c) => [c.resources, c.ports]),
    s.initContainers?.map((c) => [c.resources, c.restartPolicy]),
    s.overhead,
    s.volumes?.filter((v) => v.persistentVolumeClaim),
    s.topologySpreadConstraints,
    // Whether the pod counts itself in its spread: its labels matter only there.
    zoneSpreads(pod).map((c) => selects(c.labelSelector, pod.metadata.labels ?? {})),
    pod.status?.nominatedNodeName,
    pod.status?.conditions?.find((c) => c.type === 'PodScheduled'),
  ])
}

/** Known NodeClaim launch failures and the doctor check that explains each. */
const LAUNCH_FAILURES: [RegExp, string][] = [
  [/UnauthorizedOperation|AccessDenied|not authorized/i, 'doctor check controller-policy'],
  [/PassRole|InstanceProfile/i, 'doctor checks node-role and passrole-node-role'],
  [
    /InsufficientInstanceCapacity|InsufficientCapacity|MaxSpotInstanceCountExceeded/i,
    'no capacity for the chosen types: allow more instance types, zones or capacity types',
  ],
  [/subnet|SecurityGroup|InvalidParameter/i, 'doctor check discovery-tags'],
  [/KMS|kms/, 'doctor check ebs-kms-key'],
]

/** The newest log line naming any pod of the group (identical pods get the same reasons). */
function logged(members: WorkloadPod[], lines: Map<string, SchedulingLine>): { log?: SchedulingLine } {
  let newest: SchedulingLine | undefined
  for (const p of members) {
    const l = lines.get(`${p.metadata.namespace ?? ''}/${p.metadata.name}`)
    if (l && (!newest || l.time > newest.time)) newest = l
  }
  return newest ? { log: newest } : {}
}

function karpenterWord(pod: WorkloadPod, events: KubeEvent[]): PodVerdict['karpenter']['events'] {
  const mine = events
    .filter((e) => isAbout(e, pod))
    .filter((e) => /karpenter/i.test(`${e.source?.component ?? ''} ${e.reportingComponent ?? ''}`))
    .sort((a, b) => stamp(b).localeCompare(stamp(a)))
  const seen = new Set<string>()
  const out: PodVerdict['karpenter']['events'] = []
  for (const e of mine) {
    const k = `${e.reason}\u0000${e.message}`
    if (seen.has(k)) continue
    seen.add(k)
    out.push({ reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? 1, lastSeen: stamp(e) })
    if (out.length === 3) break
  }
  return out
}

function controllerState(facts: WhyFacts): string {
  const d = facts.kube.deployment
  if (!d.ok) return `the controller could not be read (${d.error.read})`
  if (!d.value)
    return 'no Karpenter controller Deployment was found: nothing provisions (see doctor check controller-ready)'
  const { readyReplicas, replicas } = d.value
  return `controller ${d.value.metadata.namespace}/${d.value.metadata.name} has ${readyReplicas}/${replicas} replicas ready${readyReplicas === 0 ? ': nothing provisions (see doctor check controller-ready)' : ''}`
}

const readsOf = (facts: WhyFacts) =>
  ({
    NodePools: facts.kube.nodePools,
    EC2NodeClasses: facts.kube.nodeClasses,
    pods: facts.pods,
    NodeClaims: facts.nodeClaims,
    DaemonSets: facts.daemonSets,
    PersistentVolumeClaims: facts.pvcs,
    PersistentVolumes: facts.pvs,
    StorageClasses: facts.storageClasses,
    Events: facts.events,
    ...(facts.instanceTypes ? { 'EC2 instance types': facts.instanceTypes } : {}),
    ...(facts.offerings ? { 'EC2 instance type offerings': facts.offerings } : {}),
    ...(facts.placedPods ? { 'placed pods': facts.placedPods } : {}),
  }) as const

/** What an instance type's allocatable is judged on (devices aside: see devices.ts). */
const JUDGED_RESOURCES = new Set(['cpu', 'memory', 'pods', EPHEMERAL_STORAGE])
/** Resources Karpenter's types have an amount of from tables built into the provider (zz_generated.vpclimits). */
const TABLED_RESOURCES = new Set(['vpc.amazonaws.com/pod-eni'])

/**
 * Karpenter's NodeOverlay feature gate (FEATURE_GATES, off by default in every minor that has it):
 * only a NodeOverlay gives instance types capacity for extended resources or hugepages. Undefined when
 * the controller Deployment was not read.
 */
function nodeOverlayGate(facts: WhyFacts): boolean | undefined {
  const d = facts.kube.deployment
  if (!d.ok || !d.value) return undefined
  const gates = d.value.env.FEATURE_GATES ?? ''
  return /(^|,)\s*NodeOverlay\s*=\s*true\s*(,|$)/i.test(gates)
}

/** EC2's instance types for the judgement, or why there are none (a read failed, an old snapshot). */
function catalogFor(facts: WhyFacts): Catalog | { unread: string } {
  const { instanceTypes, offerings } = facts
  if (!instanceTypes || !offerings)
    return { unread: 'the snapshot holds no EC2 instance types (saved by an older karpctl)' }
  if (!instanceTypes.ok) return { unread: `EC2 DescribeInstanceTypes failed (${instanceTypes.error.code})` }
  if (!offerings.ok) return { unread: `EC2 DescribeInstanceTypeOfferings failed (${offerings.error.code})` }
  // The controller's VM_MEMORY_OVERHEAD_PERCENT setting, when doctor's facts show it.
  const env = facts.kube.deployment.ok ? facts.kube.deployment.value?.env : undefined
  const pct = Number(env?.VM_MEMORY_OVERHEAD_PERCENT)
  return catalogOf(
    instanceTypes.value,
    offerings.value,
    env?.VM_MEMORY_OVERHEAD_PERCENT && Number.isFinite(pct) && pct >= 0 && pct < 1
      ? pct
      : DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
    facts.meta.region,
  )
}

export function judge(facts: WhyFacts, source: 'live' | 'snapshot', now = new Date()): WhyReport {
  const unreadable = Object.entries(readsOf(facts))
    .filter(([, r]) => !r.ok)
    .map(
      ([what, r]) =>
        `${what}: ${(r as { error: { read: string; code: string; message: string } }).error.code} (${redactClip((r as { error: { message: string } }).error.message, 160)})`,
    )
  const value = <T>(r: { ok: true; value: T } | { ok: false }, none: T): T => (r.ok ? r.value : none)
  const pools = nodePoolOrder(value(facts.kube.nodePools, []))
  const inputs: Inputs = {
    facts,
    pools,
    nodeClasses: value(facts.kube.nodeClasses, []),
    nodeClaims: value(facts.nodeClaims, []),
    daemonSets: value(facts.daemonSets, []),
    events: value(facts.events, []),
    catalog: catalogFor(facts),
    perPool: new Map(),
    templates: new Map(),
    terms: new Map(),
  }
  const logLines = new Map((facts.controllerLog?.ok ? facts.controllerLog.value : []).map((l) => [l.pod, l]))
  const doctor = nodeClassFindings(facts)
  // What a NodePool verdict rests on: without these reads no NodePool can be ruled in or out.
  const blind = !facts.kube.nodePools.ok || !facts.kube.nodeClasses.ok
  const groups = new Map<string, WorkloadPod[]>()
  for (const pod of value(facts.pods, [])) {
    const k = specKey(pod)
    groups.set(k, [...(groups.get(k) ?? []), pod])
  }
  const verdicts: PodVerdict[] = []
  for (const members of groups.values()) {
    const pod = members[0] as WorkloadPod
    const owner = ownerOf(pod)
    const { pods: _one, ...requests } = podRequests(pod.spec)
    const head = {
      namespace: pod.metadata.namespace ?? '',
      pods: members.map((p) => p.metadata.name),
      owner,
      requests: Object.fromEntries(
        Object.entries(requests).map(([k, v]) => [k, formatAmounts({ [k]: v }).slice(k.length + 1)]),
      ),
      karpenter: { events: karpenterWord(pod, inputs.events), ...logged(members, logLines) },
    }
    const ignored = ignoredBecause(pod, {
      pvcs: value(facts.pvcs, []),
      storageClasses: value(facts.storageClasses, []),
      events: inputs.events,
      nodeClaims: inputs.nodeClaims,
    })
    if (ignored) {
      const hint =
        ignored.nodeClaim && LAUNCH_FAILURES.find(([re]) => re.test(ignored.nodeClaim?.state ?? ''))
      if (hint) ignored.message += ` (see ${hint[1]})`
      verdicts.push({ ...head, outcome: 'ignored', ignored, nodePools: [] })
      continue
    }
    const terms = podRequirementTerms(
      pod,
      volumeRequirements(pod, value(facts.pvcs, []), value(facts.pvs, [])),
    )
    const spreads = zoneSpreads(pod)
    const affinityTerms = (['podAffinity', 'podAntiAffinity'] as const).flatMap(
      (k) => pod.spec.affinity?.[k]?.requiredDuringSchedulingIgnoredDuringExecution ?? [],
    )
    const context = JSON.stringify([
      pod.metadata.namespace,
      owner,
      spreads,
      spreads.map((c) => selects(c.labelSelector, pod.metadata.labels ?? {})),
      // Pod affinity depends on the terms and on whether each selects the pod itself.
      pod.spec.affinity?.podAffinity,
      pod.spec.affinity?.podAntiAffinity,
      affinityTerms.map((t) => selects(t.labelSelector, pod.metadata.labels ?? {})),
    ])
    const podFacts: PodFacts = {
      requests: podRequests(pod.spec),
      terms,
      termKeys: terms.map((t) => `${JSON.stringify([[...t.byKey], [...t.origin]])}${context}`),
    }
    const nodePools = blind ? [] : pools.map((np) => judgePool(np, pod, owner, inputs, doctor, podFacts))
    const outcome: PodOutcome = blind
      ? 'could-not-tell'
      : nodePools.some((v) => v.status === 'fits')
        ? 'fits'
        : nodePools.every((v) => v.status === 'ruled-out')
          ? 'none'
          : 'could-not-tell'
    const activity =
      outcome === 'none'
        ? pools.length === 0
          ? 'no NodePool exists: Karpenter launches nothing (see doctor check nodeclass-ready)'
          : undefined
        : `Karpenter has not nominated a NodeClaim for it; ${controllerState(facts)}`
    verdicts.push({
      ...head,
      outcome,
      nodePools,
      karpenter: { ...head.karpenter, ...(activity ? { activity } : {}) },
    })
  }
  const count = (o: PodOutcome) =>
    verdicts.filter((v) => v.outcome === o).reduce((n, v) => n + v.pods.length, 0)
  return {
    schema: 'karpctl.why/v1',
    cluster: facts.meta.clusterName,
    region: facts.meta.region,
    generatedAt: now.toISOString(),
    source,
    order: pools.map((np) => ({ nodePool: np.metadata.name, weight: weightOf(np) })),
    groups: verdicts,
    unreadable,
    ...(facts.controllerLog && !facts.controllerLog.ok
      ? { controllerLogUnread: redactClip(facts.controllerLog.error.message, 200) }
      : {}),
    notJudged: Object.values(NOT_JUDGED),
    summary: {
      pods: verdicts.reduce((n, v) => n + v.pods.length, 0),
      ignored: count('ignored'),
      fits: count('fits'),
      none: count('none'),
      couldNotTell: count('could-not-tell'),
    },
  }
}
