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

/** Exit code policy: 1 when any error-severity check failed. */
export function hasErrorFailure(results: CheckResult[]): boolean {
  return results.some((r) => r.status === 'fail' && r.meta.severity === 'error')
}
