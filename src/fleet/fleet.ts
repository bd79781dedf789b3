// The fleet doctor use case: discover the clusters, then doctor each (collect, then the whole catalog) with
// a bound on how many run at once and a time limit each. A cluster that cannot be judged is `unknown` with
// the reason and never stops the rest; the run's exit code is its worst cluster's.
import { installOf } from '../facts/rendered-install.js'
import { catalog } from '../checks/catalog.js'
import { couldNotTell, hasErrorFailure, runChecks, selectChecks } from '../checks/run.js'
import type { CheckResult } from '../checks/types.js'
import { CallLog, Limiter, Memo } from '../context/limiter.js'
import { KubeClient } from '../context/kube.js'
import type { RunContext } from '../context/run-context.js'
import { KarpctlError } from '../errors.js'
import { collect } from '../facts/collect.js'
import type { Facts } from '../facts/types.js'
import { clusterAccess } from './kube-access.js'
import { discover, FleetAws } from './discover.js'
import type { ClusterOutcome, FleetCluster, FleetOutcome, FleetScope } from './types.js'

export const DEFAULT_FLEET_CONCURRENCY = 8
export const DEFAULT_CLUSTER_TIMEOUT_S = 300

export interface FleetRequest {
  scope: FleetScope
  /** The region STS (AssumeRole) and EC2 (DescribeRegions) are asked in. */
  home: string
  only?: string[]
  skip?: string[]
  karpctlVersion: string
  /** Clusters doctored at once (the bound inside one cluster is its own). */
  concurrency?: number
  /** Seconds one cluster may take, collection and judgement. */
  clusterTimeoutS?: number
  useKubeContexts?: boolean
  onDiscovered?: (count: number) => void
  onCluster?: (outcome: ClusterOutcome, done: number, total: number) => void
}

export async function fleetDoctor(req: FleetRequest): Promise<FleetOutcome> {
  const checks = selectChecks(catalog, req.only, req.skip)
  const timeoutS = req.clusterTimeoutS ?? DEFAULT_CLUSTER_TIMEOUT_S
  const fleet = new FleetAws({
    ...req.scope,
    requestTimeoutMs: req.scope.requestTimeoutMs ?? Math.min(10_000, Math.max(500, (timeoutS * 1000) / 4)),
  })
  try {
    const found = await discover(req.scope, req.home, fleet)
    req.onDiscovered?.(found.clusters.length)
    const bound = new Limiter(req.concurrency ?? DEFAULT_FLEET_CONCURRENCY)
    let done = 0
    const clusters = await Promise.all(
      found.clusters.map((c) =>
        bound.run(async () => {
          const outcome = await judgeCluster(c, fleet, checks, req, timeoutS)
          req.onCluster?.(outcome, ++done, found.clusters.length)
          return outcome
        }),
      ),
    )
    clusters.sort(byWorst)
    const exitCode = worstExit([
      ...clusters.map((c) => c.exitCode),
      ...(found.gaps.length ? [2 as const] : []),
    ])
    return { clusters, gaps: found.gaps, calls: fleet.log.calls, exitCode }
  } finally {
    fleet.destroy()
  }
}

/** One cluster's calls, also counted in the run's log (the fleet's total). */
class ClusterLog extends CallLog {
  constructor(private readonly run: CallLog) {
    super()
  }

  override record(op: string, write = false): void {
    super.record(op, write)
    this.run.record(op, write)
  }
}

/** Failure beats could-not-tell, as in one cluster's doctor: what was found matters more than what was not seen. */
export function worstExit(codes: (0 | 1 | 2)[]): 0 | 1 | 2 {
  return codes.includes(1) ? 1 : codes.includes(2) ? 2 : 0
}

const EXIT_RANK = { 1: 2, 2: 1, 0: 0 } as const
/** Error checks failed on a cluster that runs Karpenter (on one without, they only say it is absent). */
const failing = (o: ClusterOutcome) =>
  o.state !== 'judged'
    ? 0
    : o.results.filter((r) => r.status === 'fail' && r.meta.severity === 'error').length

