// A cluster-autoscaler karpctl scaled down (install), scaled back up on teardown.
import { SCALED_FROM } from '../../desired/ownership.js'
import type { Resource } from '../types.js'

interface Scaled {
  namespace: string
  name: string
  replicas: number
}

/** A cluster-autoscaler karpctl scaled down gets its recorded replicas back. */
export function autoscalerRestore(w: { dependsOn: string[] }): Resource<Scaled[]> {
  return {
    address: 'kube.cluster-autoscaler.restore',
    kind: 'Deployment',
    name: `scaled down by karpctl (${SCALED_FROM})`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ kube }) {
      const l = await kube.get<{
        items: { metadata: { name: string; namespace: string; annotations?: Record<string, string> } }[]
      }>('/apis/apps/v1/deployments')
      return (l?.items ?? [])
        .filter((d) => d.metadata.annotations?.[SCALED_FROM] !== undefined)
        .map((d) => ({
          namespace: d.metadata.namespace,
          name: d.metadata.name,
          replicas: Number(d.metadata.annotations?.[SCALED_FROM]),
        }))
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            changes: cur.map((d) => ({
              field: `${d.namespace}/${d.name} replicas`,
              from: 0,
              to: d.replicas,
            })),
          },
    async apply({ kube }, cur) {
      for (const d of cur ?? [])
        await kube.write(
          'PATCH',
          `/apis/apps/v1/namespaces/${d.namespace}/deployments/${d.name}`,
          { metadata: { annotations: { [SCALED_FROM]: null } }, spec: { replicas: d.replicas } },
          'application/merge-patch+json',
        )
    },
  }
}
