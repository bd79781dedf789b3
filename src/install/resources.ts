// From an install spec to the resources of its plan: the one place that knows what a Karpenter
// install is made of. doctor --fix, tenants and teardown build on the same resources.
import { KARPENTER_CHART, KARPENTER_CRD_CHART } from '../checks/lib/compat.js'
import {
  controllerPolicies,
  hasWebhooks,
  installNames,
  ownershipTags,
  OWNERSHIP,
  type InstallSpec,
} from '../desired/install.js'
import { adoptionTags } from '../desired/ownership.js'
import { QUEUE_ATTRIBUTES, queuePolicy, RULE_TARGET_ID } from '../desired/interruption.js'
import {
  defaultNodeClass,
  defaultNodePool,
  helmValues,
  MANAGED_LABEL,
  requiredValues,
} from '../desired/karpenter.js'
import { irsaTrust, nodeTrust, podIdentityTrust } from '../desired/trust.js'
import { awsAuthEntry } from '../plan/resources/aws-auth.js'
import { clusterAutoscalerScaleDown } from '../plan/resources/cluster-autoscaler.js'
import { chartCrdNames, chartDirCrdNames, crdHandover } from '../plan/resources/crd-handover.js'
import { discoveryTags } from '../plan/resources/discovery-tags.js'
import { accessEntry, podIdentityAssociation } from '../plan/resources/eks-access.js'
import { eventRule } from '../plan/resources/event-rule.js'
import { chartDirVersion, helmRelease } from '../plan/resources/helm-release.js'
import { iamRole } from '../plan/resources/iam-role.js'
import { inUse } from '../plan/resources/in-use.js'
import { kubeObject } from '../plan/resources/kube-object.js'
import { nodeRolePolicies } from '../plan/resources/node-role-policies.js'
import { oidcProvider } from '../plan/resources/oidc-provider.js'
import { spotRole } from '../plan/resources/spot-role.js'
import { sqsQueue } from '../plan/resources/sqs-queue.js'
import { webhookIngress } from '../plan/resources/webhook-ingress.js'
import type { Resource } from '../plan/types.js'

