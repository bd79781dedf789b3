// The Karpenter controller's IAM policies, as the v1.14.1 getting-started CloudFormation template
// writes them (test/unit/spec/controller-policy.test.ts compares them with ../shared/fixtures).
// doctor uses them as the reference for `controller-policy`; install writes them.
import type { PolicyDocument, PolicyStatement } from '../facts/types.js'

export interface ControllerPolicyParams {
  partition: string
  region: string
  accountId: string
  clusterName: string
  /** Node roles the controller may pass to EC2 (default role + one per tenant). */
  nodeRoleArns: string[]
  queueArn: string
}

export interface NamedPolicy {
  /** CloudFormation logical id, e.g. NodeLifecyclePolicy. */
  key: string
  name: string
  document: PolicyDocument
}

/** The service principals of EC2 (the commercial partitions' and China's). */
export const EC2_SERVICES = ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn']

/**
 * The controller may pass these node roles to EC2, and nothing else: the reference template's
 * AllowPassingInstanceRole. install, tenant and doctor's fixes all write this one statement.
 */
export function passRoleStatement(roleArns: string[], sid = 'AllowPassingInstanceRole'): PolicyStatement {
  return {
    Sid: sid,
    Effect: 'Allow',
    Resource: roleArns.length === 1 ? (roleArns[0] as string) : roleArns,
    Action: 'iam:PassRole',
    Condition: { StringEquals: { 'iam:PassedToService': EC2_SERVICES } },
  }
}

/** The inline policy doctor's fix writes on the controller role: PassRole on every node role in use. */
export const PASS_NODE_ROLES_POLICY = 'KarpctlPassNodeRoles'

/** A policy document holding only {@link passRoleStatement}. */
export const passRolePolicy = (roleArns: string[], sid?: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [passRoleStatement(roleArns, sid)],
})

