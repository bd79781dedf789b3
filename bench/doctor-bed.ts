// A full `karpctl doctor --json` on the e2e bed (moto + a real kube-apiserver, the healthy
// getting-started install of doctor.e2e.test.ts), this build beside the baseline build
// (bench/baseline.mjs: `main` by default), interleaved run by run. Also the first run after install
// (an empty cache directory: no V8 code cache yet). Aim: median <= 400 ms.
//   node --import tsx bench/doctor-bed.ts [runs=15]
// Needs `npm run build` and the bed (KARPCTL_E2E_BIN / KARPCTL_E2E_VENV, or it runs test/e2e/bed/build.sh).
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLUSTER_NAME, REGION, seedAws, seedKubernetes, startBed, type Bed } from '../test/e2e/bed/index.js'
// @ts-expect-error: a plain .mjs helper shared with bench/startup.mjs
import { baselineDir, median, min, ROOT } from './baseline.mjs'

// The bed's own SDK clients (the seed): the SDK's notice about future Node.js support is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const runs = Number(process.argv[2] ?? 15)
const base = (baselineDir as () => { dir: string; label: string })()
const NEW = process.env.NEW_DIR ?? ROOT
const med = median as (xs: number[]) => number
const least = min as (xs: number[]) => number

interface Result {
  ms: number
  statuses: string
}

/** A TCP proxy to `port` on 127.0.0.1 that delays every chunk the client sends by `ms`, in order. */
function delayProxy(port: number, ms: number): Promise<{ port: number; server: Server }> {
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1')
    let last = 0
    client.on('data', (chunk) => {
      // Never before an earlier chunk: a later write waits for the one before it.
      const at = Math.max(Date.now() + ms, last)
      last = at
      setTimeout(() => upstream.write(chunk), at - Date.now())
    })
    upstream.pipe(client)
    const end = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', () => setTimeout(end, ms + 10))
    upstream.on('error', end).on('close', end)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ port: (server.address() as { port: number }).port, server }),
    ),
  )
}

function doctor(
  bed: Bed,
  root: string,
  cacheHome: string,
  extraEnv: Record<string, string> = {},
): Promise<Result> {
  const target = { '--cluster': CLUSTER_NAME, '--region': REGION, '--kube-context': bed.kubeContext }
  const args = ['doctor', ...Object.entries(target).flat(), '--json']
  const env = bed.childEnv({ NO_COLOR: '1', XDG_CACHE_HOME: cacheHome, ...extraEnv })
  delete env.NODE_EXTRA_CA_CERTS // as bench/startup.mjs: it costs every node start tens of ms
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(root, 'bin/run.js'), ...args],
      { env, maxBuffer: 32 << 20 },
      (err, stdout, stderr) => {
        const ms = performance.now() - t0
        if (err) return reject(new Error(`${root}: doctor failed (${err.message}): ${stderr}`))
        const report = JSON.parse(stdout) as { checks: { id: string; status: string }[] }
        resolve({ ms, statuses: report.checks.map((c) => `${c.id}=${c.status}`).join(' ') })
      },
    )
  })
}

/**
 * The verdicts of the checks both builds have agree (a newer build may have more checks: those are
 * not a difference in what the older one judged).
 */
function sameVerdicts(a: string, b: string): boolean {
  const parse = (s: string) => new Map(s.split(' ').map((kv) => kv.split('=') as [string, string]))
  const x = parse(a)
  const y = parse(b)
  return [...x].every(([id, status]) => !y.has(id) || y.get(id) === status)
}

