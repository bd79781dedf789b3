// Ctrl-C, SIGTERM and SIGHUP: one process-wide state the executor and the helm wrapper consult.
// Without it Node dies at once and silently: a values file (the role ARN, the user's --values, secrets
// included) stays in $TMPDIR, and on SIGTERM helm keeps writing to the cluster after karpctl is gone.
// With it: the first signal starts no new step, stops the children karpctl runs, lets running steps end
// and says what was applied; a second signal exits at once. Temporary files go in every case.
import type { ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { KarpctlError } from '../errors.js'

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP'

/** The shell's convention (128 + the signal's number), so scripts can tell an interrupt from a failure. */
export const SIGNAL_EXIT: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }

/** A run stopped by a signal: the one line says what was applied and that the same command finishes. */
export class InterruptedError extends KarpctlError {
  override readonly exitCode: number
  constructor(
    message: string,
    readonly signal: StopSignal,
  ) {
    super(message, 'INTERRUPTED')
    this.exitCode = SIGNAL_EXIT[signal]
  }
}

/** Thrown by a wait or a child that was cut short by the stop: the step did not finish. */
export class StoppedError extends KarpctlError {
  constructor(what: string) {
    super(`${what} was stopped by the interrupt`, 'INTERRUPTED')
  }
}

export class Interrupt {
  signal: StopSignal | null = null
  private readonly children = new Set<ChildProcess>()
  private readonly files = new Set<string>()
  private readonly waiters = new Set<() => void>()
  /** How many plans are applying: while one is, the first signal waits for its running steps. */
  private applying = 0

  get stopping(): boolean {
    return this.signal !== null
  }

  /** A child karpctl started (helm): stopped with SIGTERM on the first signal, as helm expects. */
  trackChild(child: ChildProcess): void {
    this.children.add(child)
    child.once('exit', () => this.children.delete(child))
    if (this.stopping) child.kill('SIGTERM')
  }

  /** A file to remove on any exit (a signal, the watchdog's process.exit, a crash). Returns the release. */
  trackFile(path: string): () => void {
    this.files.add(path)
    return () => {
      this.files.delete(path)
      rmSync(path, { force: true })
    }
  }

  /** Synchronous, so it works from the process 'exit' event and from a second signal. */
  removeFiles(): void {
    for (const f of this.files) {
      try {
        rmSync(f, { force: true })
      } catch {
        // Nothing more can be done on the way out; the file is private (mode 0600) anyway.
      }
    }
    this.files.clear()
  }

  /** Resolves after `ms`, or early (rejecting) when a stop begins: a step's wait must not outlive it. */
  sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.reject(new StoppedError('a wait'))
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(t)
        this.waiters.delete(done)
        if (this.stopping) reject(new StoppedError('a wait'))
        else resolve()
      }
      const t = setTimeout(done, ms)
      this.waiters.add(done)
    })
  }

  /** Runs `fn` as a plan's apply: a signal meanwhile lets it end instead of exiting at once. */
  async whileApplying<T>(fn: () => Promise<T>): Promise<T> {
    this.applying++
    try {
      return await fn()
    } finally {
      this.applying--
    }
  }

  get isApplying(): boolean {
    return this.applying > 0
  }

  /** The first signal: no new step, no new child, children told to stop, waits cut short. */
  stop(signal: StopSignal): void {
    if (this.signal) return
    this.signal = signal
    for (const c of this.children) c.kill('SIGTERM')
    for (const w of [...this.waiters]) w()
  }

  /** Children still running at a second signal get no more time. */
  killChildren(): void {
    for (const c of this.children) c.kill('SIGKILL')
  }

  /** For tests: back to a fresh run. */
  reset(): void {
    this.signal = null
    this.children.clear()
    this.files.clear()
    this.waiters.clear()
    this.applying = 0
  }
}

/** The process's one state: the executor, the helm wrapper and the values file all see the same stop. */
export const interrupt = new Interrupt()

let installed = false

/**
 * Handles SIGINT, SIGTERM and SIGHUP for the rest of the process (once; later calls change nothing).
 * `fail` prints the one line (as the command prints its errors) and exits with the error's code.
 */
export function installSignalHandlers(fail: (err: InterruptedError) => void): void {
  if (installed) return
  installed = true
  process.on('exit', () => interrupt.removeFiles())
  for (const signal of Object.keys(SIGNAL_EXIT) as StopSignal[]) {
    process.on(signal, () => {
      if (interrupt.stopping) {
        // The second signal: the user will not wait. The files still go; helm is killed, not asked.
        interrupt.killChildren()
        interrupt.removeFiles()
        process.exit(SIGNAL_EXIT[signal])
      }
      interrupt.stop(signal)
      // A plan applying reports through its own error once its running steps end (runPlan). Anything
      // else (reading, planning, a prompt, a wait after the apply) has nothing half-done: stop now.
      if (!interrupt.isApplying) {
        interrupt.removeFiles()
        fail(
          new InterruptedError(
            `interrupted (${signal}) while no change was in progress: run the same command again to finish`,
            signal,
          ),
        )
      }
    })
  }
}
