// Scaling a cluster-autoscaler Deployment to 0 (two autoscalers fight over nodes). Its replica count is
// recorded on the Deployment itself, in the same patch, so teardown can give it back.
import { findClusterAutoscalers, type AutoscalerDeployment } from '../../facts/cluster-autoscalers.js'
import { SCALED_FROM } from '../../desired/ownership.js'
import type { Resource } from '../types.js'

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
