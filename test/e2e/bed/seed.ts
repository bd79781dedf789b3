// Seeds moto with what an EKS account that followed the Karpenter
// getting-started guide (v1.14.1 CloudFormation template) would have for a
// cluster `demo` in us-west-2 — before karpctl touches anything.
//
// Choices (documented for scenario authors):
// - The six controller policies are *customer managed policies* named as the
//   CloudFormation stack names them (KarpenterController<X>Policy-demo),
//   attached to KarpenterControllerRole-demo, like the getting-started guide.
// - EventBridge rules are named like CloudFormation's physical ids:
//   Karpenter-demo-<LogicalId> (no random suffix). Find them by target.
// - The node role gets the template's four managed policies; with moto's
//   managed policies not loaded (startBed({awsManagedPolicies:false})) the
//   missing ones are skipped and listed in SeedResult.skipped.
// - The instance profile KarpenterNodeInstanceProfile-demo is the pre-v1 style
//   one (Karpenter v1 creates its own from EC2NodeClass.spec.role).
// - moto's EKS cluster has no clusterSecurityGroupId: the "cluster SG" is
//   created here and passed as resourcesVpcConfig.securityGroupIds.
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeVpcsCommand,
  EC2Client,
  ModifyVpcAttributeCommand,
  RevokeSecurityGroupIngressCommand,
  type IpPermission,
} from '@aws-sdk/client-ec2'
import { CreateClusterCommand, DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks'
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge'
import {
  AddRoleToInstanceProfileCommand,
  AttachRolePolicyCommand,
  CreateInstanceProfileCommand,
  CreateOpenIDConnectProviderCommand,
  CreatePolicyCommand,
  CreateRoleCommand,
  CreateServiceLinkedRoleCommand,
  IAMClient,
  ListRolesCommand,
  NoSuchEntityException,
} from '@aws-sdk/client-iam'
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs'
import { parse, type ScalarTag } from 'yaml'
import { ACCOUNT_ID, CLUSTER_NAME, DISCOVERY_TAG, REGION } from './constants.js'
import { cloudFormationTemplatePath } from './paths.js'

const DEFAULT_REGION = REGION
const DEFAULT_CLUSTER = CLUSTER_NAME

/** Anything with a moto endpoint (a Bed qualifies). */
export interface AwsTarget {
  awsEndpoint: string
  region?: string
}

export interface AwsClients {
  ec2: EC2Client
  eks: EKSClient
  iam: IAMClient
  sqs: SQSClient
  events: EventBridgeClient
}

export function awsClientConfig(target: AwsTarget) {
  return {
    region: target.region ?? DEFAULT_REGION,
    endpoint: target.awsEndpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    maxAttempts: 2,
  }
}

export function awsClients(target: AwsTarget): AwsClients {
  const c = awsClientConfig(target)
  return {
    ec2: new EC2Client(c),
    eks: new EKSClient(c),
    iam: new IAMClient(c),
    sqs: new SQSClient(c),
    events: new EventBridgeClient(c),
  }
}

/** First calls are slow in moto (IAM managed policies, EC2 catalogue per region): make them now. */
export async function warmMoto(target: AwsTarget): Promise<void> {
  const aws = awsClients(target)
  await Promise.all([
    aws.iam.send(new ListRolesCommand({ MaxItems: 1 })),
    aws.ec2.send(new DescribeVpcsCommand({})),
  ])
}

export interface SeedOptions {
  clusterName?: string
  region?: string
  /** EKS Kubernetes version (moto defaults to 1.19 when omitted) */
  kubernetesVersion?: string
  /** the cluster's accessConfig (only the patched moto reports it; default API_AND_CONFIG_MAP) */
  authenticationMode?: 'API_AND_CONFIG_MAP' | 'CONFIG_MAP'
}

export interface SeedContext {
  clusterName: string
  region: string
  accountId: string
  partition: 'aws'
}

export interface SeedResult extends SeedContext {
  vpcId: string
  subnetIds: string[]
  availabilityZones: string[]
  clusterSecurityGroupId: string
  nodeSecurityGroupId: string
  clusterRoleArn: string
  clusterArn: string
  clusterEndpoint: string
  /** https://oidc.eks.us-west-2.amazonaws.com/id/… (moto generated) */
  oidcIssuer: string
  oidcProviderArn: string
  nodeRoleName: string
  nodeRoleArn: string
  instanceProfileName: string
  controllerRoleName: string
  controllerRoleArn: string
  /** name → ARN of the six controller policies */
  controllerPolicyArns: Record<string, string>
  queueName: string
  queueUrl: string
  queueArn: string
  ruleNames: string[]
  spotServiceLinkedRoleArn: string
  /** things that could not be created here (e.g. managed policies moto lacks) */
  skipped: string[]
}

function ctxOf(opts: SeedOptions = {}): SeedContext {
  return {
    clusterName: opts.clusterName ?? DEFAULT_CLUSTER,
    region: opts.region ?? DEFAULT_REGION,
    accountId: ACCOUNT_ID,
    partition: 'aws',
  }
}

const tags = (resource: string, t: Record<string, string>) => [
  { ResourceType: resource as never, Tags: Object.entries(t).map(([Key, Value]) => ({ Key, Value })) },
]

// ------------------------------------------------------------------ CloudFormation template

export interface RenderedTemplate {
  nodeRoleName: string
  nodeRoleTrustPolicy: string
  nodeRoleManagedPolicyArns: string[]
  /** the six AWS::IAM::ManagedPolicy resources, in template order */
  controllerPolicies: { logicalId: string; name: string; document: string }[]
  queueName: string
  queueAttributes: Record<string, string>
  queuePolicy: string
  /** the five AWS::Events::Rule resources */
  rules: { logicalId: string; name: string; eventPattern: string; targetId: string }[]
}

const cfnTags: ScalarTag[] = [
  { tag: '!Sub', resolve: (v: string) => ({ 'Fn::Sub': v }) },
  { tag: '!GetAtt', resolve: (v: string) => ({ 'Fn::GetAtt': v }) },
  { tag: '!Ref', resolve: (v: string) => ({ Ref: v }) },
]

/**
 * Renders the getting-started template for a cluster: substitutes
 * ${AWS::Partition}, ${AWS::Region}, ${AWS::AccountId}, ${AWS::URLSuffix},
 * ${ClusterName}, ${KarpenterNodeRole.Arn}, ${KarpenterInterruptionQueue.Arn}.
 */
export function renderCloudFormation(
  ctx: SeedContext,
  templatePath = cloudFormationTemplatePath(),
  /** names other than the template's (another tool's queue, e.g. the Terraform module's `Karpenter-<cluster>`) */
  names: { queueName?: string } = {},
): RenderedTemplate {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const tpl = parse(readFileSync(templatePath, 'utf8'), { customTags: cfnTags }) as any
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const res = tpl.Resources as Record<string, any>
  const nodeRoleName = `KarpenterNodeRole-${ctx.clusterName}`
  const queueName = names.queueName ?? ctx.clusterName
  const queueArn = `arn:${ctx.partition}:sqs:${ctx.region}:${ctx.accountId}:${queueName}`
  const vars: Record<string, string> = {
    'AWS::Partition': ctx.partition,
    'AWS::Region': ctx.region,
    'AWS::AccountId': ctx.accountId,
    'AWS::URLSuffix': 'amazonaws.com',
    ClusterName: ctx.clusterName,
    'KarpenterNodeRole.Arn': `arn:${ctx.partition}:iam::${ctx.accountId}:role/${nodeRoleName}`,
    'KarpenterInterruptionQueue.Arn': queueArn,
  }
  const sub = (s: string) =>
    s.replace(/\$\{([^}]+)\}/g, (_m, k: string) => {
      const v = vars[k]
      if (v === undefined) throw new Error(`cloudformation.yaml: unknown substitution \${${k}}`)
      return v
    })
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve)
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>
      if (typeof o['Fn::Sub'] === 'string') return sub(o['Fn::Sub'])
      if (typeof o['Fn::GetAtt'] === 'string') {
        const r = vars[o['Fn::GetAtt']]
        if (!r) throw new Error(`cloudformation.yaml: unknown GetAtt ${o['Fn::GetAtt']}`)
        return r
      }
      if (typeof o.Ref === 'string') return o.Ref
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x)]))
    }
    return v
  }
  const compact = (doc: string) => JSON.stringify(JSON.parse(doc))

  const nodeRole = resolve(res.KarpenterNodeRole.Properties) as {
    AssumeRolePolicyDocument: unknown
    ManagedPolicyArns: string[]
  }
  const controllerPolicies = Object.entries(res)
    .filter(([, r]) => r.Type === 'AWS::IAM::ManagedPolicy')
    .map(([logicalId, r]) => {
      const p = resolve(r.Properties) as { ManagedPolicyName: string; PolicyDocument: string }
      return { logicalId, name: p.ManagedPolicyName, document: compact(p.PolicyDocument) }
    })
  const queueProps = resolve(res.KarpenterInterruptionQueue.Properties) as Record<string, unknown>
  const queuePolicyDoc = resolve(res.KarpenterInterruptionQueuePolicy.Properties.PolicyDocument) as Record<
    string,
    unknown
  >
  const rules = Object.entries(res)
    .filter(([, r]) => r.Type === 'AWS::Events::Rule')
    .map(([logicalId, r]) => {
      const p = resolve(r.Properties) as { EventPattern: unknown; Targets: { Id: string }[] }
      return {
        logicalId,
        name: `Karpenter-${ctx.clusterName}-${logicalId}`,
        eventPattern: JSON.stringify(p.EventPattern),
        targetId: p.Targets[0]?.Id ?? 'KarpenterInterruptionQueueTarget',
      }
    })
  return {
    nodeRoleName,
    nodeRoleTrustPolicy: JSON.stringify(nodeRole.AssumeRolePolicyDocument),
    nodeRoleManagedPolicyArns: nodeRole.ManagedPolicyArns,
    controllerPolicies,
    queueName,
    queueAttributes: {
      MessageRetentionPeriod: String(queueProps.MessageRetentionPeriod),
      SqsManagedSseEnabled: String(queueProps.SqsManagedSseEnabled),
    },
    // SQS reports Version 2012-10-17 even when the template omits it
    queuePolicy: JSON.stringify({ Version: '2012-10-17', ...queuePolicyDoc }),
    rules,
  }
}

