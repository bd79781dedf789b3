// Ctrl-C, SIGTERM and SIGHUP during an apply, in a real child process: no new step starts, helm is
// stopped, no values file (the user's secrets) exists at any point — helm reads them on its standard
// input — the one line says what was applied and how to finish, and the exit code is the shell's
// 128 + signal. A second signal exits at once.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { Interrupt } from '../../../src/context/interrupt.js'

const SCRIPT = join(import.meta.dirname, '../../helpers/interrupted-plan.ts')

/** A helm that answers `version`, and on `upgrade` reads its values (stdin) and records its pid, then hangs. */
function fakeHelm(dir: string, onTerm: 'exit' | 'ignore'): string {
  const bin = join(dir, 'helm')
  writeFileSync(
    bin,
    `#!/bin/sh
case "$1" in
  version) echo v3.14.0; exit 0;;
esac
${onTerm === 'ignore' ? "trap '' TERM" : "trap 'exit 1' TERM"}
values=""
prev=""
for a in "$@"; do [ "$prev" = "--values" ] && values="$a"; prev="$a"; done
[ "$values" = "-" ] && cat > "${dir}/stdin"
echo "$$ $values" > "${dir}/state"
while :; do sleep 0.1; done
`,
  )
  chmodSync(bin, 0o755)
  return bin
}

interface Run {
  code: number | null
  stderr: string
  stdout: string
  tmp: string
  helmPid: number
  /** What helm was given as --values. */
  values: string
}

const leftovers = (tmp: string) => readdirSync(tmp).filter((f) => f.startsWith('karpctl-'))

async function interrupted(signals: NodeJS.Signals[], onTerm: 'exit' | 'ignore' = 'exit'): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-sig-'))
  const tmp = mkdtempSync(join(tmpdir(), 'karpctl-sig-tmp-'))
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { ...process.env, KARPCTL_HELM: fakeHelm(dir, onTerm), TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  const deadline = Date.now() + 20_000
  while (!existsSync(join(dir, 'state'))) {
    if (Date.now() > deadline) throw new Error(`helm never ran: ${stderr}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  const [pid, values] = readFileSync(join(dir, 'state'), 'utf8').trim().split(' ')
  // Helm has the values, secret included, from its standard input; no file holds them, even now.
  assert.match(readFileSync(join(dir, 'stdin'), 'utf8'), /hunter2/)
  assert.deepEqual(leftovers(tmp), [], 'no values file while helm runs')
  for (const s of signals) {
    child.kill(s)
    await new Promise((r) => setTimeout(r, 300))
  }
  const code = await exited
  return { code, stderr, stdout, tmp, helmPid: Number(pid), values: values as string }
}

/** Running, not a zombie: an orphan killed after its parent exited waits for an init that may not reap. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
  ['SIGHUP', 129],
] as const) {
  test(`${signal} during helm: helm stopped, no values file ever, what was applied said, exit ${code}`, async () => {
    const r = await interrupted([signal])
    assert.equal(r.code, code, r.stderr)
    assert.match(
      r.stderr,
      new RegExp(
        `interrupted \\(${signal}\\): 1 step\\(s\\) applied \\(iam-role\\.quick\\), 1 stopped \\(helm\\.karpenter-crd\\), 1 not started; run the same command again to finish`,
      ),
    )
    assert.doesNotMatch(r.stdout, /finished/)
    assert.doesNotMatch(r.stdout + r.stderr, /no output/, 'a stopped helm says why it ended')
    assert.deepEqual(leftovers(r.tmp), [])
    assert.equal(r.values, '-', 'helm reads its values from stdin')
    assert.equal(alive(r.helmPid), false, 'helm was left running')
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace')
  })
}

test('a second signal exits at once, helm killed, no values file left', async () => {
  // This helm ignores SIGTERM: only the second signal can end the run.
  const r = await interrupted(['SIGINT', 'SIGINT'], 'ignore')
  assert.equal(r.code, 130)
  assert.deepEqual(leftovers(r.tmp), [])
  await new Promise((res) => setTimeout(res, 200))
  assert.equal(alive(r.helmPid), false, 'helm was left running')
})

test('a stop cuts a wait short and refuses new ones; files are removed synchronously', async () => {
  const i = new Interrupt()
  const t0 = Date.now()
  const wait = i.sleep(60_000)
  i.stop('SIGINT')
  await assert.rejects(wait, /stopped by the interrupt/)
  assert.ok(Date.now() - t0 < 1000)
  await assert.rejects(i.sleep(1), /stopped by the interrupt/)
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-sig-'))
  const f = join(dir, 'karpctl-values-x.yaml')
  writeFileSync(f, 'x')
  i.trackFile(f)
  i.removeFiles()
  assert.equal(existsSync(f), false)
})
