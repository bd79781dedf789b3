// Start-up cost of the CLI against bare node: median of N runs of `karpctl --version` vs `node -e 0`.
// Aim (DESIGN.md): <= 1.6x bare node. Run after `npm run build`.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const runs = Number(process.env.RUNS ?? 15)
const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))

function median(cmd, args) {
  const times = []
  for (let i = 0; i < runs + 2; i++) {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(cmd, args, { stdio: 'ignore' })
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`)
    if (i >= 2) times.push(Number(process.hrtime.bigint() - t0) / 1e6) // two warm-up runs
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

const node = median(process.execPath, ['-e', '0'])
const version = median(process.execPath, [bin, '--version'])
const help = median(process.execPath, [bin, 'doctor', '--help'])
const list = median(process.execPath, [bin, 'doctor', '--list'])
const fmt = (ms) => `${ms.toFixed(1)} ms (${(ms / node).toFixed(2)}x)`
console.log(`runs: ${runs} (median)`)
if (process.env.NODE_EXTRA_CA_CERTS) {
  // Loading extra CA certificates costs every node process tens of ms before any script runs:
  // it inflates the baseline and flatters the ratio. Compare with `env -u NODE_EXTRA_CA_CERTS`.
  console.log(`note: NODE_EXTRA_CA_CERTS is set (${process.env.NODE_EXTRA_CA_CERTS}): ratios are flattered`)
}
console.log(`node -e 0             ${node.toFixed(1)} ms`)
console.log(`karpctl --version     ${fmt(version)}   aim <= 1.6x`)
console.log(`karpctl doctor --help ${fmt(help)}`)
console.log(`karpctl doctor --list ${fmt(list)}`)
