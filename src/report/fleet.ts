// A fleet run's reports: the terminal table (one row per cluster, worst first, then each check that is not
// clean with the clusters it is not clean on), and JSON, SARIF and Markdown carrying every cluster.
import type { Check, CheckResult, Status } from '../checks/types.js'
import type { ClusterOutcome, FleetOutcome } from '../fleet/types.js'
import { jsonReport, markdownReport, REPORT_SCHEMA, sarifReport } from './machine.js'
import { countResults } from './summary.js'
import { style as makeStyle, type Style } from './style.js'
import { jsonText, visible } from './terminal.js'

export const FLEET_REPORT_SCHEMA = 'karpctl.fleet-report/v1'

const SYMBOL: Record<Status, string> = { fail: '✖', warn: '!', unknown: '?', pass: '✔', skipped: '–' }
const NOT_CLEAN: Status[] = ['fail', 'unknown', 'warn']

/** The cluster as the table names it: account/region/name. */
export const clusterLabel = (o: ClusterOutcome) =>
  `${o.cluster.accountId}/${o.cluster.region}/${o.cluster.name}`

/** One word for the row: what the cluster's judgement comes to. */
export function verdict(o: ClusterOutcome): string {
  if (o.state === 'unknown') return 'UNKNOWN'
  if (o.state === 'no-karpenter') return 'NO KARPENTER'
  return o.exitCode === 1 ? 'FAIL' : o.exitCode === 2 ? 'UNKNOWN' : 'OK'
}

/** The checks of a cluster that are not clean, worst first: `✖ sg-webhook-8443`. */
function notClean(results: CheckResult[]): CheckResult[] {
  const rank = (s: Status) => NOT_CLEAN.indexOf(s)
  return results.filter((r) => NOT_CLEAN.includes(r.status)).sort((a, b) => rank(a.status) - rank(b.status))
}

function cell(o: ClusterOutcome): string {
  if (o.state === 'unknown') return o.reason ?? 'could not be judged'
  if (o.state === 'no-karpenter') return 'no Karpenter Helm release or CRDs: nothing to check'
  const bad = notClean(o.results)
  const c = countResults(o.results)
  if (bad.length === 0) return `${c.pass} passed`
  return bad.map((r) => `${SYMBOL[r.status]} ${r.meta.id}`).join(', ')
}

function colourOf(s: Style, v: string): (t: string) => string {
  return v === 'FAIL' ? s.red : v === 'OK' ? s.green : v === 'NO KARPENTER' ? s.dim : s.yellow
}

function table(rows: string[][], colour: ((row: string[], text: string) => string) | undefined): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (i === r.length - 1 ? 0 : r[i]!.length))))
  return rows.map((r) => {
    const text = r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')
    return colour ? colour(r, text) : text
  })
}

export function renderFleet(outcome: FleetOutcome, opts: { color: boolean }): string {
  const s = makeStyle(opts.color)
  const rows = [['STATUS', 'CLUSTER', 'KARPENTER', 'IDENTITY', 'CHECKS']]
  for (const o of outcome.clusters)
    rows.push([
      verdict(o),
      clusterLabel(o),
      o.karpenterVersion ?? '-',
      o.cluster.principal.arn,
      visible(cell(o)),
    ])
  const lines = table(rows, (r, text) => (r === rows[0] ? s.bold(text) : colourOf(s, r[0]!)(text)))
  // The other side of cluster × check: each check not clean somewhere, and where.
  const byCheck = new Map<string, { r: CheckResult; where: Map<Status, string[]> }>()
  // A cluster without Karpenter is left out: its checks only say Karpenter is absent.
  for (const o of outcome.clusters.filter((c) => c.state === 'judged'))
    for (const r of notClean(o.results)) {
      const e = byCheck.get(r.meta.id) ?? { r, where: new Map() }
      e.where.set(r.status, [...(e.where.get(r.status) ?? []), o.cluster.name])
      byCheck.set(r.meta.id, e)
    }
  if (byCheck.size > 0) {
    const sev = { error: 0, warning: 1, info: 2 }
    const checks = [...byCheck.values()].sort(
      (a, b) =>
        (a.where.has('fail') ? 0 : 1) - (b.where.has('fail') ? 0 : 1) ||
        sev[a.r.meta.severity] - sev[b.r.meta.severity] ||
        a.r.meta.id.localeCompare(b.r.meta.id),
    )
    const rows2 = [['CHECK', 'SEVERITY', 'CLUSTERS']]
    for (const { r, where } of checks)
      rows2.push([
        r.meta.id,
        r.meta.severity,
        NOT_CLEAN.filter((st) => where.has(st))
          .map((st) => `${SYMBOL[st]} ${where.get(st)!.join(', ')}`)
          .join('; '),
      ])
    lines.push('', ...table(rows2, (r, text) => (r === rows2[0] ? s.bold(text) : text)))
  }
  if (outcome.gaps.length > 0) {
    lines.push('', s.yellow('Not looked at:'))
    for (const g of outcome.gaps) lines.push(s.yellow(`  ? ${g.where}: ${visible(g.reason)}`))
  }
  lines.push('', summaryLine(outcome))
  return lines.join('\n')
}

