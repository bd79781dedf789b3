// An install karpctl did not make: Karpenter as the getting-started guide makes it with eksctl and the
// real getting-started CloudFormation template, for cluster `demo` in us-west-2.
//
// - AWS side from stacks: `Karpenter-<cluster>` is the real template (fixtures v1.14.1) deployed through
//   moto's CloudFormation (see cloudformation.ts for moto's gaps and the workaround for each): node role
//   KarpenterNodeRole-<cluster>, the six controller managed policies, queue `<cluster>` and its policy,
//   five EventBridge rules named by CloudFormation (Karpenter-<cluster>-<LogicalId>-<random>).
// - eksctl's part: the OIDC provider through IAM's API with eksctl's tags (eksctl's
//   `utils associate-iam-oidc-provider` calls CreateOpenIDConnectProvider; moto's CloudFormation has no
//   AWS::IAM::OIDCProvider), and the IRSA controller role `<cluster>-karpenter` (eksctl's roleName,
//   roleOnly: the chart makes the ServiceAccount) in the stack eksctl names
//   `eksctl-<cluster>-addon-iamserviceaccount-kube-system-karpenter`, with eksctl's stack tags, its trust
//   the cluster's OIDC provider with StringEquals on :sub and :aud, the stack's six policies attached.
// - The cluster: VPC, subnets, cluster and node security groups tagged karpenter.sh/discovery (seed.ts'
//   createNetwork, as eksctl's metadata.tags put it), moto's EKS cluster, a managed node group's role and two Ready Nodes, aws-auth
//   mapping the node group role and KarpenterNodeRole-<cluster> (eksctl's iamIdentityMappings), the spot
//   service-linked role (`aws iam create-service-linked-role --aws-service-name spot.amazonaws.com`).
// - Kubernetes: the guide's `helm upgrade --install karpenter <chart> --namespace kube-system --set …`
//   with the IRSA annotation, then the guide's NodePool and EC2NodeClass (al2023@v20240807 pinned),
//   reported Ready as the controller would.
import { CreateTagsCommand } from '@aws-sdk/client-ec2'
import { CreateOpenIDConnectProviderCommand, CreateRoleCommand } from '@aws-sdk/client-iam'
import type { Bed } from './bed.js'
import { deployStack, loadTemplate, type DeployedStack, type Template } from './cloudformation.js'
import { ACCOUNT_ID, CLUSTER_NAME, DISCOVERY_TAG } from './constants.js'
import type { KubeObject } from './kube-client.js'
import {
  applyWithRetry,
  awsAuthConfigMap,
  createNodegroupNodes,
  defaultEC2NodeClass,
  defaultNodePool,
  helm,
  KARPENTER_CRDS,
  markDeploymentAvailable,
  type ChartVersion,
  markNodeClassReady,
  markNodePoolReady,
  waitForCrdsEstablished,
} from './kube-seed.js'
import { cloudFormationTemplatePath, karpenterChartDir } from './paths.js'
import {
  awsClients,
  createEksCluster,
  createNetwork,
  createSpotServiceLinkedRole,
  type Network,
  type SeedContext,
} from './seed.js'

export const EKSCTL_VERSION = '0.214.0'
/** The AMI alias the guide pins (`al2023@${ALIAS_VERSION}`). */
export const GUIDE_AMI_ALIAS = 'al2023@v20240807'

export interface AdoptedInstall extends SeedContext {
  net: Network
  clusterArn: string
  oidcIssuer: string
  oidcProviderArn: string
  /** `Karpenter-<cluster>`: the getting-started template */
  karpenterStack: DeployedStack
  /** `eksctl-<cluster>-addon-iamserviceaccount-kube-system-karpenter`: the IRSA role */
  irsaStack: DeployedStack
  nodeRoleName: string
  nodeRoleArn: string
  nodegroupRoleArn: string
  /** `<cluster>-karpenter`, eksctl's name */
  controllerRoleName: string
  controllerRoleArn: string
  /** the stack's six AWS::IAM::ManagedPolicy ARNs, attached to the controller role */
  controllerPolicyArns: string[]
  queueName: string
  queueUrl: string
  queueArn: string
  /** the five rules, as CloudFormation named them */
  ruleNames: string[]
  spotServiceLinkedRoleArn: string
  helmRelease: { namespace: string; name: string }
  /** things that could not be made here (e.g. an AWS managed policy moto lacks) */
  skipped: string[]
}

