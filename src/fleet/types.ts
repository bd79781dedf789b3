// What a fleet run is about and what it found: plain data, rendered by src/report/fleet.ts.
import type { CheckResult } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import type { AwsCredentialIdentity } from './token.js'

export interface FleetScope {
  /** Regions to list clusters in (already expanded: `all` is resolved by discovery). */
  regions: string[] | 'all'
  /** AWS profiles to use, each one principal; empty: the default credential chain. */
  profiles: string[]
  /** With `accounts`: the role assumed in each of them (`arn:<partition>:iam::<account>:role/<roleName>`). */
  roleName?: string
  accounts: string[]
  /** With `roleName`: every active account of the caller's organization instead of `accounts`. */
  organization?: boolean
  /** One endpoint for every AWS service (an emulator); the SDK also honours AWS_ENDPOINT_URL. */
  endpoint?: string
  requestTimeoutMs?: number
}

/** One set of credentials the fleet is seen with: a profile, the default chain, or an assumed role. */
export interface Principal {
  /** How the user named it: `default credentials`, `profile prod`, `role X in 111122223333`. */
  label: string
  profile?: string
  credentials?: AwsCredentialIdentity
  accountId: string
  /** The caller ARN STS reports for these credentials: the identity each cluster is asked as. */
  arn: string
}

export interface FleetCluster {
  name: string
  region: string
  accountId: string
  arn: string
  principal: Principal
}

/** A place discovery could not look (an account whose role could not be assumed, a region that refused). */
export interface DiscoveryGap {
  where: string
  reason: string
}

export type ClusterState = 'judged' | 'no-karpenter' | 'unknown'

export interface ClusterOutcome {
  cluster: FleetCluster
  state: ClusterState
  /** The Karpenter chart version the Helm release runs, when there is one. */
  karpenterVersion?: string
  results: CheckResult[]
  facts?: Facts
  /** Why the cluster could not be judged (state unknown), or what limited the judgement. */
  reason?: string
  /** How the Kubernetes API was reached: an EKS token, or a kubeconfig context (`--kubeconfig-contexts`). */
  access: 'eks-token' | 'kube-context'
  calls: number
  wallTimeMs: number
  /** doctor's exit code for this cluster alone: 0 clean, 1 an error check failed, 2 could not tell. */
  exitCode: 0 | 1 | 2
}

export interface FleetOutcome {
  clusters: ClusterOutcome[]
  gaps: DiscoveryGap[]
  /** Every API call of the run (discovery and clusters), as the call logs record them. */
  calls: string[]
  exitCode: 0 | 1 | 2
}
