// Teardown as a plan: everything karpctl made for one cluster, in safe order (tenants and the default
// NodePool first, so Karpenter terminates its own instances while it still runs; the controller after;
// the AWS side last), the changes it recorded on other resources given back, Karpenter's orphans swept
// on request. Names are derived and ownership is proven per resource, so a teardown that stopped half-way,
// or runs on a cluster karpctl never touched, plans only what is left of karpctl's.
import type * as iam from '@aws-sdk/client-iam'
import type { RunContext } from '../context/run-context.js'
import type { Facts } from '../facts/types.js'
import { prefixed } from '../plan/prefix.js'
import { accessEntryAbsent } from '../plan/resources/eks-access-absent.js'
import { awsAuthEntryAbsent } from '../plan/resources/aws-auth-absent.js'
import { iamRoleAbsent } from '../plan/resources/iam-role-absent.js'
import { karpenterLifts, kubeObjectAbsent } from '../plan/resources/kube-object-absent.js'
import { autoscalerRestore } from '../plan/resources/autoscaler-restore.js'
import { handedCrdsRestore } from '../plan/resources/crd-handback.js'
import { helmReleaseAbsent } from '../plan/resources/helm-release-absent.js'
import { oidcProviderAbsent } from '../plan/resources/oidc-provider-absent.js'
import { orphanSweep } from '../plan/resources/orphan-sweep.js'
import { podIdentityAbsent } from '../plan/resources/pod-identity-absent.js'
import { queueAbsent } from '../plan/resources/sqs-queue-absent.js'
import { recordedIngressRestore } from '../plan/resources/recorded-ingress.js'
import { recordedTagsRestore } from '../plan/resources/recorded-tags.js'
import { ruleAbsent } from '../plan/resources/event-rule-absent.js'
import type { Resource } from '../plan/types.js'
import { installNames, OWNERSHIP, ownershipTags } from '../desired/install.js'
import { interruptionRules } from '../desired/interruption.js'
import { MANAGED_LABEL } from '../desired/karpenter.js'
import { TENANT_KEY } from '../desired/tenant.js'
import { tenantRemoveResources } from '../plan/tenant-removal.js'

export interface TeardownOptions {
  keepCrds: boolean
  sweep: boolean
  timeoutMs: number
}

interface HelmSecret {
  metadata: { namespace: string; labels?: Record<string, string> }
}

/** Tenants: their NodePools, and their roles (a remove that stopped after the NodePool left only the role). */
async function tenantsOf(ctx: RunContext, facts: Facts): Promise<string[]> {
  const c = ctx.options.clusterName
  const pools = facts.kube.nodePools.ok ? facts.kube.nodePools.value : []
  const fromPools = pools.map((p) => p.metadata.labels?.[TENANT_KEY]).filter((t): t is string => !!t)
  const roles = await ctx.aws.all<iam.ListRolesCommandOutput, iam.Role>(
    'iam',
    'ListRoles',
    {},
    'Marker',
    (o) => ({ items: o.Roles, next: o.IsTruncated ? o.Marker : undefined }),
  )
  const prefix = `KarpenterNodeRole-${c}-`
  const fromRoles = roles
    .map((r) => r.RoleName ?? '')
    .filter((n) => n.startsWith(prefix))
    .map((n) => n.slice(prefix.length))
  return [...new Set([...fromPools, ...fromRoles])].sort()
}

