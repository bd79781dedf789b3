// An install karpctl did not make, shaped like terraform-aws-eks's `modules/karpenter` (v20, IRSA) applied
// on the guide's cluster `demo`: no CloudFormation at all, every resource made with the AWS API as the
// Terraform AWS provider makes it, with the module's names and tags.
//
// - Controller role `KarpenterController-<suffix>` (`iam_role_name` + `iam_role_use_name_prefix`, the
//   provider's name_prefix suffix), description "Karpenter controller IAM role", its trust the module's
//   aws_iam_policy_document: the `PodIdentity` statement (enable_pod_identity defaults to true in v20)
//   and the IRSA statement (`enable_irsa = true`: StringEquals on :sub and :aud, no sid — rendered
//   `"Sid": ""` as aws_iam_policy_document does).
// - One customer managed policy `KarpenterController-<suffix>` ("Karpenter controller IAM policy")
//   attached to it, holding the getting-started template's reference statements (seed.ts'
//   renderCloudFormation, scoped the same way, the queue ARN the module's queue) concatenated into one
//   document. Note: that document is ~6.8k non-whitespace characters, over IAM's 6,144 for a managed
//   policy; moto 5.2.1 does not enforce the limit (the module's own v1 policy is narrower).
// - Queue `Karpenter-<cluster>` (the module's default queue_name): retention 300 s, SSE-SQS, and the
//   module's queue policy (SqsWrite for events/sqs, DenyHTTP).
// - Five EventBridge rules `Karpenter<Name>-<suffix>` (`rule_name_prefix` "Karpenter" + name_prefix), each
//   with the module's description, `jsonencode`d pattern (keys sorted), tags ClusterName + the module's
//   tags, and target `KarpenterInterruptionQueueTarget`. The module has four (HealthEvent, SpotInterrupt,
//   InstanceRebalance, InstanceStateChange); the fifth, CapacityReservation, is what a configuration
//   adds for Karpenter ≥ 1.12 (the reference template's CapacityReservationInterruptionRule pattern).
// - Node role `KarpenterNodeRole-<cluster>` (`node_iam_role_name`, `node_iam_role_use_name_prefix =
//   false`), trust sid EKSNodeAssumeRole, the module's three policies plus SSM core as
//   node_iam_role_additional_policies; cluster access through aws-auth (moto has no access entries).
// - Tags (`tags = {…}` on the module): terraform-aws-modules=karpenter, Terraform=true, Environment=dev.
// - Then the guide's helm install with settings.interruptionQueue=Karpenter-<cluster> and the IRSA
//   annotation on the controller role, the guide's NodePool and EC2NodeClass (adopted-seed.ts).
import { CreatePodIdentityAssociationCommand } from '@aws-sdk/client-eks'
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge'
import {
  AttachRolePolicyCommand,
  CreatePolicyCommand,
  CreateRoleCommand,
  type Tag,
} from '@aws-sdk/client-iam'
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
} from '@aws-sdk/client-sqs'
import type { Bed } from './bed.js'
import { seedGuideCluster, seedGuideKubernetes, type GuideCluster } from './adopted-seed.js'
import {
  awsClients,
  createSpotServiceLinkedRole,
  renderCloudFormation,
  type Network,
  type SeedContext,
} from './seed.js'
import { terraformModulePolicy } from './terraform-module-policy.js'

/** The module's `tags` (var.tags), as a configuration sets them. */
export const TERRAFORM_TAGS: Record<string, string> = {
  'terraform-aws-modules': 'karpenter',
  Terraform: 'true',
  Environment: 'dev',
}

/** The AWS provider's name_prefix suffix: UTC timestamp to 1/10000 s, then an 8-hex-digit counter. */
export function terraformSuffix(counter: number, at = '202401011200000000'): string {
  return `${at}${counter.toString(16).padStart(8, '0')}`
}

