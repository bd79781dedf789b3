// The one executor: steps run in dependency order, independent ones concurrently (bounded), each
// retried where AWS is eventually consistent, each reported as it starts and ends. A failure stops
// only what depends on it; what was applied is listed, and the same command applies the rest.
import { KarpctlError } from '../errors.js'
import { failureOf } from '../facts/read.js'
import { Limiter } from '../context/limiter.js'
import { assertNotBlocked } from './plan.js'
import { backoff, DEFAULT_RETRY, retryable, waitingFor, type RetryPolicy } from './retry.js'
import { changing, type ApplyEnv, type Plan, type Step } from './types.js'

export type StepStatus = 'start' | 'retry' | 'done' | 'failed' | 'skipped'

export interface StepEvent {
  step: Step
  status: StepStatus
  attempt?: number
  message?: string
  ms?: number
  /** On a retry: what the step waits for, how many attempts it has, and the pause before the next. */
  waiting?: string
  attempts?: number
  delayMs?: number
}

export interface ApplyOptions {
  concurrency?: number
  retry?: RetryPolicy
  onEvent?: (e: StepEvent) => void
  now?: () => number
  /** True once the run is interrupted: no step starts after that, and none retries. */
  stopping?: () => boolean
}

export interface ApplyResult {
  applied: string[]
  failed: { address: string; message: string }[]
  skipped: string[]
}

export class ApplyError extends KarpctlError {
  constructor(
    message: string,
    readonly result: ApplyResult,
  ) {
    super(message, 'APPLY_FAILED')
  }
}

/** One line on why a step failed: AWS's own words (they name the denied action and resource). */
export function describeStepError(err: unknown, step: Step): string {
  if (err instanceof KarpctlError) return err.message
  const f = failureOf(err, step.resource.address)
  const msg = f.message.replace(/\s+/g, ' ').trim()
  return f.code && !msg.startsWith(f.code) ? `${f.code}: ${msg}` : msg
}

/**
 * For each changing step, the changing steps it must wait for: its dependencies, and through an
 * unchanged one, that one's, and so on. An unchanged step is already as wanted, but what it stands
 * between still holds: a chain IAM → CRD hand-over (unchanged) → CRD release keeps the release after IAM.
 */
export function changingDependencies(steps: Step[]): Map<string, Step[]> {
  const byAddress = new Map(steps.map((s) => [s.resource.address, s]))
  const out = new Map<string, Step[]>()
  for (const step of steps.filter(changing)) {
    const found = new Map<string, Step>()
    const seen = new Set<string>()
    const walk = (addresses: string[]) => {
      for (const a of addresses) {
        const dep = byAddress.get(a)
        if (!dep || seen.has(a)) continue
        seen.add(a)
        // A changing dependency waits for its own: reaching it is enough.
        if (changing(dep)) found.set(a, dep)
        else walk(dep.resource.dependsOn)
      }
    }
    walk(step.resource.dependsOn)
    out.set(step.resource.address, [...found.values()])
  }
  return out
}

export async function applyPlan(plan: Plan, env: ApplyEnv, opts: ApplyOptions = {}): Promise<ApplyResult> {
  // A blocked plan is never applied, in part or whole: the caller shows it and stops.
  assertNotBlocked(plan)
  const policy = opts.retry ?? DEFAULT_RETRY
  const now = opts.now ?? Date.now
  const limiter = new Limiter(opts.concurrency ?? 8)
  const emit = (e: StepEvent) => opts.onEvent?.(e)
  const stopping = opts.stopping ?? (() => false)
  const todo = plan.steps.filter(changing)
  const waitsFor = changingDependencies(plan.steps)
  const result: ApplyResult = { applied: [], failed: [], skipped: [] }
  const outcome = new Map<string, Promise<boolean>>()

  const run = (step: Step): Promise<boolean> => {
    const key = step.resource.address
    let p = outcome.get(key)
    if (p) return p
    p = (async () => {
      const ok = await Promise.all((waitsFor.get(key) ?? []).map(run))
      if (ok.includes(false)) {
        result.skipped.push(key)
        emit({ step, status: 'skipped', message: 'a step it depends on failed' })
        return false
      }
      return limiter.run(async () => {
        // Checked here, not before the dependencies: a step queued behind the limiter must not start
        // either. A step never started leaves nothing half-done; the re-run plans it again.
        if (stopping()) {
          result.skipped.push(key)
          emit({ step, status: 'skipped', message: 'interrupted before it started' })
          return false
        }
        const t0 = now()
        emit({ step, status: 'start' })
        for (let attempt = 1; ; attempt++) {
          try {
            await step.resource.apply(env, step.current)
            result.applied.push(key)
            emit({ step, status: 'done', ms: now() - t0 })
            return true
          } catch (err) {
            const message = describeStepError(err, step)
            if (
              attempt < policy.attempts &&
              !stopping() &&
              !(err instanceof KarpctlError) &&
              retryable(err)
            ) {
              const delayMs = backoff(policy, attempt)
              const waiting = waitingFor(err, step.resource.kind)
              emit({ step, status: 'retry', attempt, message, waiting, attempts: policy.attempts, delayMs })
              // An interrupted pause rejects: the step then ends as failed, never half-retried.
              const paused = await env.sleep(delayMs).then(
                () => !stopping(),
                () => false,
              )
              if (paused) continue
              result.failed.push({ address: key, message: `${message} (interrupted before retrying)` })
              emit({ step, status: 'failed', message: 'interrupted before retrying', ms: now() - t0 })
              return false
            }
            result.failed.push({ address: key, message })
            emit({ step, status: 'failed', message, ms: now() - t0 })
            return false
          }
        }
      })
    })()
    outcome.set(key, p)
    return p
  }

  await Promise.all(todo.map(run))
  return result
}
