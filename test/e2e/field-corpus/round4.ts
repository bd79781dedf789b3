// The field corpus's fourth round (issue 35, A): the method's bar — for every check two ways users
// break it and one healthy shape another tool makes that a naive rule would flag. These fill the
// checks that had one break or no healthy shape; each from a report found with the search tool (cited
// in `source`). The 1.0.x scenarios run on the 1.0.14 chart and CRDs (`chart`), the only install where
// `karpenter-version` and `sg-webhook-8443` have something to say.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  DescribeImagesCommand,
  RunInstancesCommand,
  type IpPermission,
} from '@aws-sdk/client-ec2'
import { DescribeClusterCommand } from '@aws-sdk/client-eks'
import { UpdateAssumeRolePolicyCommand } from '@aws-sdk/client-iam'
import { controllerTrustPolicy, revokeWebhookIngress } from '../bed/index.js'
import {
  controllerPod,
  deletePods,
  deleteRulesMatching,
  deleteSpotRole,
  editManagedPolicy,
  nodeClassKey,
  policyWith,
  pool,
  seedNet,
  upgradeValues,
  type Ctx,
  type Scenario,
} from './scenario.js'

const SPOT_POOL = '/apis/karpenter.sh/v1/nodepools/spot'
/** The seed's 8443 rule (cluster SG → node SG) replaced by `rule` on group `groupId`. */
async function move8443({ aws, seed }: Ctx, groupId: string, rule: IpPermission) {
  await revokeWebhookIngress(aws, seedNet(seed))
  await aws.ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: groupId, IpPermissions: [rule] }))
}

/** tcp/8443 from the node group: on the cluster SG it lets nodes call the control plane, not the other way. */
const reversed8443 = (nodeSg: string) => ({
  IpProtocol: 'tcp',
  FromPort: 8443,
  ToPort: 8443,
  UserIdGroupPairs: [{ GroupId: nodeSg }],
})
/** tcp/8443 from the bed's VPC CIDR (bed/seed.ts), which holds the cluster's subnets. */
const VPC_8443 = { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, IpRanges: [{ CidrIp: '192.168.0.0/16' }] }

/** tcp/8443 from the cluster security group, as terraform-aws-eks's node group SG has it (ingress_cluster_8443_webhook). */
const fromCluster8443 = (clusterSg: string): IpPermission => ({
  IpProtocol: 'tcp',
  FromPort: 8443,
  ToPort: 8443,
  UserIdGroupPairs: [{ GroupId: clusterSg }],
})

const CONTROLLER_PODS = ['karpenter-ng-0', 'karpenter-ng-1']

/**
 * The controller's two pods on an instance of a managed node group whose own security group (not the
 * EC2NodeClass's) has `rule` or none: a moto instance with that group, its Node (the kubelet is played:
 * the providerID names the instance) and the pods bound to it. The webhook's endpoints are those pods.
 */
async function controllerOnNodeGroup(c: Ctx, rule?: IpPermission) {
  const { aws, seed } = c
  const sg = await aws.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: 'eks-demo-ng',
      Description: 'EKS managed node group demo-ng',
      VpcId: seed.vpcId,
    }),
  )
  if (rule)
    await aws.ec2.send(
      new AuthorizeSecurityGroupIngressCommand({ GroupId: sg.GroupId, IpPermissions: [rule] }),
    )
  const image = (await aws.ec2.send(new DescribeImagesCommand({ Owners: ['amazon'] }))).Images?.[0]
  const run = await aws.ec2.send(
    new RunInstancesCommand({
      ImageId: image?.ImageId,
      InstanceType: 'm5.large',
      MinCount: 1,
      MaxCount: 1,
      SubnetId: seed.subnetIds[0],
      SecurityGroupIds: [sg.GroupId!],
    }),
  )
  const instance = run.Instances![0]!
  const zone = instance.Placement!.AvailabilityZone!
  const name = instance.PrivateDnsName!
  await c.bed.kube.apply({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'eks.amazonaws.com/nodegroup': 'demo-ng', 'topology.kubernetes.io/zone': zone },
    },
    spec: { providerID: `aws:///${zone}/${instance.InstanceId}` },
  })
  await deletePods(...CONTROLLER_PODS)(c)
  for (const pod of CONTROLLER_PODS) await controllerPod(c, pod, name)
}

/** A second NodePool, a copy of the default one with `edit` applied to its template's spec. */
async function secondPool(c: Ctx, name: string, edit: (spec: Record<string, unknown>) => void) {
  const np = (await c.bed.kube.get(pool))!
  const spec = structuredClone(np.spec) as { template: { spec: Record<string, unknown> } }
  edit(spec.template.spec)
  await c.bed.kube.apply({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name }, spec })
}

/** An old cluster's OIDC provider beside this one (the cluster recreated, the role kept for both). */
const oldProvider = (c: Ctx) => ({
  issuer: c.seed.oidcIssuer.replace(/id\/[^/]+$/, 'id/0123456789ABCDEF0123456789ABCDEF'),
  arn: c.seed.oidcProviderArn.replace(/id\/[^/]+$/, 'id/0123456789ABCDEF0123456789ABCDEF'),
})