export const irsaStackName = (cluster: string, namespace = 'kube-system', sa = 'karpenter') =>
  `eksctl-${cluster}-addon-iamserviceaccount-${namespace}-${sa}`

/** eksctl's template for `iam.serviceAccounts[]` with roleName + roleOnly + attachPolicyARNs. */
export function eksctlIrsaTemplate(opts: {
  roleName: string
  oidcProviderArn: string
  oidcIssuer: string
  namespace: string
  serviceAccount: string
  policyArns: string[]
}): Template {
  const host = opts.oidcIssuer.replace(/^https:\/\//, '')
  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Description: `IAM role for serviceaccount "${opts.namespace}/${opts.serviceAccount}" [created and managed by eksctl]`,
    Resources: {
      Role1: {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: {
            Statement: [
              {
                Action: ['sts:AssumeRoleWithWebIdentity'],
                Condition: {
                  StringEquals: {
                    [`${host}:aud`]: 'sts.amazonaws.com',
                    [`${host}:sub`]: `system:serviceaccount:${opts.namespace}:${opts.serviceAccount}`,
                  },
                },
                Effect: 'Allow',
                Principal: { Federated: opts.oidcProviderArn },
              },
            ],
            Version: '2012-10-17',
          },
          ManagedPolicyArns: opts.policyArns,
          RoleName: opts.roleName,
        },
      },
    },
    Outputs: { Role1: { Value: { 'Fn::GetAtt': ['Role1', 'Arn'] } } },
  }
}

/** The guide's `helm upgrade --install` arguments (IRSA: the role annotation on the ServiceAccount). */
export function guideHelmArgs(opts: {
  clusterName: string
  /** the IRSA role annotated on the ServiceAccount; none with Pod Identity */
  controllerRoleArn?: string
  namespace?: string
  chartDir?: string
  /** settings.interruptionQueue; the guide's is the cluster name (the stack's queue) */
  interruptionQueue?: string
}): string[] {
  return [
    'upgrade',
    '--install',
    'karpenter',
    opts.chartDir ?? karpenterChartDir('1.14.1'),
    '--namespace',
    opts.namespace ?? 'kube-system',
    '--create-namespace',
    '--set',
    `settings.clusterName=${opts.clusterName}`,
    '--set',
    `settings.interruptionQueue=${opts.interruptionQueue ?? opts.clusterName}`,
    '--set',
    'controller.resources.requests.cpu=1',
    '--set',
    'controller.resources.requests.memory=1Gi',
    '--set',
    'controller.resources.limits.cpu=1',
    '--set',
    'controller.resources.limits.memory=1Gi',
    ...(opts.controllerRoleArn
      ? ['--set', `serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=${opts.controllerRoleArn}`]
      : []),
  ]
}

/** The guide's EC2NodeClass: role KarpenterNodeRole-<cluster>, the pinned AL2023 alias, discovery tags. */
export function guideEC2NodeClass(clusterName: string, role?: string): KubeObject {
  const nc = defaultEC2NodeClass({ clusterName, role })
  return { ...nc, spec: { ...nc.spec, amiSelectorTerms: [{ alias: GUIDE_AMI_ALIAS }] } }
}

/** What eksctl's `create cluster` (withOIDC) leaves: the network, the cluster, the node group's role, the OIDC provider. */
export interface GuideCluster {
  ctx: SeedContext
  net: Network
  clusterArn: string
  /** what EKS says the API server's endpoint is */
  endpoint: string
  oidcIssuer: string
  oidcProviderArn: string
  nodegroupRoleArn: string
  eksctlTags: Record<string, string>
  skipped: string[]
}

/**
 * eksctl create cluster as the guide runs it: network (discovery-tagged, as the guide's cluster config
 * tags it), cluster, the managed node group's role, then `withOIDC`. Shared by every install seeded on
 * the guide's cluster (the getting-started stacks, the Terraform module's resources).
 */
