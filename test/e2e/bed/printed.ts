// Fixes doctor prints, replayed as a user pastes them (issue 21, "fix replay"): each `$` line through
// `sh -c` in a scratch directory, with the real kubectl and aws CLIs from PATH pointed at the bed
// (AWS_ENDPOINT_URL, KUBECONFIG), and doctor's JSON report read before and after.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import type { Finding } from '../../../src/checks/types.js'
import type { Bed } from './bed.js'
import { karpctlOn, parseJsonOut } from './cli.js'

export interface DoctorReport {
  summary: Record<string, number>
  checks: { id: string; status: string; findings: Finding[] }[]
}

export const doctorReport = async (bed: Bed): Promise<DoctorReport> =>
  parseJsonOut<DoctorReport>(await karpctlOn(bed, ['doctor', '--json']), 'doctor --json')

/** The ids of the checks that fail, sorted. */
export const failingChecks = (report: DoctorReport): string[] =>
  report.checks
    .filter((c) => c.status === 'fail')
    .map((c) => c.id)
    .sort()

/** The failing findings of check `id`, which must fail. */
export async function failingIn(bed: Bed, id: string): Promise<Finding[]> {
  const c = (await doctorReport(bed)).checks.find((x) => x.id === id)
  assert.equal(c?.status, 'fail', JSON.stringify(c))
  return c!.findings.filter((f) => f.status === 'fail')
}

/** Check `id` passes; the report, for what else the test asserts on it. */
export async function passes(bed: Bed, id: string): Promise<DoctorReport> {
  const report = await doctorReport(bed)
  const c = report.checks.find((x) => x.id === id)
  assert.equal(c?.status, 'pass', JSON.stringify(c?.findings))
  return report
}

/**
 * Each line as a user pastes it into a shell, in `cwd`; the first that fails fails the test. No stdin
 * is fed (runCommand writes to it, and a builtin such as printf exits before the write lands: EPIPE).
 */
export async function runPrinted(bed: Bed, cwd: string, commands: string[]): Promise<void> {
  for (const c of commands) {
    const r = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        'sh',
        ['-c', c],
        { cwd, env: bed.childEnv({ PATH: `${bed.binDir}:${process.env.PATH}` }), timeout: 60_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 99) : 0, out: stdout + stderr }),
      ),
    )
    assert.equal(r.code, 0, `$ ${c}\n${r.out}`)
  }
}
