// DaemonSets that run on some of a NodePool's instance types only (their node selector or affinity
// names an instance-type label: arch, family, GPU…). Karpenter groups the types by the DaemonSets that
// would run on them and adds each group's overhead — requests, one pod each, host ports — to that
// group's types alone (sigs.k8s.io/karpenter scheduling: buildDaemonOverheadGroups,
// isDaemonPodCompatible, filterInstanceTypesByRequirements). A type whose DaemonSets bind a host port
// the pod asks for is not launched for it; the others still are.
import type { DaemonSet } from './types.js'
import type { Amounts } from './quantity.js'
import type { HostPort } from './host-ports.js'
import type { Requirements } from './requirements.js'
import { typeMeetsAll, type Catalog } from './instance-types.js'
import type { InstanceTypeInfo } from './types.js'

export interface TypeDaemon {
  ds: DaemonSet
  /** Its node-affinity alternatives the NodePool's requirements allow: it runs on a type one of them meets. */
  terms: Requirements[]
  /** Its pod's requests, pods aside. */
  requests: Amounts
  ports: HostPort[]
}

export interface DaemonGroup {
  types: InstanceTypeInfo[]
  daemons: TypeDaemon[]
}

/** The types grouped by the type-dependent DaemonSets that would run on them, in the types' order. */
export function daemonGroups(
  catalog: Catalog,
  types: InstanceTypeInfo[],
  daemons: TypeDaemon[],
): DaemonGroup[] {
  const groups = new Map<string, DaemonGroup>()
  for (const it of types) {
    const on = daemons.filter((d) => d.terms.some((t) => typeMeetsAll(catalog, it, t)))
    const key = on.map((d) => daemons.indexOf(d)).join(',')
    const g = groups.get(key)
    if (g) g.types.push(it)
    else groups.set(key, { types: [it], daemons: on })
  }
  return [...groups.values()]
}
