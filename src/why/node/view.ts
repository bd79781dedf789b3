// One node as the judgements see it: its Node and NodeClaim paired, its NodePool and EC2NodeClass,
// the pods bound to it and the events about it. Built once per run from the facts, in indexes, so
// judging 1,000 nodes stays linear.
import type { EC2NodeClass, NodePool } from '../../facts/types.js'
import { stamp } from '../ignored.js'
import { NODEPOOL_LABEL } from '../limits.js'
import type { KubeEvent, WorkloadPod } from '../types.js'
import type { FullNodeClaim, KarpenterNode, NodeFacts, PodDisruptionBudget, TimedCondition } from './types.js'

export const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt'
export const NODEPOOL_HASH = 'karpenter.sh/nodepool-hash'
export const NODEPOOL_HASH_VERSION = 'karpenter.sh/nodepool-hash-version'
export const NODECLASS_HASH = 'karpenter.k8s.aws/ec2nodeclass-hash'
export const NODECLASS_HASH_VERSION = 'karpenter.k8s.aws/ec2nodeclass-hash-version'
/** The taint Karpenter puts on a node it is disrupting (sigs.k8s.io/karpenter pkg/apis/v1 DisruptedNoScheduleTaint). */
export const DISRUPTED_TAINT = 'karpenter.sh/disrupted'

export interface NodeView {
  name: string
  node?: KarpenterNode
  nodeClaim?: FullNodeClaim
  nodePool?: NodePool
  nodeClass?: EC2NodeClass
  pods: WorkloadPod[]
  /** About the Node or the NodeClaim, newest first. */
  events: KubeEvent[]
}

export interface ClusterView {
  now: number
  region: string
  /** EC2's instance types, when they were wanted (a replacement to judge). */
  instanceTypes?: NodeFacts['instanceTypes']
  /** Judged as if `--with` manifests were applied: conditions Karpenter computes from them are recomputed. */
  whatIf: boolean
  nodes: KarpenterNode[]
  nodeClaims: FullNodeClaim[]
  nodePools: NodePool[]
  nodeClasses: EC2NodeClass[]
  pdbs: PodDisruptionBudget[]
  podsByNode: Map<string, WorkloadPod[]>
  /** Pending pods Karpenter's scheduler nominated a node for (status.nominatedNodeName). */
  nominated: Map<string, WorkloadPod[]>
  eventsByObject: Map<string, KubeEvent[]>
  nodePoolEvents: Map<string, KubeEvent[]>
}

export const condition = (
  conditions: TimedCondition[] | undefined,
  type: string,
): TimedCondition | undefined => conditions?.find((c) => c.type === type)

export const isTrue = (c: TimedCondition | undefined) => c?.status === 'True'

const valueOf = <T>(r: { ok: true; value: T } | { ok: false }, empty: T): T => (r.ok ? r.value : empty)

const key = (kind: string, name: string) => `${kind}/${name}`

export function clusterView(facts: NodeFacts, now: number): ClusterView {
  const pods = valueOf(facts.pods, [])
  const podsByNode = new Map<string, WorkloadPod[]>()
  const nominated = new Map<string, WorkloadPod[]>()
  for (const p of pods) {
    const at = p.spec.nodeName
    if (at) podsByNode.set(at, [...(podsByNode.get(at) ?? []), p])
    const nom = p.status?.nominatedNodeName
    if (!at && nom) nominated.set(nom, [...(nominated.get(nom) ?? []), p])
  }
  const eventsByObject = new Map<string, KubeEvent[]>()
  const nodePoolEvents = new Map<string, KubeEvent[]>()
  const events = [...valueOf(facts.events, [])].sort((a, b) => stamp(b).localeCompare(stamp(a)))
  for (const e of events) {
    const { kind = '', name = '' } = e.involvedObject
    const map = kind === 'NodePool' ? nodePoolEvents : eventsByObject
    const k = kind === 'NodePool' ? name : key(kind, name)
    map.set(k, [...(map.get(k) ?? []), e])
  }
  return {
    now,
    region: facts.meta.region,
    ...(facts.instanceTypes ? { instanceTypes: facts.instanceTypes } : {}),
    whatIf: Boolean(facts.meta.with),
    nodes: valueOf(facts.nodes, []),
    nodeClaims: valueOf(facts.nodeClaims, []),
    nodePools: valueOf(facts.kube.nodePools, []),
    nodeClasses: valueOf(facts.kube.nodeClasses, []),
    pdbs: valueOf(facts.pdbs, []),
    podsByNode,
    nominated,
    eventsByObject,
    nodePoolEvents,
  }
}