export function installResources(s: InstallSpec, extraValues: Record<string, unknown> = {}): Resource[] {
  const n = installNames(s)
  const tags = ownershipTags(s.clusterName)
  const ownership = tags
  const clusterArn = `arn:${s.partition}:eks:${s.region}:${s.accountId}:cluster/${s.clusterName}`
  const out: Resource[] = []
  const awsSteps: string[] = []
  const add = (r: Resource, aws = true) => {
    out.push(r)
    if (aws) awsSteps.push(r.address)
  }

  // Controller identity.
  let trust = podIdentityTrust()
  const controllerDeps: string[] = []
  if (s.identity === 'irsa') {
    if (!s.oidcIssuer || !n.oidcProviderArn) throw new Error('IRSA needs the cluster OIDC issuer')
    add(oidcProvider({ issuer: s.oidcIssuer, arn: n.oidcProviderArn, tags }))
    controllerDeps.push('iam-oidc-provider.cluster')
    trust = irsaTrust(n.oidcProviderArn, s.oidcIssuer, s.namespace, s.serviceAccount)
  }
  add(
    s.existing
      ? inUse({
          address: 'iam-role.controller',
          kind: 'IAM role',
          name: n.controllerRoleName,
          group: 'IAM',
          found: `the controller runs as it: ${s.identity === 'irsa' ? 'IRSA annotation' : 'Pod Identity association'}`,
          problems: s.existing.controllerProblems,
          repair:
            "karpctl does not rewrite another tool's role: run `karpctl doctor --fix` (or change it where it is defined), then install again",
        })
      : iamRole({
          address: 'iam-role.controller',
          name: n.controllerRoleName,
          arn: n.controllerRoleArn,
          description: `Karpenter controller of EKS cluster ${s.clusterName} (karpctl)`,
          trust,
          managed: [],
          inline: controllerPolicies(s).map((p) => ({ name: p.name, document: p.document })),
          tags,
          ownership,
          adopt: s.adopt,
          dependsOn: controllerDeps,
          notOursHint:
            'pass --adopt to take it over (karpctl then adds what it lacks, recorded, and gives it back on teardown)',
        }),
  )
  if (s.existing) out[out.length - 1]!.dependsOn = controllerDeps
  if (s.identity === 'pod-identity')
    add(
      podIdentityAssociation({
        clusterName: s.clusterName,
        clusterArn,
        namespace: s.namespace,
        serviceAccount: s.serviceAccount,
        roleArn: n.controllerRoleArn,
        tags,
        ownership,
        adopt: s.adopt,
        dependsOn: ['iam-role.controller'],
      }),
    )

  // Nodes: their role and its access to the cluster.
  const nodeDeps: string[] = []
  if (s.nodeRole.create) {
    add(
      iamRole({
        address: 'iam-role.node',
        name: n.nodeRoleName,
        arn: n.nodeRoleArn,
        description: `Nodes Karpenter launches for EKS cluster ${s.clusterName} (karpctl)`,
        trust: nodeTrust(s.partition),
        managed: nodeRolePolicies(s.partition),
        inline: [],
        tags,
        ownership,
        adopt: s.adopt,
        notOursHint: `pass --node-role ${n.nodeRoleName} to reuse it as it is, or --adopt to take it over`,
      }),
    )
    nodeDeps.push('iam-role.node')
    const access =
      s.access === 'access-entry'
        ? accessEntry({
            clusterName: s.clusterName,
            principalArn: n.nodeRoleArn,
            clusterArn,
            tags,
            dependsOn: [...nodeDeps],
          })
        : awsAuthEntry({
            roleArn: n.nodeRoleArn,
            dependsOn: [...nodeDeps],
            managedLabel: [MANAGED_LABEL, 'karpctl'],
          })
    add(access, s.access === 'access-entry')
    nodeDeps.push(access.address)
  }
  if (s.nodePool.capacityTypes.includes('spot')) add(spotRole(s.accountId, s.partition))

  // Interruption handling.
  if (s.interruption) {
    add(
      sqsQueue({
        name: n.queueName,
        arn: n.queueArn,
        attributes: { ...QUEUE_ATTRIBUTES },
        policy: queuePolicy(n.queueArn),
        tags,
        ownership,
        adopt: s.adopt,
      }),
    )
    for (const r of n.rules)
      add(
        eventRule({
          key: r.key,
          name: r.name,
          arn: `arn:${s.partition}:events:${s.region}:${s.accountId}:rule/${r.name}`,
          eventPattern: r.eventPattern,
          queueArn: n.queueArn,
          targetId: RULE_TARGET_ID,
          tags,
          ownership,
          adopt: s.adopt,
        }),
      )
  }

  // Network.
  add(
    discoveryTags({
      clusterName: s.clusterName,
      subnetIds: s.subnetIds,
      securityGroupIds: s.securityGroupIds,
      region: s.region,
      accountId: s.accountId,
      partition: s.partition,
    }),
  )
  if (hasWebhooks(s.karpenterVersion) && s.clusterSecurityGroupId)
    for (const sg of s.securityGroupIds.filter((g) => g !== s.clusterSecurityGroupId))
      add(
        webhookIngress({
          nodeGroupId: sg,
          clusterGroupId: s.clusterSecurityGroupId,
          arn: `arn:${s.partition}:ec2:${s.region}:${s.accountId}:security-group/${sg}`,
        }),
      )

  // Kubernetes: charts, then the default EC2NodeClass and NodePool.
  const chart = (name: string, oci: string) =>
    s.chartDir
      ? {
          chart: `${s.chartDir}/${name}`,
          version: undefined,
          expectedVersion: chartDirVersion(`${s.chartDir}/${name}`),
        }
      : { chart: oci, version: s.karpenterVersion, expectedVersion: s.karpenterVersion }
  const labels = { [OWNERSHIP.managedBy]: 'karpctl' }
  const adoptLabels = adoptionTags(s.clusterName)
  // CRDs an earlier install made (the karpenter chart's crds/ folder) must carry the CRD release's
  // marks before helm installs that release over them; where none exist the step changes nothing.
  out.push(
    crdHandover({
      clusterName: s.clusterName,
      namespace: s.namespace,
      names: s.chartDir ? chartDirCrdNames(`${s.chartDir}/karpenter-crd`) : chartCrdNames(s.karpenterVersion),
      adopt: s.adopt,
      dependsOn: [],
    }),
    helmRelease({
      address: 'helm.karpenter-crd',
      release: 'karpenter-crd',
      namespace: s.namespace,
      chartName: 'karpenter-crd',
      ...chart('karpenter-crd', KARPENTER_CRD_CHART),
      values: {},
      labels,
      adoptLabels,
      adopt: s.adopt,
      dependsOn: ['crd-handover.karpenter-crd'],
    }),
  )
  // An install karpctl did not make keeps its own values (controller.resources, tolerations…) as the base.
  const values = deepMerge(
    s.existing ? deepMerge(s.existing.releaseValues, requiredValues(s)) : helmValues(s),
    extraValues,
  )
  if (s.scaleDownClusterAutoscaler)
    out.push(clusterAutoscalerScaleDown({ ...s.scaleDownClusterAutoscaler, dependsOn: ['helm.karpenter'] }))
  out.push(
    helmRelease({
      address: 'helm.karpenter',
      release: 'karpenter',
      namespace: s.namespace,
      chartName: 'karpenter',
      ...chart('karpenter', KARPENTER_CHART),
      values,
      labels,
      adoptLabels,
      adopt: s.adopt,
      unique: true,
      // The controller starts with everything it needs already in AWS.
      dependsOn: ['helm.karpenter-crd', ...awsSteps],
    }),
  )
  const owner: [string, string] = [MANAGED_LABEL, 'karpctl']
  out.push(
    kubeObject({
      address: 'kube.ec2nodeclass.default',
      object: defaultNodeClass(s),
      ownerLabel: owner,
      adopt: s.adopt,
      dependsOn: ['helm.karpenter-crd', 'ec2-tags.discovery', ...nodeDeps],
    }),
    kubeObject({
      address: 'kube.nodepool.default',
      object: defaultNodePool(s),
      ownerLabel: owner,
      adopt: s.adopt,
      dependsOn: ['kube.ec2nodeclass.default'],
    }),
  )
  return out
}

/** Helm's merge: maps merge key by key, anything else from `over` replaces. */
export function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) {
    const b = out[k]
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v
  }
  return out
}
