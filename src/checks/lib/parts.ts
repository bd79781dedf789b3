// Checks that prove several independent things (release status, cluster name, CRDs, versions) run each
// part through `part()`: a read that failed or a skip inside one part becomes that part's own
// `unknown` / `skipped` finding, and the other parts still report.
import type { Finding } from '../types.js'
import { describeFailure, NotCollected, Skipped } from './facts.js'

export function part(fn: () => Finding[]): Finding[] {
  try {
    return fn()
  } catch (err) {
    if (err instanceof NotCollected) {
      return [
        { status: 'unknown', message: describeFailure(err.failure), evidence: { read: err.failure.read } },
      ]
    }
    if (err instanceof Skipped) return [{ status: 'skipped', message: err.message }]
    throw err
  }
}

/** A read's value when it succeeded, else undefined: for evidence that only enriches a finding. */
export function optional<T>(read: { ok: true; value: T } | { ok: false }): T | undefined {
  return read.ok ? read.value : undefined
}
