// Check results for report tests: the real catalog run on the healthy facts and on the broken example,
// and hand-made results for cases the catalog does not produce on its own.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { catalog } from '../../src/checks/catalog.js'
import { runChecks } from '../../src/checks/run.js'
import type { Category, CheckMeta, CheckResult, Finding, Severity, Status } from '../../src/checks/types.js'
import type { Facts } from '../../src/facts/types.js'
import { healthyFacts } from './facts.js'
import { repoRoot } from './fixtures.js'

export function brokenFacts(): Facts {
  return JSON.parse(readFileSync(join(repoRoot, 'examples', 'shared-cluster-broken.json'), 'utf8')) as Facts
}

export const healthyResults = (): CheckResult[] => runChecks(catalog, healthyFacts())
export const brokenResults = (): CheckResult[] => runChecks(catalog, brokenFacts())

export function meta(
  id: string,
  severity: Severity = 'error',
  category: Category = 'cluster',
  title = `title of ${id}`,
): CheckMeta {
  return { id, title, category, severity, docs: `docs of ${id}` }
}

/** A result whose status is the worst of its findings' (the order run.ts uses). */
export function result(m: CheckMeta, findings: Finding[]): CheckResult {
  const rank: Record<Status, number> = { fail: 4, warn: 3, unknown: 2, pass: 1, skipped: 0 }
  const status = findings.reduce<Status>((a, f) => (rank[f.status] > rank[a] ? f.status : a), 'skipped')
  return { meta: m, status, findings }
}

/** Counts statuses independently of src/report/summary.ts. */
export function tally(results: CheckResult[]): Record<Status, number> {
  const n = (s: Status) => results.filter((r) => r.status === s).length
  return { pass: n('pass'), fail: n('fail'), warn: n('warn'), unknown: n('unknown'), skipped: n('skipped') }
}
