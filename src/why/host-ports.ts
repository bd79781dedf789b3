// Host ports: a node binds each host port once. A DaemonSet that runs on every node of a NodePool holds
// its host ports there, so a pod asking for the same port, protocol and address fits no node the
// NodePool can ever launch (kube-scheduler's NodePorts filter refuses it there). Two
// addresses clash when they are equal or either is every address (empty or 0.0.0.0).
import type { Fix } from '../checks/types.js'
import { dropHostPortFix } from './fix.js'
import type { Owner } from './pod.js'
import type { DaemonSet, PodSpec } from './types.js'

export interface HostPort {
  port: number
  protocol: string
  ip: string
  container: string
  /** Where in the pod spec: containers[at[0]].ports[at[1]]. */
  at?: [number, number]
}

const ANY = '0.0.0.0'

/** The host ports the pod's containers bind (init containers have exited before they could clash). */
export function hostPorts(spec: PodSpec): HostPort[] {
  const out: HostPort[] = []
  ;(spec.containers ?? []).forEach((c, ci) =>
    (c.ports ?? []).forEach((p, pi) => {
      if (p.hostPort)
        out.push({
          port: p.hostPort,
          protocol: p.protocol || 'TCP',
          ip: p.hostIP || ANY,
          container: c.name,
          at: [ci, pi],
        })
    }),
  )
  return out
}

export function clash(a: HostPort, b: HostPort): boolean {
  return a.port === b.port && a.protocol === b.protocol && (a.ip === b.ip || a.ip === ANY || b.ip === ANY)
}

const text = (p: HostPort) => `${p.port}/${p.protocol}${p.ip === ANY ? '' : ` on ${p.ip}`}`

export interface HostPortVerdict {
  message: string
  fix: Fix
}

/** The first of the pod's host ports a DaemonSet of the NodePool's nodes already binds, or undefined. */
export function judgeHostPorts(
  pool: string,
  spec: PodSpec,
  owner: Owner,
  daemonSets: { ds: DaemonSet; ports: HostPort[] }[],
  namespace?: string,
): HostPortVerdict | undefined {
  const mine = hostPorts(spec)
  if (mine.length === 0) return undefined
  for (const p of mine)
    for (const { ds, ports } of daemonSets) {
      const theirs = ports.find((q) => clash(p, q))
      if (!theirs) continue
      const name = `${ds.metadata.namespace}/${ds.metadata.name}`
      const summary = `give ${owner.kind.toLowerCase()}/${owner.name} another hostPort than ${p.port}/${p.protocol} (or drop it and use a Service), or keep DaemonSet ${name} off NodePool ${pool}'s nodes (a node affinity on its template, or a NodePool taint it does not tolerate)`
      return {
        message: `hostPort ${text(p)} (container ${p.container}) is taken by DaemonSet ${name} (container ${theirs.container}, hostPort ${text(theirs)}), which runs on every node of NodePool ${pool}: no node it launches can take the pod`,
        fix: dropHostPortFix(spec, owner, namespace, p, `${summary}; here the pod's hostPort is dropped`) ?? {
          summary,
        },
      }
    }
  return undefined
}
