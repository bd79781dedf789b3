// Would the node's pods fit on the other nodes? The question Karpenter's consolidation simulation
// asks before it deletes a node without a replacement. Judged with `why POD`'s own pieces — the
// pod's requests (resources.Ceiling), its required node affinity and nodeSelector against the
// node's labels, its tolerations against the node's taints — first fit, each placement using up room.
import { podRequests, podRequirementTerms } from '../pod.js'
import { amounts, add, type Amounts } from '../quantity.js'
import {
  addRequirement,
  emptyRequirements,
  incompatibilities,
  operator,
  type Requirements,
} from '../requirements.js'
import { untolerated } from '../taints.js'
import type { WorkloadPod } from '../types.js'
import type { KarpenterNode } from './types.js'
import { condition, deleting, isTrue, reschedulable, type ClusterView } from './view.js'

export interface Placement {
  pod: string
  /** The node it fits on, or undefined. */
  node?: string
}

const labelRequirements = (labels: Record<string, string>) => {
  const reqs = emptyRequirements()
  for (const [key, value] of Object.entries(labels))
    addRequirement(reqs, { key, complement: false, values: [value] }, { kind: 'label' })
  return reqs
}

interface Room {
  node: KarpenterNode
  free: Amounts
  reqs: ReturnType<typeof labelRequirements>
}

/**
 * An existing node takes a pod only if it carries every label the pod requires (In, Exists, Gt, Lt):
 * unlike a NodePool, a node's missing label is not "any value" (sigs.k8s.io/karpenter v1.14.1
 * scheduling/existingnode.go CanAdd → Requirements.Compatible with no AllowUndefined: "label %q does
 * not have known values"). Then the values must intersect.
 */
function nodeTakes(node: Requirements, pod: Requirements): boolean {
  for (const [key, r] of pod.byKey) {
    const op = operator(r)
    if (!node.byKey.has(key) && op !== 'NotIn' && op !== 'DoesNotExist') return false
  }
  return incompatibilities(node, pod).length === 0
}

const enough = (free: Amounts, need: Amounts) => Object.entries(need).every(([k, v]) => (free[k] ?? 0) >= v)

function roomOf(c: ClusterView, node: KarpenterNode): Room {
  let used: Amounts = {}
  for (const p of c.podsByNode.get(node.metadata.name) ?? [])
    if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') used = add(used, podRequests(p.spec))
  const free = amounts(node.status.allocatable)
  for (const [k, v] of Object.entries(used)) free[k] = (free[k] ?? 0) - v
  return { node, free, reqs: labelRequirements(node.metadata.labels ?? {}) }
}

/** The room on every node that can take pods, computed once per run (judging 1,000 nodes stays linear). */
const roomsCache = new WeakMap<ClusterView, Room[]>()
function roomsOf(c: ClusterView): Room[] {
  let rooms = roomsCache.get(c)
  if (!rooms) {
    rooms = c.nodes
      .filter(
        (n) =>
          !n.spec.unschedulable && isTrue(condition(n.status.conditions, 'Ready')) && !deleting({ node: n }),
      )
      .map((n) => roomOf(c, n))
    roomsCache.set(c, rooms)
  }
  return rooms
}

/** Where each pod would go, among the Ready, schedulable nodes that are not leaving. */
export function placeElsewhere(c: ClusterView, nodeName: string, pods: WorkloadPod[]): Placement[] {
  const rooms = roomsOf(c)
  // What this node's pods use up, per node: the shared rooms are never changed.
  const taken = new Map<Room, Amounts>()
  const freeOf = (r: Room) => {
    const t = taken.get(r)
    if (!t) return r.free
    const f = { ...r.free }
    for (const [k, v] of Object.entries(t)) f[k] = (f[k] ?? 0) - v
    return f
  }
  return reschedulable(pods).map((pod) => {
    const need = podRequests(pod.spec)
    const terms = podRequirementTerms(pod)
    const room = rooms.find(
      (r) =>
        r.node.metadata.name !== nodeName &&
        enough(freeOf(r), need) &&
        !untolerated(
          r.node.spec.taints?.filter((t) => t.effect !== 'PreferNoSchedule'),
          pod.spec.tolerations,
        ) &&
        terms.some((t) => nodeTakes(r.reqs, t)),
    )
    if (room) taken.set(room, add(taken.get(room) ?? {}, need))
    const name = `${pod.metadata.namespace}/${pod.metadata.name}`
    return room ? { pod: name, node: room.node.metadata.name } : { pod: name }
  })
}
