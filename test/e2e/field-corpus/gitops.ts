// Karpenter applied by Argo CD, which renders a chart with `helm template` and applies the objects, so
// there is no Helm release (argoproj/argo-cd#3867, "If I use argocd, no releases found. It seems like
// kubectl apply <manifests>"). EKS Blueprints' GitOps Bridge installs Karpenter that way. On the bed: the
// seed's healthy install with Helm's record of it removed (the objects are what `helm template` renders
// with the same values) and Argo CD's tracking annotation on the controller's Deployment.
import type { Ctx, Scenario } from './scenario.js'

const DEPLOYMENT = '/apis/apps/v1/namespaces/kube-system/deployments/karpenter'

/** The install as Argo CD leaves it: the rendered objects, no release Secret, Argo CD's mark. */
async function appliedByArgo({ bed }: Ctx) {
  const secrets = await bed.kube.list('/api/v1/namespaces/kube-system/secrets', 'owner=helm,name=karpenter')
  for (const s of secrets) await bed.kube.delete(`/api/v1/namespaces/kube-system/secrets/${s.metadata.name}`)
  await bed.kube.mergePatch(DEPLOYMENT, {
    metadata: {
      annotations: { 'argocd.argoproj.io/tracking-id': 'karpenter:apps/Deployment:kube-system/karpenter' },
    },
  })
}

/**
 * The objects keep Helm's ownership annotations, so the next scenario's `helm install` takes them back;
 * the Deployment goes, with every edit made to it here (a merge would keep them), and is made anew.
 */
async function backToHelm({ bed }: Ctx) {
  await bed.kube.delete(DEPLOYMENT)
}

/**
 * The controller kept on a tainted system node group by the values Argo CD renders: a toleration and a
 * nodeSelector in the pod template, the taint and label on every node outside Karpenter.
 */
async function onTaintedSystemNodes(c: Ctx) {
  await appliedByArgo(c)
  const taint = { key: 'karpenter.sh/controller', value: 'true', effect: 'NoSchedule' }
  await c.bed.kube.mergePatch(DEPLOYMENT, {
    spec: {
      template: {
        spec: {
          tolerations: [{ key: taint.key, operator: 'Equal', value: taint.value, effect: taint.effect }],
          nodeSelector: { role: 'system' },
        },
      },
    },
  })
  for (const n of await c.bed.kube.list('/api/v1/nodes'))
    await c.bed.kube.mergePatch(`/api/v1/nodes/${n.metadata.name}`, {
      metadata: { labels: { role: 'system' } },
      spec: { taints: [taint] },
    })
}

export const GITOPS_SCENARIOS: Scenario[] = [
  {
    check: 'karpenter-version',
    title:
      'healthy: Argo CD renders the chart (helm template) and applies it: no Helm release, the version read from the live objects',
    source:
      "argoproj/argo-cd#3867 (Argo CD applies what helm template renders: no release), aws-ia/terraform-aws-eks-blueprints' GitOps Bridge pattern",
    shape: appliedByArgo,
    cleanup: backToHelm,
    expect:
      /Karpenter 1\.14\.1 \(Deployment kube-system\/karpenter, no Helm release: Argo CD application "karpenter"\) is a current v1 install/,
  },
  {
    check: 'controller-ready',
    title:
      "healthy: Argo CD's values keep the controller on a tainted system node group (tolerations, nodeSelector), no Helm release to read them from",
    source:
      'aws-samples/cdk-eks-karpenter#99 (the controller on the bootstrap nodes by tolerations and selectors), argoproj/argo-cd#3867',
    shape: onTaintedSystemNodes,
    cleanup: backToHelm,
    expect: /\d+ ready nodes outside Karpenter's management for 2 controller replicas/,
  },
  {
    check: 'helm-release',
    title:
      'settings.clusterEndpoint kept from a recreated cluster, on an install Argo CD applied (nodes never register)',
    source: 'aws/karpenter-provider-aws#2423, #1634; argoproj/argo-cd#3867',
    breakIt: async (c) => {
      await appliedByArgo(c)
      // What the chart renders for settings.clusterEndpoint: the controller's CLUSTER_ENDPOINT.
      type Container = { name: string; env?: { name: string; value?: string }[] }
      const d = (await c.bed.kube.get(DEPLOYMENT)) as {
        spec: { template: { spec: { containers: Container[] } } }
      }
      // A merge patch replaces the list whole: every container as it is, the controller's env edited.
      const containers = d.spec.template.spec.containers
      const controller = containers.find((x) => x.name === 'controller')!
      controller.env = [
        ...(controller.env ?? []).filter((e) => e.name !== 'CLUSTER_ENDPOINT'),
        {
          name: 'CLUSTER_ENDPOINT',
          value: 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com',
        },
      ]
      await c.bed.kube.mergePatch(DEPLOYMENT, { spec: { template: { spec: { containers } } } })
    },
    cleanup: backToHelm,
    expect:
      /settings\.clusterEndpoint of the install \(no Helm release\) kube-system\/karpenter is "https:\/\/0123456789ABCDEF/,
  },
]
