// The one part of a node the Karpenter bed plays: its kubelet. No instance boots here, so for every
// NodeClaim the real controller launched (status.providerID set) a Node registers as the kubelet
// would from Karpenter's user data — the claim's providerID, labels and taints plus
// `karpenter.sh/unregistered:NoExecute`, capacity as the claim reports it, Ready — and the pods the
// real kube-scheduler binds there are reported Running; pods deleted there are finalised (the kubelet
// confirms a graceful delete). Karpenter then registers and initialises the claim itself.
import type { KubeClient, KubeObject } from './kube-client.js'
import { kubeletReadyStatus } from './kube-seed.js'

export const UNREGISTERED_TAINT = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' }
/** Karpenter's registration TTL (hard-coded 15 min in sigs.k8s.io/karpenter's liveness controller). */
const REGISTRATION_TTL_MS = 15 * 60_000

const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

/** The Node a kubelet on the claim's instance registers (named after the claim). */
export async function registerNode(kube: KubeClient, claim: KubeObject): Promise<string> {
  const name = claim.metadata.name as string
  const arch = claim.metadata.labels?.['kubernetes.io/arch'] ?? 'amd64'
  await kube.create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...claim.metadata.labels,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': arch,
      },
    },
    spec: {
      providerID: claim.status.providerID,
      taints: [UNREGISTERED_TAINT, ...(claim.spec?.taints ?? []), ...(claim.spec?.startupTaints ?? [])],
    },
  })
  const now = nowIso()
  await kube.mergePatch(
    `/api/v1/nodes/${name}`,
    {
      status: {
        capacity: claim.status.capacity,
        allocatable: claim.status.allocatable,
        ...kubeletReadyStatus(now, arch, 'Amazon Linux 2023', '6.1.0'),
      },
    },
    'status',
  )
  await liftNotReady(kube, name)
  return name
}

const NOT_READY = 'node.kubernetes.io/not-ready'

/**
 * The TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready:NoSchedule to a new
 * Node; the node lifecycle controller (not run here) lifts it once Ready. Only that taint, and only
 * on the version read (a JSON patch that tests resourceVersion): Karpenter removes its own taint at
 * the same moment with a merge patch of the whole list from its cache, which can put this one back —
 * so the kubelet round lifts it again whenever it reappears.
 */
async function liftNotReady(kube: KubeClient, name: string): Promise<void> {
  const node = await kube.get(`/api/v1/nodes/${name}`)
  const taints = (node?.spec?.taints ?? []) as KubeObject[]
  if (!node || !taints.some((x) => x.key === NOT_READY)) return
  await kube.request(
    'PATCH',
    `/api/v1/nodes/${name}`,
    [
      { op: 'test', path: '/metadata/resourceVersion', value: node.metadata.resourceVersion },
      { op: 'replace', path: '/spec/taints', value: taints.filter((x) => x.key !== NOT_READY) },
    ],
    'application/json-patch+json',
  )
}

/**
 * Makes the claim's registration overdue, as if its instance never joined for 15 minutes: its
 * `Registered` condition is back-dated, and Karpenter's liveness controller deletes the claim
 * (reason `registration_timeout`). The kubelet must be held for the claim (`holdRegistration`).
 */
export async function expireRegistration(kube: KubeClient, claimName: string): Promise<void> {
  const path = `/apis/karpenter.sh/v1/nodeclaims/${claimName}`
  const claim = await kube.get(path)
  if (!claim) throw new Error(`NodeClaim ${claimName} not found`)
  const past = new Date(Date.now() - REGISTRATION_TTL_MS - 60_000).toISOString().replace(/\.\d+Z$/, 'Z')
  const conditions = (claim.status?.conditions ?? []).map((c: KubeObject) =>
    c.type === 'Registered' ? { ...c, lastTransitionTime: past } : c,
  )
  await kube.mergePatch(path, { status: { conditions } }, 'status')
}

export interface Kubelet {
  /** Claims matching `match` never join (no Node registers for them) until the returned release(). */
  holdRegistration(match: (claim: KubeObject) => boolean): () => void
  stop(): Promise<void>
}

export function playKubelet(kube: KubeClient): Kubelet {
  const held = new Set<(claim: KubeObject) => boolean>()
  const registered = new Set<string>()
  const registeredNames = new Set<string>()
  let stopped = false
  const round = async () => {
    const claims = await kube.list('/apis/karpenter.sh/v1/nodeclaims').catch(() => [])
    for (const c of claims) {
      const launched = c.status?.providerID && !c.metadata.deletionTimestamp
      if (!launched || registered.has(c.metadata.uid) || [...held].some((m) => m(c))) continue
      registered.add(c.metadata.uid)
      await registerNode(kube, c)
        .then((name) => registeredNames.add(name))
        .catch(() => registered.delete(c.metadata.uid))
    }
    const ours = new Set(claims.map((c) => c.metadata.name as string))
    // A Node registered in the instant its claim was being deleted outlives it (Karpenter had no Node
    // to remove yet); its instance is gone, and EKS's node lifecycle controller removes such Nodes.
    for (const name of [...registeredNames].filter((n) => !ours.has(n))) {
      registeredNames.delete(name)
      await kube.delete(`/api/v1/nodes/${name}`).catch(() => undefined)
    }
    for (const node of await kube.list('/api/v1/nodes')) {
      if (
        ours.has(node.metadata.name) &&
        (node.spec?.taints ?? []).some((x: KubeObject) => x.key === NOT_READY)
      )
        await liftNotReady(kube, node.metadata.name)
    }
    for (const pod of await kube.list('/api/v1/pods')) {
      if (!ours.has(pod.spec?.nodeName)) continue
      const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`
      if (pod.metadata.deletionTimestamp) {
        await kube.request('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 })
      } else if (pod.status?.phase !== 'Running') {
        const now = nowIso()
        const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: now })
        await kube.mergePatch(
          path,
          {
            status: {
              phase: 'Running',
              startTime: now,
              conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(cond),
            },
          },
          'status',
        )
      }
    }
  }
  const loop = (async () => {
    while (!stopped) {
      await round().catch(() => undefined) // an object mid-change: next round
      await new Promise((r) => setTimeout(r, 300))
    }
  })()
  return {
    holdRegistration(match) {
      held.add(match)
      return () => held.delete(match)
    },
    async stop() {
      stopped = true
      await loop
    },
  }
}
