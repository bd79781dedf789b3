// Machine-readable reports: JSON (oclif's --json), SARIF 2.1.0 (code scanning), JUnit XML (CI), Markdown (PRs).
import type { Check, CheckResult, Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import { countLine, countResults } from './summary.js'
import { jsonText, safeInput } from './terminal.js'

/** The JSON report's contract: `schema/report.schema.json` in the package describes this version. */
export const REPORT_SCHEMA = 'karpctl.report/v1'

/** How the run that produced a report went: what the report says about itself. */
export interface ReportRun {
  karpctlVersion: string
  /** When the report was made. */
  generatedAt: Date
  /** Where the facts came from: a live cluster, a saved snapshot, or local files only (--values/--terraform). */
  source: 'live' | 'snapshot' | 'lint'
  /** The API calls this run made (operation + input keys, as the call log records them). */
  calls: string[]
  /** Wall time of the run, in milliseconds; null when the caller did not time it. */
  wallTimeMs: number | null
}

function byService(calls: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const c of calls) {
    const service = c.slice(0, c.indexOf(':'))
    out[service] = (out[service] ?? 0) + 1
  }
  return out
}

/**
 * The report as data (`--json`). Without `run` (a report embedded in install's or tenant's output),
 * the run is described from the facts: their karpctl version and the calls that collected them.
 */
export function jsonReport(results: CheckResult[], facts: Facts | null, run?: ReportRun) {
  const calls = run?.calls
  const apiCalls = calls
    ? { total: calls.length, byService: byService(calls) }
    : {
        total: Object.values(facts?.meta.calls ?? {}).reduce((a, b) => a + b, 0),
        byService: { ...(facts?.meta.calls ?? {}) },
      }
  return {
    schema: REPORT_SCHEMA,
    karpctlVersion: run?.karpctlVersion ?? facts?.meta.karpctlVersion ?? 'unknown',
    generatedAt: (run?.generatedAt ?? new Date()).toISOString(),
    source: run?.source ?? (facts ? 'live' : 'lint'),
    wallTimeMs: run?.wallTimeMs ?? null,
    apiCalls,
    cluster: facts?.meta.clusterName ?? null,
    region: facts?.meta.region ?? null,
    accountId: facts?.meta.accountId ?? null,
    factsCollectedAt: facts?.meta.collectedAt ?? null,
    summary: countResults(results),
    checks: results.map((r) => ({
      id: r.meta.id,
      title: r.meta.title,
      category: r.meta.category,
      severity: r.meta.severity,
      status: r.status,
      findings: r.findings,
    })),
  }
}

const sarifLevel = (r: CheckResult, f: Finding) =>
  f.status === 'fail'
    ? r.meta.severity === 'error'
      ? 'error'
      : 'warning'
    : f.status === 'warn'
      ? 'warning'
      : 'note'

export function sarifReport(results: CheckResult[], catalog: Check[], version: string): string {
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'karpctl',
            version,
            semanticVersion: version,
            informationUri: 'https://karpenter.sh/docs/troubleshooting/',
            rules: catalog.map((c) => ({
              id: c.meta.id,
              name: c.meta.id,
              shortDescription: { text: c.meta.title },
              fullDescription: { text: c.meta.docs },
              defaultConfiguration: { level: c.meta.severity === 'info' ? 'note' : c.meta.severity },
              properties: { category: c.meta.category },
            })),
          },
        },
        results: results.flatMap((r) =>
          r.findings
            .filter((f) => f.status === 'fail' || f.status === 'warn' || f.status === 'unknown')
            .map((f) => ({
              ruleId: r.meta.id,
              level: sarifLevel(r, f),
              message: { text: f.fix ? `${f.message} Fix: ${f.fix.summary}` : f.message },
              locations: f.subject ? [{ logicalLocations: [{ fullyQualifiedName: f.subject }] }] : [],
              properties: {
                status: f.status,
                ...(f.fix?.commands ? { fixCommands: f.fix.commands } : {}),
                ...(f.fix?.alternative ? { fixAlternative: f.fix.alternative } : {}),
                ...(f.caveats?.length ? { caveats: f.caveats } : {}),
              },
            })),
        ),
      },
    ],
  }
  return jsonText(sarif, 2)
}

const xml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')