/** Every Karpenter node (a NodeClaim, or a Node with a NodePool label), each Node paired with its NodeClaim. */
export function nodeViews(c: ClusterView): NodeView[] {
  const claimByNode = new Map<string, FullNodeClaim>()
  for (const nc of c.nodeClaims) if (nc.status?.nodeName) claimByNode.set(nc.status.nodeName, nc)
  const claimByProvider = new Map<string, FullNodeClaim>()
  for (const nc of c.nodeClaims) if (nc.status?.providerID) claimByProvider.set(nc.status.providerID, nc)
  const seen = new Set<FullNodeClaim>()
  const out: NodeView[] = []
  for (const node of c.nodes) {
    const nc =
      claimByNode.get(node.metadata.name) ??
      (node.spec.providerID ? claimByProvider.get(node.spec.providerID) : undefined)
    if (!nc && !node.metadata.labels?.[NODEPOOL_LABEL]) continue
    if (nc) seen.add(nc)
    out.push(view(c, node.metadata.name, node, nc))
  }
  for (const nc of c.nodeClaims) if (!seen.has(nc)) out.push(view(c, nc.metadata.name, undefined, nc))
  return out
}

function view(c: ClusterView, name: string, node?: KarpenterNode, nc?: FullNodeClaim): NodeView {
  const poolName = nc?.metadata.labels?.[NODEPOOL_LABEL] ?? node?.metadata.labels?.[NODEPOOL_LABEL]
  const nodePool = c.nodePools.find((p) => p.metadata.name === poolName)
  const className = nc?.spec.nodeClassRef?.name ?? nodePool?.spec.template.spec.nodeClassRef.name
  const events = [
    ...(node ? (c.eventsByObject.get(key('Node', node.metadata.name)) ?? []) : []),
    ...(nc ? (c.eventsByObject.get(key('NodeClaim', nc.metadata.name)) ?? []) : []),
  ].sort((a, b) => stamp(b).localeCompare(stamp(a)))
  return {
    name,
    ...(node ? { node } : {}),
    ...(nc ? { nodeClaim: nc } : {}),
    ...(nodePool ? { nodePool } : {}),
    ...(className ? { nodeClass: c.nodeClasses.find((n) => n.metadata.name === className) } : {}),
    pods: node ? (c.podsByNode.get(node.metadata.name) ?? []) : [],
    events,
  }
}

/** Events about a Node or NodeClaim that no longer exists (its name is all that is left). */
export function eventsOfGone(c: ClusterView, name: string): KubeEvent[] {
  return [
    ...(c.eventsByObject.get(key('Node', name)) ?? []),
    ...(c.eventsByObject.get(key('NodeClaim', name)) ?? []),
  ]
}

/** Pods Karpenter would have to move: not DaemonSet or mirror pods, not finished (pkg/utils/pod IsReschedulable). */
export function reschedulable(pods: WorkloadPod[]): WorkloadPod[] {
  return pods.filter((p) => {
    const phase = p.status?.phase
    if (phase === 'Succeeded' || phase === 'Failed') return false
    const owners = p.metadata.ownerReferences ?? []
    return !owners.some((o) => o.kind === 'DaemonSet' || o.kind === 'Node')
  })
}

/** Karpenter counts a node as disrupting when it is NotReady or marked for deletion. */
export function deleting(v: Pick<NodeView, 'node' | 'nodeClaim'>): boolean {
  return Boolean(
    v.nodeClaim?.metadata.deletionTimestamp ||
    v.node?.metadata.deletionTimestamp ||
    v.node?.spec.taints?.some((t) => t.key === DISRUPTED_TAINT),
  )
}