export async function teardownResources(
  ctx: RunContext,
  facts: Facts,
  o: TeardownOptions,
): Promise<Resource[]> {
  const c = ctx.options.clusterName
  const accountId = facts.meta.accountId ?? ''
  const partition = facts.meta.partition
  const tags = ownershipTags(c)
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const accessEntries =
    cluster?.authenticationMode === 'API' || cluster?.authenticationMode === 'API_AND_CONFIG_MAP'
  const n = installNames({
    clusterName: c,
    region: ctx.options.region,
    accountId,
    partition,
    nodeRole: { create: true },
    oidcIssuer: cluster?.oidcIssuer,
  } as Parameters<typeof installNames>[0])
  const helmSecrets = await ctx.kube.get<{ items: HelmSecret[] }>(
    `/api/v1/secrets?labelSelector=${encodeURIComponent(`owner=helm,${OWNERSHIP.managedBy}=karpctl`)}`,
  )
  const releaseNs = facts.kube.release.ok ? facts.kube.release.value?.namespace : undefined
  const namespaceOf = (release: string) =>
    helmSecrets?.items.find((x) => x.metadata.labels?.name === release)?.metadata.namespace ??
    releaseNs ??
    'kube-system'
  const ns = namespaceOf('karpenter')
  const helmLabels = { [OWNERSHIP.managedBy]: 'karpctl' }

  const out: Resource[] = []
  const tenantGone: string[] = []
  const tenantPass: string[] = []
  // Names are discovered from the running install (the ServiceAccount's role, the queue in the settings,
  // the rules that target it), never only assumed: an eksctl role `<c>-karpenter` holds the tenants'
  // grants. karpctl's conventional names are planned too, for what a half-finished install left.
  const found = discovered(facts)
  const controllerRoleName = found.controllerRole ?? n.controllerRoleName
  const install = {
    clusterName: c,
    accountId,
    partition,
    controllerRoleName,
    access: accessEntries ? ('access-entry' as const) : ('aws-auth' as const),
    base: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [] },
  }
  for (const t of await tenantsOf(ctx, facts)) {
    const rs = prefixed(`tenant.${t}.`, tenantRemoveResources(install, t, o.timeoutMs))
    for (const r of rs) r.group = `Tenant ${t}`
    out.push(...rs)
    tenantGone.push(`tenant.${t}.kube.ec2nodeclass.tenant`, `tenant.${t}.kube.nodepool.tenant`)
    tenantPass.push(`tenant.${t}.iam-policy.tenant-passrole`)
  }

  const sel = encodeURIComponent('karpenter.sh/nodepool=default')
  const managed = { [MANAGED_LABEL]: 'karpctl' }
  out.push(
    kubeObjectAbsent({
      address: 'kube.nodepool.default',
      kind: 'NodePool',
      name: 'default',
      path: '/apis/karpenter.sh/v1/nodepools/default',
      labels: managed,
      dependsOn: [],
      waitGone: {
        paths: [
          `/apis/karpenter.sh/v1/nodeclaims?labelSelector=${sel}`,
          `/api/v1/nodes?labelSelector=${sel}`,
        ],
        timeoutMs: o.timeoutMs,
        what: 'NodeClaims and nodes',
      },
    }),
    kubeObjectAbsent({
      address: 'kube.ec2nodeclass.default',
      kind: 'EC2NodeClass',
      name: 'default',
      path: '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default',
      labels: managed,
      dependsOn: ['kube.nodepool.default'],
      // Karpenter deletes the class's instance profile, then lifts its finalizer: the controller must
      // still run then (issue 33: uninstalled first, the CRD release's uninstall hung on it).
      waitSelf: karpenterLifts(o.timeoutMs, ns),
    }),
  )
  const capacityGone = ['kube.nodepool.default', 'kube.ec2nodeclass.default', ...tenantGone]
  out.push(
    helmReleaseAbsent({
      address: 'helm.karpenter',
      release: 'karpenter',
      namespace: ns,
      labels: helmLabels,
      dependsOn: capacityGone,
    }),
  )
  if (!o.keepCrds)
    out.push(
      helmReleaseAbsent({
        address: 'helm.karpenter-crd',
        release: 'karpenter-crd',
        namespace: namespaceOf('karpenter-crd'),
        labels: helmLabels,
        dependsOn: ['helm.karpenter'],
        handedCrdsOf: c,
      }),
      handedCrdsRestore({ clusterName: c, dependsOn: ['helm.karpenter-crd'] }),
    )
  const afterController = ['helm.karpenter']
  // What doctor --fix repaired is given back when the install it repaired goes too: karpctl's release
  // is removed here, or no Karpenter runs any more (a re-run after the release went).
  const release = facts.kube.release.ok ? facts.kube.release.value : undefined
  // A controller Argo CD, Flux or kubectl applied still runs without a release: it keeps its repairs.
  const rendered = facts.kube.rendered
  const noneRuns = release === null && (rendered === undefined || (rendered.ok && rendered.value === null))
  const repairs = helmSecrets?.items.some((x) => x.metadata.labels?.name === 'karpenter') === true || noneRuns
  out.push(queueAbsent({ name: n.queueName, ownership: tags, repairs, dependsOn: afterController }))
  if (found.queue && found.queue !== n.queueName)
    out.push({
      ...queueAbsent({ name: found.queue, ownership: tags, repairs, dependsOn: afterController }),
      address: 'sqs-queue.interruption-found',
    })
  const conventional = interruptionRules(c)
  for (const r of conventional)
    out.push(ruleAbsent({ key: r.key, name: r.name, ownership: tags, dependsOn: afterController }))
  for (const name of found.rules.filter((r) => !conventional.some((x) => x.name === r)))
    out.push(ruleAbsent({ key: `found.${name}`, name, ownership: tags, dependsOn: afterController }))
  out.push(
    podIdentityAbsent({
      clusterName: c,
      namespace: ns,
      serviceAccount: found.serviceAccount ?? 'karpenter',
      ownership: tags,
      dependsOn: afterController,
    }),
  )
  const controllerDeps = [...afterController, 'eks-pod-identity.controller', ...tenantPass]
  out.push(
    iamRoleAbsent({
      address: 'iam-role.controller',
      name: n.controllerRoleName,
      ownership: tags,
      repairs,
      dependsOn: controllerDeps,
    }),
  )
  if (controllerRoleName !== n.controllerRoleName)
    out.push(
      iamRoleAbsent({
        address: 'iam-role.controller-found',
        name: controllerRoleName,
        ownership: tags,
        repairs,
        dependsOn: controllerDeps,
      }),
    )
  const nodeAccess = prefixed('install.', [
    ...(accessEntries
      ? [
          accessEntryAbsent({
            clusterName: c,
            principalArn: n.nodeRoleArn,
            ownership: tags,
            dependsOn: ['kube.ec2nodeclass.default'],
          }),
        ]
      : []),
    awsAuthEntryAbsent({ roleArn: n.nodeRoleArn, dependsOn: ['kube.ec2nodeclass.default'] }),
  ])
  out.push(...nodeAccess)
  out.push(
    iamRoleAbsent({
      address: 'iam-role.node',
      name: n.nodeRoleName,
      ownership: tags,
      repairs,
      dependsOn: ['kube.ec2nodeclass.default', ...afterController, ...nodeAccess.map((r) => r.address)],
    }),
  )
  if (n.oidcProviderArn)
    out.push(
      oidcProviderAbsent({
        arn: n.oidcProviderArn,
        ownership: tags,
        keepRoles: [n.controllerRoleName],
        dependsOn: ['iam-role.controller'],
      }),
    )
  const restoreAfter = [...afterController, ...capacityGone]
  out.push(recordedTagsRestore({ clusterName: c, vpcId: cluster?.vpcId, repairs, dependsOn: restoreAfter }))
  out.push(recordedIngressRestore({ vpcId: cluster?.vpcId, repairs, dependsOn: restoreAfter }))
  out.push(autoscalerRestore({ dependsOn: afterController }))
  out.push(orphanSweep({ clusterName: c, sweep: o.sweep, dependsOn: afterController }))
  out.push(spotRoleKept(facts))
  return out
}

