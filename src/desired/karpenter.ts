// The Kubernetes side of an install: Helm values (every annotation, label and toleration value a
// string), the default EC2NodeClass and NodePool (validated against the real CRD schemas in tests).
import { installNames, type InstallSpec } from './install.js'

export const MANAGED_LABEL = 'app.kubernetes.io/managed-by'

export function helmValues(s: InstallSpec): Record<string, unknown> {
  const n = installNames(s)
  const annotations: Record<string, string> = {}
  if (s.identity === 'irsa') {
    annotations['eks.amazonaws.com/role-arn'] = n.controllerRoleArn
    annotations['eks.amazonaws.com/sts-regional-endpoints'] = 'true'
  }
  const settings: Record<string, string> = { clusterName: s.clusterName }
  if (s.interruption) settings.interruptionQueue = n.queueName
  return {
    serviceAccount: { name: s.serviceAccount, ...(Object.keys(annotations).length ? { annotations } : {}) },
    settings,
    ...(s.karpenterVersion.startsWith('1.0.') ? { webhook: { enabled: true } } : {}),
  }
}

/**
 * What karpctl needs true of the values of a release it did not install: the cluster, the queue and the
 * controller's role. Everything else is the release's own (an STS annotation it lacks is doctor's advice,
 * not install's change), so a release that already says these is left unchanged.
 */
export function requiredValues(s: InstallSpec): Record<string, unknown> {
  const n = installNames(s)
  const settings: Record<string, string> = { clusterName: s.clusterName }
  if (s.interruption) settings.interruptionQueue = n.queueName
  return {
    settings,
    ...(s.identity === 'irsa'
      ? { serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': n.controllerRoleArn } } }
      : {}),
  }
}

interface KubeObjectShape {
  apiVersion: string
  kind: string
  metadata: { name: string; labels: Record<string, string> }
  spec: Record<string, unknown>
}

const managed = { [MANAGED_LABEL]: 'karpctl' }

export function defaultNodeClass(s: InstallSpec): KubeObjectShape {
  const n = installNames(s)
  const discovery = { 'karpenter.sh/discovery': s.clusterName }
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: n.nodeClassName, labels: managed },
    spec: {
      role: n.nodeRoleName,
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: discovery }],
      securityGroupSelectorTerms: [{ tags: discovery }],
      tags: { 'karpctl.io/cluster': s.clusterName },
    },
  }
}

export function defaultNodePool(s: InstallSpec): KubeObjectShape {
  const n = installNames(s)
  const p = s.nodePool
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: n.nodePoolName, labels: managed },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: p.architectures },
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: p.capacityTypes },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: p.instanceCategories },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['2'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: n.nodeClassName },
          expireAfter: '720h',
        },
      },
      limits: { cpu: String(p.cpuLimit) },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
    },
  }
}