/** The module's event rules: key, name (after rule_name_prefix), description, pattern. */
export const TERRAFORM_RULES = [
  {
    name: 'HealthEvent',
    description: 'Karpenter interrupt - AWS health event',
    source: 'aws.health',
    detailType: 'AWS Health Event',
    templateLogicalId: 'ScheduledChangeRule',
  },
  {
    name: 'SpotInterrupt',
    description: 'Karpenter interrupt - EC2 spot instance interruption warning',
    source: 'aws.ec2',
    detailType: 'EC2 Spot Instance Interruption Warning',
    templateLogicalId: 'SpotInterruptionRule',
  },
  {
    name: 'InstanceRebalance',
    description: 'Karpenter interrupt - EC2 instance rebalance recommendation',
    source: 'aws.ec2',
    detailType: 'EC2 Instance Rebalance Recommendation',
    templateLogicalId: 'RebalanceRule',
  },
  {
    name: 'InstanceStateChange',
    description: 'Karpenter interrupt - EC2 instance state-change notification',
    source: 'aws.ec2',
    detailType: 'EC2 Instance State-change Notification',
    templateLogicalId: 'InstanceStateChangeRule',
  },
  {
    name: 'CapacityReservation',
    description: 'Karpenter interrupt - EC2 capacity reservation instance interruption warning',
    source: 'aws.ec2',
    detailType: 'EC2 Capacity Reservation Instance Interruption Warning',
    templateLogicalId: 'CapacityReservationInterruptionRule',
  },
] as const

export const TERRAFORM_TARGET_ID = 'KarpenterInterruptionQueueTarget'

export interface TerraformInstall extends SeedContext {
  net: Network
  clusterArn: string
  oidcIssuer: string
  oidcProviderArn: string
  nodegroupRoleArn: string
  /** `KarpenterController-<suffix>` */
  controllerRoleName: string
  controllerRoleArn: string
  /** the one customer managed policy `KarpenterController-<suffix>` */
  controllerPolicyArn: string
  controllerPolicyDocument: string
  nodeRoleName: string
  nodeRoleArn: string
  /** `Karpenter-<cluster>` */
  queueName: string
  queueUrl: string
  queueArn: string
  /** rule name → its entry of TERRAFORM_RULES */
  rules: { ruleName: string; spec: (typeof TERRAFORM_RULES)[number] }[]
  ruleNames: string[]
  spotServiceLinkedRoleArn: string
  helmRelease: { namespace: string; name: string }
  skipped: string[]
}

const iamTags = (t: Record<string, string>): Tag[] =>
  Object.entries(t).map(([Key, Value]) => ({ Key, Value }))

/**
 * The module's controller trust (aws_iam_policy_document's JSON: one-element lists as strings). v21
 * dropped the IRSA statement (`irsa: false`): Pod Identity only.
 */
export function terraformControllerTrust(opts: {
  oidcProviderArn: string
  namespace: string
  serviceAccount: string
  irsa?: boolean
}): string {
  const host = opts.oidcProviderArn.replace(/^.*provider\//, '')
  const podIdentity = {
    Sid: 'PodIdentity',
    Effect: 'Allow',
    Action: ['sts:TagSession', 'sts:AssumeRole'],
    Principal: { Service: 'pods.eks.amazonaws.com' },
  }
  if (opts.irsa === false) return JSON.stringify({ Version: '2012-10-17', Statement: [podIdentity] })
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      podIdentity,
      {
        Sid: '',
        Effect: 'Allow',
        Action: 'sts:AssumeRoleWithWebIdentity',
        Principal: { Federated: opts.oidcProviderArn },
        Condition: {
          StringEquals: {
            [`${host}:sub`]: `system:serviceaccount:${opts.namespace}:${opts.serviceAccount}`,
            [`${host}:aud`]: 'sts.amazonaws.com',
          },
        },
      },
    ],
  })
}

/** The module's queue policy (data.aws_iam_policy_document.queue). */
export function terraformQueuePolicy(queueArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'SqsWrite',
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        Principal: { Service: ['sqs.amazonaws.com', 'events.amazonaws.com'] },
      },
      {
        Sid: 'DenyHTTP',
        Effect: 'Deny',
        Action: 'sqs:*',
        Resource: queueArn,
        Principal: '*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ],
  })
}

