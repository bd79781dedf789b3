// install's wall time on the real bed with an injected per-call AWS latency, against the sum of its
// AWS calls (what a one-call-at-a-time install would wait): the gain from concurrency. Also counts the
// AWS calls of a no-op re-run. A proxy on 127.0.0.1 in front of moto holds each request `latency` ms.
//   node --import tsx bench/install-latency.ts [latencyMs=50]
// Needs the e2e bed (KARPCTL_E2E_BIN / KARPCTL_E2E_VENV, or it runs test/e2e/bed/build.sh) and `npm run build`.
import { join } from 'node:path'
import {
  CLUSTER_NAME,
  karpenterFixtures,
  playController,
  REGION,
  runKarpctl,
  seedBareCluster,
  startBed,
} from '../test/e2e/bed/index.js'
import { latencyProxy } from './latency-proxy.js'

const latency = Number(process.argv[2] ?? 50)

const bed = await startBed()
try {
  const seed = await seedBareCluster(bed)
  const stop = playController(bed, seed.net)
  const proxy = await latencyProxy(bed.awsEndpoint, latency)
  const args = ['install', '--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
  const run = () =>
    runKarpctl(
      bed,
      [
        ...args,
        '--chart-dir',
        join(karpenterFixtures(), 'v1.14.1', 'charts'),
        '--yes',
        '--json',
        '--timeout',
        '60',
      ],
      {
        env: { NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}`, AWS_ENDPOINT_URL: proxy.url },
        timeoutMs: 600_000,
      },
    )
  const first = await run()
  if (first.code !== 0) throw new Error(`install failed (${first.code}): ${first.stderr}`)
  const firstCalls = { ...proxy.calls }
  proxy.calls.count = 0
  proxy.calls.totalMs = 0
  const again = await run()
  const report = JSON.parse(again.stdout) as {
    calls: { total: number; writes: number; byService: Record<string, number> }
  }
  console.log(`karpctl install on the bed, ${latency} ms injected per AWS call`)
  console.log(
    `  fresh install: wall ${(first.durationMs / 1000).toFixed(2)} s, ${firstCalls.count} AWS calls (incl. doctor's verification), sum of their durations ${(firstCalls.totalMs / 1000).toFixed(2)} s -> ${(firstCalls.totalMs / first.durationMs).toFixed(1)}x overlap`,
  )
  const noopCalls = proxy.calls.count
  proxy.calls.count = 0
  proxy.calls.totalMs = 0
  const down = await runKarpctl(
    bed,
    [
      'teardown',
      '--cluster',
      CLUSTER_NAME,
      '--region',
      REGION,
      '--kube-context',
      bed.kubeContext,
      '--confirm',
      CLUSTER_NAME,
    ],
    {
      env: { NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}`, AWS_ENDPOINT_URL: proxy.url },
      timeoutMs: 600_000,
    },
  )
  if (down.code !== 0) throw new Error(`teardown failed (${down.code}): ${down.stderr}`)
  const downCalls = { ...proxy.calls }
  console.log(
    `  no-op re-run:  wall ${(again.durationMs / 1000).toFixed(2)} s, ${noopCalls} AWS calls (incl. doctor's verification), ${report.calls.total} calls before the verification (${Object.entries(
      report.calls.byService,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}), ${report.calls.writes} writes`,
  )
  console.log(
    `  teardown:      wall ${(down.durationMs / 1000).toFixed(2)} s, ${downCalls.count} AWS calls, sum of their durations ${(downCalls.totalMs / 1000).toFixed(2)} s -> ${(downCalls.totalMs / down.durationMs).toFixed(1)}x overlap`,
  )
  proxy.close()
  await stop()
} finally {
  await bed.stop()
}
