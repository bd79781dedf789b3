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
import { assertNotBlocked, buildPlan, planCounts } from './plan.js'
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
  /** Wait for another run's lock on the cluster to be given back, instead of stopping (--wait-for-lock). */
  waitForLock?: boolean
}

export type Outcome =
  { kind: 'dry-run' } | { kind: 'nothing' } | { kind: 'declined' } | { kind: 'applied'; result: ApplyResult }

export interface RunPlanOptions {
  aws: Aws
  callerArn?: string
  question: (changes: number) => string
  beforeApply?: () => Promise<void>
  confirm?: () => Promise<boolean>
  /** How to confirm without a terminal (default: --yes). */
  confirmFlag?: string
}

export async function runPlan(plan: Plan, env: ApplyEnv, s: Session, o: RunPlanOptions): Promise<Outcome> {
  // The plan is read: from here a person is asked, or the apply's own bounded waits run.
  readsDone()
  // A step blocked by work in progress (a helm another run is still at) is that run's to finish: with
  // a lock to ask, the lock speaks first — who holds it, or the wait for it — then the plan is judged.
  const blocked = plan.steps.some((st) => st.verdict.blocked)
  if (s.dryRun || !env.lock) assertNotBlocked(plan)
  if (s.dryRun) return { kind: 'dry-run' }
  if (!blocked && !plan.steps.some(changing)) return { kind: 'nothing' }
  // One change at a time per cluster: the lock is taken before the question (a run that would have
  // to stop is told so before anyone confirms) and held until the apply ends, whatever its outcome.
  const lock = await env.lock?.({ wait: s.waitForLock === true, say: s.progress })
  try {
    // The plan was read before the lock: after another run's, it is read again, and applied only if
    // it still says the same (the other run may have done, or undone, part of it).
    // After taking over a killed run's lock with --yes, a plan that moved is what that run's helm
    // finished meanwhile: applied as read now (said so), so the re-run after a kill converges.
    const current = lock?.waited
      ? await observedAgain(plan, env, lock.tookOver === true && s.yes ? s.progress : undefined)
      : plan
    assertNotBlocked(current)
    // The other run made every change this one planned: nothing is left to do.
    if (!current.steps.some(changing)) return { kind: 'nothing' }
    return await confirmAndApply(current, env, s, o)
  } finally {
    await lock?.release()
  }
}

/**
 * The plan observed again with fresh reads; stops in one line when its verdicts changed (unless nothing
 * is left to change: the other run did it all, or `moved` is given: it is told, and the new plan goes on).
 */
async function observedAgain(plan: Plan, env: ApplyEnv, moved?: (line: string) => void): Promise<Plan> {
  env.forget?.()
  const again = await buildPlan(
    plan.title,
    plan.steps.map((st) => st.resource),
    env,
  )
  const verdict = (st: Plan['steps'][number]) => JSON.stringify([st.verdict.action, st.verdict.changes])
  const before = new Map(plan.steps.map((st) => [st.resource.address, verdict(st)]))
  const changed = again.steps.filter((st) => before.get(st.resource.address) !== verdict(st))
  const which = `${changed.length} step(s) plan differently now (${changed.map((st) => st.resource.address).join(', ')})`
  if (changed.length && again.steps.some(changing)) {
    if (!moved)
      throw new InputError(
        `the cluster changed while this run waited for its lock: ${which}; run the same command again to see the new plan`,
        'PLAN_STALE',
      )
    moved(
      `read again after taking over a stopped run's lock: ${which}, finished by what that run left running; applying the plan as read now`,
    )
  }
  return again
}

async function confirmAndApply(plan: Plan, env: ApplyEnv, s: Session, o: RunPlanOptions): Promise<Outcome> {
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