export function controllerPolicyDocuments(p: ControllerPolicyParams): NamedPolicy[] {
  const ec2 = (type: string, account = '*') => `arn:${p.partition}:ec2:${p.region}:${account}:${type}/*`
  const clusterOwned = { [`aws:ResourceTag/kubernetes.io/cluster/${p.clusterName}`]: 'owned' }
  const requestOwned = {
    [`aws:RequestTag/kubernetes.io/cluster/${p.clusterName}`]: 'owned',
    'aws:RequestTag/eks:eks-cluster-name': p.clusterName,
  }
  const taggedResources = [
    'fleet',
    'instance',
    'volume',
    'network-interface',
    'launch-template',
    'spot-instances-request',
  ].map((t) => ec2(t))
  const instanceProfiles = `arn:${p.partition}:iam::${p.accountId}:instance-profile/*`
  const clusterArn = `arn:${p.partition}:eks:${p.region}:${p.accountId}:cluster/${p.clusterName}`
  const regionTag = { 'aws:ResourceTag/topology.kubernetes.io/region': p.region }

  const nodeLifecycle: PolicyStatement[] = [
    {
      Sid: 'AllowScopedEC2InstanceAccessActions',
      Effect: 'Allow',
      Resource: [
        ec2('image', ''),
        ec2('snapshot', ''),
        ec2('security-group'),
        ec2('subnet'),
        ec2('capacity-reservation'),
        ec2('placement-group'),
      ],
      Action: ['ec2:RunInstances', 'ec2:CreateFleet'],
    },
    {
      Sid: 'AllowScopedEC2LaunchTemplateAccessActions',
      Effect: 'Allow',
      Resource: ec2('launch-template'),
      Action: ['ec2:RunInstances', 'ec2:CreateFleet'],
      Condition: { StringEquals: clusterOwned, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
    },
    {
      Sid: 'AllowScopedEC2InstanceActionsWithTags',
      Effect: 'Allow',
      Resource: taggedResources,
      Action: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
      Condition: { StringEquals: requestOwned, StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' } },
    },
    {
      Sid: 'AllowScopedResourceCreationTagging',
      Effect: 'Allow',
      Resource: taggedResources,
      Action: 'ec2:CreateTags',
      Condition: {
        StringEquals: {
          ...requestOwned,
          'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
        },
        StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
      },
    },
    {
      Sid: 'AllowScopedResourceTagging',
      Effect: 'Allow',
      Resource: ec2('instance'),
      Action: 'ec2:CreateTags',
      Condition: {
        StringEquals: clusterOwned,
        StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
        StringEqualsIfExists: { 'aws:RequestTag/eks:eks-cluster-name': p.clusterName },
        'ForAllValues:StringEquals': {
          'aws:TagKeys': ['eks:eks-cluster-name', 'karpenter.sh/nodeclaim', 'Name'],
        },
      },
    },
    {
      Sid: 'AllowScopedDeletion',
      Effect: 'Allow',
      Resource: [ec2('instance'), ec2('launch-template')],
      Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      Condition: { StringEquals: clusterOwned, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
    },
  ]

  const iamIntegration: PolicyStatement[] = [
    passRoleStatement(p.nodeRoleArns),
    {
      Sid: 'AllowScopedInstanceProfileCreationActions',
      Effect: 'Allow',
      Resource: instanceProfiles,
      Action: ['iam:CreateInstanceProfile'],
      Condition: {
        StringEquals: { ...requestOwned, 'aws:RequestTag/topology.kubernetes.io/region': p.region },
        StringLike: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    },
    {
      Sid: 'AllowScopedInstanceProfileTagActions',
      Effect: 'Allow',
      Resource: instanceProfiles,
      Action: ['iam:TagInstanceProfile'],
      Condition: {
        StringEquals: {
          ...clusterOwned,
          ...regionTag,
          ...requestOwned,
          'aws:RequestTag/topology.kubernetes.io/region': p.region,
        },
        StringLike: {
          'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*',
          'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*',
        },
      },
    },
    {
      Sid: 'AllowScopedInstanceProfileActions',
      Effect: 'Allow',
      Resource: instanceProfiles,
      Action: [
        'iam:AddRoleToInstanceProfile',
        'iam:RemoveRoleFromInstanceProfile',
        'iam:DeleteInstanceProfile',
      ],
      Condition: {
        StringEquals: { ...clusterOwned, ...regionTag },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    },
  ]

  const eksIntegration: PolicyStatement[] = [
    {
      Sid: 'AllowAPIServerEndpointDiscovery',
      Effect: 'Allow',
      Resource: clusterArn,
      Action: 'eks:DescribeCluster',
    },
  ]

  const interruption: PolicyStatement[] = [
    {
      Sid: 'AllowInterruptionQueueActions',
      Effect: 'Allow',
      Resource: p.queueArn,
      Action: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
    },
  ]

  const zonalShift: PolicyStatement[] = [
    {
      Sid: 'AllowZonalShiftStatusReadOnly',
      Effect: 'Allow',
      Resource: '*',
      Action: ['arc-zonal-shift:GetManagedResource'],
      Condition: { StringEquals: { 'arc-zonal-shift:ResourceIdentifier': clusterArn } },
    },
  ]

  const resourceDiscovery: PolicyStatement[] = [
    {
      Sid: 'AllowRegionalReadActions',
      Effect: 'Allow',
      Resource: '*',
      Action: [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeImages',
        'ec2:DescribeInstances',
        'ec2:DescribeInstanceStatus',
        'ec2:DescribeInstanceTypeOfferings',
        'ec2:DescribeInstanceTypes',
        'ec2:DescribeLaunchTemplates',
        'ec2:DescribePlacementGroups',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeSpotPriceHistory',
        'ec2:DescribeSubnets',
      ],
      Condition: { StringEquals: { 'aws:RequestedRegion': p.region } },
    },
    {
      Sid: 'AllowSSMReadActions',
      Effect: 'Allow',
      Resource: `arn:${p.partition}:ssm:${p.region}::parameter/aws/service/*`,
      Action: 'ssm:GetParameter',
    },
    { Sid: 'AllowPricingReadActions', Effect: 'Allow', Resource: '*', Action: 'pricing:GetProducts' },
    {
      Sid: 'AllowUnscopedInstanceProfileListAction',
      Effect: 'Allow',
      Resource: '*',
      Action: 'iam:ListInstanceProfiles',
    },
    {
      Sid: 'AllowInstanceProfileReadActions',
      Effect: 'Allow',
      Resource: instanceProfiles,
      Action: 'iam:GetInstanceProfile',
    },
  ]

  const doc = (Statement: PolicyStatement[]): PolicyDocument => ({ Version: '2012-10-17', Statement })
  const c = p.clusterName
  return [
    {
      key: 'NodeLifecyclePolicy',
      name: `KarpenterControllerNodeLifecyclePolicy-${c}`,
      document: doc(nodeLifecycle),
    },
    {
      key: 'IAMIntegrationPolicy',
      name: `KarpenterControllerIAMIntegrationPolicy-${c}`,
      document: doc(iamIntegration),
    },
    {
      key: 'EKSIntegrationPolicy',
      name: `KarpenterControllerEKSIntegrationPolicy-${c}`,
      document: doc(eksIntegration),
    },
    {
      key: 'InterruptionPolicy',
      name: `KarpenterControllerInterruptionPolicy-${c}`,
      document: doc(interruption),
    },
    { key: 'ZonalShiftPolicy', name: `KarpenterControllerZonalShiftPolicy-${c}`, document: doc(zonalShift) },
    {
      key: 'ResourceDiscoveryPolicy',
      name: `KarpenterControllerResourceDiscoveryPolicy-${c}`,
      document: doc(resourceDiscovery),
    },
  ]
}

/** Karpenter's node role managed policies; SSM core is advice (needed for Session Manager, not to join). */
export const NODE_MANAGED_POLICIES = ['AmazonEKS_CNI_Policy', 'AmazonEKSWorkerNodePolicy'] as const
export const NODE_ECR_POLICIES = [
  'AmazonEC2ContainerRegistryPullOnly',
  'AmazonEC2ContainerRegistryReadOnly',
] as const
export const NODE_ADVISED_POLICIES = ['AmazonSSMManagedInstanceCore'] as const

/** The five EventBridge rules the interruption queue needs: source + detail-type. */
export const INTERRUPTION_RULES = [
  { key: 'ScheduledChangeRule', source: 'aws.health', detailType: 'AWS Health Event' },
  { key: 'SpotInterruptionRule', source: 'aws.ec2', detailType: 'EC2 Spot Instance Interruption Warning' },
  { key: 'RebalanceRule', source: 'aws.ec2', detailType: 'EC2 Instance Rebalance Recommendation' },
  { key: 'InstanceStateChangeRule', source: 'aws.ec2', detailType: 'EC2 Instance State-change Notification' },
  {
    key: 'CapacityReservationInterruptionRule',
    source: 'aws.ec2',
    detailType: 'EC2 Capacity Reservation Instance Interruption Warning',
  },
] as const
