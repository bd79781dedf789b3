// The controller policy terraform-aws-eks's `modules/karpenter` writes itself (policy.tf), not the
// getting-started template's: v21.19.0's `data.aws_iam_policy_document.controller`, and v20.37.2's
// `data.aws_iam_policy_document.v1` (`enable_v1_permissions = true`), which is v21's less the statements
// and actions v21 added (placement groups, capacity reservations, zonal shift, ListInstanceProfiles).
// Rendered as aws_iam_policy_document renders it: one-element lists as strings, conditions grouped by test.
import type { SeedContext } from './seed.js'

interface Cond {
  test: string
  variable: string
  values: string[]
}
interface Stmt {
  sid: string
  resources: string[]
  actions: string[]
  conditions?: Cond[]
}

const one = (v: string[]) => (v.length === 1 ? v[0]! : v)

function render(statements: Stmt[]): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: statements.map((s) => {
      const condition: Record<string, Record<string, string | string[]>> = {}
      for (const c of s.conditions ?? []) (condition[c.test] ??= {})[c.variable] = one(c.values)
      return {
        Sid: s.sid,
        Effect: 'Allow',
        Action: one(s.actions),
        Resource: one(s.resources),
        ...(s.conditions ? { Condition: condition } : {}),
      }
    }),
  })
}

/** What v21 added to v20's v1 policy: whole statements by Sid, and single resources and actions. */
const V21_ONLY = {
  sids: ['AllowZonalShiftReadActions', 'AllowUnscopedInstanceProfileListAction'],
  entries: [
    'ec2:DescribeCapacityReservations',
    'ec2:DescribeInstanceStatus',
    'ec2:DescribePlacementGroups',
    ':placement-group/*',
    'AllowScopedEC2InstanceActionsWithTags:capacity-reservation/*',
  ],
}

