// After --fix applied something: what only the cluster can do before doctor judges again (as install
// waits): Karpenter re-resolving each EC2NodeClass that was not Ready, and the controller coming back
// when its release changed. Without it, doctor re-reads the stale status and reports the fixed
// problem as still there.
import type { Facts } from '../facts/types.js'
import { controllerAvailable, nodeClassReady, type WaitTarget } from '../plan/waits.js'

export function fixWaits(facts: Facts, applied: string[]): WaitTarget[] {
  const out: WaitTarget[] = []
  const dep = facts.kube.deployment.ok ? facts.kube.deployment.value : null
  if (dep && applied.some((a) => a.startsWith('helm.')))
    out.push(controllerAvailable(dep.metadata.namespace ?? 'kube-system', dep.metadata.name))
  const classes = facts.kube.nodeClasses.ok ? facts.kube.nodeClasses.value : []
  for (const nc of classes) {
    const conditions = nc.status?.conditions ?? []
    // A class no controller ever reported on (no conditions) will not be re-resolved by waiting.
    if (conditions.length && !conditions.some((c) => c.type === 'Ready' && c.status === 'True'))
      out.push(nodeClassReady(nc.metadata.name))
  }
  return applied.length ? out : []
}
