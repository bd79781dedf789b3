// upgrade's wall time on the real bed with an injected per-call AWS latency (issue 23): a karpctl-made
// 1.0.14 install (webhooks, its 8443 rule) upgraded to 1.14.1, then the same command again (a no-op).
// Each is run once with no latency and once with `latency` ms per AWS call, each upgrade on a fresh bed.
// The proxy records when each call was in flight: the union of those spans is the AWS time on the
// critical path (overlapping calls count once), against the sum of the calls' durations (what a
// one-call-at-a-time upgrade would wait). Helm and the rollouts vary by a second from run to run, so the
// two walls' difference alone is too noisy to measure the critical path with.
//   node --import tsx bench/upgrade-latency.ts [latencyMs=50]
// Needs the e2e bed (KARPCTL_E2E_BIN / KARPCTL_E2E_VENV, or it runs test/e2e/bed/build.sh) and `npm run build`.
import { dirname } from 'node:path'
import {
  CLUSTER_NAME,
  karpenterChartDir,
  playController,
  REGION,
  runKarpctl,
  seedBareCluster,
  startBed,
  type Bed,
} from '../test/e2e/bed/index.js'
import { inFlightMs, latencyProxy } from './latency-proxy.js'

const latency = Number(process.argv[2] ?? 50)
const charts = (v: '1.0.14' | '1.14.1') => dirname(karpenterChartDir(v))

interface Report {
  calls: { total: number; writes: number; byService: Record<string, number> }
}
interface Measured {
  wallMs: number
  awsCalls: number
  awsSumMs: number
  /** How long some AWS call was in flight (overlapping calls counted once). */
  awsInFlightMs: number
  report: Report
}

async function measure(ms: number): Promise<{ upgrade: Measured; noop: Measured }> {
  const bed: Bed = await startBed()
  try {
    const seed = await seedBareCluster(bed, { kubernetesVersion: '1.31' })
    const stop = playController(bed, seed.net)
    const proxy = await latencyProxy(bed.awsEndpoint, ms)
    const target = ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
    const run = async (args: string[], viaProxy: boolean) => {
      const r = await runKarpctl(bed, [...args, ...target, '--yes', '--json', '--timeout', '120'], {
        env: {
          NO_COLOR: '1',
          PATH: `${bed.binDir}:${process.env.PATH}`,
          ...(viaProxy ? { AWS_ENDPOINT_URL: proxy.url } : {}),
        },
        timeoutMs: 900_000,
      })
      if (r.code !== 0) throw new Error(`karpctl ${args[0]} failed (${r.code}): ${r.stderr.slice(-2000)}`)
      return r
    }
    await run(
      [
        'install',
        '--chart-dir',
        charts('1.0.14'),
        '--karpenter-version',
        '1.0.14',
        '--security-group-ids',
        `${seed.net.clusterSecurityGroupId},${seed.net.nodeSecurityGroupId}`,
      ],
      false,
    )
    const upgradeOnce = async (): Promise<Measured> => {
      proxy.calls.count = 0
      proxy.calls.totalMs = 0
      proxy.calls.spans = []
      const r = await run(['upgrade', '--chart-dir', charts('1.14.1')], true)
      return {
        wallMs: r.durationMs,
        awsCalls: proxy.calls.count,
        awsSumMs: proxy.calls.totalMs,
        awsInFlightMs: inFlightMs(proxy.calls.spans),
        report: JSON.parse(r.stdout) as Report,
      }
    }
    const upgrade = await upgradeOnce()
    const noop = await upgradeOnce()
    proxy.close()
    await stop()
    return { upgrade, noop }
  } finally {
    await bed.stop()
  }
}

const fast = await measure(0)
const slow = await measure(latency)
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
console.log(`karpctl upgrade 1.0.14 → 1.14.1 on the bed, ${latency} ms injected per AWS call`)
for (const what of ['upgrade', 'noop'] as const) {
  const a = fast[what]
  const b = slow[what]
  const by = Object.entries(b.report.calls.byService)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')
  console.log(
    `  ${what === 'upgrade' ? 'upgrade:' : 'no-op re-run:'} wall ${s(a.wallMs)} at 0 ms, ${s(b.wallMs)} at ${latency} ms; ` +
      `${b.awsCalls} AWS calls (incl. doctor's verification), sum of their durations ${s(b.awsSumMs)}, ` +
      `some call in flight for ${s(b.awsInFlightMs)} (${(b.awsSumMs / b.awsInFlightMs).toFixed(1)}x overlap; ` +
      `~${Math.round(b.awsInFlightMs / latency)} calls' worth of latency on the critical path); ` +
      `upgrade's own calls ${b.report.calls.total} (${by}), ${b.report.calls.writes} writes`,
  )
}