/** IRSA trust policy of the controller role for an issuer URL. */
export function controllerTrustPolicy(
  oidcProviderArn: string,
  oidcIssuer: string,
  serviceAccount = 'system:serviceaccount:kube-system:karpenter',
): string {
  const host = oidcIssuer.replace(/^https:\/\//, '')
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: oidcProviderArn },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: {
          StringEquals: { [`${host}:aud`]: 'sts.amazonaws.com', [`${host}:sub`]: serviceAccount },
        },
      },
    ],
  })
}

// ------------------------------------------------------------------ building blocks

export interface Network {
  vpcId: string
  subnetIds: string[]
  availabilityZones: string[]
  clusterSecurityGroupId: string
  nodeSecurityGroupId: string
}

/** VPC 192.168.0.0/16, three private subnets (a/b/c), cluster SG and node SG, eksctl-like. */
export async function createNetwork(aws: AwsClients, ctx: SeedContext): Promise<Network> {
  const cn = ctx.clusterName
  const owned = { [`kubernetes.io/cluster/${cn}`]: 'owned' }
  const vpc = await aws.ec2.send(
    new CreateVpcCommand({
      CidrBlock: '192.168.0.0/16',
      TagSpecifications: tags('vpc', { Name: `eksctl-${cn}-cluster/VPC`, ...owned }),
    }),
  )
  const vpcId = vpc.Vpc!.VpcId!
  await aws.ec2.send(new ModifyVpcAttributeCommand({ VpcId: vpcId, EnableDnsHostnames: { Value: true } }))
  const availabilityZones = ['a', 'b', 'c'].map((z) => `${ctx.region}${z}`)
  const subnetIds: string[] = []
  for (const [i, az] of availabilityZones.entries()) {
    const s = await aws.ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        AvailabilityZone: az,
        CidrBlock: `192.168.${96 + i * 32}.0/19`,
        TagSpecifications: tags('subnet', {
          Name: `eksctl-${cn}-cluster/SubnetPrivate${az.toUpperCase().replace(/-/g, '')}`,
          [DISCOVERY_TAG]: cn,
          'kubernetes.io/role/internal-elb': '1',
          ...owned,
        }),
      }),
    )
    subnetIds.push(s.Subnet!.SubnetId!)
  }
  const clusterSg = await aws.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: `eks-cluster-sg-${cn}-1234567890`,
      Description:
        'EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.',
      VpcId: vpcId,
      TagSpecifications: tags('security-group', { Name: `eks-cluster-sg-${cn}-1234567890`, ...owned }),
    }),
  )
  const nodeSg = await aws.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: `eksctl-${cn}-nodegroup-sg`,
      Description: 'Communication between the control plane and worker nodes',
      VpcId: vpcId,
      TagSpecifications: tags('security-group', {
        Name: `eksctl-${cn}-nodegroup-sg`,
        [DISCOVERY_TAG]: cn,
        ...owned,
      }),
    }),
  )
  const net: Network = {
    vpcId,
    subnetIds,
    availabilityZones,
    clusterSecurityGroupId: clusterSg.GroupId!,
    nodeSecurityGroupId: nodeSg.GroupId!,
  }
  await authorizeBaseIngress(aws, net)
  await authorizeWebhookIngress(aws, net)
  return net
}