export function terraformModulePolicy(
  ctx: SeedContext,
  opts: { major: 20 | 21; queueArn: string; nodeRoleArn: string },
): string {
  const { partition: p, region: r, accountId: a, clusterName: cn } = ctx
  const ec2 = (kind: string) => `arn:${p}:ec2:${r}:*:${kind}/*`
  const profile = `arn:${p}:iam::${a}:instance-profile/*`
  const cluster = `arn:${p}:eks:${r}:${a}:cluster/${cn}`
  const eq = (variable: string, ...values: string[]): Cond => ({ test: 'StringEquals', variable, values })
  const like = (variable: string): Cond => ({ test: 'StringLike', variable, values: ['*'] })
  const owned = (k: 'ResourceTag' | 'RequestTag') => eq(`aws:${k}/kubernetes.io/cluster/${cn}`, 'owned')
  const clusterName = eq('aws:RequestTag/eks:eks-cluster-name', cn)
  const taggable = [
    'fleet',
    'instance',
    'volume',
    'network-interface',
    'launch-template',
    'spot-instances-request',
  ]
  const all: Stmt[] = [
    {
      sid: 'AllowScopedEC2InstanceAccessActions',
      resources: [
        `arn:${p}:ec2:${r}::image/*`,
        `arn:${p}:ec2:${r}::snapshot/*`,
        ec2('security-group'),
        ec2('subnet'),
        ec2('capacity-reservation'),
        ec2('placement-group'),
      ],
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
    },
    {
      sid: 'AllowScopedEC2LaunchTemplateAccessActions',
      resources: [ec2('launch-template')],
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
      conditions: [owned('ResourceTag'), like('aws:ResourceTag/karpenter.sh/nodepool')],
    },
    {
      sid: 'AllowScopedEC2InstanceActionsWithTags',
      resources: [...taggable.map(ec2), ec2('capacity-reservation')],
      actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
      conditions: [owned('RequestTag'), clusterName, like('aws:RequestTag/karpenter.sh/nodepool')],
    },
    {
      sid: 'AllowScopedResourceCreationTagging',
      resources: taggable.map(ec2),
      actions: ['ec2:CreateTags'],
      conditions: [
        owned('RequestTag'),
        clusterName,
        eq('ec2:CreateAction', 'RunInstances', 'CreateFleet', 'CreateLaunchTemplate'),
        like('aws:RequestTag/karpenter.sh/nodepool'),
      ],
    },
    {
      sid: 'AllowScopedResourceTagging',
      resources: [ec2('instance')],
      actions: ['ec2:CreateTags'],
      conditions: [
        owned('ResourceTag'),
        like('aws:ResourceTag/karpenter.sh/nodepool'),
        { test: 'StringEqualsIfExists', variable: 'aws:RequestTag/eks:eks-cluster-name', values: [cn] },
        {
          test: 'ForAllValues:StringEquals',
          variable: 'aws:TagKeys',
          values: ['eks:eks-cluster-name', 'karpenter.sh/nodeclaim', 'Name'],
        },
      ],
    },
    {
      sid: 'AllowScopedDeletion',
      resources: [ec2('instance'), ec2('launch-template')],
      actions: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      conditions: [owned('ResourceTag'), like('aws:ResourceTag/karpenter.sh/nodepool')],
    },
    {
      sid: 'AllowRegionalReadActions',
      resources: ['*'],
      actions: [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeAvailabilityZones',
        'ec2:DescribeImages',
        'ec2:DescribeInstances',
        'ec2:DescribeInstanceTypeOfferings',
        'ec2:DescribeInstanceTypes',
        'ec2:DescribeLaunchTemplates',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeInstanceStatus',
        'ec2:DescribeSpotPriceHistory',
        'ec2:DescribeSubnets',
        'ec2:DescribePlacementGroups',
      ],
      conditions: [eq('aws:RequestedRegion', r)],
    },
    {
      sid: 'AllowSSMReadActions',
      resources: [`arn:${p}:ssm:${r}::parameter/aws/service/*`],
      actions: ['ssm:GetParameter'],
    },
    { sid: 'AllowPricingReadActions', resources: ['*'], actions: ['pricing:GetProducts'] },
    {
      sid: 'AllowZonalShiftReadActions',
      resources: [cluster],
      actions: ['arc-zonal-shift:GetManagedResource'],
    },
    {
      sid: 'AllowInterruptionQueueActions',
      resources: [opts.queueArn],
      actions: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
    },
    {
      sid: 'AllowPassingInstanceRole',
      resources: [opts.nodeRoleArn],
      actions: ['iam:PassRole'],
      conditions: [eq('iam:PassedToService', 'ec2.amazonaws.com')],
    },
    {
      sid: 'AllowScopedInstanceProfileCreationActions',
      resources: [profile],
      actions: ['iam:CreateInstanceProfile'],
      conditions: [
        owned('RequestTag'),
        clusterName,
        eq('aws:RequestTag/topology.kubernetes.io/region', r),
        like('aws:RequestTag/karpenter.k8s.aws/ec2nodeclass'),
      ],
    },
    {
      sid: 'AllowScopedInstanceProfileTagActions',
      resources: [profile],
      actions: ['iam:TagInstanceProfile'],
      conditions: [
        owned('ResourceTag'),
        eq('aws:ResourceTag/topology.kubernetes.io/region', r),
        owned('RequestTag'),
        clusterName,
        eq('aws:RequestTag/topology.kubernetes.io/region', r),
        like('aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass'),
        like('aws:RequestTag/karpenter.k8s.aws/ec2nodeclass'),
      ],
    },
    {
      sid: 'AllowScopedInstanceProfileActions',
      resources: [profile],
      actions: [
        'iam:AddRoleToInstanceProfile',
        'iam:RemoveRoleFromInstanceProfile',
        'iam:DeleteInstanceProfile',
      ],
      conditions: [
        owned('ResourceTag'),
        eq('aws:ResourceTag/topology.kubernetes.io/region', r),
        like('aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass'),
      ],
    },
    { sid: 'AllowInstanceProfileReadActions', resources: [profile], actions: ['iam:GetInstanceProfile'] },
    {
      sid: 'AllowUnscopedInstanceProfileListAction',
      resources: ['*'],
      actions: ['iam:ListInstanceProfiles'],
    },
    { sid: 'AllowAPIServerEndpointDiscovery', resources: [cluster], actions: ['eks:DescribeCluster'] },
  ]
  if (opts.major === 21) return render(all)
  const kept = (sid: string, e: string) =>
    !V21_ONLY.entries.some((x) => e.endsWith(x) || `${sid}:${e.split(':').pop()}` === x)
  return render(
    all
      .filter((s) => !V21_ONLY.sids.includes(s.sid))
      .map((s) => ({
        ...s,
        actions: s.actions.filter((x) => kept(s.sid, x)),
        resources: s.resources.filter((x) => kept(s.sid, x)),
      })),
  )
}
