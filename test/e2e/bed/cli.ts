// karpctl as the adopted-install scenarios run it (the bed's helm on PATH, the bed's target, the
// fixture chart), and the JSON shapes of what they read back: doctor's report, a plan, --fix's result.
import { join } from 'node:path'
import { startBed, type Bed } from './bed.js'
import { playController } from './install-seed.js'
import { EC2NODECLASSES, NODEPOOLS, waitForCondition } from './karpenter-objects.js'
import { karpenterFixtures } from './paths.js'
import { runKarpctl, targetArgs, type RunResult } from './run.js'
import type { Network } from './seed.js'

export const CHARTS_1_14_1 = () => join(karpenterFixtures(), 'v1.14.1', 'charts')
const envOf = (bed: Bed) => ({ NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` })

export const karpctlOn = (bed: Bed, args: string[]) =>
  runKarpctl(bed, [...args, ...targetArgs(bed)], { env: envOf(bed), timeoutMs: 300_000 })
export const installOn = (bed: Bed, extra: string[]) =>
  karpctlOn(bed, ['install', '--chart-dir', CHARTS_1_14_1(), '--timeout', '60', ...extra])
export const teardownOn = (bed: Bed, extra: string[] = []) =>
  karpctlOn(bed, ['teardown', '--confirm', 'demo', '--timeout', '60', ...extra])

/** A run for a failure message: exit code and the tails of stdout and stderr. */
export const shown = (r: RunResult) =>
  `exit ${r.code}\n--- stdout\n${r.stdout.slice(-6000)}\n--- stderr\n${r.stderr.slice(-6000)}`

export function parseJsonOut<T>(r: RunResult, what: string): T {
  try {
    return JSON.parse(r.stdout) as T
  } catch {
    throw new Error(`${what} printed no JSON\n${shown(r)}`)
  }
}

export interface FindingJson {
  status: string
  message: string
  subject?: string
  evidence?: Record<string, unknown>
  fix?: { summary: string; commands?: string[] }
}
export interface CheckJson {
  id: string
  status: string
  findings: FindingJson[]
}
export interface DoctorJson {
  summary: Record<string, number>
  checks: CheckJson[]
}
export interface PlanStepJson {
  address: string
  kind: string
  name: string
  action: 'create' | 'update' | 'unchanged' | 'delete'
  note?: string
  blocked?: string
}
export interface PlanJson {
  plan: { summary: Record<string, number>; steps: PlanStepJson[] }
  error?: { code: string; message: string }
}
export interface ManualJson {
  check: string
  message: string
  why: string
  commands: string[]
}
export interface FixJson extends DoctorJson {
  fix: {
    outcome: { kind: string; result?: { applied: string[]; failed?: { address: string }[] } }
    plan: { steps: { address: string; action: string; group: string }[] }
    manual: ManualJson[]
    writes: number
  }
}

/** One line per check, for a diagnostic. */
export const checkLines = (report: DoctorJson) =>
  report.checks
    .map((c) => `${c.status.padEnd(7)} ${c.id}: ${c.findings.map((x) => x.message).join(' | ')}`)
    .join('\n')

/** A bed seeded by `seed`, the controller played (Deployment available, NodePools Ready) until stop(). */
export interface SeededBed<S> {
  bed: Bed
  seed: S
  stop: () => Promise<void>
}

export async function seededBed<S extends { net: Network }>(
  seed: (bed: Bed) => Promise<S>,
): Promise<SeededBed<S>> {
  const bed = await startBed()
  try {
    const s = await seed(bed)
    const stopController = playController(bed, s.net)
    return {
      bed,
      seed: s,
      stop: async () => {
        await stopController()
        await bed.stop()
      },
    }
  } catch (e) {
    await bed.stop()
    throw e
  }
}

/**
 * A bed running the real Karpenter controller, seeded by `seed` (which must leave the controller's
 * status to it: `markAvailable: false`), once Karpenter marked EC2NodeClass and NodePool `default` Ready.
 */
export async function realControllerBed<S>(seed: (bed: Bed) => Promise<S>): Promise<SeededBed<S>> {
  const bed = await startBed({ karpenter: true })
  try {
    const s = await seed(bed)
    await bed.karpenter!.controller.ready()
    await waitForCondition(bed, `${EC2NODECLASSES}/default`, 'Ready', { status: 'True' })
    await waitForCondition(bed, `${NODEPOOLS}/default`, 'Ready', { status: 'True' })
    return { bed, seed: s, stop: () => bed.stop() }
  } catch (e) {
    await bed.stop()
    throw e
  }
}

/** The note the human plan prints under the step `<kind> <name>` (`        note: …`), or undefined. */
export function planNote(stdout: string, step: string): string | undefined {
  const lines = stdout.split('\n')
  const i = lines.findIndex((l) => new RegExp(`^\\s*\\S+ \\w+ ${escapeRe(step)}$`).test(l))
  const next = i >= 0 ? lines[i + 1] : undefined
  return next?.match(/^\s+note: (.*)$/)?.[1]
}
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