// No Description on the group pairs: moto 5.2.1 only revokes a rule when the
// revoke repeats its Description (AWS ignores descriptions when matching), so
// a described rule could not be revoked the way karpctl or a user would.
const fromGroup = (proto: string, from: number, to: number, groupId: string, _why: string): IpPermission => ({
  IpProtocol: proto,
  FromPort: from,
  ToPort: to,
  UserIdGroupPairs: [{ GroupId: groupId }],
})

/** Node↔control-plane rules every EKS cluster has (443, 10250, node to node). */
export async function authorizeBaseIngress(aws: AwsClients, net: Network): Promise<void> {
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: net.nodeSecurityGroupId,
      IpPermissions: [
        fromGroup('tcp', 443, 443, net.clusterSecurityGroupId, 'control plane to node 443'),
        fromGroup('tcp', 10250, 10250, net.clusterSecurityGroupId, 'control plane to kubelet'),
        fromGroup('-1', -1, -1, net.nodeSecurityGroupId, 'node to node'),
      ],
    }),
  )
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: net.clusterSecurityGroupId,
      IpPermissions: [fromGroup('tcp', 443, 443, net.nodeSecurityGroupId, 'nodes to API server')],
    }),
  )
}

export const webhookIngressPermission = (net: Network): IpPermission =>
  fromGroup('tcp', 8443, 8443, net.clusterSecurityGroupId, 'control plane to Karpenter webhook')

