// How long does doctor's collection take when every API call costs LATENCY ms? Runs the collector
// against the nock mock of the healthy `demo` cluster (test/helpers/mock-cluster.ts) with an injected
// per-call latency, and compares the wall time with the aim: (longest chain + 1) × latency.
//
//   node --import tsx bench/doctor-latency.ts [latencyMs=50] [runs=5]
//   env: POD_IDENTITY=1 (the same cluster on EKS Pod Identity instead of IRSA), CONCURRENCY=n,
//        TIMELINE=1 (print when each call reached the mock, last run)
//
// The longest chain of dependent calls, derived from src/facts/collect.ts + collect-kube.ts +
// collect-iam.ts (each arrow: the next call needs the previous answer):
//
//   1. kube GET /api/v1/secrets?labelSelector=owner=helm   the Helm release: namespace, name, values
//   2. kube GET …/serviceaccounts/<sa>                     the live ServiceAccount: its eks.amazonaws.com/role-arn
//                                                          wins over the values, so the controller role is known here
//   3. iam ListAttachedRolePolicies <controller role>      (GetRole + ListRolePolicies start with it)
//   4. iam GetPolicy <each attached policy>                its DefaultVersionId
//   5. iam GetPolicyVersion <arn, default version>         the document controller-policy judges
//
// With Pod Identity the role comes from ListPodIdentityAssociations → DescribePodIdentityAssociation,
// which start at once and end with the Kubernetes reads: same length. Every other chain is shorter:
// STS GetCallerIdentity + EKS DescribeCluster (1) → DescribeSecurityGroups <cluster SG> (2);
// secrets (1) → SA (2) → GetQueueUrl (3) → GetQueueAttributes (4); → ListRuleNamesByTarget (3) →
// DescribeRule + ListTargetsByRule (4); EC2NodeClasses (1) → node role reads, SimulatePrincipalPolicy,
// DescribeSubnets / DescribeSecurityGroups (3, as collect waits for every Kubernetes read first).
//
// So the aim is wall ≤ (5 + 1) × latency: the chain plus one round trip of slack for client set-up,
// the limiter and the event loop. Two things are not latency and are reported apart:
//  - the first run imports the SDK clients (fixed cost): the aim is judged on the warm runs;
//  - CPU per run (SDK serialization, signing and parsing, nock's interception, decoding the Helm
//    release): measured as the wall time at 0 ms latency ("CPU floor"). When the floor is a large
//    part of (chain + 1) × latency, wall time says little about the collector's structure, so the
//    bench also derives the number of sequential round trips from when calls reached the mock:
//    depth(call) = 1 + the largest depth among calls answered before it was sent (an upper bound on
//    its real dependency depth). Max depth ≤ chain means no read waits for anything it does not need.
//
// The baseline's collector (bench/baseline.mjs: `main` by default; BASELINE=0 to skip) runs beside this
// one, interleaved run by run, against the same mock: its figures are printed next to these.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createRunContext } from '../src/context/run-context.js'
import { collect } from '../src/facts/collect.js'
import { startMockCluster, usePodIdentity, type RecordedCall } from '../test/helpers/mock-cluster.js'
// @ts-expect-error: a plain .mjs helper shared with bench/startup.mjs
import { baselineDir } from './baseline.mjs'

interface Collector {
  createRunContext: typeof createRunContext
  collect: typeof collect
}
const current: Collector = { createRunContext, collect }
const baseline: { dir: string; label: string } | undefined =
  process.env.BASELINE === '0' ? undefined : (baselineDir as () => { dir: string; label: string })()
const old: Collector | undefined = baseline && {
  createRunContext: ((await import(join(baseline.dir, 'src/context/run-context.ts'))) as Collector)
    .createRunContext,
  collect: ((await import(join(baseline.dir, 'src/facts/collect.ts'))) as Collector).collect,
}

const LONGEST_CHAIN = 5
const latency = Number(process.argv[2] ?? process.env.LATENCY_MS ?? 50)
const runs = Number(process.argv[3] ?? process.env.RUNS ?? 5)
const concurrency = process.env.CONCURRENCY ? Number(process.env.CONCURRENCY) : undefined
const podIdentity = Boolean(process.env.POD_IDENTITY)

interface Run {
  wallMs: number
  calls: Record<string, number>
  total: number
  duplicates: number
  failedReads: string[]
  depth: number
  deepest: string[]
  timeline: RecordedCall[]
}

/** Sequential round trips: a call sent after another was answered may depend on it. */
function depthOf(calls: RecordedCall[], latencyMs: number): { depth: number; deepest: string[] } {
  const sorted = [...calls].sort((a, b) => a.at - b.at)
  const depth = new Map<RecordedCall, number>()
  const parent = new Map<RecordedCall, RecordedCall>()
  sorted.forEach((c, i) => {
    let best = 0
    for (const d of sorted.slice(0, i)) {
      if (d.at + latencyMs > c.at) continue
      const dd = depth.get(d) ?? 1
      if (dd > best) {
        best = dd
        parent.set(c, d)
      }
    }
    depth.set(c, best + 1)
  })
  let last = sorted[0]
  for (const c of sorted) if ((depth.get(c) ?? 0) > (depth.get(last as RecordedCall) ?? 0)) last = c
  const chain: string[] = []
  for (let c = last; c; c = parent.get(c)) chain.unshift(c.key.slice(0, 90))
  return { depth: last ? (depth.get(last) ?? 0) : 0, deepest: chain }
}

