// Tenants on an installed cluster: what the install looks like (discovered by doctor's collectors, so a
// Terraform- or eksctl-made install works too), the resources of `tenant add`, and the rows of
// `tenant list`. Those of `tenant remove` are in plan/tenant-removal.ts: teardown removes tenants too.
import { runChecks } from '../checks/run.js'
import { catalog } from '../checks/catalog.js'
import type { CheckResult } from '../checks/types.js'
import { EnvironmentError } from '../errors.js'
import { installOf as installOfKube } from '../facts/rendered-install.js'
import type { Facts, NodePool, Read } from '../facts/types.js'
import { nodeRolePolicies } from '../plan/resources/node-role-policies.js'
import { awsAuthEntry } from '../plan/resources/aws-auth.js'
import { accessEntry } from '../plan/resources/eks-access.js'
import { iamRole } from '../plan/resources/iam-role.js'
import { inlinePolicy } from '../plan/resources/inline-policy.js'
import { kubeObject } from '../plan/resources/kube-object.js'
import type { Resource } from '../plan/types.js'
import { MANAGED_LABEL } from '../desired/karpenter.js'
import {
  TENANT_KEY,
  tenantNames,
  tenantNodeClass,
  tenantNodePool,
  tenantPassRolePolicy,
  tenantTags,
  type InstallFacts,
  type TenantSpec,
} from '../desired/tenant.js'
import { nodeTrust } from '../desired/trust.js'

/** A read's value; a read that failed is not an absence: one line saying what answered instead. */
function readOrThrow<T>(what: string, r: Read<T>, cluster: string): T {
  if (r.ok) return r.value
  throw new EnvironmentError(
    `cannot read ${what} of cluster ${cluster}: ${r.error.message} (${r.error.code})`,
    'READ_FAILED',
  )
}

/** The install tenants build on, from doctor's facts; one clear error when there is none. */
export function installOf(facts: Facts): InstallFacts {
  const fix = 'run `karpctl install` first (or `karpctl doctor` to see what is wrong)'
  const release = readOrThrow('the Karpenter Helm release', facts.kube.release, facts.meta.clusterName)
  // A controller Argo CD, Flux or kubectl applied is an install too: tenants change no Helm value.
  if (!release && !installOfKube(facts.kube))
    throw new EnvironmentError(
      `no Karpenter Helm release or controller Deployment found in cluster ${facts.meta.clusterName}: ${fix}`,
      'NOT_INSTALLED',
    )
  if (!facts.iam.controllerRoleName)
    throw new EnvironmentError(
      `the Karpenter controller's IAM role could not be found (no IRSA annotation, no Pod Identity association): ${fix}`,
      'NOT_INSTALLED',
    )
  const classes = readOrThrow('the EC2NodeClasses', facts.kube.nodeClasses, facts.meta.clusterName)
  const base =
    classes.find((c) => c.metadata.name === 'default' && !c.metadata.labels?.[TENANT_KEY]) ??
    classes.find((c) => !c.metadata.labels?.[TENANT_KEY])
  if (!base)
    throw new EnvironmentError(
      `no EC2NodeClass to take subnet and security-group selectors from: ${fix}`,
      'NOT_INSTALLED',
    )
  const roles = classes.map((c) => c.spec.role).filter(Boolean)
  const awsAuth = facts.kube.awsAuth.ok ? (facts.kube.awsAuth.value ?? []) : []
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const viaAwsAuth =
    awsAuth.some((m) => roles.some((r) => m.rolearn.endsWith(`/${r}`))) ||
    cluster?.authenticationMode === 'CONFIG_MAP'
  return {
    clusterName: facts.meta.clusterName,
    accountId: facts.meta.accountId ?? '',
    partition: facts.meta.partition,
    controllerRoleName: facts.iam.controllerRoleName,
    access: viaAwsAuth ? 'aws-auth' : 'access-entry',
    base: {
      subnetSelectorTerms: base.spec.subnetSelectorTerms,
      securityGroupSelectorTerms: base.spec.securityGroupSelectorTerms,
      amiSelectorTerms: base.spec.amiSelectorTerms ?? [{ alias: 'al2023@latest' }],
    },
  }
}

const controllerArn = (i: Pick<InstallFacts, 'partition' | 'accountId' | 'controllerRoleName'>) =>
  `arn:${i.partition}:iam::${i.accountId}:role/${i.controllerRoleName}`

