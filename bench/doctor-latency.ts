// How long does doctor's collection take when every API call costs LATENCY ms? Runs the collector
// against the nock mock of the healthy `demo` cluster (test/helpers/mock-cluster.ts) with an injected
// per-call latency, and compares the wall time with the aim: (longest chain + 1) × latency.
//
//   node --import tsx bench/doctor-latency.ts [latencyMs=50] [runs=5]
//
// The longest chain of dependent calls, derived from src/facts/collect.ts + collect-kube.ts + collect-iam.ts
// (each arrow: the next call needs the previous answer):
//
//   1. kube GET /api/v1/secrets?labelSelector=owner=helm   the Helm release: namespace, release name, values
//   2. kube GET …/serviceaccounts/<sa>                     the live ServiceAccount: its eks.amazonaws.com/role-arn
//                                                          wins over the values, so the controller role is known here
//   3. iam ListAttachedRolePolicies <controller role>      (GetRole + ListRolePolicies start with it)
//   4. iam GetPolicy <each attached policy>                its DefaultVersionId
//   5. iam GetPolicyVersion <arn, default version>         the document controller-policy judges
//
// Other chains are shorter: STS GetCallerIdentity + EKS DescribeCluster (1) → ListOpenIDConnectProviders,
// ListRoles, ListAddons, ListPodIdentityAssociations (2); secrets (1) → SA (2) → GetQueueUrl (3) →
// GetQueueAttributes (4); → ListRuleNamesByTarget (3) → DescribeRule + ListTargetsByRule (4);
// nodeclasses (1) … → node role reads, SimulatePrincipalPolicy, DescribeSubnets/SecurityGroups (3).
// (Collect waits for every Kubernetes read, 2 round trips, before it starts the AWS reads that need
// Kubernetes facts; with Pod Identity instead of IRSA the chain is the same length: the association
// lookup runs in parallel with the Kubernetes reads.)
//
// So the aim is wall ≤ (5 + 1) × latency: the chain plus one round trip of slack for client set-up,
// the limiter and the event loop. The first run also pays for importing the SDK clients (a fixed cost,
// not latency): it is reported separately and the aim is judged on the warm runs.
import { performance } from 'node:perf_hooks'
import { createRunContext } from '../src/context/run-context.js'
import { collect } from '../src/facts/collect.js'
import { startMockCluster, usePodIdentity } from '../test/helpers/mock-cluster.js'

const LONGEST_CHAIN = 5
const latency = Number(process.argv[2] ?? process.env.LATENCY_MS ?? 50)
const runs = Number(process.argv[3] ?? process.env.RUNS ?? 5)
const concurrency = process.env.CONCURRENCY ? Number(process.env.CONCURRENCY) : undefined
/** POD_IDENTITY=1: the same cluster with EKS Pod Identity instead of IRSA. */
const podIdentity = Boolean(process.env.POD_IDENTITY)

interface Run {
  wallMs: number
  calls: Record<string, number>
  total: number
  duplicates: number
  failedReads: string[]
  /** Start offsets (ms) of each call, to show how the round trips line up. */
  timeline: { op: string; at: number }[]
}

async function once(): Promise<Run> {
  const mock = startMockCluster({ latencyMs: latency, ...(podIdentity ? { mutate: usePodIdentity } : {}) })
  try {
    const ctx = await createRunContext(mock.runOptions({ maxAttempts: 1, concurrency }))
    const t0 = performance.now()
    const timeline: { op: string; at: number }[] = []
    const record = ctx.log.record.bind(ctx.log)
    ctx.log.record = (op: string) => {
      timeline.push({ op, at: Math.round(performance.now() - t0) })
      record(op)
    }
    const facts = await collect(ctx)
    const wallMs = performance.now() - t0
    ctx.aws.destroy()
    const failedReads: string[] = []
    const walk = (v: unknown): void => {
      if (!v || typeof v !== 'object') return
      const r = v as { ok?: boolean; error?: { read: string; code: string } }
      if (r.ok === false && r.error) failedReads.push(`${r.error.read}: ${r.error.code}`)
      for (const x of Object.values(v)) walk(x)
    }
    walk(facts)
    return {
      wallMs,
      calls: mock.countsByService(),
      total: mock.calls().length,
      duplicates: ctx.log.duplicates().length + mock.duplicates().length,
      failedReads,
      timeline,
    }
  } finally {
    mock.stop()
  }
}

const aim = (LONGEST_CHAIN + 1) * latency
const results: Run[] = []
for (let i = 0; i < runs + 1; i++) results.push(await once())
const [cold, ...warm] = results as [Run, ...Run[]]
const walls = warm.map((r) => r.wallMs).sort((a, b) => a - b)
const median = walls[Math.floor(walls.length / 2)] ?? cold.wallMs
const last = warm.at(-1) ?? cold

const fmt = (n: number) => `${n.toFixed(0)} ms`
console.log(`doctor collection against the mock, ${latency} ms per call${concurrency ? `, concurrency ${concurrency}` : ''}`)
console.log(`  cold run (imports SDK clients): ${fmt(cold.wallMs)}`)
console.log(`  warm runs (${warm.length}): median ${fmt(median)}, min ${fmt(walls[0] ?? 0)}, max ${fmt(walls.at(-1) ?? 0)}`)
console.log(`  API calls: ${last.total} total — ${Object.entries(last.calls).map(([s, n]) => `${s} ${n}`).join(', ')}`)
console.log(`  duplicate reads: ${last.duplicates}; failed reads: ${last.failedReads.length ? last.failedReads.join('; ') : 'none'}`)
console.log(`  longest dependent chain: ${LONGEST_CHAIN} calls (helm secrets → ServiceAccount → ListAttachedRolePolicies → GetPolicy → GetPolicyVersion)`)
console.log(`  round trips used: ${(median / latency).toFixed(2)} (wall / latency)`)
console.log(`  aim: wall ≤ (${LONGEST_CHAIN} + 1) × ${latency} = ${aim} ms → ${median <= aim ? 'met' : 'MISSED'}`)
if (process.env.TIMELINE) {
  for (const t of last.timeline) console.log(`    ${String(t.at).padStart(5)} ms  ${t.op.slice(0, 140)}`)
}
if (median > aim) process.exitCode = 1