/** `version`: the karpctl that made the report (a snapshot may have been collected by another). */
export function junitReport(rawResults: CheckResult[], rawFacts: Facts | null, version?: string): string {
  // Control characters are not even valid XML 1.0: made visible, as for the terminal.
  const { results, meta } = safeInput(rawResults, rawFacts)
  const facts = meta ? { meta } : null
  const c = countResults(results)
  const name = `karpctl doctor ${facts?.meta.clusterName ?? ''}`.trim()
  const karpctl = version ?? facts?.meta.karpctlVersion ?? 'unknown'
  const caveats = (f: Finding) => (f.caveats ?? []).map((x) => `\ncaveat: ${x}`).join('')
  const cases = results.map((r) => {
    const body = r.findings
      .filter((f) => f.status !== 'pass' || (f.caveats?.length ?? 0) > 0)
      .map(
        (f) =>
          `${f.status}: ${f.message}${caveats(f)}${f.fix?.commands ? `\nfix: ${f.fix.commands.join('\n')}` : ''}`,
      )
      .join('\n')
    const open = `    <testcase classname="${xml(r.meta.category)}" name="${xml(r.meta.id)}">`
    if (r.status === 'fail' && r.meta.severity === 'error')
      return `${open}\n      <failure message="${xml(r.findings.find((f) => f.status === 'fail')?.message ?? '')}">${xml(body)}</failure>\n    </testcase>`
    if (r.status === 'skipped' || r.status === 'unknown')
      return `${open}\n      <skipped message="${xml(`${r.status}: ${r.findings[0]?.message ?? ''}`)}"/>\n    </testcase>`
    return body
      ? `${open}\n      <system-out>${xml(body)}</system-out>\n    </testcase>`
      : `${open}</testcase>`
  })
  const failures = results.filter((r) => r.status === 'fail' && r.meta.severity === 'error').length
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(name)}" tests="${results.length}" failures="${failures}">`,
    `  <testsuite name="${xml(name)}" tests="${results.length}" failures="${failures}" skipped="${c.skipped + c.unknown}">`,
    '    <properties>',
    `      <property name="karpctl.version" value="${xml(karpctl)}"/>`,
    `      <property name="karpctl.report" value="${REPORT_SCHEMA}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
  ].join('\n')
}

const mdSymbol = { pass: '✅', fail: '❌', warn: '⚠️', unknown: '❔', skipped: '➖' } as const

export function markdownReport(rawResults: CheckResult[], rawFacts: Facts | null): string {
  const { results, meta } = safeInput(rawResults, rawFacts)
  const facts = meta ? { meta } : null
  const lines = [`# karpctl doctor${facts ? ` — ${facts.meta.clusterName} (${facts.meta.region})` : ''}`, '']
  lines.push('| | check | status | finding |', '|---|---|---|---|')
  for (const r of results) {
    const first = r.findings.find((f) => f.status === r.status) ?? r.findings[0]
    lines.push(
      `| ${mdSymbol[r.status]} | \`${r.meta.id}\` | ${r.status} | ${(first?.message ?? '').replace(/\|/g, '\\|')} |`,
    )
  }
  // What the verdicts could not see, passing ones included: once per check and caveat.
  const caveats = [
    ...new Set(
      results.flatMap((r) =>
        r.findings.flatMap((f) => (f.caveats ?? []).map((c) => `- \`${r.meta.id}\`: ${c}`)),
      ),
    ),
  ]
  if (caveats.length > 0) lines.push('', '## Caveats', '', ...caveats)
  const fixes = results.flatMap((r) =>
    r.findings.filter((f) => f.fix && (f.status === 'fail' || f.status === 'warn')).map((f) => ({ r, f })),
  )
  if (fixes.length > 0) {
    lines.push('', '## Fixes', '')
    for (const { r, f } of fixes) {
      lines.push(`### \`${r.meta.id}\`: ${f.fix!.summary}`, '', f.message, '')
      if (f.fix!.commands?.length) lines.push('```sh', ...f.fix!.commands, '```', '')
      const alt = f.fix!.alternative
      if (alt) lines.push(`Or, ${alt.label}:`, '', '```sh', ...alt.commands, '```', '')
      if (f.fix!.snippet)
        lines.push(`\`\`\`${f.fix!.snippet.language}`, f.fix!.snippet.text.trimEnd(), '```', '')
    }
  }
  lines.push('', `_${countLine(results)}_`)
  return lines.join('\n')
}
