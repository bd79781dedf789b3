// Scaling a cluster-autoscaler Deployment to 0 (two autoscalers fight over nodes). Its replica count is
// recorded on the Deployment itself, in the same patch, so teardown can give it back.
import type { KubeClient } from '../../context/kube.js'
import type { ClusterAutoscalerDeployment } from '../../facts/types.js'
import type { Resource } from '../types.js'

export const SCALED_FROM = 'karpctl.io/scaled-down-from-replicas'

/** install scales it down, doctor's cluster-autoscaler check reads what it scales: one shape for both. */
export type AutoscalerDeployment = ClusterAutoscalerDeployment

interface RawDeployment {
  metadata: {
    name: string
    namespace: string
    annotations?: Record<string, string>
    labels?: Record<string, string>
  }
  spec?: {
    replicas?: number
    template?: { spec?: { containers?: { name: string; command?: string[]; args?: string[] }[] } }
  }
}

/** cluster-autoscaler Deployments anywhere in the cluster (by name or by the chart's labels). */
export async function findClusterAutoscalers(kube: KubeClient): Promise<AutoscalerDeployment[]> {
  const list = await kube.get<{ items: RawDeployment[] }>('/apis/apps/v1/deployments')
  return (list?.items ?? [])
    .filter(
      (d) =>
        /cluster-autoscaler/.test(d.metadata.name) ||
        /cluster-autoscaler/.test(d.metadata.labels?.['app.kubernetes.io/name'] ?? ''),
    )
    .map((d) => {
      const containers = d.spec?.template?.spec?.containers ?? []
      const c = containers.find((x) => /cluster-autoscaler/.test(x.name)) ?? containers[0]
      return {
        namespace: d.metadata.namespace,
        name: d.metadata.name,
        replicas: d.spec?.replicas ?? 1,
        annotations: d.metadata.annotations ?? {},
        args: [...(c?.command ?? []), ...(c?.args ?? [])],
      }
    })
}

export function clusterAutoscalerScaleDown(w: {
  namespace: string
  name: string
  dependsOn: string[]
}): Resource<AutoscalerDeployment> {
  const path = `/apis/apps/v1/namespaces/${w.namespace}/deployments/${w.name}`
  return {
    address: 'kube.cluster-autoscaler',
    kind: 'Deployment',
    name: `${w.namespace}/${w.name}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { replicas: 0 },
    permissions: [],
    async observe({ kube }) {
      return (
        (await findClusterAutoscalers(kube)).find((d) => d.namespace === w.namespace && d.name === w.name) ??
        null
      )
    },
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'not found: nothing to scale down' }
      if (cur.replicas === 0) return { action: 'unchanged', changes: [] }
      return {
        action: 'update',
        changes: [{ field: 'replicas', from: cur.replicas, to: 0 }],
        note: `recorded as ${SCALED_FROM}=${cur.replicas}, so teardown gives the replicas back`,
      }
    },
    async apply({ kube }, cur) {
      if (!cur || cur.replicas === 0) return
      // Keep the first recorded count: a second scale-down must not record 0.
      const from = cur.annotations[SCALED_FROM] ?? String(cur.replicas)
      await kube.write(
        'PATCH',
        path,
        { metadata: { annotations: { [SCALED_FROM]: from } }, spec: { replicas: 0 } },
        'application/merge-patch+json',
      )
    },
  }
}
