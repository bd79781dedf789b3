// The field corpus's second round (issue 35, C): the checks that had no field scenario first
// (toleration-value-types, sts-regional-annotation, helm-release, crd-conversion-webhook, ebs-kms-key,
// tenant-isolation, pod-identity, sg-webhook-8443, controller-ready, cluster-autoscaler,
// helm-registry-auth), then a second way users break the others, and healthy shapes other tools make.
// Each from a report found with the search tool (cited in `source`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateTagsCommand, RevokeSecurityGroupIngressCommand } from '@aws-sdk/client-ec2'
import { CreateNodegroupCommand } from '@aws-sdk/client-eks'
import { UpdateAssumeRolePolicyCommand } from '@aws-sdk/client-iam'
import { DisableKeyCommand, ScheduleKeyDeletionCommand } from '@aws-sdk/client-kms'
import { clusterAutoscalerDeployment } from '../../helpers/facts.js'
import { controllerTrustPolicy, webhookIngressPermission, type Bed } from '../bed/index.js'
import {
  deleteRulesMatching,
  detachNodePolicy,
  dropSid,
  editManagedPolicy,
  NODE_CLASS,
  nodeClassKey,
  policyWith,
  pool,
  seedNet,
  upgradeValues,
  type Ctx,
  type Scenario,
} from './scenario.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
const SERVICE_ACCOUNT = '/api/v1/namespaces/kube-system/serviceaccounts/karpenter'
const DEPLOY = '/apis/apps/v1/namespaces/kube-system/deployments/karpenter'
const CAS = '/apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler-aws-cluster-autoscaler'

/** A helm upgrade the API server refuses (the break users hit): its failed revision is what doctor reads. */
const failedUpgrade = (bed: Bed, args: string[]) => upgradeValues(bed, args).catch(() => undefined)

const TOLERATION =
  'tolerations[0].key=dedicated,tolerations[0].operator=Equal,tolerations[0].effect=NoSchedule'
const STS = 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints'

/** The 1.0.x CRDs' conversion webhook, left on a CRD of the 1.14.1 chart (what Helm's adoption keeps). */
const conversionWebhook = (namespace: string) => ({
  spec: {
    conversion: {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1beta1', 'v1'],
        clientConfig: { service: { name: 'karpenter', namespace, port: 8443 } },
      },
    },
  },
})
const noConversion =
  (crd: string) =>
  async ({ bed }: Ctx) => {
    await bed.kube.mergePatch(`${CRDS}/${crd}`, { spec: { conversion: { strategy: 'None', webhook: null } } })
  }

/** A tenant NodePool on its own EC2NodeClass (a copy of the default one, same node role). */
async function tenantPool(c: Ctx, tenant: string, marked: boolean) {
  const nc = (await c.bed.kube.get(NODE_CLASS))!
  await c.bed.kube.apply({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: `tenant-${tenant}` },
    spec: nc.spec,
  })
  const np = (await c.bed.kube.get(pool))!
  const spec = np.spec as { template: { spec: Record<string, unknown>; metadata?: unknown } }
  await c.bed.kube.apply({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: `tenant-${tenant}`, labels: { 'karpctl.io/tenant': tenant } },
    spec: {
      ...spec,
      template: {
        ...(marked ? { metadata: { labels: { 'karpctl.io/tenant': tenant } } } : {}),
        spec: {
          ...spec.template.spec,
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: `tenant-${tenant}` },
          ...(marked ? { taints: [{ key: 'karpctl.io/tenant', value: tenant, effect: 'NoSchedule' }] } : {}),
        },
      },
    },
  })
}

/** The Helm registry config of this machine (the bed's HELM_CONFIG_HOME), with `auths`. */
function helmRegistryConfig(bed: Bed, auths: Record<string, { auth: string }>) {
  const dir = join(bed.env.HELM_CONFIG_HOME!, 'registry')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths }))
}
const dropHelmRegistryConfig = async ({ bed }: Ctx) =>
  rmSync(join(bed.env.HELM_CONFIG_HOME!, 'registry'), { recursive: true, force: true })
const basic = (user: string, secret: string) => ({
  auth: Buffer.from(`${user}:${secret}`).toString('base64'),
})

