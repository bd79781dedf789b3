// An install shaped like EKS Blueprints' addons module (aws-ia/terraform-aws-eks-blueprints-addons,
// main.tf "Karpenter", `enable_karpenter = true`, every other input default) on the guide's cluster,
// every resource made with the AWS API as the Terraform AWS provider makes it:
//
// - queue `karpenter-<cluster>` (terraform-aws-modules/sqs 4.0.1: retention 300 s, SSE-SQS, the policy
//   statement `SendEventsToQueue` for events.amazonaws.com and sqs.amazonaws.com);
// - four EventBridge rules `Karpenter-<Name>-<suffix>` (`local.ec2_events`: HealthEvent, SpotInterrupt,
//   InstanceRebalance, InstanceStateChange; no capacity-reservation rule), target `KarpenterQueueTarget`,
//   tags ClusterName + var.tags;
// - node role `karpenter-<cluster>-<suffix>` (`iam_role_use_name_prefix` true), trust sid
//   `KarpenterNodeAssumeRole`, the three policies WorkerNode / ECR read-only / CNI (no SSM), and its
//   instance profile; cluster access is the user's (the module makes none): aws-auth here;
// - the IRSA role `karpenter-<suffix>` of aws-ia/eks-blueprints-addon 1.3.0 (StringEquals on :sub and
//   :aud for karpenter/karpenter, "IRSA for Karpenter") with the policy `karpenter-<suffix>` from
//   `data.aws_iam_policy_document.karpenter` (spot termination and instance profile creation on, the
//   defaults);
// - the chart in namespace `karpenter` with the module's `karpenter_set` values (the pre-0.32
//   `settings.aws.*` beside `settings.*`, `settings.clusterEndpoint`, `serviceAccount.name`).
//
// One input is not the default: `chart_version`. The module's default, 0.37.0, is a v1beta1 release out
// of support (doctor's `karpenter-version` fails it, truly; the bed has no 0.37 chart). A 0.37 install
// goes to v1 through 1.0.x, and there the 1.0.x chart's crds/ name the conversion webhook
// kube-system/karpenter while the module installs in namespace karpenter: doctor's
// `crd-conversion-webhook` fails, truly (aws/karpenter-provider-aws#6544). The row takes 1.1.10, the
// first minor without webhooks (the 1.14.1 chart restamped, as the getting-started rows do).
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge'
import {
  AddRoleToInstanceProfileCommand,
  AttachRolePolicyCommand,
  CreateInstanceProfileCommand,
  CreatePolicyCommand,
  CreateRoleCommand,
} from '@aws-sdk/client-iam'
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
} from '@aws-sdk/client-sqs'
import type { Bed } from './bed.js'
import { guideEC2NodeClass, seedGuideCluster, seedGuideKubernetes } from './adopted-seed.js'
import { kubernetesFor, restampedChart, type MatrixInstall } from './matrix-seed.js'
import { awsClients, createSpotServiceLinkedRole, type SeedContext } from './seed.js'
import { TERRAFORM_RULES, terraformSuffix } from './terraform-seed.js'

export const BLUEPRINTS_KARPENTER = '1.1.10'

/** var.tags as the Blueprints examples set them. */
const TAGS: Record<string, string> = {
  Blueprint: 'demo',
  GithubRepo: 'github.com/aws-ia/terraform-aws-eks-blueprints',
}
const tagList = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }))

/** `local.ec2_events`: the module's name and description for each of its four rules. */
const EVENTS: Record<string, string> = {
  HealthEvent: 'AWS health event',
  SpotInterrupt: 'EC2 spot instance interruption warning',
  InstanceRebalance: 'EC2 instance rebalance recommendation',
  InstanceStateChange: 'EC2 instance state-change notification',
}

