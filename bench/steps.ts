// Each change's effect, from one interleaved run: the builds of several commits (bench/baseline.mjs
// builds each once) side by side, round by round — `karpctl --version`, `karpctl doctor --help`
// (beside `kubectl version --client` and `node -e 0`) and a full `doctor --json` on the e2e bed.
//   node --import tsx bench/steps.ts <ref>... [--runs N]      (e.g. main~5 main~3 HEAD)
// NODE_EXTRA_CA_CERTS unset; each build has its own code cache directory, warmed before timing.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedAws, seedKubernetes, startBed, targetArgs } from '../test/e2e/bed/index.js'
// @ts-expect-error: a plain .mjs helper shared with bench/startup.mjs
import { baselineDir, median, min } from './baseline.mjs'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const argv = process.argv.slice(2)
const at = argv.indexOf('--runs')
const runs = at >= 0 ? Number(argv[at + 1]) : 15
const refs = argv.filter((a, i) => a !== '--runs' && i !== at + 1)
if (refs.length === 0) throw new Error('usage: bench/steps.ts <ref>... [--runs N]')
const med = median as (xs: number[]) => number
const least = min as (xs: number[]) => number
const builds = refs.map((ref) => ({
  ref,
  ...(baselineDir as (r: string) => { dir: string; label: string })(ref),
  cache: mkdtempSync(join(tmpdir(), 'karpctl-steps-cache-')),
}))

const bed = await startBed()
try {
  const seed = await seedAws(bed)
  await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1' })
  const env = bed.childEnv({ NO_COLOR: '1' })
  delete env.NODE_EXTRA_CA_CERTS
  const time = (cmd: string, args: string[], extra: Record<string, string> = {}) => {
    const t0 = performance.now()
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...env, ...extra } })
    const ms = performance.now() - t0
    // doctor exits 0 (clean) on the healthy bed; anything else is a broken build, not a figure.
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
    return ms
  }
  const doctorArgs = ['doctor', ...targetArgs(bed), '--json']
  const rows: [string, (b?: (typeof builds)[number]) => number][] = [
    ['node -e 0', () => time(process.execPath, ['-e', '0'])],
    ['kubectl version --client', () => time('kubectl', ['version', '--client'])],
    ...(['--version', 'doctor --help', 'doctor on the bed'] as const).map(
      (what) =>
        [
          what,
          (b?: (typeof builds)[number]) =>
            time(
              process.execPath,
              [join(b!.dir, 'bin/run.js'), ...(what === 'doctor on the bed' ? doctorArgs : what.split(' '))],
              { XDG_CACHE_HOME: b!.cache },
            ),
        ] as [string, (b?: (typeof builds)[number]) => number],
    ),
  ]
  const times = new Map<string, number[]>()
  const key = (row: string, b?: (typeof builds)[number]) => (b ? `${row} @ ${b.ref}` : row)
  for (let i = 0; i < runs + 2; i++) {
    for (const [row, fn] of rows) {
      for (const b of row.startsWith('node') || row.startsWith('kubectl') ? [undefined] : builds) {
        const ms = fn(b)
        if (i < 2) continue // warm-up: page cache, code cache written
        const k = key(row, b)
        times.set(k, [...(times.get(k) ?? []), ms])
      }
    }
  }
  const kubectl = med(times.get('kubectl version --client') ?? [])
  console.log(`${runs} interleaved rounds; NODE_EXTRA_CA_CERTS unset; median (min) ms, ×kubectl for start-up`)
  for (const [k, xs] of times) {
    const ratio = /--version|--help/.test(k) ? `  ${(med(xs) / kubectl).toFixed(2)}×` : ''
    console.log(`  ${k.padEnd(48)} ${med(xs).toFixed(1).padStart(8)} (${least(xs).toFixed(1)})${ratio}`)
  }
  console.log('builds:', builds.map((b) => `${b.ref} = ${b.label}`).join('; '))
} finally {
  await bed.stop()
  for (const b of builds) rmSync(b.cache, { recursive: true, force: true })
}