/** A managed node group (moto makes its ASG) and the cluster-autoscaler chart's Deployment discovering it. */
async function clusterAutoscaler(c: Ctx, replicas: number) {
  await c.aws.eks.send(
    new CreateNodegroupCommand({
      clusterName: c.seed.clusterName,
      nodegroupName: 'system',
      nodeRole: c.seed.nodeRoleArn,
      subnets: c.seed.subnetIds,
      scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 },
    }),
  )
  await c.bed.kube.create(clusterAutoscalerDeployment(replicas, c.seed.clusterName) as never)
}
const dropClusterAutoscaler = async ({ bed }: Ctx) => {
  await bed.kube.delete(CAS)
}

export const MORE_SCENARIOS: Scenario[] = [
  // toleration-value-types
  {
    check: 'toleration-value-types',
    title: 'a toleration value true unquoted in --set (the API server refuses the Deployment)',
    source: 'aws-ia/terraform-aws-eks-blueprints#793 (karpenter: "false value cant be quoted")',
    breakIt: ({ bed }) => failedUpgrade(bed, ['--set', `${TOLERATION},tolerations[0].value=true`]),
    expect: /tolerations\[0\]\.value = true \(boolean\)/,
    fixable: true,
  },
  {
    check: 'toleration-value-types',
    title: 'a pod annotation value true unquoted (prometheus.io/scrape)',
    source:
      'cert-manager/cert-manager#7557 (the same "cannot unmarshal bool" on an annotation), aws/karpenter-provider-aws#3441',
    breakIt: ({ bed }) => failedUpgrade(bed, ['--set', 'podAnnotations.prometheus\\.io/scrape=true']),
    expect: /podAnnotations.*= true \(boolean\)/,
    fixable: true,
  },
  {
    check: 'toleration-value-types',
    title: 'healthy: the toleration value passed with --set-string',
    source: 'aws-ia/terraform-aws-eks-blueprints#793 (the workaround)',
    shape: ({ bed }) =>
      upgradeValues(bed, ['--set', TOLERATION, '--set-string', 'tolerations[0].value=true']),
    expect: /is a string/,
  },
  // sts-regional-annotation
  {
    check: 'sts-regional-annotation',
    title: 'the STS annotation set to "regional" (the env value, not "true"): the webhook ignores it',
    source:
      'aws/amazon-eks-pod-identity-webhook#110 (which annotation and value), cert-manager/cert-manager#7557',
    breakIt: ({ bed }) => upgradeValues(bed, ['--set-string', `${STS}=regional`]),
    expect: /"regional" .*not "true"\/"false"/,
    // not in --fix's table: "regional" is a string, and which boolean was meant is the user's call
  },
  {
    check: 'sts-regional-annotation',
    title:
      'the annotation in the Helm values while the platform team owns the ServiceAccount (serviceAccount.create=false)',
    source:
      'eksctl-io/eksctl#8720 (createServiceAccount: who makes the ServiceAccount), aws/karpenter-provider-aws#488',
    breakIt: async ({ bed }) => {
      await upgradeValues(bed, ['--set-string', `${STS}=true`])
      await bed.kube.mergePatch(SERVICE_ACCOUNT, {
        metadata: {
          annotations: {
            'eks.amazonaws.com/sts-regional-endpoints': null,
            'helm.sh/resource-policy': 'keep',
          },
        },
      })
      await upgradeValues(bed, [
        '--set',
        'serviceAccount.create=false',
        '--set',
        'serviceAccount.name=karpenter',
      ])
    },
    expect: /missing on the live ServiceAccount kube-system\/karpenter/,
    fixable: true,
    // helm.sh/resource-policy keep outlives the release: the next scenario's chart makes its own.
    cleanup: async ({ bed }) => {
      await bed.kube.delete(SERVICE_ACCOUNT)
    },
  },
  {
    check: 'sts-regional-annotation',
    title: 'healthy: the annotation as the string "true" (--set-string)',
    source: 'aws/amazon-eks-pod-identity-webhook#110 (the documented form)',
    shape: ({ bed }) => upgradeValues(bed, ['--set-string', `${STS}=true`]),
    expect: /"true"/,
  },
  // helm-release
  {
    check: 'helm-release',
    title: 'settings.clusterName naming another cluster (nodes tagged for it never join)',
    source: 'aws/karpenter-provider-aws#1075, #4275',
    breakIt: ({ bed }) => upgradeValues(bed, ['--set', 'settings.clusterName=demo-old']),
    expect: /clusterName/,
  },
  {
    check: 'helm-release',
    title: 'settings.clusterEndpoint kept from a recreated cluster',
    source: 'aws/karpenter-provider-aws#2423, #1634',
    breakIt: ({ bed }) =>
      upgradeValues(bed, [
        '--set',
        'settings.clusterEndpoint=https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com',
      ]),
    expect: /settings\.clusterEndpoint of release .* but cluster demo's endpoint is/,
  },
  // crd-conversion-webhook
  {
    check: 'crd-conversion-webhook',
    title:
      'the 1.0.x conversion webhook left on nodepools.karpenter.sh after an upgrade past 1.1 (port 8443 gone)',
    source:
      'aws/karpenter-provider-aws#6544 ("no service port 8443 found for service karpenter"), awslabs/eks-node-viewer#315',
    breakIt: async ({ bed }) => {
      await bed.kube.mergePatch(`${CRDS}/nodepools.karpenter.sh`, conversionWebhook('kube-system'))
    },
    expect: /nodepools\.karpenter\.sh converts through a webhook on kube-system\/karpenter:8443/,
    cleanup: noConversion('nodepools.karpenter.sh'),
  },
  {
    check: 'crd-conversion-webhook',
    title: 'the conversion webhook naming the old install namespace karpenter (its Service is gone)',
    source: 'aws/karpenter-provider-aws#6544 (the CRDs rewritten to namespace karpenter), #7124',
    breakIt: async ({ bed }) => {
      await bed.kube.mergePatch(`${CRDS}/ec2nodeclasses.karpenter.k8s.aws`, conversionWebhook('karpenter'))
    },
    expect: /ec2nodeclasses\.karpenter\.k8s\.aws converts through a webhook on karpenter\/karpenter:8443/,
    cleanup: noConversion('ec2nodeclasses.karpenter.k8s.aws'),
  },
  // ebs-kms-key
  {
    check: 'ebs-kms-key',
    title: 'kmsKeyID naming a disabled key (Client.InvalidKMSKey.InvalidState)',
    source: 'aws/karpenter-provider-aws#5039, #1407',
    breakIt: (c) => nodeClassKey(c, (kms, KeyId) => kms.send(new DisableKeyCommand({ KeyId }))),
    expect: /is Disabled, not Enabled/,
  },
  {
    check: 'ebs-kms-key',
    title: 'kmsKeyID naming a key scheduled for deletion',
    source: 'aws/karpenter-provider-aws#5039, #3767',
    breakIt: (c) =>
      nodeClassKey(c, (kms, KeyId) =>
        kms.send(new ScheduleKeyDeletionCommand({ KeyId, PendingWindowInDays: 7 })),
      ),
    expect: /is PendingDeletion, not Enabled/,
  },
  // tenant-isolation
  {
    check: 'tenant-isolation',
    title: 'a tenant NodePool that neither taints nor labels its nodes',
    source:
      'kubernetes-sigs/karpenter#1102 and Karpenter docs "Restrict Instance Types / taints" (tenants by taint)',
    breakIt: async (c) => {
      await tenantPool(c, 'acme', false)
    },
    expect: /tenant acme: NodePool tenant-acme is not isolated/,
    afterFix: {
      warn: /tenant acme shares node role KarpenterNodeRole-demo with non-tenant NodePool default/,
      why: 'the break put the tenant on the default role: true, and the two-tenant scenario below repairs it',
    },
  },
  {
    check: 'tenant-isolation',
    title: "two tenants on one node role (each tenant gets the other's IAM)",
    source: 'aws/karpenter-provider-aws#3327 (one node role per NodePool/tenant)',
    breakIt: async (c) => {
      await tenantPool(c, 'acme', true)
      await tenantPool(c, 'globex', true)
    },
    expect: /tenants acme, globex share node role KarpenterNodeRole-demo/,
  },
  // pod-identity, sg-webhook-8443: healthy shapes (moto has no Pod Identity API; 8443 is 1.0.x's)
  {
    check: 'pod-identity',
    title: 'healthy: IRSA (the getting-started guide before v1.x Pod Identity): nothing to associate',
    source: 'aws/karpenter-provider-aws#5645 (Pod Identity vs IRSA installs)',
    shape: async () => {},
    expect: /IRSA|eks\.amazonaws\.com\/role-arn|Pod Identity/,
  },
  {
    check: 'sg-webhook-8443',
    title: 'healthy: no tcp/8443 rule on a 1.14.1 install (no webhooks since 1.1)',
    source: 'aws/karpenter-provider-aws#6544, #7378 (the 1.0.x webhooks on 8443)',
    shape: async ({ aws, seed }) => {
      await aws.ec2
        .send(
          new RevokeSecurityGroupIngressCommand({
            GroupId: seed.nodeSecurityGroupId,
            IpPermissions: [webhookIngressPermission(seedNet(seed))],
          }),
        )
        .catch(() => undefined)
    },
    expect: /webhook|1\.1|8443/,
  },
  // controller-ready
  {
    check: 'controller-ready',
    title: 'the controller scaled to 0 (during a migration, never scaled back)',
    source: 'aws/karpenter-provider-aws#2707 (troubleshooting: controller replicas and node groups)',
    breakIt: async ({ bed }) => {
      await bed.kube.mergePatch(DEPLOY, { spec: { replicas: 0 } })
    },
    expect: /scaled to 0 replicas/,
  },
  // cluster-autoscaler
  {
    check: 'cluster-autoscaler',
    title: 'cluster-autoscaler discovering the managed node groups beside Karpenter',
    source: 'aws/karpenter-provider-aws#2543 (CAS and Karpenter racing for the same pods)',
    breakIt: (c) => clusterAutoscaler(c, 1),
    status: 'warn',
    expect: /scales .* \(node group system\) while Karpenter provisions/,
    cleanup: dropClusterAutoscaler,
  },
  {
    check: 'cluster-autoscaler',
    title: 'healthy: cluster-autoscaler kept at 0 replicas (the migrating-from-cas guide)',
    source: 'awslabs/cdk-eks-blueprints#1239; karpenter.sh migrating-from-cas "Remove CAS"',
    shape: (c) => clusterAutoscaler(c, 0),
    expect: /scaled to 0 replicas/,
    cleanup: dropClusterAutoscaler,
  },
  // helm-registry-auth
  {
    check: 'helm-registry-auth',
    title: 'a stale public.ecr.aws login in the Helm registry config (403 Forbidden on pull)',
    source: 'aws/karpenter-provider-aws#3441, #6357, PR #3880',
    breakIt: async ({ bed }) =>
      helmRegistryConfig(bed, { 'public.ecr.aws': basic('AWS', 'eyJwYXlsb2FkIjoi') }),
    status: 'warn',
    expect: /stores credentials for public\.ecr\.aws/,
    cleanup: dropHelmRegistryConfig,
  },
  {
    check: 'helm-registry-auth',
    title: 'healthy: a login to a private ECR registry only',
    source: 'eksctl-io/eksctl#6465 (a private ECR login beside the public chart)',
    shape: async ({ bed }) =>
      helmRegistryConfig(bed, {
        '123456789012.dkr.ecr.us-west-2.amazonaws.com': basic('AWS', 'eyJwYXlsb2FkIjoi'),
      }),
    expect: /stores no credentials for public\.ecr\.aws/,
    cleanup: dropHelmRegistryConfig,
  },
  // a second way users break the founding checks
  {
    check: 'node-role',
    title:
      'aws-auth mapRoles "[]" (terraform yamlencode of no roles): the kubectl mapping must stay valid YAML',
    source:
      'terraform-aws-modules/terraform-aws-eks#579 (aws-auth formatting), aws-quickstart/quickstart-amazon-eks#7 (flow lists)',
    breakIt: async ({ bed }) => {
      await bed.kube.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'aws-auth', namespace: 'kube-system' },
        data: { mapRoles: '[]', mapUsers: '[]' },
      })
    },
    expect: /no cluster access|aws-auth/,
    fixable: true,
  },
  {
    check: 'node-role',
    title: 'terraform-quoted aws-auth entry with username system:node:{{SessionName}}',
    source:
      'aws/karpenter-provider-aws#7508; terraform-aws-modules/terraform-aws-eks#579 (quoted yamlencode keys)',
    breakIt: async ({ bed, seed }) => {
      await bed.kube.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'aws-auth', namespace: 'kube-system' },
        data: {
          mapRoles: `- "groups":\n  - "system:masters"\n  "rolearn": "arn:aws:iam::${seed.accountId}:role/Admin"\n  "username": "admin"\n- "groups":\n  - "system:bootstrappers"\n  - "system:nodes"\n  "rolearn": "${seed.nodeRoleArn}"\n  "username": "system:node:{{SessionName}}"\n`,
        },
      })
    },
    expect: /username system:node:\{\{SessionName\}\}/,
  },
  {
    check: 'node-role',
    title: 'the ECR pull policy detached from the node role (image pulls fail)',
    source: 'aws/karpenter-provider-aws#6303, terraform-aws-modules/terraform-aws-eks#3037',
    breakIt: detachNodePolicy('AmazonEC2ContainerRegistryPullOnly'),
    expect: /AmazonEC2ContainerRegistry/,
    fixable: true,
  },
  {
    check: 'interruption-queue',
    title: 'settings.interruptionQueue naming a queue that does not exist while the rules deliver to demo',
    source: 'aws/karpenter-provider-aws#5645 (interruptionQueue "Karpenter-k1"), issue 35 item 3',
    breakIt: ({ bed }) => upgradeValues(bed, ['--set', 'settings.interruptionQueue=Karpenter-demo']),
    expect: /Karpenter-demo/,
    fixable: true,
  },
  {
    check: 'interruption-rules',
    title: 'a rule deleted (spot interruption warnings never sent)',
    source: 'aws/karpenter-provider-aws#7209, #5536',
    // The rule by what it matches, not by name: after a fix it may carry install's name.
    breakIt: ({ aws }) => deleteRulesMatching(aws, 'Spot Instance Interruption'),
    expect: /rule|Spot/i,
    fixable: true,
  },
  {
    check: 'irsa-trust-policy',
    title:
      'the trust names the OIDC provider of a cluster since recreated (AssumeRoleWithWebIdentity denied)',
    source: 'aws/karpenter-provider-aws#3014 (WebIdentityErr), #1421',
    breakIt: async ({ aws, seed }) => {
      const old = seed.oidcIssuer.replace(/id\/[^/]+$/, 'id/0123456789ABCDEF0123456789ABCDEF')
      const oldArn = seed.oidcProviderArn.replace(/id\/[^/]+$/, 'id/0123456789ABCDEF0123456789ABCDEF')
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyDocument: controllerTrustPolicy(oldArn, old, 'system:serviceaccount:kube-system:karpenter'),
        }),
      )
    },
    expect: /OIDC|oidc/,
    // not in --fix's table (it narrows a trust to the running ServiceAccount): another cluster's
    // provider in the trust is the user's to replace; the printed trust does it
  },
  {
    check: 'passrole-node-role',
    title: 'PassRole scoped to the old node role name after the EC2NodeClass was pointed at another role',
    source: 'aws/karpenter-provider-aws#5444, #6298',
    breakIt: async ({ aws, seed }) =>
      editManagedPolicy(aws, policyWith(seed, 'IAMIntegration'), (doc) => {
        for (const st of doc.Statement as { Sid?: string; Resource?: unknown }[])
          if (st.Sid === 'AllowPassingInstanceRole')
            st.Resource = `arn:aws:iam::${seed.accountId}:role/KarpenterNodeRole-demo-old`
      }),
    expect: /may not pass KarpenterNodeRole-demo to EC2/,
    fixable: true,
  },
  {
    check: 'controller-policy',
    title: 'the SSM read statement dropped (AMI discovery fails: "failed to discover any AMIs")',
    source: 'aws/karpenter-provider-aws#5039, #6298 (trimmed controller policies)',
    breakIt: async ({ aws, seed }) =>
      editManagedPolicy(aws, policyWith(seed, 'ResourceDiscovery'), dropSid('AllowSSMReadActions')),
    expect: /ssm:GetParameter/,
    fixable: true,
  },
  {
    check: 'discovery-tags',
    title: 'subnets tagged karpenter.sh/discovery for another cluster (tags copied from a sibling cluster)',
    source: 'aws/karpenter-provider-aws#1075 (cluster name mismatch in tags), eksctl-io/eksctl#4806',
    breakIt: async ({ aws, seed }) => {
      await aws.ec2.send(
        new CreateTagsCommand({
          Resources: seed.subnetIds,
          Tags: [{ Key: 'karpenter.sh/discovery', Value: 'demo-staging' }],
        }),
      )
    },
    expect: /subnet/i,
    // not in --fix's table (it adds a missing tag): retagging subnets another cluster's tag names is
    // the user's call (they may be that cluster's); the printed create-tags does it
  },
  {
    check: 'discovery-tags',
    title:
      'healthy: subnets and security groups selected by id (terraform outputs), no discovery tags needed',
    source: 'aws/karpenter-provider-aws#1558 (selecting subnets without tags)',
    shape: async ({ bed, seed }) => {
      await bed.kube.mergePatch(NODE_CLASS, {
        spec: {
          subnetSelectorTerms: seed.subnetIds.map((id) => ({ id })),
          securityGroupSelectorTerms: [{ id: seed.clusterSecurityGroupId }, { id: seed.nodeSecurityGroupId }],
        },
      })
    },
    expect: /subnet/i,
  },
]