/** The reference template's six controller policies as one document (statements in template order). */
export function concatenatedControllerPolicy(ctx: SeedContext, queueName: string): string {
  const tpl = renderCloudFormation(ctx, undefined, { queueName })
  const statements = tpl.controllerPolicies.flatMap(
    (p) => (JSON.parse(p.document) as { Statement: { Sid?: string }[] }).Statement,
  )
  const sids = statements.map((s) => s.Sid).filter(Boolean)
  if (new Set(sids).size !== sids.length) throw new Error('the template policies repeat a Sid')
  return JSON.stringify({ Version: '2012-10-17', Statement: statements })
}

/**
 * How a configuration of the module differs from the one seeded by default (a v20 module with the
 * guide's node role name, five rules, the template's statements): the module's own defaults of a major.
 */
export interface TerraformModuleShape {
  /** the rules made, by TERRAFORM_RULES name → the module's name for it (v21: CRInterruption) */
  rules: Partial<Record<(typeof TERRAFORM_RULES)[number]['name'], string>>
  /** the IRSA statement in the trust (v20 enable_irsa), else Pod Identity only */
  irsa: boolean
  /** `node_iam_role_use_name_prefix` (default true): `Karpenter-<cluster>-<suffix>` */
  nodeRolePrefixed: boolean
  /** the node role's AWS managed policies */
  nodePolicies: string[]
  /** the module's own policy.tf of that major */
  policy: 20 | 21
}

