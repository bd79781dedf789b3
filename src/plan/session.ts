// What every command that changes a cluster does with a plan, in one place: refuse a blocked plan,
// stop at --dry-run, ask (or require --yes without a terminal), check permissions with IAM's simulator,
// apply with a line per step, and turn failures into one error that says how to finish the job.
import type { Aws } from '../context/aws.js'
import { InputError } from '../errors.js'
import { interrupt, InterruptedError } from '../context/interrupt.js'
import { readsDone } from '../context/read-bound.js'
import type { Prompter } from '../context/prompter.js'
import { preflight, PreflightError } from './preflight.js'
import { progressLine } from './progress.js'
import { ApplyError, applyPlan, type ApplyResult } from './apply.js'
import { assertNotBlocked, planCounts } from './plan.js'
import { changing, type ApplyEnv, type Plan } from './types.js'

export interface Session {
  prompter: Prompter | null
  yes: boolean
  dryRun: boolean
  color: boolean
  /** A line for the user (stdout, or stderr with --json). */
  say: (line: string) => void
  /** A progress line (always stderr). */
  progress: (line: string) => void
}

export type Outcome =
  { kind: 'dry-run' } | { kind: 'nothing' } | { kind: 'declined' } | { kind: 'applied'; result: ApplyResult }

export async function runPlan(
  plan: Plan,
  env: ApplyEnv,
  s: Session,
  o: {
    aws: Aws
    callerArn?: string
    question: (changes: number) => string
    beforeApply?: () => Promise<void>
    confirm?: () => Promise<boolean>
    /** How to confirm without a terminal (default: --yes). */
    confirmFlag?: string
  },
): Promise<Outcome> {
  // The plan is read: from here a person is asked, or the apply's own bounded waits run.
  readsDone()
  assertNotBlocked(plan)
  if (s.dryRun) return { kind: 'dry-run' }
  if (!plan.steps.some(changing)) return { kind: 'nothing' }
  const c = planCounts(plan)
  if (!s.yes) {
    if (!s.prompter)
      throw new InputError(
        `the plan changes the cluster: pass ${o.confirmFlag ?? '--yes'} to apply it without a terminal (or --dry-run to only plan)`,
        'CONFIRMATION_REQUIRED',
      )
    const ok = o.confirm
      ? await o.confirm()
      : await s.prompter.confirm({ message: o.question(c.create + c.update + c.delete), default: false })
    if (!ok) return { kind: 'declined' }
  }
  await o.beforeApply?.()
  if (o.callerArn) {
    const pf = await preflight(o.aws, plan, o.callerArn)
    if (pf.status === 'denied') throw new PreflightError(o.callerArn, pf.denied)
    if (pf.status === 'unavailable')
      s.say(
        `preflight: IAM's policy simulator is unavailable (${pf.reason}); permissions could not be checked before applying`,
      )
    else if (pf.checked)
      s.say(`preflight: ${pf.checked} permission(s) checked with IAM's policy simulator, all allowed`)
  }
  // While the plan applies, a signal lets the running steps end (helm is told to stop) rather than
  // exiting mid-write; the line below then says what was applied.
  const result = await interrupt.whileApplying(() =>
    applyPlan(
      plan,
      { ...env, progress: s.progress },
      {
        onEvent: (e) => {
          const line = progressLine(e, s.color)
          if (line) s.progress(line)
        },
        stopping: () => interrupt.stopping,
      },
    ),
  )
  if (interrupt.signal) throw interruptedError(interrupt.signal, result)
  if (result.failed.length)
    throw new ApplyError(
      `${result.failed.length} step(s) failed (${result.failed.map((f) => `${f.address}: ${f.message}`).join('; ')}); ${result.applied.length} applied${result.skipped.length ? `, ${result.skipped.length} not started` : ''}: fix the cause and run the same command again to finish`,
      result,
    )
  return { kind: 'applied', result }
}

/** The one line of an interrupted apply: what was applied, what was stopped, and how to finish. */
export function interruptedError(signal: InterruptedError['signal'], r: ApplyResult): InterruptedError {
  const parts = [
    `${r.applied.length} step(s) applied${r.applied.length ? ` (${r.applied.join(', ')})` : ''}`,
    ...(r.failed.length ? [`${r.failed.length} stopped (${r.failed.map((f) => f.address).join(', ')})`] : []),
    ...(r.skipped.length ? [`${r.skipped.length} not started`] : []),
  ]
  return new InterruptedError(
    `interrupted (${signal}): ${parts.join(', ')}; run the same command again to finish`,
    signal,
  )
}
