// What the guides tell users to do by hand after an install: run a small workload only the new NodePool
// can take, wait for Karpenter to launch a NodeClaim and the pod to run, report the time to a ready
// node, and delete the workload. Bounded; the workload is deleted whatever happens.
import { randomBytes } from 'node:crypto'
import { KubeApiError, type KubeClient } from '../context/kube.js'
import { MANAGED_LABEL } from '../desired/karpenter.js'

export const SMOKE_LABEL = 'karpctl.io/smoke-test'

interface NodeClaimList {
  items: { metadata: { name: string; creationTimestamp?: string }; status?: { nodeName?: string } }[]
}
interface PodStatus {
  spec?: { nodeName?: string }
  status?: { phase?: string }
}

export interface SmokeResult {
  ok: boolean
  nodeClaim?: string
  launchedMs?: number
  runningMs?: number
  node?: string
  message: string
}

export function smokePod(name: string, nodePool: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { [MANAGED_LABEL]: 'karpctl', [SMOKE_LABEL]: 'true' } },
    spec: {
      nodeSelector: { 'karpenter.sh/nodepool': nodePool },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'pause',
          image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.9',
          resources: { requests: { cpu: '100m', memory: '64Mi' } },
        },
      ],
    },
  }
}

export async function smokeTest(
  kube: KubeClient,
  o: {
    nodePool: string
    timeoutMs: number
    sleep: (ms: number) => Promise<void>
    progress: (s: string) => void
    now?: () => number
  },
): Promise<SmokeResult> {
  const now = o.now ?? Date.now
  const name = `karpctl-smoke-test-${randomBytes(3).toString('hex')}`
  const podPath = `/api/v1/namespaces/default/pods/${name}`
  const before = new Set(
    ((await poll<NodeClaimList>(kube, claimsPath(o.nodePool)))?.items ?? []).map((c) => c.metadata.name),
  )
  const t0 = now()
  await kube.write('POST', '/api/v1/namespaces/default/pods', smokePod(name, o.nodePool))
  o.progress(`smoke test: pod default/${name} needs a node of NodePool ${o.nodePool}`)
  const result: SmokeResult = { ok: false, message: '' }
  try {
    for (;;) {
      if (!result.nodeClaim) {
        const claim = ((await poll<NodeClaimList>(kube, claimsPath(o.nodePool)))?.items ?? []).find(
          (c) => !before.has(c.metadata.name),
        )
        if (claim) {
          result.nodeClaim = claim.metadata.name
          result.launchedMs = now() - t0
          o.progress(
            `smoke test: Karpenter launched NodeClaim ${claim.metadata.name} (${secs(result.launchedMs)})`,
          )
        }
      }
      const pod = await poll<PodStatus>(kube, podPath)
      if (pod?.status?.phase === 'Running') {
        result.ok = true
        result.runningMs = now() - t0
        result.node = pod.spec?.nodeName
        result.message = `smoke test passed: NodeClaim ${result.nodeClaim ?? '?'} launched after ${secs(result.launchedMs ?? result.runningMs)}, pod running on ${result.node ?? '?'} after ${secs(result.runningMs)} (time to a ready node)`
        return result
      }
      if (now() - t0 > o.timeoutMs) {
        result.message = result.nodeClaim
          ? `smoke test failed: NodeClaim ${result.nodeClaim} launched but the pod was not running after ${secs(o.timeoutMs)}: \`kubectl describe nodeclaim ${result.nodeClaim}\``
          : `smoke test failed: Karpenter launched no NodeClaim for NodePool ${o.nodePool} in ${secs(o.timeoutMs)}: \`kubectl -n kube-system logs deploy/karpenter -c controller\``
        return result
      }
      await o.sleep(2000)
    }
  } finally {
    await kube.write('DELETE', podPath).catch(() => undefined)
  }
}

/** A poll that meets a busy or restarting API server (429, 5xx) just polls again. */
async function poll<T>(kube: KubeClient, path: string): Promise<T | null> {
  try {
    return await kube.fresh<T>(path)
  } catch (err) {
    if (err instanceof KubeApiError && (err.status === 429 || err.status >= 500)) return null
    throw err
  }
}

const claimsPath = (nodePool: string) =>
  `/apis/karpenter.sh/v1/nodeclaims?labelSelector=${encodeURIComponent(`karpenter.sh/nodepool=${nodePool}`)}`
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`