export async function seedGuideCluster(
  bed: Bed,
  opts: { clusterName?: string; kubernetesVersion?: string } = {},
): Promise<GuideCluster> {
  const ctx: SeedContext = {
    clusterName: opts.clusterName ?? CLUSTER_NAME,
    region: bed.region,
    accountId: ACCOUNT_ID,
    partition: 'aws',
  }
  const cn = ctx.clusterName
  const aws = awsClients({ awsEndpoint: bed.awsEndpoint, region: ctx.region })
  const skipped: string[] = []
  const eksctlTags = { 'alpha.eksctl.io/cluster-name': cn, 'alpha.eksctl.io/eksctl-version': EKSCTL_VERSION }
  const net = await createNetwork(aws, ctx)
  // createNetwork tags the subnets and the node group's security group; the guide's cluster config
  // (metadata.tags) puts karpenter.sh/discovery on the cluster security group too.
  await aws.ec2.send(
    new CreateTagsCommand({
      Resources: [net.clusterSecurityGroupId],
      Tags: [{ Key: DISCOVERY_TAG, Value: cn }],
    }),
  )
  const cluster = await createEksCluster(aws, ctx, net, opts.kubernetesVersion ?? '1.34', skipped)
  const ng = await aws.iam.send(
    new CreateRoleCommand({
      RoleName: `eksctl-${cn}-nodegroup-ng-NodeInstanceRole`,
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }),
      Tags: Object.entries(eksctlTags).map(([Key, Value]) => ({ Key, Value })),
    }),
  )
  const oidc = await aws.iam.send(
    new CreateOpenIDConnectProviderCommand({
      Url: cluster.oidcIssuer,
      ClientIDList: ['sts.amazonaws.com'],
      ThumbprintList: ['9e99a48a9960b14926bb7f3b02e22da2b0ab7280'],
      Tags: Object.entries(eksctlTags).map(([Key, Value]) => ({ Key, Value })),
    }),
  )
  return {
    ctx,
    net,
    clusterArn: cluster.clusterArn,
    endpoint: cluster.endpoint,
    oidcIssuer: cluster.oidcIssuer,
    oidcProviderArn: oidc.OpenIDConnectProviderArn!,
    nodegroupRoleArn: ng.Role!.Arn!,
    eksctlTags,
    skipped,
  }
}

export interface GuideKubernetesOptions {
  /** the IRSA role annotated on the ServiceAccount; undefined with Pod Identity */
  controllerRoleArn?: string
  nodeRoleArn: string
  interruptionQueue?: string
  /** false: the node role joins through an EKS access entry, not aws-auth */
  nodeRoleInAwsAuth?: boolean
  /** the release's namespace (kube-system) */
  namespace?: string
  /** the chart (the fixture's 1.14.1) and the CRDs to wait for */
  chartDir?: string
  crds?: ChartVersion
  /** the whole `helm` command line, when the tool's is not the guide's */
  helmArgs?: string[]
  /** the EC2NodeClass (the guide's) */
  nodeClass?: KubeObject
  /**
   * play the controller: Deployment available, EC2NodeClass and NodePool Ready (default true). false on
   * a `karpenter: true` bed: the real controller reports all three.
   */
  markAvailable?: boolean
}

/**
 * The Kubernetes side of the guide: aws-auth mapping the node group's role and Karpenter's node role,
 * the node group's Nodes, the guide's `helm upgrade --install` (IRSA annotation; the interruption queue
 * given), the guide's EC2NodeClass and NodePool, reported Ready as the controller would (unless
 * `markAvailable: false`: then the real controller's to report).
 */
export async function seedGuideKubernetes(
  bed: Bed,
  cluster: GuideCluster,
  opts: GuideKubernetesOptions,
): Promise<{ namespace: string; name: string }> {
  const { ctx, net } = cluster
  const cn = ctx.clusterName
  // A node role with an EKS access entry is not mapped in aws-auth (nodeRoleInAwsAuth: false).
  const mapped = opts.nodeRoleInAwsAuth === false ? [] : [opts.nodeRoleArn]
  await bed.kube.apply(awsAuthConfigMap([cluster.nodegroupRoleArn, ...mapped]))
  await createNodegroupNodes(bed.kube, { count: 2, region: ctx.region })
  const helmRelease = { namespace: opts.namespace ?? 'kube-system', name: 'karpenter' }
  await helm(
    bed,
    opts.helmArgs ??
      guideHelmArgs({
        clusterName: cn,
        controllerRoleArn: opts.controllerRoleArn,
        namespace: helmRelease.namespace,
        interruptionQueue: opts.interruptionQueue,
        chartDir: opts.chartDir,
      }),
  )
  await waitForCrdsEstablished(bed.kube, KARPENTER_CRDS[opts.crds ?? '1.14.1'])
  const play = opts.markAvailable !== false
  if (play) await markDeploymentAvailable(bed.kube, helmRelease.namespace, helmRelease.name)
  await applyWithRetry(bed.kube, opts.nodeClass ?? guideEC2NodeClass(cn))
  await applyWithRetry(bed.kube, defaultNodePool())
  if (!play) return helmRelease
  await markNodeClassReady(bed.kube, 'default', {
    subnets: net.subnetIds.map((id, i) => ({ id, zone: net.availabilityZones[i]! })),
    securityGroups: [
      { id: net.clusterSecurityGroupId, name: `eks-cluster-sg-${cn}-1234567890` },
      { id: net.nodeSecurityGroupId, name: `eksctl-${cn}-nodegroup-sg` },
    ],
    instanceProfile: `${cn}_16072487391293873426`,
  })
  await markNodePoolReady(bed.kube, 'default')
  return helmRelease
}

