// What `why node/NAME` says about one node: the disruption methods in the order Karpenter's
// disruption controller runs them, what blocks them, and — for a node that is leaving, left or never
// joined — why. Plain data: `--json` prints it as is.
import type { Fix } from '../../checks/types.js'
import type { CheckResult } from '../../checks/types.js'
import type { NodeLogLine } from './log-lines.js'

/** The reasons NodePool disruption budgets name (sigs.k8s.io/karpenter pkg/apis/v1 DisruptionReason). */
export type DisruptionReason = 'Underutilized' | 'Empty' | 'Drifted'

export type Method = 'interruption' | 'expiration' | 'drift' | 'emptiness' | 'consolidation'

export interface Step {
  method: Method
  /** yes: Karpenter acts on it now (unless blocked); later: at `at`; maybe: not judged here; no. */
  applies: 'yes' | 'later' | 'maybe' | 'no'
  message: string
  /** When it falls (expiration), when it became or becomes consolidatable. */
  at?: string
  /** The budget reason this method is counted under (interruption and expiration take no budget). */
  reason?: DisruptionReason
  /** The change that lets it go, or keeps it. */
  fix?: Fix
}

export type BlockerKind =
  'not-initialized' | 'node-annotation' | 'pod-annotation' | 'pdb' | 'budget' | 'nominated' | 'no-nodepool'

export interface Blocker {
  kind: BlockerKind
  message: string
  /** The budget reasons it holds back; absent: every graceful method. */
  reasons?: DisruptionReason[]
  /**
   * Karpenter's eventual disruption (drift) passes pod blockers when the NodeClaim has a
   * terminationGracePeriod: the pods are evicted or deleted by then (disruption/types.go NewCandidate).
   */
  passedByGracePeriod?: boolean
  fix?: Fix
}

export type NodeOutcome =
  'going' | 'blocked' | 'kept' | 'leaving' | 'gone' | 'not-joined' | 'launch-failed' | 'could-not-tell'

export interface JoinCause {
  /** The doctor check that speaks to this cause, or `boot-log` / `timeout`. */
  source: string
  status: 'fail' | 'warn' | 'pass' | 'unknown' | 'skipped' | 'info'
  message: string
  fix?: Fix
}

export interface NodeVerdict {
  /** The Node's name, or the NodeClaim's when no Node exists. */
  name: string
  node?: string
  nodeClaim?: string
  nodePool?: string
  outcome: NodeOutcome
  /** One line: what Karpenter will do, or did, and why. */
  headline: string
  steps: Step[]
  blockers: Blocker[]
  /** Launched but not registered, or not launched: the causes, each read, in the order most often true. */
  join?: JoinCause[]
  /** Pods on the node Karpenter would have to move (DaemonSet, mirror and finished pods aside). */
  pods: number
  karpenter: {
    events: { kind: string; reason: string; message: string; count: number; lastSeen: string }[]
    /** The controller's log lines naming the Node or NodeClaim, oldest first (absent: the log was not read). */
    log?: NodeLogLine[]
  }
}

export interface NodeReport {
  schema: 'karpctl.why-node/v1'
  cluster: string
  region: string
  generatedAt: string
  source: 'live' | 'snapshot'
  /** `--with FILE`: judged as if these manifests were applied. */
  with?: string
  nodes: NodeVerdict[]
  /** Budgets by NodePool and reason, as counted now (`--nodes`; a node's own NodePool otherwise). */
  budgets: {
    nodePool: string
    reason: DisruptionReason
    allowed: number
    nodes: number
    disrupting: number
  }[]
  /** Why Karpenter's log lines are not shown (its pods or logs could not be read); absent when they are. */
  controllerLogUnread?: string
  /** Reads that failed: what the verdicts could not take into account. */
  unreadable: string[]
  notJudged: string[]
  /** doctor's results used for a node that never joined (their ids and status). */
  doctor?: Pick<CheckResult, 'meta' | 'status'>[]
  summary: Record<NodeOutcome, number> & { nodes: number }
}
