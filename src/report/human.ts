import type { CheckResult, Finding, Status } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import { type Style, style as makeStyle } from './style.js'
import { countLine } from './summary.js'
import { safeInput } from './terminal.js'

const symbols: Record<Status, string> = { pass: '✔', fail: '✖', warn: '!', unknown: '?', skipped: '–' }

function paint(s: Style, status: Status, text: string): string {
  if (status === 'pass') return s.green(text)
  if (status === 'fail') return s.red(text)
  if (status === 'warn') return s.yellow(text)
  if (status === 'unknown') return s.cyan(text)
  return s.dim(text)
}

const caveatLine = (s: Style, indent: string, c: string) => `${indent}${s.yellow('caveat:')} ${c}`

function finding(s: Style, f: Finding, verbose: boolean): string[] {
  if (f.status === 'pass' && !verbose) return []
  const lines = [`    ${paint(s, f.status, symbols[f.status])} ${f.message}`]
  for (const c of f.caveats ?? []) lines.push(caveatLine(s, '      ', c))
  if (f.fix && (f.status === 'fail' || f.status === 'warn')) {
    lines.push(`      ${s.bold('fix:')} ${f.fix.summary}`)
    for (const c of f.fix.commands ?? []) lines.push(`        ${s.dim('$')} ${c}`)
    if (f.fix.alternative) {
      lines.push(`      ${s.bold('or,')} ${f.fix.alternative.label}:`)
      for (const c of f.fix.alternative.commands) lines.push(`        ${s.dim('$')} ${c}`)
    }
    if (f.fix.snippet) for (const l of f.fix.snippet.text.trimEnd().split('\n')) lines.push(`        ${l}`)
  }
  return lines
}

export interface HumanOptions {
  color: boolean
  /** Also list each passing finding, not only the check. */
  verbose?: boolean
}

export function renderHuman(
  rawResults: CheckResult[],
  rawFacts: Facts | null,
  options: HumanOptions,
): string {
  // What came from the cluster, AWS or a file is made visible before karpctl's colours are added.
  const { results, meta } = safeInput(rawResults, rawFacts)
  const facts = meta ? { meta } : null
  const s = makeStyle(options.color)
  const out: string[] = []
  if (facts) {
    const m = facts.meta
    out.push(
      s.bold(
        `karpctl doctor — cluster ${m.clusterName} (${m.region}${m.accountId ? `, account ${m.accountId}` : ''})`,
      ),
    )
    for (const n of m.notes) out.push(s.yellow(`! ${n}`))
    out.push('')
  }
  const categories = [...new Set(results.map((r) => r.meta.category))]
  for (const category of categories) {
    out.push(s.bold(category))
    for (const r of results.filter((x) => x.meta.category === category)) {
      const head = `  ${paint(s, r.status, symbols[r.status])} ${r.meta.id} ${s.dim('—')} ${r.meta.title}`
      out.push(head)
      const verbose = options.verbose ?? false
      // A passing finding is listed only with --verbose, but what its verdict could not see is
      // always shown: under the check, once per distinct caveat.
      if (!verbose) {
        const hidden = r.findings.filter((f) => f.status === 'pass').flatMap((f) => f.caveats ?? [])
        for (const c of new Set(hidden)) out.push(caveatLine(s, '    ', c))
      }
      for (const f of r.findings) {
        if (r.status === 'skipped' || (r.status === 'unknown' && f.status === 'unknown')) {
          out.push(`    ${s.dim(`${r.status === 'skipped' ? 'skipped' : 'unknown'}: ${f.message}`)}`)
          for (const c of f.caveats ?? []) out.push(caveatLine(s, '      ', c))
          continue
        }
        out.push(...finding(s, f, verbose))
      }
    }
    out.push('')
  }
  out.push(s.bold(countLine(results)))
  return out.join('\n')
}
