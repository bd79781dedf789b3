import type { CheckResult, Status } from '../checks/types.js'

export type Counts = Record<Status, number>

export function countResults(results: CheckResult[]): Counts {
  const counts: Counts = { pass: 0, fail: 0, warn: 0, unknown: 0, skipped: 0 }
  for (const r of results) counts[r.status]++
  return counts
}

export function countLine(results: CheckResult[]): string {
  const c = countResults(results)
  return `${results.length} checks: ${c.pass} passed, ${c.fail} failed, ${c.warn} warnings, ${c.unknown} unknown, ${c.skipped} skipped`
}