/** cluster SG → node SG tcp/8443 (Karpenter ≤ v1.0 webhooks). */
export async function authorizeWebhookIngress(aws: AwsClients, net: Network): Promise<void> {
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: net.nodeSecurityGroupId,
      IpPermissions: [webhookIngressPermission(net)],
    }),
  )
}

/** Break: remove the 8443 rule. */
export async function revokeWebhookIngress(aws: AwsClients, net: Network): Promise<void> {
  await aws.ec2.send(
    new RevokeSecurityGroupIngressCommand({
      GroupId: net.nodeSecurityGroupId,
      IpPermissions: [webhookIngressPermission(net)],
    }),
  )
}

async function attachManaged(
  aws: AwsClients,
  roleName: string,
  arn: string,
  skipped: string[],
): Promise<void> {
  try {
    await aws.iam.send(new AttachRolePolicyCommand({ RoleName: roleName, PolicyArn: arn }))
  } catch (e) {
    if (e instanceof NoSuchEntityException || (e as { name?: string }).name === 'NoSuchEntity') {
      skipped.push(`${roleName}: ${arn} (not in moto)`)
      return
    }
    throw e
  }
}

export async function createEksCluster(
  aws: AwsClients,
  ctx: SeedContext,
  net: Network,
  kubernetesVersion = '1.34',
  skipped: string[] = [],
  authenticationMode: 'API_AND_CONFIG_MAP' | 'CONFIG_MAP' = 'API_AND_CONFIG_MAP',
): Promise<{ clusterRoleArn: string; clusterArn: string; endpoint: string; oidcIssuer: string }> {
  const roleName = `eksctl-${ctx.clusterName}-cluster-ServiceRole`
  const role = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: roleName,
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'eks.amazonaws.com' },
            Action: ['sts:AssumeRole', 'sts:TagSession'],
          },
        ],
      }),
    }),
  )
  await attachManaged(aws, roleName, 'arn:aws:iam::aws:policy/AmazonEKSClusterPolicy', skipped)
  await aws.eks.send(
    new CreateClusterCommand({
      name: ctx.clusterName,
      version: kubernetesVersion,
      roleArn: role.Role!.Arn!,
      resourcesVpcConfig: {
        subnetIds: net.subnetIds,
        securityGroupIds: [net.clusterSecurityGroupId],
        endpointPublicAccess: true,
        endpointPrivateAccess: true,
      },
      accessConfig: {
        authenticationMode,
        bootstrapClusterCreatorAdminPermissions: true,
      },
      tags: { 'alpha.eksctl.io/cluster-name': ctx.clusterName },
    }),
  )
  const d = await aws.eks.send(new DescribeClusterCommand({ name: ctx.clusterName }))
  const c = d.cluster!
  const oidcIssuer = c.identity?.oidc?.issuer
  if (!oidcIssuer) throw new Error('moto returned no identity.oidc.issuer for the cluster')
  return { clusterRoleArn: role.Role!.Arn!, clusterArn: c.arn!, endpoint: c.endpoint ?? '', oidcIssuer }
}