/** Worst first: failures (most first), then unknown, then clean, then without Karpenter; ties by account, region, name. */
export function byWorst(a: ClusterOutcome, b: ClusterOutcome): number {
  return (
    EXIT_RANK[b.exitCode] - EXIT_RANK[a.exitCode] ||
    failing(b) - failing(a) ||
    Number(a.state === 'no-karpenter') - Number(b.state === 'no-karpenter') ||
    a.cluster.accountId.localeCompare(b.cluster.accountId) ||
    a.cluster.region.localeCompare(b.cluster.region) ||
    a.cluster.name.localeCompare(b.cluster.name)
  )
}

/** The exit code of one cluster's judgement, as `karpctl doctor` would end on it. */
export function clusterExit(results: CheckResult[]): 0 | 1 | 2 {
  if (hasErrorFailure(results)) return 1
  return couldNotTell(results) ? 2 : 0
}

/** No Helm release of Karpenter and none of its CRDs: the cluster does not run Karpenter. */
export function withoutKarpenter(facts: Facts): boolean {
  const { release, crds } = facts.kube
  return release.ok && release.value === null && crds.ok && crds.value.length === 0
}

async function judgeCluster(
  cluster: FleetCluster,
  fleet: FleetAws,
  checks: ReturnType<typeof selectChecks>,
  req: FleetRequest,
  timeoutS: number,
): Promise<ClusterOutcome> {
  const started = performance.now()
  const log = new ClusterLog(fleet.log)
  const aws = fleet.for(cluster.principal, cluster.region).withLog(log)
  let via: ClusterOutcome['access'] = req.useKubeContexts ? 'kube-context' : 'eks-token'
  let privateEndpoint = false
  const unknown = (reason: string): ClusterOutcome => ({
    cluster,
    state: 'unknown',
    results: [],
    reason,
    access: via,
    calls: log.calls.length,
    wallTimeMs: Math.round(performance.now() - started),
    exitCode: 2,
  })
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new KarpctlError(`did not finish within ${timeoutS} s (--timeout)`, 'TIMEOUT')),
      timeoutS * 1000,
    )
  })
  try {
    const facts = await Promise.race([
      deadline,
      (async () => {
        const access = await clusterAccess(cluster, aws, req.useKubeContexts === true)
        via = access.via
        privateEndpoint = access.privateEndpoint === true
        const kubeTimeoutMs = Math.min(15_000, Math.max(500, (timeoutS * 1000) / 3))
        // Each cluster's Kubernetes reads have their own memo: the same path is another object elsewhere.
        const kube = new KubeClient(access.creds, new Limiter(16), new Memo(), log, kubeTimeoutMs)
        const ctx: RunContext = {
          options: {
            clusterName: cluster.name,
            region: cluster.region,
            profile: cluster.principal.profile,
            endpoint: req.scope.endpoint,
            karpctlVersion: req.karpctlVersion,
          },
          aws,
          kube,
          log,
          clock: () => new Date(),
        }
        return collect(ctx)
      })(),
    ])
    const results = runChecks(checks, facts)
    const none = withoutKarpenter(facts)
    // Its Helm release, or the install Argo CD, Flux or kubectl applied.
    const release = installOf(facts.kube)
    return {
      cluster,
      state: none ? 'no-karpenter' : 'judged',
      ...(release ? { karpenterVersion: release.chartVersion } : {}),
      results,
      facts,
      access: via,
      calls: log.calls.length,
      wallTimeMs: Math.round(performance.now() - started),
      exitCode: none ? 0 : clusterExit(results),
    }
  } catch (err) {
    // Not karpctl's own error: a bug met on this cluster's data. It says so, and the rest still run.
    if (!(err instanceof KarpctlError))
      return unknown(`karpctl could not judge it: ${String((err as Error)?.message ?? err).split('\n')[0]}`)
    const hint = privateEndpoint
      ? ' (EKS says its endpoint is private: run from inside its VPC, or with --kubeconfig-contexts through a tunnel)'
      : ''
    return unknown(`${err.message}${hint}`)
  } finally {
    clearTimeout(timer)
  }
}