export function summaryLine(outcome: FleetOutcome): string {
  const n = (v: string) => outcome.clusters.filter((o) => verdict(o) === v).length
  const gaps = outcome.gaps.length ? `; ${outcome.gaps.length} place(s) not looked at` : ''
  return `${outcome.clusters.length} clusters: ${n('FAIL')} failed, ${n('UNKNOWN')} unknown, ${n('OK')} clean, ${n('NO KARPENTER')} without Karpenter${gaps}; ${outcome.calls.length} API calls`
}

export function fleetJson(
  outcome: FleetOutcome,
  run: { karpctlVersion: string; generatedAt: Date; wallTimeMs: number },
) {
  return {
    schema: FLEET_REPORT_SCHEMA,
    karpctlVersion: run.karpctlVersion,
    generatedAt: run.generatedAt.toISOString(),
    wallTimeMs: run.wallTimeMs,
    apiCalls: outcome.calls.length,
    exitCode: outcome.exitCode,
    summary: {
      clusters: outcome.clusters.length,
      failed: outcome.clusters.filter((o) => o.exitCode === 1).length,
      unknown: outcome.clusters.filter((o) => o.exitCode === 2).length,
      clean: outcome.clusters.filter((o) => o.state === 'judged' && o.exitCode === 0).length,
      withoutKarpenter: outcome.clusters.filter((o) => o.state === 'no-karpenter').length,
    },
    gaps: outcome.gaps,
    clusters: outcome.clusters.map((o) => ({
      name: o.cluster.name,
      region: o.cluster.region,
      accountId: o.cluster.accountId,
      arn: o.cluster.arn,
      identity: o.cluster.principal.arn,
      state: o.state,
      verdict: verdict(o),
      karpenterVersion: o.karpenterVersion ?? null,
      access: o.access,
      reason: o.reason ?? null,
      exitCode: o.exitCode,
      wallTimeMs: o.wallTimeMs,
      apiCalls: o.calls,
      // Each cluster's report is doctor's own (karpctl.report/v1), so one parser reads both.
      report:
        o.state === 'unknown' ? null : { ...jsonReport(o.results, o.facts ?? null), schema: REPORT_SCHEMA },
    })),
  }
}

/** One SARIF run per cluster, each told apart by its ARN (runAutomationDetails). */
export function fleetSarif(outcome: FleetOutcome, catalog: Check[], version: string): string {
  const runs = outcome.clusters.map((o) => {
    const one = JSON.parse(sarifReport(o.results, catalog, version)) as { runs: Record<string, unknown>[] }
    const run = one.runs[0]!
    run.automationDetails = { id: `karpctl-doctor/${o.cluster.arn}` }
    run.properties = { cluster: o.cluster.arn, state: o.state, karpenterVersion: o.karpenterVersion ?? null }
    if (o.state === 'unknown')
      run.invocations = [
        {
          executionSuccessful: false,
          toolExecutionNotifications: [{ message: { text: o.reason ?? 'could not be judged' } }],
        },
      ]
    return run
  })
  return jsonText({ $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs }, 2)
}

export function fleetMarkdown(outcome: FleetOutcome): string {
  const esc = (t: string) => t.replace(/\|/g, '\\|')
  const lines = [
    '# karpctl doctor --all-clusters',
    '',
    '| status | cluster | Karpenter | identity | checks |',
    '|---|---|---|---|---|',
  ]
  for (const o of outcome.clusters)
    lines.push(
      `| ${verdict(o)} | \`${clusterLabel(o)}\` | ${o.karpenterVersion ?? '-'} | \`${o.cluster.principal.arn}\` | ${esc(cell(o))} |`,
    )
  for (const g of outcome.gaps) lines.push('', `- not looked at: ${g.where}: ${esc(g.reason)}`)
  lines.push('', `_${summaryLine(outcome)}_`)
  for (const o of outcome.clusters.filter((c) => c.state === 'judged'))
    lines.push('', markdownReport(o.results, o.facts ?? null).replace(/^# /, '## '))
  return lines.join('\n')
}