/** IAM OIDC provider for the cluster issuer (what `eksctl utils associate-iam-oidc-provider` does). */
export async function createOidcProvider(aws: AwsClients, oidcIssuer: string): Promise<string> {
  const r = await aws.iam.send(
    new CreateOpenIDConnectProviderCommand({
      Url: oidcIssuer,
      ClientIDList: ['sts.amazonaws.com'],
      ThumbprintList: ['9e99a48a9960b14926bb7f3b02e22da2b0ab7280'],
    }),
  )
  return r.OpenIDConnectProviderArn!
}

export async function createNodeRole(
  aws: AwsClients,
  ctx: SeedContext,
  tpl: RenderedTemplate,
  skipped: string[] = [],
): Promise<{ nodeRoleArn: string; instanceProfileName: string }> {
  const role = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: tpl.nodeRoleName,
      Path: '/',
      AssumeRolePolicyDocument: tpl.nodeRoleTrustPolicy,
    }),
  )
  for (const arn of tpl.nodeRoleManagedPolicyArns) await attachManaged(aws, tpl.nodeRoleName, arn, skipped)
  const instanceProfileName = `KarpenterNodeInstanceProfile-${ctx.clusterName}`
  await aws.iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: instanceProfileName }))
  await aws.iam.send(
    new AddRoleToInstanceProfileCommand({
      InstanceProfileName: instanceProfileName,
      RoleName: tpl.nodeRoleName,
    }),
  )
  return { nodeRoleArn: role.Role!.Arn!, instanceProfileName }
}

/** The six template policies as customer managed policies; name → ARN. */
export async function createControllerPolicies(
  aws: AwsClients,
  tpl: RenderedTemplate,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const p of tpl.controllerPolicies) {
    const r = await aws.iam.send(
      new CreatePolicyCommand({ PolicyName: p.name, Path: '/', PolicyDocument: p.document }),
    )
    out[p.name] = r.Policy!.Arn!
  }
  return out
}