/** `data.aws_iam_policy_document.karpenter` with the defaults, as Terraform renders it (no Sid). */
export function blueprintsControllerPolicy(
  ctx: SeedContext,
  opts: { nodeRoleArn: string; queueArn: string },
): string {
  const { partition: p, region: r, accountId: a, clusterName: cn } = ctx
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'ec2:DescribeAvailabilityZones',
          'ec2:DescribeImages',
          'ec2:DescribeInstances',
          'ec2:DescribeInstanceTypeOfferings',
          'ec2:DescribeInstanceTypes',
          'ec2:DescribeLaunchTemplates',
          'ec2:DescribeSecurityGroups',
          'ec2:DescribeSpotPriceHistory',
          'ec2:DescribeSubnets',
        ],
        Resource: '*',
      },
      {
        Effect: 'Allow',
        Action: [
          'ec2:CreateFleet',
          'ec2:CreateLaunchTemplate',
          'ec2:CreateTags',
          'ec2:DeleteLaunchTemplate',
          'ec2:RunInstances',
        ],
        Resource: [`arn:${p}:ec2:${r}:${a}:*`, `arn:${p}:ec2:${r}::image/*`],
      },
      { Effect: 'Allow', Action: 'iam:PassRole', Resource: opts.nodeRoleArn },
      { Effect: 'Allow', Action: 'pricing:GetProducts', Resource: '*' },
      { Effect: 'Allow', Action: 'ssm:GetParameter', Resource: `arn:${p}:ssm:${r}::parameter/aws/service/*` },
      { Effect: 'Allow', Action: 'eks:DescribeCluster', Resource: `arn:${p}:eks:*:${a}:cluster/${cn}` },
      {
        Effect: 'Allow',
        Action: 'ec2:TerminateInstances',
        Resource: `arn:${p}:ec2:${r}:${a}:instance/*`,
        Condition: { StringLike: { [`ec2:ResourceTag/kubernetes.io/cluster/${cn}`]: '*' } },
      },
      {
        Effect: 'Allow',
        Action: ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
        Resource: opts.queueArn,
      },
      {
        Effect: 'Allow',
        Action: [
          'iam:AddRoleToInstanceProfile',
          'iam:CreateInstanceProfile',
          'iam:DeleteInstanceProfile',
          'iam:GetInstanceProfile',
          'iam:RemoveRoleFromInstanceProfile',
          'iam:TagInstanceProfile',
          'iam:ListInstanceProfiles',
        ],
        Resource: '*',
      },
    ],
  })
}

/** eks-blueprints-addon's IRSA trust (`oidc_providers.this`, StringEquals). */
function irsaTrust(oidcProviderArn: string, sub: string): string {
  const host = oidcProviderArn.replace(/^.*provider\//, '')
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: 'sts:AssumeRoleWithWebIdentity',
        Principal: { Federated: oidcProviderArn },
        Condition: { StringEquals: { [`${host}:sub`]: sub, [`${host}:aud`]: 'sts.amazonaws.com' } },
      },
    ],
  })
}

