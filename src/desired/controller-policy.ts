// The Karpenter controller's IAM policies and interruption rules as the newest getting-started
// CloudFormation template writes them (read as data by ./reference-policy.ts): install writes them,
// doctor's fixes grant PassRole with the template's own statement.
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import {
  NEWEST_REFERENCE,
  type NamedPolicy,
  type ReferenceParams,
  referencePolicies,
  referenceRules,
} from './reference-policy.js'

export type ControllerPolicyParams = ReferenceParams
export type { NamedPolicy }

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

/** The controller's policies as the newest reference template writes them: what install creates. */
export const controllerPolicyDocuments = (p: ControllerPolicyParams): NamedPolicy[] =>
  referencePolicies(NEWEST_REFERENCE, p)

/** Karpenter's node role managed policies; SSM core is advice (needed for Session Manager, not to join). */
export const NODE_MANAGED_POLICIES = ['AmazonEKS_CNI_Policy', 'AmazonEKSWorkerNodePolicy'] as const
export const NODE_ECR_POLICIES = [
  'AmazonEC2ContainerRegistryPullOnly',
  'AmazonEC2ContainerRegistryReadOnly',
] as const
export const NODE_ADVISED_POLICIES = ['AmazonSSMManagedInstanceCore'] as const

/** The EventBridge rules the interruption queue needs (source + detail-type), newest template's. */
export const INTERRUPTION_RULES = referenceRules(NEWEST_REFERENCE)
