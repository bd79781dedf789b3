// What the bed's servers alone take for doctor's reads: one `karpctl doctor` on the e2e bed is recorded
// (bench/record-requests.cjs: every request, its start and end), then its requests are replayed with no
// client CPU — raw HTTP, answers drained unparsed — in the same layers of dependency: a request is in
// the layer after every request that had ended before it started (which over-counts dependencies, so
// this is an upper bound of the floor). A doctor run cannot be faster than its replay: the difference is
// karpctl's own start and CPU.
//   node --import tsx bench/doctor-floor.ts [runs=5]      (after `npm run build`)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedAws, seedKubernetes, startBed, targetArgs } from '../test/e2e/bed/index.js'
// @ts-expect-error: a plain .mjs helper shared with bench/startup.mjs
import { median, min, ROOT } from './baseline.mjs'

interface Recorded {
  start: number
  end: number
  method: string
  path: string
  host: string
  port: number
  headers: Record<string, string | string[]>
  body: string
  url: string
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const runs = Number(process.argv[2] ?? 5)
const med = median as (xs: number[]) => number
const least = min as (xs: number[]) => number

/** Layer of each request: 1 + the deepest layer among the requests that ended before it started. */
function layers(reqs: Recorded[]): Recorded[][] {
  const depth = new Map<Recorded, number>()
  const sorted = [...reqs].sort((a, b) => a.start - b.start)
  for (const r of sorted) {
    let d = 0
    for (const o of sorted)
      if (o !== r && o.end > 0 && o.end <= r.start) d = Math.max(d, (depth.get(o) ?? 0) + 1)
    depth.set(r, d)
  }
  const out: Recorded[][] = []
  for (const [r, d] of depth) (out[d] ??= []).push(r)
  return out
}

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
function replay(r: Recorded): Promise<void> {
  const tls = r.url.startsWith('https:')
  return new Promise((resolve, reject) => {
    const req = (tls ? https : http).request(
      {
        host: '127.0.0.1',
        port: r.port,
        path: r.path,
        method: r.method,
        headers: r.headers as http.OutgoingHttpHeaders,
        agent: tls ? agents.https : agents.http,
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume()
        res.on('end', resolve)
      },
    )
    req.on('error', reject)
    req.end(r.body || undefined)
  })
}

const bed = await startBed()
const dir = mkdtempSync(join(tmpdir(), 'karpctl-floor-'))
try {
  const seed = await seedAws(bed)
  await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1' })
  const env = bed.childEnv({ NO_COLOR: '1', XDG_CACHE_HOME: join(dir, 'cache') })
  delete env.NODE_EXTRA_CA_CERTS
  const doctorArgs = [join(ROOT, 'bin/run.js'), 'doctor', ...targetArgs(bed), '--json']
  const record = join(dir, 'requests.json')
  const walls: number[] = []
  const replays: number[] = []
  let shape = ''
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now()
    execFileSync(process.execPath, ['-r', join(ROOT, 'bench/record-requests.cjs'), ...doctorArgs], {
      env: { ...env, KARPCTL_RECORD: record },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    const wall = performance.now() - t0
    const reqs = JSON.parse(readFileSync(record, 'utf8')) as Recorded[]
    const byLayer = layers(reqs)
    const r0 = performance.now()
    for (const layer of byLayer) await Promise.all(layer.map(replay))
    const ms = performance.now() - r0
    if (i === 0) continue // code cache written, servers warm
    walls.push(wall)
    replays.push(ms)
    shape = `${reqs.length} requests in ${byLayer.length} layers (${byLayer.map((l) => l.length).join(', ')})`
  }
  console.log(`doctor on the e2e bed, ${runs} runs; NODE_EXTRA_CA_CERTS unset; ${shape} (last run)`)
  console.log(
    `  karpctl doctor (recording):      median ${med(walls).toFixed(0)} ms, min ${least(walls).toFixed(0)} ms`,
  )
  console.log(
    `  its requests replayed, no CPU:   median ${med(replays).toFixed(0)} ms, min ${least(replays).toFixed(0)} ms (the servers alone)`,
  )
} finally {
  agents.http.destroy()
  agents.https.destroy()
  await bed.stop()
  rmSync(dir, { recursive: true, force: true })
}
