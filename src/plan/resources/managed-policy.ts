// A managed policy a role wants attached: its own module, below the role kinds that share it (iam-role,
// adopted-role, attached-policies, asked-extras, node-role-policies), so none imports another for a type.
export interface ManagedPolicyWant {
  arn: string
  /** Attached instead when `arn` does not exist in this partition (e.g. ECR PullOnly → ReadOnly). */
  orElse?: string
}
