// `why node/…` as text: one block per node — the verdict, each disruption method in Karpenter's order,
// what blocks it with the fix, why it left or never joined, and Karpenter's own events beside. With
// `--nodes`, one line per node and the blocks of the nodes that need a hand. Everything from the
// cluster is made visible first (forTerminal), so a name or message cannot forge a line or a colour.
import type { Fix } from '../../checks/types.js'
import { style as makeStyle, type Style } from '../../report/style.js'
import { forTerminal } from '../../report/terminal.js'
import type { NodeOutcome, NodeReport, NodeVerdict, Step } from './verdict.js'

const SYMBOL: Record<NodeOutcome, string> = {
  going: '→',
  blocked: '✖',
  kept: '✔',
  leaving: '…',
  gone: '–',
  'not-joined': '✖',
  'launch-failed': '✖',
  'could-not-tell': '?',
}

const STEP: Record<Step['applies'], string> = { yes: '●', later: '◔', maybe: '?', no: '–' }

function paint(s: Style, o: NodeOutcome, text: string): string {
  if (o === 'kept') return s.green(text)
  if (o === 'blocked' || o === 'not-joined' || o === 'launch-failed') return s.red(text)
  if (o === 'going' || o === 'leaving') return s.yellow(text)
  return s.cyan(text)
}

function fixLines(s: Style, fix: Fix | undefined, indent: string): string[] {
  if (!fix) return []
  return [
    `${indent}${s.bold('fix:')} ${fix.summary}`,
    ...(fix.commands ?? []).map((c) => `${indent}  ${s.dim('$')} ${c}`),
  ]
}

function title(v: NodeVerdict): string {
  const parts = [
    v.nodeClaim && v.nodeClaim !== v.name ? `NodeClaim ${v.nodeClaim}` : '',
    v.nodePool ? `NodePool ${v.nodePool}` : '',
    v.node ? `${v.pods} pod${v.pods === 1 ? '' : 's'} to move` : '',
  ].filter(Boolean)
  return `${v.node ? 'node' : v.nodeClaim ? 'nodeclaim' : 'node'} ${v.name}${parts.length ? ` (${parts.join(', ')})` : ''}`
}

function block(s: Style, v: NodeVerdict): string[] {
  const out = [s.bold(title(v)), `  ${paint(s, v.outcome, `${SYMBOL[v.outcome]} ${v.headline}`)}`]
  if (v.steps.length) {
    out.push(s.dim("  disruption methods, in Karpenter's order:"))
    for (const st of v.steps) {
      out.push(`    ${STEP[st.applies]} ${st.method}: ${st.message}`)
      if (
        st.applies === 'yes' ||
        st.applies === 'later' ||
        (st.applies === 'no' && st.fix && v.outcome === 'kept')
      )
        out.push(...fixLines(s, st.fix, '        '))
    }
  }
  if (v.blockers.length) {
    out.push(s.dim('  what blocks it:'))
    for (const b of v.blockers) {
      out.push(
        `    ${s.red('✖')} ${b.message}${b.passedByGracePeriod ? s.dim(' (drift passes it: the NodeClaim has a terminationGracePeriod)') : ''}`,
      )
      out.push(...fixLines(s, b.fix, '        '))
    }
  }
  if (v.join?.length) {
    out.push(s.dim('  causes, in the order they are most often true:'))
    for (const j of v.join) {
      const mark =
        j.status === 'fail'
          ? s.red('✖')
          : j.status === 'warn'
            ? s.yellow('!')
            : j.status === 'pass'
              ? s.green('✔')
              : s.cyan('?')
      out.push(`    ${mark} ${j.source}: ${j.message}`)
      out.push(...fixLines(s, j.fix, '        '))
    }
  }
  for (const e of v.karpenter.events)
    out.push(
      `  ${s.dim('karpenter said:')} ${e.kind} ${e.reason}${e.count > 1 ? ` ×${e.count}` : ''}${e.lastSeen ? ` (${e.lastSeen})` : ''}: ${e.message}`,
    )
  for (const l of (v.karpenter.log ?? []).slice(-5))
    out.push(`  ${s.dim('karpenter log:')} ${l.time} ${l.message}${l.detail ? ` — ${l.detail}` : ''}`)
  return out
}

const NEEDS_HAND: NodeOutcome[] = ['blocked', 'not-joined', 'launch-failed']

export function renderNodes(raw: NodeReport, color: boolean, many: boolean): string {
  const r = forTerminal(raw)
  const s = makeStyle(color)
  const out = [
    s.bold(
      `karpctl why — cluster ${r.cluster} (${r.region})${r.with ? ` — as if ${r.with} were applied` : ''}`,
    ),
  ]
  for (const u of r.unreadable) out.push(s.yellow(`! not read: ${u}`))
  const zero = r.budgets.filter((b) => b.allowed === 0 && b.nodes > 0)
  if (zero.length)
    out.push(
      `Budgets at 0 now: ${zero.map((b) => `${b.nodePool} ${b.reason} (${b.disrupting} of ${b.nodes} disrupting)`).join(', ')}`,
    )
  out.push('')
  if (!r.nodes.length) out.push('No Karpenter node to judge.', '')
  if (many) {
    for (const v of r.nodes)
      out.push(
        `${paint(s, v.outcome, SYMBOL[v.outcome])} ${v.name}${v.nodePool ? s.dim(` (${v.nodePool})`) : ''}: ${v.headline}`,
      )
    const hands = r.nodes.filter((v) => NEEDS_HAND.includes(v.outcome))
    if (hands.length) out.push('', s.bold('What holds the nodes that need a hand:'), '')
    for (const v of hands) out.push(...block(s, v), '')
    if (!hands.length) out.push('')
  } else for (const v of r.nodes) out.push(...block(s, v), '')
  out.push(s.dim(`Not judged yet: ${r.notJudged.join('; ')}.`))
  const m = r.summary
  out.push(
    s.bold(
      `${m.nodes} node${m.nodes === 1 ? '' : 's'}: ${m.going} going, ${m.blocked} blocked, ${m.kept} kept, ${m.leaving} leaving, ${m.gone} gone, ${m['not-joined']} never joined, ${m['launch-failed']} failed to launch, ${m['could-not-tell']} could not tell`,
    ),
  )
  return out.join('\n')
}
