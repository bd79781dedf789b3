// The controller's recent log, read once per run and only when a pod is judged: the tail of each
// running controller replica's log (the leader writes the scheduling lines; which replica leads is not
// known), kept only for the lines that name a pod being judged — a snapshot carries nothing about
// other workloads.
import type { KubeClient } from '../context/kube.js'
import { read } from '../facts/read.js'
import type { Pod, Read } from '../facts/types.js'
import { newestSchedulingLines, type SchedulingLine } from './controller-log.js'
import type { WorkloadPod } from './types.js'

/** Lines read from the end of each replica's log: minutes of a busy provisioner, bounded in size. */
export const LOG_TAIL_LINES = 5000
const LOG_LIMIT_BYTES = 8 << 20
const CONTAINER = 'controller'

const enc = encodeURIComponent

export function controllerLogPath(pod: Pod): string {
  const ns = pod.metadata.namespace ?? ''
  const container = pod.containerStatuses.some((c) => c.name === CONTAINER)
    ? CONTAINER
    : (pod.containerStatuses[0]?.name ?? CONTAINER)
  return `/api/v1/namespaces/${enc(ns)}/pods/${enc(pod.metadata.name)}/log?container=${enc(container)}&tailLines=${LOG_TAIL_LINES}&limitBytes=${LOG_LIMIT_BYTES}`
}

/**
 * The newest "could not schedule pod" line of each judged pod. Undefined (nothing read) when no pod
 * is judged; a failure when the controller's pods or a log could not be read (RBAC without
 * `pods/log`, a node the API server cannot reach): the judgement then says the log was not read.
 */
export async function controllerLog(
  kube: KubeClient,
  controllerPods: Read<Pod[]>,
  pods: Read<WorkloadPod[]>,
): Promise<Read<SchedulingLine[]> | undefined> {
  if (!pods.ok || pods.value.length === 0) return undefined
  const judged = new Set(pods.value.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`))
  return read('kubernetes: controller log', async () => {
    if (!controllerPods.ok)
      throw new Error(`the controller's pods were not read: ${controllerPods.error.message}`)
    const running = controllerPods.value.filter((p) => p.phase === 'Running')
    if (running.length === 0) throw new Error('no controller pod is Running')
    const logs = await Promise.all(running.map(async (p) => (await kube.getText(controllerLogPath(p))) ?? ''))
    return Object.values(newestSchedulingLines(logs))
      .filter((l) => judged.has(l.pod))
      .sort((a, b) => a.pod.localeCompare(b.pod))
  })
}
