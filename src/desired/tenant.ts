// One customer of a shared cluster, as pure data: its node role, its EC2NodeClass and NodePool (tainted
// and labelled so only its workloads land there), and the PassRole grant the controller needs for it.
import { InputError } from '../errors.js'
import type { SelectorTerm } from '../facts/types.js'
import { TENANT_KEY } from './ownership.js'
import { passRolePolicy } from './controller-policy.js'
import { ownershipTags } from './install.js'
import { MANAGED_LABEL } from './karpenter.js'
import { roleName } from './names.js'

export { TENANT_KEY }

export interface TenantNodePool {
  capacityTypes: string[]
  instanceCategories?: string[]
  instanceFamilies?: string[]
  architectures: string[]
  zones?: string[]
  cpuLimit?: number
  memoryLimit?: string
  consolidationPolicy: 'WhenEmptyOrUnderutilized' | 'WhenEmpty'
  consolidateAfter: string
  weight?: number
}

export interface TenantSpec {
  clusterName: string
  region: string
  accountId: string
  partition: string
  tenant: string
  policyArns: string[]
  subnetTag?: { key: string; value: string }
  tags: Record<string, string>
  nodePool: TenantNodePool
  access: 'access-entry' | 'aws-auth'
  controllerRoleName: string
  /** Selectors of the install's default EC2NodeClass, which a tenant shares unless it has its own subnets. */
  base: {
    subnetSelectorTerms: SelectorTerm[]
    securityGroupSelectorTerms: SelectorTerm[]
    amiSelectorTerms: SelectorTerm[]
  }
}

/** The install a tenant builds on, as doctor's facts show it (tenant add and remove, teardown). */
export interface InstallFacts {
  clusterName: string
  accountId: string
  partition: string
  controllerRoleName: string
  access: 'access-entry' | 'aws-auth'
  base: TenantSpec['base']
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** DNS-1123 label of at most 40 characters: every name derived from it then fits AWS and Kubernetes. */
export function validateTenantName(name: string): string {
  if (!DNS_LABEL.test(name) || name.length > 40)
    throw new InputError(
      `"${name}" is not a valid tenant name: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 40 characters (it names a NodePool, an EC2NodeClass, a label value and an IAM role)`,
      'INVALID_TENANT',
    )
  if (name === 'default')
    throw new InputError(
      '"default" is the install\'s own NodePool: choose another tenant name',
      'INVALID_TENANT',
    )
  return name
}

export function tenantTags(clusterName: string, tenant: string): Record<string, string> {
  return { ...ownershipTags(clusterName), [TENANT_KEY]: tenant }
}

export function tenantNames(s: Pick<TenantSpec, 'clusterName' | 'accountId' | 'partition' | 'tenant'>) {
  const role = roleName(`KarpenterNodeRole-${s.clusterName}-${s.tenant}`)
  return {
    roleName: role,
    roleArn: `arn:${s.partition}:iam::${s.accountId}:role/${role}`,
    passRolePolicy: `KarpctlTenantPassRole-${s.tenant}`,
    nodeClass: s.tenant,
    nodePool: s.tenant,
  }
}

/** The controller may pass the tenant's node role to EC2, and nothing else (as the reference template scopes it). */
export const tenantPassRolePolicy = (roleArn: string) =>
  passRolePolicy([roleArn], 'AllowPassingTenantInstanceRole')

export function tenantNodeClass(s: TenantSpec) {
  const n = tenantNames(s)
  const subnets = s.subnetTag
    ? [{ tags: { 'karpenter.sh/discovery': s.clusterName, [s.subnetTag.key]: s.subnetTag.value } }]
    : s.base.subnetSelectorTerms
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: n.nodeClass, labels: { [MANAGED_LABEL]: 'karpctl', [TENANT_KEY]: s.tenant } },
    spec: {
      role: n.roleName,
      amiSelectorTerms: s.base.amiSelectorTerms,
      subnetSelectorTerms: subnets,
      securityGroupSelectorTerms: s.base.securityGroupSelectorTerms,
      tags: { ...s.tags, 'karpctl.io/cluster': s.clusterName, [TENANT_KEY]: s.tenant },
    },
  }
}

export function tenantNodePool(s: TenantSpec) {
  const n = tenantNames(s)
  const p = s.nodePool
  const req = (key: string, values?: string[]) => (values?.length ? [{ key, operator: 'In', values }] : [])
  const limits: Record<string, string> = {}
  if (p.cpuLimit) limits.cpu = String(p.cpuLimit)
  if (p.memoryLimit) limits.memory = p.memoryLimit
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: n.nodePool, labels: { [MANAGED_LABEL]: 'karpctl', [TENANT_KEY]: s.tenant } },
    spec: {
      template: {
        metadata: { labels: { [TENANT_KEY]: s.tenant } },
        spec: {
          taints: [{ key: TENANT_KEY, value: s.tenant, effect: 'NoSchedule' }],
          requirements: [
            ...req('kubernetes.io/arch', p.architectures),
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            ...req('karpenter.sh/capacity-type', p.capacityTypes),
            ...req('karpenter.k8s.aws/instance-category', p.instanceCategories),
            ...req('karpenter.k8s.aws/instance-family', p.instanceFamilies),
            ...req('topology.kubernetes.io/zone', p.zones),
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: n.nodeClass },
          expireAfter: '720h',
        },
      },
      ...(Object.keys(limits).length ? { limits } : {}),
      disruption: { consolidationPolicy: p.consolidationPolicy, consolidateAfter: p.consolidateAfter },
      ...(p.weight !== undefined ? { weight: p.weight } : {}),
    },
  }
}

/** What a tenant's workloads add to their pod spec to run on the tenant's nodes (and only there). */
export function workloadSnippet(tenant: string): string {
  return [
    'nodeSelector:',
    `  ${TENANT_KEY}: ${tenant}`,
    'tolerations:',
    `  - key: ${TENANT_KEY}`,
    '    operator: Equal',
    `    value: "${tenant}"`,
    '    effect: NoSchedule',
  ].join('\n')
}