export function tenantAddResources(s: TenantSpec): Resource[] {
  const n = tenantNames(s)
  const tags = tenantTags(s.clusterName, s.tenant)
  const clusterArn = `arn:${s.partition}:eks:${s.region}:${s.accountId}:cluster/${s.clusterName}`
  const access =
    s.access === 'access-entry'
      ? accessEntry({
          clusterName: s.clusterName,
          principalArn: n.roleArn,
          clusterArn,
          tags,
          dependsOn: ['iam-role.tenant'],
        })
      : awsAuthEntry({
          roleArn: n.roleArn,
          dependsOn: ['iam-role.tenant'],
          managedLabel: [MANAGED_LABEL, 'karpctl'],
        })
  return [
    iamRole({
      address: 'iam-role.tenant',
      name: n.roleName,
      arn: n.roleArn,
      description: `Nodes of tenant ${s.tenant} on EKS cluster ${s.clusterName} (karpctl)`,
      trust: nodeTrust(s.partition),
      managed: [...nodeRolePolicies(s.partition), ...s.policyArns.map((arn) => ({ arn }))],
      inline: [],
      tags: { ...s.tags, ...tags },
      // The tenant's whole desired state: a policy or tag an earlier `tenant add` set and this one does
      // not ask for is removed (only ever from the role karpctl created for the tenant).
      asked: { policyArns: s.policyArns, tags: s.tags },
      ownership: tags,
      adopt: false,
      notOursHint: 'another tool made a role of that name: remove it or choose another tenant name',
    }),
    access,
    inlinePolicy({
      address: 'iam-policy.tenant-passrole',
      roleName: s.controllerRoleName,
      roleArn: controllerArn(s),
      policyName: n.passRolePolicy,
      document: tenantPassRolePolicy(n.roleArn),
      dependsOn: [],
    }),
    kubeObject({
      address: 'kube.ec2nodeclass.tenant',
      object: tenantNodeClass(s),
      ownerLabel: [TENANT_KEY, s.tenant],
      adopt: false,
      dependsOn: ['iam-role.tenant', access.address, 'iam-policy.tenant-passrole'],
    }),
    kubeObject({
      address: 'kube.nodepool.tenant',
      object: tenantNodePool(s),
      ownerLabel: [TENANT_KEY, s.tenant],
      adopt: false,
      dependsOn: ['kube.ec2nodeclass.tenant'],
    }),
  ]
}

/** The checks that judge a tenant's capacity. */
export const TENANT_CHECKS = [
  'tenant-isolation',
  'passrole-node-role',
  'node-role',
  'nodeclass-ready',
  'discovery-tags',
]

export function tenantChecks(facts: Facts): CheckResult[] {
  return runChecks(
    catalog.filter((c) => TENANT_CHECKS.includes(c.meta.id)),
    facts,
  )
}

export interface TenantRow {
  tenant: string
  nodePool: string
  role?: string
  capacityTypes: string[]
  limits: Record<string, string>
  usage: Record<string, string>
  nodes: number
  checks: 'pass' | 'fail' | 'unknown'
  problems: string[]
}

export function tenantRows(facts: Facts, results: CheckResult[]): TenantRow[] {
  const pools = facts.kube.nodePools.ok ? facts.kube.nodePools.value : []
  const classes = readOrThrow('the EC2NodeClasses', facts.kube.nodeClasses, facts.meta.clusterName)
  const nodes = facts.kube.nodes.ok ? facts.kube.nodes.value : []
  return pools
    .filter((p) => p.metadata.labels?.[TENANT_KEY])
    .map((p: NodePool) => {
      const tenant = p.metadata.labels?.[TENANT_KEY] ?? p.metadata.name
      const nc = classes.find((c) => c.metadata.name === p.spec.template.spec.nodeClassRef.name)
      const mine = [
        `nodepool/${p.metadata.name}`,
        `ec2nodeclass/${nc?.metadata.name}`,
        `EC2NodeClass/${nc?.metadata.name}`,
        nc?.spec.role ?? '\u0000',
      ]
      const related = results.flatMap((r) =>
        r.findings.filter((f) =>
          mine.some((m) => (f.subject ?? '').includes(m) || f.message.includes(` ${m.split('/').pop()} `)),
        ),
      )
      const problems = related.filter((f) => f.status === 'fail').map((f) => f.message)
      const unknown =
        related.some((f) => f.status === 'unknown') || results.some((r) => r.status === 'unknown')
      return {
        tenant,
        nodePool: p.metadata.name,
        role: nc?.spec.role,
        capacityTypes:
          p.spec.template.spec.requirements?.find((r) => r.key === 'karpenter.sh/capacity-type')?.values ??
          [],
        limits: p.spec.limits ?? {},
        usage: (p.status as { resources?: Record<string, string> } | undefined)?.resources ?? {},
        nodes: nodes.filter((nd) => nd.labels['karpenter.sh/nodepool'] === p.metadata.name).length,
        checks: problems.length ? 'fail' : unknown ? 'unknown' : 'pass',
        problems,
      }
    })
}
