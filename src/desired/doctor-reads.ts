// Every read doctor's facts layer makes, as permissions: the IAM policy `doctor --print-iam-policy`
// prints (and the README's permissions section shows), and the Kubernetes RBAC rules the
// karpctl-doctor chart's ClusterRole grants. One list each: test/unit/desired/doctor-reads.test.ts
// reads src/facts/ and fails when a call or an API path there has no entry here, or an entry here
// has no call left.

/** IAM actions, by service, in the order the README lists them. */
export const DOCTOR_IAM_ACTIONS: readonly string[] = [
  'sts:GetCallerIdentity',
  'eks:DescribeCluster',
  'eks:ListClusters',
  'eks:ListAddons',
  'eks:ListAccessEntries',
  'eks:DescribeAccessEntry',
  'eks:ListPodIdentityAssociations',
  'eks:DescribePodIdentityAssociation',
  'eks:ListNodegroups',
  'eks:DescribeNodegroup',
  'iam:GetRole',
  'iam:ListAttachedRolePolicies',
  'iam:ListRolePolicies',
  'iam:GetRolePolicy',
  'iam:GetPolicy',
  'iam:GetPolicyVersion',
  'iam:ListOpenIDConnectProviders',
  'iam:ListRoles',
  'iam:GetInstanceProfile',
  'iam:SimulatePrincipalPolicy',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
  // Only for Karpenter 1.0.x (webhooks): the instances the controller's pods run on.
  'ec2:DescribeInstances',
  'sqs:GetQueueUrl',
  'sqs:GetQueueAttributes',
  'events:ListRuleNamesByTarget',
  'events:ListRules',
  'events:DescribeRule',
  'events:ListTargetsByRule',
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'cloudformation:DescribeStackResources',
  // Only where the endpoint cannot look a physical id up (collect-owners.ts's listing fallback).
  'cloudformation:ListStacks',
  'cloudformation:ListStackResources',
]

/** The read-only policy document for the identity doctor runs as (IRSA or Pod Identity role). */
export function doctorIamPolicy(): { Version: string; Statement: object[] } {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'KarpctlDoctorRead',
        Effect: 'Allow',
        Resource: '*',
        Action: [...DOCTOR_IAM_ACTIONS],
      },
    ],
  }
}

/** One Kubernetes RBAC rule, as a ClusterRole lists it. */
export interface RbacRule {
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
  nonResourceURLs?: string[]
  verbs: string[]
}

/**
 * What doctor reads from Kubernetes. `list` on a collection, `get` on a named object. Secrets: Helm keeps
 * its release records in Secrets labelled owner=helm, and RBAC cannot narrow a list by label — so this
 * is `list` on every Secret, the one broad read (the chart's values.yaml says so).
 */
export const DOCTOR_KUBE_READS: readonly RbacRule[] = [
  { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
  { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
  { apiGroups: [''], resources: ['services'], verbs: ['get'] },
  { apiGroups: [''], resources: ['configmaps'], resourceNames: ['aws-auth'], verbs: ['get'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get'] },
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
    verbs: ['list'],
  },
  { apiGroups: ['karpenter.sh'], resources: ['nodepools', 'provisioners'], verbs: ['list'] },
  { apiGroups: ['karpenter.k8s.aws'], resources: ['awsnodetemplates', 'ec2nodeclasses'], verbs: ['list'] },
  { nonResourceURLs: ['/version'], verbs: ['get'] },
]

/**
 * What `doctor --serve` writes: an Event per finding, on the object it is about, read back and patched
 * (its series count) when the same finding is seen again.
 */
export const DOCTOR_SERVE_WRITES: readonly RbacRule[] = [
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'get', 'patch'] },
]