/** What the running install is made of, as doctor's collectors found it. */
export function discovered(facts: Facts): {
  controllerRole: string | null
  queue: string | null
  rules: string[]
  serviceAccount: string | null
} {
  const queue = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const rules = facts.events.rules.ok ? facts.events.rules.value : []
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  return {
    controllerRole: facts.iam.controllerRoleName,
    queue: queue?.name ?? null,
    // Only the rules that deliver to this install's queue: another cluster's rules are never candidates.
    rules: queue ? rules.filter((r) => r.targetArns.includes(queue.arn)).map((r) => r.name) : [],
    serviceAccount: sa?.metadata.name ?? null,
  }
}

/** Account-wide: other clusters' spot capacity needs it. Said in the plan, never deleted. */
function spotRoleKept(facts: Facts): Resource<null> {
  const exists = facts.iam.spotServiceLinkedRole.ok && facts.iam.spotServiceLinkedRole.value
  return {
    address: 'iam-service-linked-role.spot',
    kind: 'IAM service-linked role',
    name: 'AWSServiceRoleForEC2Spot',
    group: 'IAM',
    dependsOn: [],
    desired: { kept: true },
    permissions: [],
    observe: async () => null,
    verdict: () => ({
      action: 'unchanged',
      changes: [],
      note: exists ? 'kept: account-wide, other clusters may launch spot with it' : 'not present',
    }),
    apply: async () => {},
  }
}
