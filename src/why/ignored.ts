// Pods Karpenter does not provision for (sigs.k8s.io/karpenter pkg/utils/pod IsProvisionable and the
// provisioner's volume validation): each with the reason, so `why` says so instead of judging NodePools.
import type { KubeEvent, NodeClaim, PersistentVolumeClaim, StorageClass, WorkloadPod } from './types.js'
import { ownerOf } from './pod.js'

export type IgnoredReason =
  | 'not-pending'
  | 'scheduled'
  | 'daemonset'
  | 'static'
  | 'other-scheduler'
  | 'preempting'
  | 'immediate-pvc'
  | 'missing-pvc'
  | 'not-unschedulable'
  | 'nominated'

export interface Ignored {
  reason: IgnoredReason
  message: string
  /** For `nominated`: the NodeClaim Karpenter launched or chose for the pod, and its state. */
  nodeClaim?: { name: string; state: string }
}

export interface IgnoreInputs {
  pvcs: PersistentVolumeClaim[]
  storageClasses: StorageClass[]
  events: KubeEvent[]
  nodeClaims: NodeClaim[]
}

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class'

/** Karpenter's `Nominated` event: `Pod should schedule on: nodeclaim/<name>` (or `node/<name>`). */
export function nominationOf(
  pod: WorkloadPod,
  events: KubeEvent[],
): { kind: string; name: string } | undefined {
  const mine = events
    .filter((e) => isAbout(e, pod) && e.reason === 'Nominated')
    .sort((a, b) => stamp(b).localeCompare(stamp(a)))
  const m = /(nodeclaim|node)\/([\w.-]+)/i.exec(mine[0]?.message ?? '')
  return m ? { kind: (m[1] as string).toLowerCase(), name: m[2] as string } : undefined
}

export const stamp = (e: KubeEvent) => e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? ''

export function isAbout(e: KubeEvent, pod: WorkloadPod): boolean {
  if (e.involvedObject.kind && e.involvedObject.kind !== 'Pod') return false
  if (pod.metadata.uid && e.involvedObject.uid) return e.involvedObject.uid === pod.metadata.uid
  return e.involvedObject.name === pod.metadata.name && e.involvedObject.namespace === pod.metadata.namespace
}

/** A NodeClaim's state in one phrase: its first condition that is not True, else Ready. */
export function nodeClaimState(nc: NodeClaim | undefined): string {
  if (!nc) return 'no longer exists'
  const conditions = nc.status?.conditions ?? []
  for (const type of ['Launched', 'Registered', 'Initialized', 'Ready']) {
    const c = conditions.find((x) => x.type === type)
    if (!c || c.status === 'True') continue
    return `${type}=${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`
  }
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True')
    ? `Ready${nc.status?.nodeName ? ` as node ${nc.status.nodeName}` : ''}`
    : 'launching (no condition yet)'
}

export function ignoredBecause(pod: WorkloadPod, inputs: IgnoreInputs): Ignored | undefined {
  const phase = pod.status?.phase ?? 'Unknown'
  if (phase !== 'Pending') return { reason: 'not-pending', message: `the pod is ${phase}, not Pending` }
  if (pod.spec.nodeName)
    return {
      reason: 'scheduled',
      message: `the pod is bound to node ${pod.spec.nodeName} (spec.nodeName): it waits for that node, not for Karpenter`,
    }
  const owner = ownerOf(pod)
  if (owner.kind === 'DaemonSet')
    return {
      reason: 'daemonset',
      message: `the pod belongs to DaemonSet ${owner.name}: Karpenter counts DaemonSets as overhead on new nodes, it never provisions for them`,
    }
  if (owner.kind === 'Node')
    return { reason: 'static', message: `the pod is a static pod of node ${owner.name}` }
  const scheduler = pod.spec.schedulerName
  if (scheduler && scheduler !== 'default-scheduler')
    return {
      reason: 'other-scheduler',
      message: `the pod is scheduled by ${scheduler} (spec.schedulerName), not by the default scheduler Karpenter works with`,
    }
  if (pod.status?.nominatedNodeName)
    return {
      reason: 'preempting',
      message: `kube-scheduler nominated node ${pod.status.nominatedNodeName} for the pod (status.nominatedNodeName): it is preempting pods there`,
    }
  for (const v of pod.spec.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName
    if (!claim) continue
    const pvc = inputs.pvcs.find(
      (c) => c.metadata.name === claim && c.metadata.namespace === pod.metadata.namespace,
    )
    if (!pvc)
      return {
        reason: 'missing-pvc',
        message: `its PersistentVolumeClaim ${claim} does not exist: Karpenter waits for it`,
      }
    if (pvc.spec.volumeName || pvc.status?.phase === 'Bound') continue
    const className = pvc.spec.storageClassName
    const sc = className
      ? inputs.storageClasses.find((s) => s.metadata.name === className)
      : inputs.storageClasses.find((s) => s.metadata.annotations?.[DEFAULT_CLASS] === 'true')
    if (sc && (sc.volumeBindingMode ?? 'Immediate') === 'Immediate')
      return {
        reason: 'immediate-pvc',
        message: `its PersistentVolumeClaim ${claim} is unbound and StorageClass ${sc.metadata.name} binds Immediate: Karpenter ignores the pod until the volume is provisioned (use volumeBindingMode: WaitForFirstConsumer)`,
      }
  }
  const nominated = nominationOf(pod, inputs.events)
  if (nominated) {
    const nc =
      nominated.kind === 'nodeclaim'
        ? inputs.nodeClaims.find((c) => c.metadata.name === nominated.name)
        : undefined
    const state = nominated.kind === 'nodeclaim' ? nodeClaimState(nc) : 'an existing node'
    return {
      reason: 'nominated',
      message: `Karpenter nominated ${nominated.kind} ${nominated.name} for the pod: ${state}`,
      nodeClaim: { name: nominated.name, state },
    }
  }
  // Karpenter acts only on pods kube-scheduler has marked unschedulable (PodScheduled=False, Unschedulable).
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled')
  if (!(scheduled?.status === 'False' && scheduled.reason === 'Unschedulable'))
    return {
      reason: 'not-unschedulable',
      message: `kube-scheduler has not marked the pod Unschedulable (PodScheduled ${scheduled ? `${scheduled.status}${scheduled.reason ? `, ${scheduled.reason}` : ''}` : 'absent'}): Karpenter acts only once it has`,
    }
  return undefined
}
