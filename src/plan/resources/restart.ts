// A change that only reaches the controller when its pods are re-created (an annotation EKS's pod
// identity webhook reads, a Pod Identity association) carries a pending-restart marker, written in the
// same call as the change and removed after the restart: a run killed in between leaves the marker, so
// the re-run restarts the controller instead of finding "nothing to do" while the old pods still run.
import type { KubeClient } from '../../context/kube.js'

export const RESTART_PENDING = 'karpctl.io/restart-pending'

export interface DeploymentRef {
  namespace: string
  name: string
}

/** `kubectl rollout restart`: a new pod-template annotation, so the Deployment rolls its pods. */
export async function restartDeployment(kube: KubeClient, d: DeploymentRef, now: Date): Promise<void> {
  await kube.write(
    'PATCH',
    `/apis/apps/v1/namespaces/${d.namespace}/deployments/${d.name}`,
    {
      spec: {
        template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': now.toISOString() } } },
      },
    },
    'application/strategic-merge-patch+json',
  )
}
