// Everything one run depends on, in one object, so tests can swap any part of it.
import { Aws } from './aws.js'
import { KubeClient } from './kube.js'
import { resolveKubeCredentials } from './kubeconfig.js'
import { CallLog, Limiter, Memo } from './limiter.js'

export interface RunOptions {
  clusterName: string
  region: string
  profile?: string
  kubeContext?: string
  endpoint?: string
  karpctlVersion: string
  concurrency?: number
  maxAttempts?: number
  /** 'adaptive' for commands that write (install): the SDK slows down when AWS throttles. */
  retryMode?: 'standard' | 'adaptive'
  /** How long one AWS attempt may wait for an answer (default 10 s). */
  requestTimeoutMs?: number
  /** How long one Kubernetes request may wait for an answer (default 15 s). */
  kubeTimeoutMs?: number
}

export interface RunContext {
  options: RunOptions
  aws: Aws
  kube: KubeClient
  log: CallLog
  clock: () => Date
  /** Forgets the memoized answers (after a wait for the cluster's lock, what was read may be stale). */
  forget?: () => void
}

export async function createRunContext(options: RunOptions): Promise<RunContext> {
  const limiter = new Limiter(options.concurrency ?? 16)
  const memo = new Memo()
  const log = new CallLog()
  const aws = new Aws(
    {
      region: options.region,
      profile: options.profile,
      endpoint: options.endpoint,
      maxAttempts: options.maxAttempts,
      retryMode: options.retryMode,
      requestTimeoutMs: options.requestTimeoutMs,
    },
    limiter,
    memo,
    log,
  )
  // Kubernetes has its own bound: its reads do not count against AWS's throttling buckets, and sharing one
  // bound let the first wave of Kubernetes reads hold back the AWS reads that start with them.
  const kubeLimiter = new Limiter(options.concurrency ?? 16)
  const kube = new KubeClient(
    await resolveKubeCredentials(options.kubeContext),
    kubeLimiter,
    memo,
    log,
    options.kubeTimeoutMs,
  )
  return { options, aws, kube, log, clock: () => new Date(), forget: () => memo.clear() }
}
