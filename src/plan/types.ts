// One plan format for every command that changes a cluster (install, doctor --fix, tenant, teardown):
// resources say what they want, observe what is there, and know how to close the gap.
import type { HeldLock } from './lock.js'
import type { Aws } from '../context/aws.js'
import type { KubeClient } from '../context/kube.js'
import type { Helm } from '../context/helm.js'
import type { KubeTarget } from '../context/kube-target.js'

export type Action = 'create' | 'update' | 'unchanged' | 'delete'

/**
 * One line of a step: `from` undefined is a field not set before, `to` undefined one the step removes.
 * An `event` (a restart) is something the step does, not a value it sets: it has no old value to show.
 */
export interface FieldChange {
  field: string
  from?: unknown
  to?: unknown
  event?: boolean
}

/** What a resource's observation says must happen; `blocked` stops the plan before any change. */
export interface Verdict {
  action: Action
  changes: FieldChange[]
  /** Why karpctl must not touch it (e.g. a role another tool made): one line with the way out. */
  blocked?: string
  /** Said beside the step in the plan (e.g. "recorded for teardown as a karpctl.io/added-tags tag"). */
  note?: string
}

/** The clients a resource may use; one per run, so reads stay memoized across resources. */
export interface ApplyEnv {
  aws: Aws
  kube: KubeClient
  helm: () => Promise<Helm>
  /** Tags every AWS resource karpctl creates carries. */
  ownershipTags: Record<string, string>
  sleep: (ms: number) => Promise<void>
  /** The run's clock (a restart's timestamp). */
  now: () => Date
  /** A line about a step that waits (nodes draining). */
  progress?: (message: string) => void
  /** Where Kubernetes changes go, proven to be the cluster's before the plan (every plan names it). */
  kubeTarget?: KubeTarget
  /**
   * Takes the cluster's lock (lock.ts) before the first write; runPlan holds it until the apply ends.
   * applyEnv, which every changing command builds its env with, always sets it.
   */
  lock?: (o: { wait: boolean; say: (line: string) => void }) => Promise<HeldLock>
  /** Forgets the run's memoized reads, so a plan observed again sees the cluster as it is now. */
  forget?: () => void
}

/** An IAM action the caller needs on a resource to apply a step (checked by the preflight). */
export interface Permission {
  action: string
  resource: string
}

export interface Resource<S = unknown> {
  /** Stable address, unique in a plan: `iam-role.controller`, `kube.nodepool.default`. */
  address: string
  /** What it is, as the plan prints it: "IAM role", "SQS queue", "Helm release". */
  kind: string
  name: string
  /** A heading to group the plan by. */
  group: string
  dependsOn: string[]
  /** The desired state as data: --json prints it; `documents` are what --show-policies prints. */
  desired: Record<string, unknown>
  documents?: Record<string, unknown>
  permissions: Permission[]
  observe(env: ApplyEnv): Promise<S | null>
  verdict(current: S | null): Verdict
  apply(env: ApplyEnv, current: S | null): Promise<void>
}

export interface Step {
  resource: Resource
  verdict: Verdict
  current: unknown
}

export interface Plan {
  title: string
  steps: Step[]
  /** The kube context the plan writes to. */
  kubeTarget?: KubeTarget
}

export const changing = (s: Step) => s.verdict.action !== 'unchanged'
