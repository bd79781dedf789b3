// Fixes doctor prints, replayed as a user pastes them (issue 21, "fix replay"): each `$` line through
// `sh -c` in a scratch directory, with the real kubectl and aws CLIs from PATH pointed at the bed
// (AWS_ENDPOINT_URL, KUBECONFIG), and doctor's JSON report read before and after.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { Finding } from '../../../src/checks/types.js'
import type { Bed } from './bed.js'
import { karpctlOn, parseJsonOut } from './cli.js'
import { karpenterFixtures } from './paths.js'

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

/** The first executable `name` on PATH. */
function onPath(name: string): string {
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, name))
    .find((f) => {
      try {
        accessSync(f, constants.X_OK)
        return true
      } catch {
        return false
      }
    })
  if (!found) throw new Error(`runPrinted: no ${name} on PATH`)
  return found
}

/**
 * A directory of stand-ins that keep printed lines on 127.0.0.1, each line itself run unchanged:
 * - `aws`: the real CLI with `--endpoint-url`. aws CLI v1 sets `--endpoint-url
 *   https://<region>.queue.amazonaws.com` itself for `sqs` (and emr, health, rds in us-east-1:
 *   awscli/customizations/overridesslcommonname.py, whenever the flag is not given), which wins over
 *   AWS_ENDPOINT_URL: the printed `aws sqs …` line left the bed for AWS (exit 255, "Could not connect to
 *   the endpoint URL") while the same call through the SDK, which has no such customization, reached
 *   moto. On a real account that endpoint is the right one.
 * - `helm`: the bed's helm, with Karpenter's charts at oci://public.ecr.aws/karpenter/ (what doctor's
 *   `helm upgrade` lines name) read from the fixtures of the same `--version`; any other remote chart
 *   is refused, so nothing is pulled from the internet.
 */
function onBed(bed: Bed): string {
  const dir = join(bed.tmpDir, 'printed-on-bed')
  if (existsSync(join(dir, 'helm'))) return dir
  mkdirSync(dir, { recursive: true })
  const sh = (lines: string[]) => `#!/bin/sh\n${lines.join('\n')}\n`
  writeFileSync(
    join(dir, 'aws'),
    sh([`exec ${JSON.stringify(onPath('aws'))} --endpoint-url "$AWS_ENDPOINT_URL" "$@"`]),
    { mode: 0o755 },
  )
  writeFileSync(
    join(dir, 'helm'),
    sh([
      'v=; prev=',
      'for a; do [ "$prev" = --version ] && v=$a; case $a in --version=*) v=${a#--version=};; esac; prev=$a; done',
      'for a; do shift',
      '  case $a in',
      `    oci://public.ecr.aws/karpenter/*) set -- "$@" ${JSON.stringify(karpenterFixtures())}"/v$v/charts/\${a##*/}";;`,
      '    oci://*|http://*|https://*) echo "printed-on-bed helm: $a is not on the bed" >&2; exit 3;;',
      '    *) set -- "$@" "$a";;',
      '  esac',
      'done',
      `exec ${JSON.stringify(bed.helmBin)} "$@"`,
    ]),
    { mode: 0o755 },
  )
  return dir
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
        {
          cwd,
          env: bed.childEnv({ PATH: `${onBed(bed)}:${bed.binDir}:${process.env.PATH}` }),
          timeout: 60_000,
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 99) : 0, out: stdout + stderr }),
      ),
    )
    assert.equal(r.code, 0, `$ ${c}\n${r.out}`)
  }
}
