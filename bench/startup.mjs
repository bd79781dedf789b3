// Start-up cost of the CLI: `karpctl --version`, `doctor --help` and `doctor --list`, this build beside
// the baseline build (bench/baseline.mjs: `main` by default), against `kubectl version --client` (a Go
// CLI: the aim is <= 1.3x it) and bare `node -e 0`. Every round runs each command once, in turn, so
// load on this shared machine hits all of them alike; medians and minimums over RUNS rounds.
// NODE_EXTRA_CA_CERTS is removed from the children's environment: loading extra CA certificates costs
// every node process tens of ms before any script runs, which would inflate node and flatter ratios.
//   node bench/startup.mjs      env: RUNS (default 40), KUBECTL (default kubectl on PATH), BASELINE_REF
// Run after `npm run build`.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { baselineDir, median, min, ROOT } from './baseline.mjs'

const runs = Number(process.env.RUNS ?? 40)
const base = baselineDir()
const kubectl = process.env.KUBECTL ?? 'kubectl'
const env = { ...process.env }
delete env.NODE_EXTRA_CA_CERTS
// The code cache of the runs under test lives here, not in the user's cache directory.
const cacheHome = mkdtempSync(join(tmpdir(), 'karpctl-bench-cache-'))
env.XDG_CACHE_HOME = cacheHome

const node = process.execPath
const newBin = join(ROOT, 'bin/run.js')
const oldBin = join(base.dir, 'bin/run.js')
const rows = [
  ['node -e 0', node, ['-e', '0']],
  ['kubectl version --client', kubectl, ['version', '--client']],
  ['old karpctl --version', node, [oldBin, '--version']],
  ['new karpctl --version', node, [newBin, '--version']],
  ['old karpctl doctor --help', node, [oldBin, 'doctor', '--help']],
  ['new karpctl doctor --help', node, [newBin, 'doctor', '--help']],
  // A screen not seen before (help-cache.ts): a new variable each round makes a new key, the code cache
  // stays warm. What the first `--help` after an install or a change of terminal costs.
  [
    'old doctor --help, new screen',
    node,
    [oldBin, 'doctor', '--help'],
    (i) => ({ KARPCTL_BENCH_ROUND: `${i}` }),
  ],
  [
    'new doctor --help, new screen',
    node,
    [newBin, 'doctor', '--help'],
    (i) => ({ KARPCTL_BENCH_ROUND: `${i}` }),
  ],
  ['old karpctl doctor --list', node, [oldBin, 'doctor', '--list']],
  ['new karpctl doctor --list', node, [newBin, 'doctor', '--list']],
]

function time(cmd, args, extraEnv = {}) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...env, ...extraEnv } })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

// The first run after install: no code cache yet (a fresh cache directory each time).
const cold = []
for (let i = 0; i < Math.max(5, Math.floor(runs / 4)); i++) {
  const fresh = mkdtempSync(join(tmpdir(), 'karpctl-bench-cold-'))
  cold.push(time(node, [newBin, '--version'], { XDG_CACHE_HOME: fresh }))
  rmSync(fresh, { recursive: true, force: true })
}

const times = rows.map(() => [])
for (let i = 0; i < runs + 2; i++) {
  rows.forEach(([, cmd, args, extraEnv], j) => {
    const ms = time(cmd, args, extraEnv?.(i))
    if (i >= 2) times[j].push(ms) // two warm-up rounds: page cache, and the code cache written
  })
}
rmSync(cacheHome, { recursive: true, force: true })

const med = Object.fromEntries(rows.map(([name], j) => [name, median(times[j])]))
const kube = med['kubectl version --client']
const bare = med['node -e 0']
console.log(`baseline: ${base.label}; ${runs} interleaved rounds; NODE_EXTRA_CA_CERTS unset`)
console.log(`${'command'.padEnd(28)}${'median'.padStart(9)}${'min'.padStart(9)}  ×kubectl  ×node`)
rows.forEach(([name], j) => {
  const m = med[name]
  console.log(
    `${name.padEnd(28)}${m.toFixed(1).padStart(9)}${min(times[j]).toFixed(1).padStart(9)}` +
      `${(m / kube).toFixed(2).padStart(9)}${(m / bare).toFixed(2).padStart(7)}`,
  )
})
console.log(
  `${'new --version, cold cache'.padEnd(28)}${median(cold).toFixed(1).padStart(9)}${min(cold).toFixed(1).padStart(9)}` +
    `${(median(cold) / kube).toFixed(2).padStart(9)}${(median(cold) / bare).toFixed(2).padStart(7)}`,
)
for (const cmd of ['karpctl --version', 'karpctl doctor --help', 'doctor --help, new screen']) {
  const r = med[`new ${cmd}`] / kube
  console.log(
    `aim: ${cmd} <= 1.3 × kubectl version --client → ${r.toFixed(2)}× ${r <= 1.3 ? 'met' : 'MISSED'}`,
  )
}