/** The addons module's Karpenter resources and release on the guide's cluster. */
export async function seedBlueprintsAddons(bed: Bed): Promise<MatrixInstall> {
  const cluster = await seedGuideCluster(bed, { kubernetesVersion: kubernetesFor(BLUEPRINTS_KARPENTER) })
  const { ctx } = cluster
  const cn = ctx.clusterName
  const aws = awsClients({ awsEndpoint: bed.awsEndpoint, region: ctx.region })
  let counter = 1
  const prefixed = (prefix: string) => `${prefix}-${terraformSuffix(counter++)}`
  const arnOf = (kind: string, name: string) => `arn:${ctx.partition}:iam::${ctx.accountId}:${kind}/${name}`

  // module.karpenter_sqs
  const queueName = `karpenter-${cn}`
  const { QueueUrl } = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: queueName,
      Attributes: { MessageRetentionPeriod: '300', SqsManagedSseEnabled: 'true' },
    }),
  )
  await aws.sqs.send(new TagQueueCommand({ QueueUrl, Tags: TAGS }))
  const queueArn = (
    await aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!
  const queuePolicy = {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'SendEventsToQueue',
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        Principal: { Service: ['sqs.amazonaws.com', 'events.amazonaws.com'] },
      },
    ],
  }
  await aws.sqs.send(
    new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: JSON.stringify(queuePolicy) } }),
  )

  // aws_cloudwatch_event_rule.karpenter + aws_cloudwatch_event_target.karpenter
  for (const spec of TERRAFORM_RULES.filter((s) => s.name in EVENTS)) {
    const Name = prefixed(`Karpenter-${spec.name}`)
    await aws.events.send(
      new PutRuleCommand({
        Name,
        Description: EVENTS[spec.name],
        EventPattern: JSON.stringify({ 'detail-type': [spec.detailType], source: [spec.source] }),
        State: 'ENABLED',
        Tags: tagList({ ClusterName: cn, ...TAGS }),
      }),
    )
    await aws.events.send(
      new PutTargetsCommand({ Rule: Name, Targets: [{ Id: 'KarpenterQueueTarget', Arn: queueArn }] }),
    )
  }

  // aws_iam_role.karpenter (the node role), its attachments and aws_iam_instance_profile.karpenter
  const nodeRoleName = prefixed(`karpenter-${cn}`)
  await aws.iam.send(
    new CreateRoleCommand({
      RoleName: nodeRoleName,
      Description: 'Karpenter EC2 node IAM role',
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'KarpenterNodeAssumeRole',
            Effect: 'Allow',
            Action: 'sts:AssumeRole',
            Principal: { Service: 'ec2.amazonaws.com' },
          },
        ],
      }),
      Tags: tagList(TAGS),
    }),
  )
  for (const name of [
    'AmazonEKSWorkerNodePolicy',
    'AmazonEC2ContainerRegistryReadOnly',
    'AmazonEKS_CNI_Policy',
  ])
    await aws.iam.send(
      new AttachRolePolicyCommand({ RoleName: nodeRoleName, PolicyArn: `arn:aws:iam::aws:policy/${name}` }),
    )
  const profile = prefixed(`karpenter-${cn}`)
  await aws.iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: profile, Tags: tagList(TAGS) }))
  await aws.iam.send(
    new AddRoleToInstanceProfileCommand({ InstanceProfileName: profile, RoleName: nodeRoleName }),
  )

  // module.karpenter (aws-ia/eks-blueprints-addon): the IRSA role and its policy
  const namespace = 'karpenter'
  const controllerRoleName = prefixed('karpenter')
  await aws.iam.send(
    new CreateRoleCommand({
      RoleName: controllerRoleName,
      Path: '/',
      Description: 'IRSA for Karpenter',
      AssumeRolePolicyDocument: irsaTrust(
        cluster.oidcProviderArn,
        `system:serviceaccount:${namespace}:karpenter`,
      ),
      Tags: tagList(TAGS),
    }),
  )
  const policy = await aws.iam.send(
    new CreatePolicyCommand({
      PolicyName: prefixed('karpenter'),
      Path: '/',
      Description: 'IAM Policy for karpenter',
      PolicyDocument: blueprintsControllerPolicy(ctx, { nodeRoleArn: arnOf('role', nodeRoleName), queueArn }),
      Tags: tagList(TAGS),
    }),
  )
  await aws.iam.send(
    new AttachRolePolicyCommand({ RoleName: controllerRoleName, PolicyArn: policy.Policy!.Arn! }),
  )
  // docs/addons/karpenter.md's prerequisite for spot
  await createSpotServiceLinkedRole(aws)

  const set = (kv: string) => ['--set', kv]
  const r = await seedGuideKubernetes(bed, cluster, {
    nodeRoleArn: arnOf('role', nodeRoleName),
    namespace,
    helmArgs: [
      'upgrade',
      '--install',
      'karpenter',
      restampedChart(bed.tmpDir, BLUEPRINTS_KARPENTER),
      '--namespace',
      namespace,
      '--create-namespace',
      ...set(`settings.aws.clusterName=${cn}`),
      ...set(`settings.aws.clusterEndpoint=${cluster.endpoint}`),
      ...set(`settings.aws.interruptionQueueName=${queueName}`),
      ...set(`settings.clusterName=${cn}`),
      ...set(`settings.clusterEndpoint=${cluster.endpoint}`),
      ...set(`settings.interruptionQueue=${queueName}`),
      ...set('serviceAccount.name=karpenter'),
      ...set(
        `serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=${arnOf('role', controllerRoleName)}`,
      ),
    ],
    nodeClass: guideEC2NodeClass(cn, nodeRoleName),
  })
  return { net: cluster.net, namespace: r.namespace }
}
