// The VPC CNI's own identity. aws-node (kube-system) may get its AWS permissions from its own role —
// IRSA (the ServiceAccount's role-arn annotation) or an EKS Pod Identity association — instead of the
// node role (the EKS best practice); then that role, not the node roles, needs AmazonEKS_CNI_Policy.
// Shared by the collector (which role to read) and node-role (which role to judge).
import type { PodIdentityAssociation, ServiceAccount } from './types.js'

export const AWS_NODE_NAMESPACE = 'kube-system'
export const AWS_NODE_SERVICE_ACCOUNT = 'aws-node'
const ROLE_ARN_ANNOTATION = 'eks.amazonaws.com/role-arn'

export interface AwsNodeIdentity {
  /** The role's ARN; absent for an association whose role was not described. */
  arn?: string
  via: 'irsa' | 'pod-identity'
}

/**
 * aws-node's own role: the IRSA annotation first (the SDK's chain takes the web identity token before
 * container credentials, as the controller's identity is found), else a Pod Identity association.
 */
export function awsNodeIdentity(
  sa: ServiceAccount | null,
  associations: PodIdentityAssociation[],
): AwsNodeIdentity | null {
  const annotated = sa?.metadata.annotations?.[ROLE_ARN_ANNOTATION]
  if (annotated) return { arn: annotated, via: 'irsa' }
  const assoc = associations.find(
    (a) => a.namespace === AWS_NODE_NAMESPACE && a.serviceAccount === AWS_NODE_SERVICE_ACCOUNT,
  )
  if (!assoc) return null
  return assoc.roleArn ? { arn: assoc.roleArn, via: 'pod-identity' } : { via: 'pod-identity' }
}
