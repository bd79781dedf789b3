// What a karpctl install is, as pure data: the user's choices plus what the cluster description gave,
// and every name derived from them (Karpenter's getting-started conventions, so doctor finds them).
import { roleName } from './names.js'
import { type NamedPolicy } from './controller-policy.js'
import { NEWEST_REFERENCE, referenceFor, referencePolicies } from './reference-policy.js'
import { interruptionRules, type RuleSpec } from './interruption.js'

export type ControllerIdentity = 'pod-identity' | 'irsa'
export type NodeAccess = 'access-entry' | 'aws-auth'

export interface NodePoolChoice {
  capacityTypes: string[]
  instanceCategories: string[]
  architectures: string[]
  cpuLimit: number
}

export interface InstallSpec {
  clusterName: string
  region: string
  accountId: string
  partition: string
  karpenterVersion: string
  namespace: string
  serviceAccount: string
  identity: ControllerIdentity
  /** `create`: karpctl makes KarpenterNodeRole-<cluster>; else the ARN of a role that already joins nodes. */
  nodeRole: { create: true } | { create: false; arn: string }
  access: NodeAccess
  interruption: boolean
  nodePool: NodePoolChoice
  /** The cluster's OIDC issuer URL (IRSA). */
  oidcIssuer?: string
  /** Subnets and security groups that get `karpenter.sh/discovery=<cluster>`. */
  subnetIds: string[]
  securityGroupIds: string[]
  /** For the tcp/8443 webhook rule of v1.0.x: from this group to `securityGroupIds`. */
  clusterSecurityGroupId?: string
  extraValuesFile?: string
  /** A folder with `karpenter-crd/` and `karpenter/`, instead of the OCI registry. */
  chartDir?: string
  scaleDownClusterAutoscaler?: { namespace: string; name: string }
  /** Take over same-named resources karpctl did not create (only on request). */
  adopt: boolean
  /** A running install karpctl did not make: its resources are used by their real names. */
  existing?: ExistingNames
}

/** What a running install (another tool's) is made of: names install uses instead of its conventions. */
export interface ExistingNames {
  controllerRoleName: string
  /** Failing checks of that role: the plan is blocked on them (doctor --fix, or its owner, repairs them). */
  controllerProblems: string[]
  queueName?: string
  /** Rule key → name of the rule already delivering that event type to the queue. */
  ruleNames: Record<string, string>
  /** The release's own values: the base karpctl's values go over (controller.resources stays). */
  releaseValues: Record<string, unknown>
  summary: string
}

export const DEFAULT_NODEPOOL: NodePoolChoice = {
  capacityTypes: ['on-demand', 'spot'],
  instanceCategories: ['c', 'm', 'r'],
  architectures: ['amd64'],
  cpuLimit: 1000,
}

export { OWNERSHIP, ownershipTags } from './ownership.js'

export interface InstallNames {
  controllerRoleName: string
  controllerRoleArn: string
  nodeRoleName: string
  nodeRoleArn: string
  queueName: string
  queueArn: string
  oidcProviderArn?: string
  rules: RuleSpec[]
  nodeClassName: string
  nodePoolName: string
}

const arnPrefix = (s: InstallSpec, service: string, region = s.region) =>
  `arn:${s.partition}:${service}:${region}:${s.accountId}`

export function installNames(s: InstallSpec): InstallNames {
  const controllerRoleName =
    s.existing?.controllerRoleName ?? roleName(`KarpenterControllerRole-${s.clusterName}`)
  const queueName = (s.existing?.queueName ?? s.clusterName).slice(0, 80)
  const nodeRoleArn = s.nodeRole.create
    ? `${arnPrefix(s, 'iam', '')}:role/${roleName(`KarpenterNodeRole-${s.clusterName}`)}`
    : s.nodeRole.arn
  const issuerHost = s.oidcIssuer?.replace(/^https:\/\//, '')
  return {
    controllerRoleName,
    controllerRoleArn: `${arnPrefix(s, 'iam', '')}:role/${controllerRoleName}`,
    nodeRoleName: nodeRoleArn.slice(nodeRoleArn.lastIndexOf('/') + 1),
    nodeRoleArn,
    queueName,
    queueArn: `${arnPrefix(s, 'sqs')}:${queueName}`,
    oidcProviderArn: issuerHost ? `${arnPrefix(s, 'iam', '')}:oidc-provider/${issuerHost}` : undefined,
    rules: interruptionRules(s.clusterName).map((r) => ({
      ...r,
      name: s.existing?.ruleNames[r.key] ?? r.name,
    })),
    nodeClassName: 'default',
    nodePoolName: 'default',
  }
}

/**
 * The controller's inline policies: the getting-started template of the version installed (a 1.0
 * controller calls what only its template grants), without the queue's when interruption is off.
 */
export function controllerPolicies(s: InstallSpec, extraNodeRoleArns: string[] = []): NamedPolicy[] {
  const n = installNames(s)
  return referencePolicies(referenceFor(s.karpenterVersion)?.version ?? NEWEST_REFERENCE, {
    partition: s.partition,
    region: s.region,
    accountId: s.accountId,
    clusterName: s.clusterName,
    nodeRoleArns: [n.nodeRoleArn, ...extraNodeRoleArns],
    queueArn: n.queueArn,
  }).filter((p) => s.interruption || p.key !== 'InterruptionPolicy')
}

/** Karpenter versions before 1.1 serve conversion webhooks on 8443 (and need the SG rule). */
export function hasWebhooks(version: string): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(version)
  return !!m && Number(m[1]) === 1 && Number(m[2]) === 0
}