export async function createControllerRole(
  aws: AwsClients,
  ctx: SeedContext,
  oidcProviderArn: string,
  oidcIssuer: string,
  policyArns: string[],
): Promise<{ controllerRoleName: string; controllerRoleArn: string }> {
  const controllerRoleName = `KarpenterControllerRole-${ctx.clusterName}`
  const r = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: controllerRoleName,
      AssumeRolePolicyDocument: controllerTrustPolicy(oidcProviderArn, oidcIssuer),
    }),
  )
  for (const arn of policyArns) {
    await aws.iam.send(new AttachRolePolicyCommand({ RoleName: controllerRoleName, PolicyArn: arn }))
  }
  return { controllerRoleName, controllerRoleArn: r.Role!.Arn! }
}

export async function createInterruptionQueue(
  aws: AwsClients,
  tpl: RenderedTemplate,
): Promise<{ queueUrl: string; queueArn: string }> {
  const q = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: tpl.queueName,
      Attributes: { ...tpl.queueAttributes, Policy: tpl.queuePolicy },
    }),
  )
  const a = await aws.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: q.QueueUrl!, AttributeNames: ['QueueArn'] }),
  )
  return { queueUrl: q.QueueUrl!, queueArn: a.Attributes!.QueueArn! }
}

export async function createEventRules(
  aws: AwsClients,
  tpl: RenderedTemplate,
  queueArn: string,
): Promise<string[]> {
  for (const r of tpl.rules) {
    await aws.events.send(
      new PutRuleCommand({ Name: r.name, EventPattern: r.eventPattern, State: 'ENABLED' }),
    )
    await aws.events.send(
      new PutTargetsCommand({ Rule: r.name, Targets: [{ Id: r.targetId, Arn: queueArn }] }),
    )
  }
  return tpl.rules.map((r) => r.name)
}

/** moto names it AWSServiceRoleForspot, path /aws-service-role/spot.amazonaws.com/ (AWS: AWSServiceRoleForEC2Spot). */
export async function createSpotServiceLinkedRole(aws: AwsClients): Promise<string> {
  const r = await aws.iam.send(new CreateServiceLinkedRoleCommand({ AWSServiceName: 'spot.amazonaws.com' }))
  return r.Role!.Arn!
}

// ------------------------------------------------------------------ all of it

/** Seeds the whole "getting started" account. Run on a fresh (or reset) moto. */
export async function seedAws(target: AwsTarget, opts: SeedOptions = {}): Promise<SeedResult> {
  const ctx = ctxOf({ region: target.region, ...opts })
  const aws = awsClients({ ...target, region: ctx.region })
  const tpl = renderCloudFormation(ctx)
  const skipped: string[] = []

  const net = await createNetwork(aws, ctx)
  const cluster = await createEksCluster(
    aws,
    ctx,
    net,
    opts.kubernetesVersion ?? '1.34',
    skipped,
    opts.authenticationMode,
  )
  const oidcProviderArn = await createOidcProvider(aws, cluster.oidcIssuer)
  const node = await createNodeRole(aws, ctx, tpl, skipped)
  const queue = await createInterruptionQueue(aws, tpl)
  if (queue.queueArn !== `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${tpl.queueName}`) {
    throw new Error(`unexpected queue ARN ${queue.queueArn}`)
  }
  const controllerPolicyArns = await createControllerPolicies(aws, tpl)
  const controller = await createControllerRole(
    aws,
    ctx,
    oidcProviderArn,
    cluster.oidcIssuer,
    Object.values(controllerPolicyArns),
  )
  const ruleNames = await createEventRules(aws, tpl, queue.queueArn)
  const spotServiceLinkedRoleArn = await createSpotServiceLinkedRole(aws)

  return {
    ...ctx,
    ...net,
    ...cluster,
    clusterEndpoint: cluster.endpoint,
    oidcProviderArn,
    nodeRoleName: tpl.nodeRoleName,
    ...node,
    ...controller,
    controllerPolicyArns,
    queueName: tpl.queueName,
    ...queue,
    ruleNames,
    spotServiceLinkedRoleArn,
    skipped,
  }
}

/** A short stable id, handy for unique names in scenarios. */
export function shortHash(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 8)
}
