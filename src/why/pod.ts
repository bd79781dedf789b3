// What a pod asks of a node, as Karpenter reads it: its resource requests, its node requirements
// (nodeSelector and each required node-affinity term, with its bound volumes' zones), and the
// workload that owns it (where a fix goes).
import { add, amounts, max, type Amounts } from './quantity.js'
import {
  addRequirement,
  copyRequirements,
  emptyRequirements,
  fromSelector,
  type Requirements,
} from './requirements.js'
import type { PersistentVolume, PersistentVolumeClaim, PodSpec, WorkloadPod } from './types.js'

export const ZONE_LABEL = 'topology.kubernetes.io/zone'
/** The EBS CSI driver's own zone key: it names the same zone as the well-known label. */
const EBS_ZONE_LABEL = 'topology.ebs.csi.aws.com/zone'

/**
 * Karpenter's resources.Ceiling: the app containers and sidecars run together, an init container
 * runs alone before them, so a node needs the larger of the two, plus the RuntimeClass overhead.
 */
export function podRequests(spec: PodSpec): Amounts {
  let running: Amounts = {}
  for (const c of spec.containers ?? []) running = add(running, amounts(c.resources?.requests))
  let init: Amounts = {}
  let sidecars: Amounts = {}
  for (const c of spec.initContainers ?? []) {
    const own = amounts(c.resources?.requests)
    // An init container starts after the sidecars declared before it, which keep running.
    init = max(init, add(sidecars, own))
    if (c.restartPolicy === 'Always') sidecars = add(sidecars, own)
  }
  running = add(running, sidecars)
  return add(add(max(running, init), amounts(spec.overhead)), { pods: 1 })
}

export interface Owner {
  kind: 'Deployment' | 'StatefulSet' | 'Job' | 'DaemonSet' | 'ReplicaSet' | 'Node' | 'Pod' | string
  name: string
}

/** The workload whose pod template a fix changes: a ReplicaSet's pods belong to its Deployment. */
export function ownerOf(pod: WorkloadPod): Owner {
  const refs = pod.metadata.ownerReferences ?? []
  const ref = refs.find((r) => r.controller) ?? refs[0]
  if (!ref) return { kind: 'Pod', name: pod.metadata.name }
  const hash = pod.metadata.labels?.['pod-template-hash']
  if (ref.kind === 'ReplicaSet' && hash && ref.name.endsWith(`-${hash}`))
    return { kind: 'Deployment', name: ref.name.slice(0, -(hash.length + 1)) }
  return { kind: ref.kind, name: ref.name }
}

export interface VolumeZones {
  /** The PVC and PV a requirement came from. */
  claim: string
  volume: string
  requirements: Requirements
}

/** The node requirements of the pod's bound PersistentVolumes (a zonal EBS volume pins its zone). */
export function volumeRequirements(
  pod: WorkloadPod,
  pvcs: PersistentVolumeClaim[],
  pvs: PersistentVolume[],
): VolumeZones[] {
  const ns = pod.metadata.namespace
  const out: VolumeZones[] = []
  for (const v of pod.spec.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName
    if (!claim) continue
    const pvc = pvcs.find((c) => c.metadata.name === claim && c.metadata.namespace === ns)
    const pv = pvc?.spec.volumeName ? pvs.find((p) => p.metadata.name === pvc.spec.volumeName) : undefined
    // Karpenter injects the first term of the volume's node affinity (VolumeTopology.Inject).
    const term = pv?.spec.nodeAffinity?.required?.nodeSelectorTerms?.[0]
    if (!pv || !term) continue
    const reqs = emptyRequirements()
    for (const e of term.matchExpressions ?? []) {
      const r = fromSelector({ ...e, key: e.key === EBS_ZONE_LABEL ? ZONE_LABEL : e.key })
      if (r)
        addRequirement(reqs, r, { kind: 'volume', name: `${claim} (PersistentVolume ${pv.metadata.name})` })
    }
    out.push({ claim, volume: pv.metadata.name, requirements: reqs })
  }
  return out
}

/**
 * The pod's alternatives: Karpenter schedules with the nodeSelector and the first required term, and
 * relaxes to the next term when that fails, so the terms are OR'ed (expressions within one AND'ed).
 * Each alternative also carries the bound volumes' requirements.
 */
export function podRequirementTerms(pod: WorkloadPod, volumes: VolumeZones[] = []): Requirements[] {
  const base = emptyRequirements()
  for (const [key, value] of Object.entries(pod.spec.nodeSelector ?? {}))
    addRequirement(base, { key, complement: false, values: [value] }, { kind: 'nodeSelector' })
  for (const v of volumes)
    for (const [key, r] of v.requirements.byKey)
      addRequirement(base, r, v.requirements.origin.get(key) ?? { kind: 'nodeSelector' })
  const terms =
    pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms
  if (!terms || terms.length === 0) return [base]
  return terms.map((term, i) => {
    const reqs = copyRequirements(base)
    for (const e of term.matchExpressions ?? []) {
      const r = fromSelector(e)
      // An operator the API server would refuse matches nothing: no node has a value for it.
      addRequirement(reqs, r ?? { key: e.key, complement: false, values: [] }, { kind: 'affinity', term: i })
    }
    return reqs
  })
}
