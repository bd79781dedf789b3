// The AWS managed policies of a node role karpctl makes: the install's node role and each tenant's
// share them, and doctor --fix re-attaches them, so all three read one list.
import { NODE_ADVISED_POLICIES, NODE_MANAGED_POLICIES } from '../../desired/controller-policy.js'
import type { ManagedPolicyWant } from './managed-policy.js'

export const managedArn = (partition: string, name: string) => `arn:${partition}:iam::aws:policy/${name}`

/** The AWS managed policies every node role karpctl makes carries (ECR PullOnly, or ReadOnly where absent). */
export function nodeRolePolicies(partition: string): ManagedPolicyWant[] {
  return [
    ...NODE_MANAGED_POLICIES.map((p) => ({ arn: managedArn(partition, p) })),
    {
      arn: managedArn(partition, 'AmazonEC2ContainerRegistryPullOnly'),
      orElse: managedArn(partition, 'AmazonEC2ContainerRegistryReadOnly'),
    },
    ...NODE_ADVISED_POLICIES.map((p) => ({ arn: managedArn(partition, p) })),
  ]
}
