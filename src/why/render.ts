// `karpctl why` as text, like doctor's report: one block per pod (or group of identical pods), a line
// per NodePool in the order Karpenter tries them, the fix under it. Everything that came from the
// cluster is made visible first (forTerminal), so a name or message cannot forge a line or a colour.
import { style as makeStyle, type Style } from '../report/style.js'
import { forTerminal, visibleLines } from '../report/terminal.js'
import type { PodOutcome, PodVerdict, PoolStatus, WhyReport } from './judge.js'

const symbol: Record<PoolStatus, string> = { fits: '✔', 'ruled-out': '✖', 'not-judged': '?', unknown: '?' }

function paint(s: Style, status: PoolStatus, text: string): string {
  if (status === 'fits') return s.green(text)
  if (status === 'ruled-out') return s.red(text)
  return s.cyan(text)
}

const outcomeLine: Record<PodOutcome, string> = {
  fits: 'a NodePool can take it',
  none: 'no NodePool can take it',
  'could-not-tell': 'could not tell: no NodePool is ruled out by what was judged',
  ignored: 'Karpenter does not act on it',
}

function block(s: Style, g: PodVerdict, raw: PodVerdict): string[] {
  const owner = g.owner.kind === 'Pod' ? '' : ` (${g.owner.kind.toLowerCase()}/${g.owner.name})`
  const names =
    g.pods.length === 1
      ? `pod ${g.namespace}/${g.pods[0]}`
      : `${g.pods.length} pods in ${g.namespace}: ${g.pods.slice(0, 3).join(', ')}${g.pods.length > 3 ? ` and ${g.pods.length - 3} more` : ''}`
  const requests = Object.entries(g.requests)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')
  const out = [s.bold(`${names}${owner}`) + (requests ? s.dim(` — requests ${requests}`) : '')]
  if (g.ignored) {
    out.push(`  ${s.dim('–')} ignored: ${g.ignored.message}`)
  }
  g.nodePools.forEach((v, i) => {
    out.push(
      `  ${paint(s, v.status, symbol[v.status])} ${v.nodePool}${v.weight ? s.dim(` (weight ${v.weight})`) : ''}: ${v.message}`,
    )
    if (v.fix && v.status === 'ruled-out') {
      out.push(`      ${s.bold('fix:')} ${v.fix.summary}`)
      for (const c of v.fix.commands ?? []) out.push(`        ${s.dim('$')} ${c}`)
      // A snippet is karpctl's own multi-line text with values from the cluster: each line made visible.
      const snippet = raw.nodePools[i]?.fix?.snippet
      if (snippet) for (const l of visibleLines(snippet.text).trimEnd().split('\n')) out.push(`        ${l}`)
    }
  })
  for (const e of g.karpenter.events)
    out.push(
      `  ${s.dim('karpenter said:')} ${e.reason}${e.count > 1 ? ` ×${e.count}` : ''}${e.lastSeen ? ` (${e.lastSeen})` : ''}: ${e.message}`,
    )
  const log = g.karpenter.log
  if (log) {
    const pools = Object.entries(log.nodePools)
    out.push(
      `  ${s.dim('karpenter logged:')} could not schedule pod ${log.pod}${log.time ? ` (${log.time})` : ''}${pools.length ? '' : `: ${log.error ?? ''}`}`,
    )
    for (const [pool, reason] of pools) out.push(`      ${pool}: ${reason}`)
  }
  if (g.karpenter.activity) out.push(`  ${s.dim('now:')} ${g.karpenter.activity}`)
  const colour = g.outcome === 'none' ? s.red : g.outcome === 'could-not-tell' ? s.cyan : s.dim
  out.push(`  ${colour('→')} ${outcomeLine[g.outcome]}`)
  return out
}

export function renderWhy(raw: WhyReport, color: boolean): string {
  const r = forTerminal(raw)
  const s = makeStyle(color)
  const out = [
    s.bold(
      `karpctl why — cluster ${r.cluster} (${r.region})${r.with ? ` — as if ${r.with} were applied` : ''}`,
    ),
  ]
  if (r.order.length)
    out.push(
      `NodePools in the order Karpenter tries them: ${r.order.map((o) => `${o.nodePool}${o.weight ? ` (weight ${o.weight})` : ''}`).join(', ')}`,
    )
  else out.push(s.yellow('! no NodePool exists (or none could be read)'))
  for (const u of r.unreadable) out.push(s.yellow(`! not read: ${u}`))
  out.push('')
  if (r.groups.length === 0) out.push('No pod to judge: nothing is Pending there.', '')
  r.groups.forEach((g, i) => out.push(...block(s, g, raw.groups[i] as PodVerdict), ''))
  if (r.controllerLogUnread) out.push(s.dim(`The controller's log was not read: ${r.controllerLogUnread}.`))
  out.push(s.dim(`Not judged yet: ${r.notJudged.join('; ')}.`))
  const m = r.summary
  out.push(
    s.bold(
      `${m.pods} pod${m.pods === 1 ? '' : 's'}: ${m.none} without a NodePool, ${m.couldNotTell} could not tell, ${m.fits} with a NodePool, ${m.ignored} ignored by Karpenter`,
    ),
  )
  return out.join('\n')
}