async function once(latencyMs: number, impl: Collector = current): Promise<Run> {
  // No one-shot expectations: a persisted interceptor per host keeps nock's matching cost per call low
  // (with ~60 pending expectations nock tries each of them per request; the tests keep them).
  const mock = startMockCluster({
    latencyMs,
    expectations: false,
    ...(podIdentity ? { mutate: usePodIdentity } : {}),
  })
  try {
    const ctx = await impl.createRunContext(mock.runOptions({ maxAttempts: 1, concurrency }))
    const t0 = performance.now()
    const facts = await impl.collect(ctx)
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
    const timeline = mock.calls().map((c) => ({ ...c, at: c.at - t0 }))
    return {
      wallMs,
      calls: mock.countsByService(),
      total: timeline.length,
      duplicates: ctx.log.duplicates().length + mock.duplicates().length,
      failedReads,
      ...depthOf(timeline, latencyMs),
      timeline,
    }
  } finally {
    mock.stop()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
const fmt = (n: number) => `${n.toFixed(0)} ms`

const cold = await once(latency)
const floor: Run[] = []
const oldFloor: Run[] = []
for (let i = 0; i < runs; i++) {
  floor.push(await once(0))
  if (old) oldFloor.push(await once(0, old))
}
const warm: Run[] = []
const oldWarm: Run[] = []
for (let i = 0; i < runs; i++) {
  warm.push(await once(latency))
  if (old) oldWarm.push(await once(latency, old))
}
// The structure probe: at a latency well above the CPU floor, CPU delays cannot pass for round trips.
const probeLatency = Math.max(latency, 300, 10 * Math.ceil((2 * median(floor.map((r) => r.wallMs))) / 10))
const probe = probeLatency === latency ? (warm.at(-1) as Run) : await once(probeLatency)
const last = warm.at(-1) ?? cold
const wall = median(warm.map((r) => r.wallMs))
const floorMs = median(floor.map((r) => r.wallMs))
const depth = probe.depth
const aim = (LONGEST_CHAIN + 1) * latency

console.log(
  `doctor collection against the mock (${podIdentity ? 'Pod Identity' : 'IRSA'}), ${latency} ms per call${concurrency ? `, concurrency ${concurrency}` : ''}, ${runs} runs`,
)
const was = (xs: Run[]) => (old ? ` (baseline: ${fmt(median(xs.map((r) => r.wallMs)))})` : '')
console.log(
  // The baseline shares this process's node_modules: its first run finds the SDK loaded: no cold figure.
  `  cold run (imports the SDK clients): ${fmt(cold.wallMs)}`,
)
console.log(
  `  warm wall: median ${fmt(wall)} (min ${fmt(Math.min(...warm.map((r) => r.wallMs)))}, max ${fmt(Math.max(...warm.map((r) => r.wallMs)))})${was(oldWarm)}`,
)
console.log(`  CPU floor (same runs at 0 ms latency): median ${fmt(floorMs)}${was(oldFloor)}`)
if (baseline) console.log(`  baseline: ${baseline.label}, interleaved run by run`)
console.log(
  `  API calls: ${last.total} — ${Object.entries(last.calls)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ')}`,
)
console.log(
  `  duplicate reads: ${last.duplicates}; failed reads: ${last.failedReads.length ? last.failedReads.join('; ') : 'none'}`,
)
console.log(
  `  longest dependent chain (from the collector): ${LONGEST_CHAIN} — helm secrets → ServiceAccount → ListAttachedRolePolicies → GetPolicy → GetPolicyVersion`,
)
console.log(
  `  sequential round trips at ${latency} ms: ${Math.max(...warm.map((r) => r.depth))} (an upper bound: a call CPU made late looks dependent)`,
)
console.log(
  `  sequential round trips at ${probeLatency} ms (structure probe, wall ${fmt(probe.wallMs)}): ${depth}; deepest: ${probe.deepest.join(' → ')}`,
)
console.log(
  `  aim: wall ≤ (${LONGEST_CHAIN} + 1) × ${latency} = ${aim} ms → ${wall <= aim ? 'met' : `MISSED by ${fmt(wall - aim)}`}` +
    `; round trips ≤ ${LONGEST_CHAIN} → ${depth <= LONGEST_CHAIN ? 'met' : 'MISSED'}`,
)
if (wall > aim && floorMs > latency) {
  console.log(
    `  note: the CPU floor (${fmt(floorMs)}) is ${(floorMs / latency).toFixed(1)} × the latency: wall time here measures CPU more than the collector's structure`,
  )
}
if (process.env.TIMELINE) {
  for (const t of [...last.timeline].sort((a, b) => a.at - b.at)) {
    console.log(`    ${t.at.toFixed(0).padStart(5)} ms  ${t.key.slice(0, 140)}`)
  }
}
if (depth > LONGEST_CHAIN) process.exitCode = 1
