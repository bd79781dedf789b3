import type { Facts } from '../facts/types.js'
import { part } from './lib/parts.js'
import type { Check, CheckResult, Finding, Status } from './types.js'

const rank: Record<Status, number> = { fail: 4, warn: 3, unknown: 2, pass: 1, skipped: 0 }

export function worst(statuses: Status[]): Status {
  return statuses.reduce<Status>((a, b) => (rank[b] > rank[a] ? b : a), 'skipped')
}

/** Runs one check; a read the check needed that failed makes it `unknown`, never `pass`. */
export function runCheck(check: Check, facts: Facts): CheckResult {
  let findings: Finding[]
  try {
    findings = part(() => check.run(facts))
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    findings = [{ status: 'unknown', message: `check crashed: ${message}` }]
  }
  if (findings.length === 0) findings = [{ status: 'skipped', message: 'nothing to check' }]
  return { meta: check.meta, status: worst(findings.map((f) => f.status)), findings }
}

export function selectChecks(catalog: Check[], only: string[] = [], skipIds: string[] = []): Check[] {
  const known = new Set(catalog.map((c) => c.meta.id))
  const unknownIds = [...only, ...skipIds].filter((id) => !known.has(id))
  if (unknownIds.length > 0) {
    throw new UnknownCheckIdError(unknownIds)
  }
  return catalog.filter(
    (c) => (only.length === 0 || only.includes(c.meta.id)) && !skipIds.includes(c.meta.id),
  )
}

export class UnknownCheckIdError extends Error {
  constructor(readonly ids: string[]) {
    super(`unknown check id${ids.length > 1 ? 's' : ''}: ${ids.join(', ')}`)
  }
}

export function runChecks(checks: Check[], facts: Facts): CheckResult[] {
  return checks.map((c) => runCheck(c, facts))
}

/** Exit code policy: 1 when any error-severity check failed (see `couldNotTell` for 2). */
export function hasErrorFailure(results: CheckResult[]): boolean {
  return results.some((r) => r.status === 'fail' && r.meta.severity === 'error')
}

/**
 * Exit code policy, the other half: exit 0 means "judged clean", never "could not tell". A run in which
 * no error-severity check failed but one or more of them is unknown (a read was denied, an API is
 * missing, the cluster did not answer) did not judge the cluster: this is the one line that ends it
 * with exit 2, after the report. A failure wins (exit 1): what was found matters more than what was
 * not seen. Warnings and info checks do not count; skipped checks (not applicable here) do not either.
 */
export function couldNotTell(results: CheckResult[]): string | null {
  if (hasErrorFailure(results)) return null
  const ran = results.filter((r) => r.meta.severity === 'error' && r.status !== 'skipped')
  const unknown = ran.filter((r) => r.status === 'unknown')
  if (unknown.length === 0) return null
  const reasons = [
    ...new Set(unknown.map((r) => r.findings.find((f) => f.status === 'unknown')?.message ?? 'no reason')),
  ]
  const shown = reasons.slice(0, 3).map((m) => (m.length > 100 ? `${m.slice(0, 99)}…` : m))
  const more = reasons.length > 3 ? `; and ${reasons.length - 3} more` : ''
  const ids = unknown.map((r) => r.meta.id)
  return `could not tell: ${unknown.length} of ${ran.length} error checks are unknown (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}: ${shown.join('; ')}${more}); the report says why for each, and exit 0 needs every error check judged`
}