/** The module's resources through the AWS API, on the guide's cluster. */
export async function seedTerraformAws(
  bed: Bed,
  cluster: GuideCluster,
  shape?: TerraformModuleShape,
): Promise<Omit<TerraformInstall, 'helmRelease'>> {
  const { ctx } = cluster
  const cn = ctx.clusterName
  const aws = awsClients({ awsEndpoint: bed.awsEndpoint, region: ctx.region })
  const tags = TERRAFORM_TAGS
  let counter = 1
  const prefixed = (prefix: string) => `${prefix}-${terraformSuffix(counter++)}`

  // module.karpenter.aws_sqs_queue.this[0] + aws_sqs_queue_policy.this[0]
  const queueName = `Karpenter-${cn}`
  const q = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: queueName,
      Attributes: { MessageRetentionPeriod: '300', SqsManagedSseEnabled: 'true' },
    }),
  )
  const queueUrl = q.QueueUrl!
  await aws.sqs.send(new TagQueueCommand({ QueueUrl: queueUrl, Tags: tags }))
  const queueArn = (
    await aws.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!
  await aws.sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: queueUrl,
      Attributes: { Policy: terraformQueuePolicy(queueArn) },
    }),
  )

  // aws_cloudwatch_event_rule.this[*] + aws_cloudwatch_event_target.this[*]
  const rules: TerraformInstall['rules'] = []
  for (const spec of TERRAFORM_RULES) {
    const moduleName = shape ? shape.rules[spec.name] : spec.name
    if (!moduleName) continue
    const ruleName = prefixed(`Karpenter${moduleName}`)
    await aws.events.send(
      new PutRuleCommand({
        Name: ruleName,
        Description: spec.description,
        // jsonencode() sorts the keys
        EventPattern: JSON.stringify({ 'detail-type': [spec.detailType], source: [spec.source] }),
        State: 'ENABLED',
        Tags: iamTags({ ClusterName: cn, ...tags }),
      }),
    )
    await aws.events.send(
      new PutTargetsCommand({ Rule: ruleName, Targets: [{ Id: TERRAFORM_TARGET_ID, Arn: queueArn }] }),
    )
    rules.push({ ruleName, spec })
  }

  // aws_iam_role.controller[0], aws_iam_policy.controller[0], aws_iam_role_policy_attachment.controller[0]
  const controllerRoleName = prefixed('KarpenterController')
  const role = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: controllerRoleName,
      Path: '/',
      Description: 'Karpenter controller IAM role',
      AssumeRolePolicyDocument: terraformControllerTrust({
        oidcProviderArn: cluster.oidcProviderArn,
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        irsa: shape?.irsa,
      }),
      Tags: iamTags(tags),
    }),
  )
  // aws_eks_pod_identity_association.karpenter[0] (v21: create_pod_identity_association defaults to true;
  // var.namespace "kube-system", var.service_account "karpenter", tags = var.tags)
  if (shape && !shape.irsa) {
    await aws.eks.send(
      new CreatePodIdentityAssociationCommand({
        clusterName: cn,
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        roleArn: role.Role!.Arn!,
        tags,
      }),
    )
  }
  // The node role's name is known before it is made (name_prefix is resolved at plan time).
  const nodeRoleName = shape?.nodeRolePrefixed ? prefixed(`Karpenter-${cn}`) : `KarpenterNodeRole-${cn}`
  const controllerPolicyDocument = shape
    ? terraformModulePolicy(ctx, {
        major: shape.policy,
        queueArn,
        nodeRoleArn: `arn:${ctx.partition}:iam::${ctx.accountId}:role/${nodeRoleName}`,
      })
    : concatenatedControllerPolicy(ctx, queueName)
  const policy = await aws.iam.send(
    new CreatePolicyCommand({
      PolicyName: prefixed('KarpenterController'),
      Path: '/',
      Description: 'Karpenter controller IAM policy',
      PolicyDocument: controllerPolicyDocument,
      Tags: iamTags(tags),
    }),
  )
  const controllerPolicyArn = policy.Policy!.Arn!
  await aws.iam.send(
    new AttachRolePolicyCommand({ RoleName: controllerRoleName, PolicyArn: controllerPolicyArn }),
  )

  // aws_iam_role.node[0] + aws_iam_role_policy_attachment.node[*] / node_additional[*]
  const node = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: nodeRoleName,
      Path: '/',
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'EKSNodeAssumeRole',
            Effect: 'Allow',
            Action: 'sts:AssumeRole',
            Principal: { Service: 'ec2.amazonaws.com' },
          },
        ],
      }),
      Tags: iamTags(tags),
    }),
  )
  for (const name of shape?.nodePolicies ?? [
    'AmazonEKSWorkerNodePolicy',
    'AmazonEC2ContainerRegistryReadOnly',
    'AmazonEKS_CNI_Policy',
    'AmazonSSMManagedInstanceCore',
  ]) {
    await aws.iam.send(
      new AttachRolePolicyCommand({ RoleName: nodeRoleName, PolicyArn: `arn:aws:iam::aws:policy/${name}` }),
    )
  }
  const spotServiceLinkedRoleArn = await createSpotServiceLinkedRole(aws)

  return {
    ...ctx,
    net: cluster.net,
    clusterArn: cluster.clusterArn,
    oidcIssuer: cluster.oidcIssuer,
    oidcProviderArn: cluster.oidcProviderArn,
    nodegroupRoleArn: cluster.nodegroupRoleArn,
    controllerRoleName,
    controllerRoleArn: role.Role!.Arn!,
    controllerPolicyArn,
    controllerPolicyDocument,
    nodeRoleName,
    nodeRoleArn: node.Role!.Arn!,
    queueName,
    queueUrl,
    queueArn,
    rules,
    ruleNames: rules.map((r) => r.ruleName),
    spotServiceLinkedRoleArn,
    skipped: cluster.skipped,
  }
}

/** The guide's cluster, the module's resources, the guide's helm install on them. */
export async function seedTerraformInstall(
  bed: Bed,
  opts: {
    clusterName?: string
    kubernetesVersion?: string
    /** false: leave the Deployment's availability and the conditions to the real controller */
    markAvailable?: boolean
  } = {},
): Promise<TerraformInstall> {
  const cluster = await seedGuideCluster(bed, opts)
  const made = await seedTerraformAws(bed, cluster)
  const helmRelease = await seedGuideKubernetes(bed, cluster, {
    controllerRoleArn: made.controllerRoleArn,
    nodeRoleArn: made.nodeRoleArn,
    interruptionQueue: made.queueName,
    markAvailable: opts.markAvailable,
  })
  return { ...made, helmRelease }
}
