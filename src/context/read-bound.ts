// The bound on the reads of a command whose --timeout bounds its waits (install, tenant add|remove,
// teardown): everything before the plan is confirmed or applied is reads, and a credential provider or
// a server that never finishes must not hang them. A person being asked, or an apply under way (whose
// waits have bounds of their own: src/plan/retry.ts, src/fix/waits.ts), ends it.
let disarm: (() => void) | undefined

/** Calls `fire` after `ms` unless `readsDone` comes first. */
export function armReadBound(ms: number, fire: () => void): void {
  readsDone()
  const timer = setTimeout(fire, ms)
  timer.unref()
  disarm = () => clearTimeout(timer)
}

/** The reads are over: a question is being asked, or the plan is being applied. */
export function readsDone(): void {
  disarm?.()
  disarm = undefined
}