/** Seeds the whole install on a fresh bed. ~5 s on a warm bed. */
export async function seedAdoptedInstall(
  bed: Bed,
  opts: {
    clusterName?: string
    kubernetesVersion?: string
    /** the getting-started template (the fixture's 1.14.1) */
    templatePath?: string
    /** the chart it is installed with, and its CRDs */
    chartDir?: string
    crds?: ChartVersion
    /** see GuideKubernetesOptions.markAvailable */
    markAvailable?: boolean
  } = {},
): Promise<AdoptedInstall> {
  const cluster = await seedGuideCluster(bed, opts)
  const { ctx, eksctlTags, oidcProviderArn, skipped } = cluster
  const cn = ctx.clusterName
  const aws = awsClients({ awsEndpoint: bed.awsEndpoint, region: ctx.region })

  // aws cloudformation create-stack --stack-name Karpenter-<cluster> --template-body file://cloudformation.yaml
  //   --capabilities CAPABILITY_NAMED_IAM --parameters ParameterKey=ClusterName,ParameterValue=<cluster>
  const karpenterStack = await deployStack(bed, aws, {
    stackName: `Karpenter-${cn}`,
    template: loadTemplate(opts.templatePath ?? cloudFormationTemplatePath()),
    parameters: { ClusterName: cn },
  })
  const byType = (type: string) => karpenterStack.resources.filter((r) => r.type === type)
  const controllerPolicyArns = byType('AWS::IAM::ManagedPolicy').map((r) => r.physicalId)
  const nodeRoleName = karpenterStack.physical.KarpenterNodeRole!
  const queueUrl = karpenterStack.physical.KarpenterInterruptionQueue!
  const queueName = queueUrl.split('/').pop()!

  // eksctl create iamserviceaccount --cluster <cluster> --namespace kube-system --name karpenter
  //   --role-name <cluster>-karpenter --attach-policy-arn … --role-only --approve
  const controllerRoleName = `${cn}-karpenter`
  const irsaStack = await deployStack(bed, aws, {
    stackName: irsaStackName(cn),
    template: eksctlIrsaTemplate({
      roleName: controllerRoleName,
      oidcProviderArn,
      oidcIssuer: cluster.oidcIssuer,
      namespace: 'kube-system',
      serviceAccount: 'karpenter',
      policyArns: controllerPolicyArns,
    }),
    tags: {
      ...eksctlTags,
      'eksctl.cluster.k8s.io/v1alpha1/cluster-name': cn,
      'alpha.eksctl.io/iamserviceaccount-name': 'kube-system/karpenter',
    },
  })
  const controllerRoleArn = `arn:aws:iam::${ctx.accountId}:role/${irsaStack.physical.Role1}`
  const spotServiceLinkedRoleArn = await createSpotServiceLinkedRole(aws)

  // Kubernetes: aws-auth (eksctl's iamIdentityMappings + the node group), node group Nodes, the chart.
  const nodeRoleArn = `arn:aws:iam::${ctx.accountId}:role/${nodeRoleName}`
  const helmRelease = await seedGuideKubernetes(bed, cluster, {
    controllerRoleArn,
    nodeRoleArn,
    interruptionQueue: queueName,
    chartDir: opts.chartDir,
    crds: opts.crds,
    markAvailable: opts.markAvailable,
  })

  return {
    ...ctx,
    net: cluster.net,
    clusterArn: cluster.clusterArn,
    oidcIssuer: cluster.oidcIssuer,
    oidcProviderArn,
    karpenterStack,
    irsaStack,
    nodeRoleName,
    nodeRoleArn,
    nodegroupRoleArn: cluster.nodegroupRoleArn,
    controllerRoleName,
    controllerRoleArn,
    controllerPolicyArns,
    queueName,
    queueUrl,
    queueArn: `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${queueName}`,
    ruleNames: byType('AWS::Events::Rule').map((r) => r.physicalId),
    spotServiceLinkedRoleArn,
    helmRelease,
    skipped,
  }
}
