// The PodDisruptionBudget status kube-controller-manager's disruption controller would write
// (k8s.io/kubernetes pkg/controller/disruption), played: the bed runs no controller-manager (adding it
// would change the kube build), so a PDB here has an empty status until this writes one. Only integer
// minAvailable / maxUnavailable and matchLabels selectors are played; anything else throws.
//   minAvailable N:   expectedPods = the selected pods, desiredHealthy = N
//   maxUnavailable N: expectedPods = the scale of the pods' controllers (a ReplicaSet's spec.replicas),
//                     desiredHealthy = expectedPods - N; a selected pod with no controller fails the
//                     sync, as the real controller does (disruptionsAllowed 0, SyncFailed)
//   disruptionsAllowed = max(0, currentHealthy - desiredHealthy), observedGeneration = generation
// (the eviction API refuses while observedGeneration lags the PDB's generation).
import type { KubeClient, KubeObject } from './kube-client.js'

const asInt = (v: unknown, field: string): number => {
  if (typeof v !== 'number')
    throw new Error(`played disruption controller: ${field} ${String(v)} is not an integer`)
  return v
}

const ready = (p: KubeObject) =>
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some((c: KubeObject) => c.type === 'Ready' && c.status === 'True')

/** The expected scale from the selected pods' controllers, or undefined when one has none (SyncFailed). */
async function controllerScale(
  kube: KubeClient,
  ns: string,
  pods: KubeObject[],
): Promise<number | undefined> {
  const seen = new Map<string, number>()
  for (const p of pods) {
    const ref = (p.metadata.ownerReferences ?? []).find((o: KubeObject) => o.controller)
    if (ref?.kind !== 'ReplicaSet') return undefined
    const rs = await kube.get(`/apis/apps/v1/namespaces/${ns}/replicasets/${ref.name}`)
    if (!rs) return undefined
    seen.set(rs.metadata.uid, rs.spec?.replicas ?? 1)
  }
  return [...seen.values()].reduce((a, b) => a + b, 0)
}

/** Writes the status of PDB `ns/name` as the disruption controller would now; returns it. */
export async function playPdbStatus(kube: KubeClient, ns: string, name: string): Promise<KubeObject> {
  const path = `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`
  const pdb = await kube.get(path)
  if (!pdb) throw new Error(`PodDisruptionBudget ${ns}/${name} not found`)
  const labels: Record<string, string> = pdb.spec?.selector?.matchLabels ?? {}
  if (pdb.spec?.selector?.matchExpressions?.length)
    throw new Error('played disruption controller: matchExpressions are not played')
  const pods = (await kube.list(`/api/v1/namespaces/${ns}/pods`)).filter((p) =>
    Object.entries(labels).every(([k, v]) => p.metadata.labels?.[k] === v),
  )
  const currentHealthy = pods.filter(ready).length
  let expectedPods: number
  let desiredHealthy: number
  let failed = false
  if (pdb.spec?.minAvailable !== undefined && pdb.spec.minAvailable !== null) {
    expectedPods = pods.length
    desiredHealthy = asInt(pdb.spec.minAvailable, 'minAvailable')
  } else {
    const scale = await controllerScale(kube, ns, pods)
    failed = scale === undefined
    expectedPods = scale ?? 0
    desiredHealthy = Math.max(0, expectedPods - asInt(pdb.spec?.maxUnavailable, 'maxUnavailable'))
  }
  const disruptionsAllowed = failed ? 0 : Math.max(0, currentHealthy - desiredHealthy)
  const allowed = disruptionsAllowed > 0
  const status = {
    observedGeneration: pdb.metadata.generation,
    disruptionsAllowed,
    currentHealthy,
    desiredHealthy,
    expectedPods,
    conditions: [
      {
        type: 'DisruptionAllowed',
        status: allowed ? 'True' : 'False',
        reason: failed ? 'SyncFailed' : allowed ? 'SufficientPods' : 'InsufficientPods',
        message: failed ? 'found no controllers for a selected pod' : '',
        observedGeneration: pdb.metadata.generation,
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    ],
  }
  return kube.mergePatch(path, { status }, 'status')
}