export const ROUND4_SCENARIOS: Scenario[] = [
  // nodeclass-ready: a second break and a healthy shape
  {
    check: 'nodeclass-ready',
    title: 'a NodePool whose nodeClassRef names an EC2NodeClass that does not exist',
    source:
      'aws/karpenter-provider-aws#7850 and PR #7868 (NodePoolFailedToResolveNodeClass), #5699 (resolveNodeClassFromNodePool)',
    breakIt: async (c) => {
      await secondPool(c, 'general', (spec) => {
        spec.nodeClassRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'general' }
      })
    },
    expect: /NodePool general references EC2NodeClass general, which does not exist/,
    cleanup: async ({ bed }) => {
      await bed.kube.delete('/apis/karpenter.sh/v1/nodepools/general')
    },
  },
  {
    check: 'nodeclass-ready',
    title: 'healthy: limits nvidia.com/gpu: 0 on a general NodePool (no GPU nodes from it, CPU unbounded)',
    source:
      'kubernetes-sigs/karpenter NodePool limits (a resource not every node has); issue 35 item 10 (what a freeze is)',
    shape: async ({ bed }) => {
      await bed.kube.mergePatch(pool, { spec: { limits: { cpu: '1000', 'nvidia.com/gpu': '0' } } })
    },
    expect: /NodePool default uses EC2NodeClass default/,
  },
  // spot-service-linked-role: a second break
  {
    check: 'spot-service-linked-role',
    title: 'a spot NodePool added beside the on-demand default in an account without the spot role',
    source:
      'terraform-aws-modules/terraform-aws-eks#2605 and PR #2614 (spot pool, fresh account), aws-samples/eks-workshop-v2#110',
    breakIt: async (c) => {
      await secondPool(c, 'spot', (spec) => {
        spec.requirements = [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
        ]
      })
      await deleteSpotRole(c.aws, c.seed)
    },
    expect: /no EC2 Spot service-linked role/,
    fixable: true,
    cleanup: async ({ bed }) => {
      await bed.kube.delete(SPOT_POOL)
    },
  },
  // healthy shapes of the checks that had none
  {
    check: 'passrole-node-role',
    title: 'healthy: eksctl\'s PassRole on Resource "*" limited by iam:PassedToService ec2.amazonaws.com',
    source:
      'eksctl-io/eksctl pkg/cfn/builder/karpenter.go (one statement on "*"), aws/karpenter-provider-aws#6036',
    shape: async ({ aws, seed }) =>
      editManagedPolicy(aws, policyWith(seed, 'IAMIntegration'), (doc) => {
        for (const st of doc.Statement as { Sid?: string; Resource?: unknown }[])
          if (st.Sid === 'AllowPassingInstanceRole') st.Resource = '*'
      }),
    expect: /may pass KarpenterNodeRole-demo to ec2\.amazonaws\.com/,
  },
  {
    check: 'irsa-trust-policy',
    title: "healthy: the trust names the old cluster's OIDC provider and the new one's (blue/green)",
    source:
      'terraform-aws-modules/terraform-aws-iam iam-role-for-service-accounts-eks `oidc_providers` (one statement per cluster), aws/karpenter-provider-aws#3014',
    shape: async (c) => {
      const old = oldProvider(c)
      const statements = [
        controllerTrustPolicy(old.arn, old.issuer),
        controllerTrustPolicy(c.seed.oidcProviderArn, c.seed.oidcIssuer),
      ].flatMap((doc) => (JSON.parse(doc) as { Statement: unknown[] }).Statement)
      await c.aws.iam.send(
        new UpdateAssumeRolePolicyCommand({
          RoleName: c.seed.controllerRoleName,
          PolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: statements }),
        }),
      )
    },
    expect: /trusts exactly system:serviceaccount:kube-system:karpenter/,
  },
  {
    check: 'interruption-rules',
    title:
      'healthy: no "Capacity Reservation Instance Interruption Warning" rule where no capacity is reserved (terraform-aws-eks four rules)',
    source:
      'terraform-aws-modules/terraform-aws-eks modules/karpenter local.events; aws/karpenter-provider-aws PR #9019; issue 35 item 1',
    shape: ({ aws }) => deleteRulesMatching(aws, 'Capacity Reservation'),
    expect: /no rule for "EC2 Capacity Reservation Instance Interruption Warning" is needed/,
  },
  {
    check: 'helm-release',
    title: "healthy: settings.clusterEndpoint set to the cluster's own endpoint (terraform-aws-eks examples)",
    source:
      'terraform-aws-modules/terraform-aws-eks examples/karpenter (clusterEndpoint: module.eks.cluster_endpoint), aws/karpenter-provider-aws#2423',
    shape: async ({ bed, aws, seed }) => {
      const d = await aws.eks.send(new DescribeClusterCommand({ name: seed.clusterName }))
      await upgradeValues(bed, ['--set', `settings.clusterEndpoint=${d.cluster!.endpoint!}`])
    },
    expect: /settings\.clusterEndpoint of .* is the cluster's endpoint/,
  },
  {
    check: 'ebs-kms-key',
    title: "healthy: a customer managed key with the troubleshooting guide's key policy (kms:ViaService)",
    source:
      'karpenter.sh troubleshooting "Node terminates before ready on failed encrypted EBS volume"; aws/karpenter-provider-aws#5039',
    shape: (c) => nodeClassKey(c, async () => {}),
    expect: /may use KMS key .* through EC2/,
  },
  // 1.0.x: karpenter-version and sg-webhook-8443
  {
    check: 'karpenter-version',
    title: 'a 1.0.x install left on the webhook/conversion line',
    source:
      'aws/karpenter-provider-aws#6544 (1.0.x webhooks on 8443), #7124 (upgrading 1.0 to 1.1: CRDs and webhooks)',
    chart: '1.0.14',
    breakIt: async () => {
      // the seed is the break: the getting-started install of 1.0.14 as its guide made it
    },
    status: 'warn',
    expect: /Karpenter 1\.0\.14 .* is the v1\.0\.x conversion line/,
  },
  {
    check: 'sg-webhook-8443',
    title: 'a 1.0.x install without the tcp/8443 rule from the control plane (webhook calls time out)',
    source: 'aws/karpenter-provider-aws#6544, #7378 (conversion webhook "context deadline exceeded")',
    chart: '1.0.14',
    breakIt: async ({ aws, seed }) => {
      await revokeWebhookIngress(aws, seedNet(seed))
    },
    expect: /has no ingress tcp\/8443 from the cluster security group/,
    fixable: true,
  },
  {
    check: 'sg-webhook-8443',
    title:
      'the 8443 rule written the wrong way round: on the cluster security group from the node group (terraform `cluster_security_group_additional_rules`)',
    source:
      'aws/karpenter-provider-aws#1165 (the `ingress_nodes_karpenter_ports_tcp` rule on the cluster SG, source_node_security_group = true, that "worked" only beside an all-ports rule)',
    chart: '1.0.14',
    breakIt: (c) =>
      move8443(c, seedNet(c.seed).clusterSecurityGroupId, reversed8443(c.seed.nodeSecurityGroupId)),
    expect: /has no ingress tcp\/8443 from the cluster security group/,
    fixable: true,
  },
  {
    check: 'sg-webhook-8443',
    title:
      "healthy: the 8443 rule from the VPC's CIDR, not from the cluster security group (terraform `cidr_blocks`)",
    source:
      'aws/karpenter-provider-aws#1165 (the 8443 rules users write in terraform-aws-eks node_security_group_additional_rules); EKS puts the control plane network interfaces in the cluster subnets',
    chart: '1.0.14',
    shape: (c) => move8443(c, c.seed.nodeSecurityGroupId, VPC_8443),
    expect: /allows tcp\/8443 from 192\.168\.0\.0\/16, which holds the cluster's subnets/,
  },
  {
    check: 'sg-webhook-8443',
    title:
      "the controller on a managed node group whose own security group lacks tcp/8443, while the EC2NodeClass's group has it",
    source:
      "aws/karpenter-provider-aws#4350, #5133 (failed calling webhook … :8443 … context deadline exceeded); aws-samples/eks-workshop-v2#327 (Karpenter's nodes and the managed node group's do not share security groups)",
    chart: '1.0.14',
    breakIt: (c) => controllerOnNodeGroup(c),
    cleanup: deletePods(...CONTROLLER_PODS),
    expect:
      /node security group sg-[0-9a-f]+ \(the controller's node ip-[^)]+\) has no ingress tcp\/8443 from the cluster security group/,
    fixable: true,
  },
  {
    check: 'sg-webhook-8443',
    title:
      "healthy: no tcp/8443 rule on the EC2NodeClass's group, the controller's node group SG has it (terraform-aws-eks's node security group)",
    source:
      "terraform-aws-modules/terraform-aws-eks#2323 (the 8443 webhook rule from the control plane is among the node security group's recommended rules, for the pods on those nodes); aws-samples/eks-workshop-v2#327",
    chart: '1.0.14',
    shape: async (c) => {
      await revokeWebhookIngress(c.aws, seedNet(c.seed))
      await controllerOnNodeGroup(c, fromCluster8443(c.seed.clusterSecurityGroupId))
    },
    cleanup: deletePods(...CONTROLLER_PODS),
    expect: /^sg-[0-9a-f]+ allows tcp\/8443 from sg-[0-9a-f]+$/,
  },
  {
    check: 'crd-conversion-webhook',
    title: "healthy: a 1.0.x install's CRDs converting through its own live Service karpenter:8443",
    source:
      'aws/karpenter-provider-aws#6544 (the 1.0.x CRDs name kube-system/karpenter:8443; only a Service that is gone breaks them)',
    chart: '1.0.14',
    shape: async () => {
      // the seed is the shape: the 1.0.14 chart's crds/ as Helm installed them, beside the release
    },
    expect: /converts through kube-system\/karpenter:8443, which its Service serves/,
  },
]