const bed = await startBed()
const caches: string[] = []
const servers: Server[] = []
const cacheDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'karpctl-bench-cache-'))
  caches.push(d)
  return d
}
try {
  const seed = await seedAws(bed)
  await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1' })
  const warmCache = { old: cacheDir(), new: cacheDir() }
  const cold: Record<'old' | 'new', number[]> = { old: [], new: [] }
  const warm: Record<'old' | 'new', number[]> = { old: [], new: [] }
  const roots = { old: base.dir, new: NEW as string }
  let statuses: Record<string, string> = {}
  for (let i = 0; i < runs + 1; i++) {
    for (const which of ['old', 'new'] as const) {
      // The first run after install: an empty cache directory, every time.
      if (i < Math.max(3, Math.ceil(runs / 3)))
        cold[which].push((await doctor(bed, roots[which], cacheDir())).ms)
      const r = await doctor(bed, roots[which], warmCache[which])
      if (i > 0) warm[which].push(r.ms) // the first fills the code cache
      statuses[which] = r.statuses
    }
  }
  const same = sameVerdicts(statuses.old ?? '', statuses.new ?? '')
  console.log(
    `doctor --json on the e2e bed; baseline ${base.label}; ${runs} interleaved runs each; NODE_EXTRA_CA_CERTS unset`,
  )
  for (const which of ['old', 'new'] as const) {
    console.log(
      `  ${which}: median ${med(warm[which]).toFixed(0)} ms, min ${least(warm[which]).toFixed(0)} ms; ` +
        `first run after install (empty cache): median ${med(cold[which]).toFixed(0)} ms, min ${least(cold[which]).toFixed(0)} ms`,
    )
  }
  console.log(
    `  same verdicts old and new: ${same ? 'yes' : `NO\n    old: ${statuses.old}\n    new: ${statuses.new}`}`,
  )
  const m = med(warm.new)
  console.log(`  aim: median ≤ 400 ms → ${m <= 400 ? 'met' : `MISSED by ${(m - 400).toFixed(0)} ms`}`)
  if (!same) process.exitCode = 1
  statuses = {}

  const latency = Number(process.env.LATENCY ?? 50)
  if (latency > 0) {
    const awsPort = Number(new URL(bed.awsEndpoint).port)
    const kubeconfig = readFileSync(bed.kubeconfigPath, 'utf8')
    const kubePort = Number(/server: https:\/\/127\.0\.0\.1:(\d+)/.exec(kubeconfig)?.[1])
    const aws = await delayProxy(awsPort, latency)
    const kube = await delayProxy(kubePort, latency)
    servers.push(aws.server, kube.server)
    const slowKubeconfig = join(cacheDir(), 'kubeconfig')
    writeFileSync(slowKubeconfig, kubeconfig.replace(`127.0.0.1:${kubePort}`, `127.0.0.1:${kube.port}`))
    const slow = { AWS_ENDPOINT_URL: `http://127.0.0.1:${aws.port}`, KUBECONFIG: slowKubeconfig }
    const times: Record<'old' | 'new', number[]> = { old: [], new: [] }
    for (let i = 0; i < Math.max(3, Math.ceil(runs / 2)); i++) {
      for (const which of ['old', 'new'] as const) {
        const r = await doctor(bed, roots[which], warmCache[which], slow)
        times[which].push(r.ms)
        statuses[which] = r.statuses
      }
    }
    const aim = 6 * latency
    console.log(
      `doctor --json with ${latency} ms added to every call (${times.new.length} interleaved runs each)`,
    )
    for (const which of ['old', 'new'] as const)
      console.log(
        `  ${which}: median ${med(times[which]).toFixed(0)} ms, min ${least(times[which]).toFixed(0)} ms`,
      )
    console.log(
      `  same verdicts old and new: ${sameVerdicts(statuses.old ?? '', statuses.new ?? '') ? 'yes' : 'NO'}`,
    )
    const m50 = med(times.new)
    console.log(
      `  aim: ≤ (5 + 1) × ${latency} = ${aim} ms → ${m50 <= aim ? 'met' : `MISSED by ${(m50 - aim).toFixed(0)} ms`} (the process's own start and CPU count too)`,
    )
  }
} finally {
  for (const server of servers) server.close()
  await bed.stop()
  for (const d of caches) rmSync(d, { recursive: true, force: true })
}
