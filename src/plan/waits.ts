// Waits beside the executor: bounded, for what only the cluster can do after an apply (the controller
// becoming available, Karpenter resolving an EC2NodeClass). install, tenant add, upgrade and --fix share them.
import type { KubeClient } from '../context/kube.js'

interface Status {
  status?: {
    availableReplicas?: number
    conditions?: { type: string; status: string; reason?: string; message?: string }[]
  }
}

export interface WaitTarget {
  label: string
  path: string
  ready: (o: Status) => boolean
}

export const nodeClassReady = (name: string): WaitTarget => ({
  label: `EC2NodeClass ${name} Ready`,
  path: `/apis/karpenter.k8s.aws/v1/ec2nodeclasses/${name}`,
  ready: (o) => (o.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
})

export const controllerAvailable = (namespace: string, name = 'karpenter'): WaitTarget => ({
  label: `Karpenter controller ${namespace}/${name} available`,
  path: `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
  ready: (o) =>
    (o.status?.availableReplicas ?? 0) > 0 ||
    (o.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'),
})

export function installWaits(namespace: string, nodeClass: string): WaitTarget[] {
  return [controllerAvailable(namespace), nodeClassReady(nodeClass)]
}

/** Polls each target until ready or the deadline; resolves the labels that did not get ready. */
export async function waitFor(
  kube: KubeClient,
  targets: WaitTarget[],
  o: {
    timeoutMs: number
    intervalMs?: number
    sleep: (ms: number) => Promise<void>
    now?: () => number
    onReady?: (label: string, ms: number) => void
  },
): Promise<string[]> {
  const now = o.now ?? Date.now
  const t0 = now()
  const pending: string[] = []
  for (const t of targets) {
    for (;;) {
      const obj = await kube.fresh<Status>(t.path).catch(() => null)
      if (obj && t.ready(obj)) {
        o.onReady?.(t.label, now() - t0)
        break
      }
      if (now() - t0 >= o.timeoutMs) {
        pending.push(t.label)
        break
      }
      await o.sleep(o.intervalMs ?? 2000)
    }
  }
  return pending
}
