// cluster-autoscaler Deployments anywhere in the cluster: doctor's check judges them, install scales
// them down and teardown gives their replicas back, so all three find them the same way.
import type { KubeClient } from '../context/kube.js'
import type { ClusterAutoscalerDeployment } from './types.js'

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
