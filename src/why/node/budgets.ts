// NodePool disruption budgets, counted as Karpenter counts them before each disruption pass
// (sigs.k8s.io/karpenter pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping and
// pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason): nodes = the NodePool's initialized
// nodes; each active budget naming the reason (or none) allows its `nodes` (a percentage rounds up);
// the smallest wins; nodes NotReady or being deleted use it up. A schedule Karpenter cannot parse
// fails closed (0).
import type { NodePool } from '../../facts/types.js'
import { isActive, parseSchedule, windowChange } from './cron.js'
import { parseDuration, when } from './duration.js'
import { jsonPatchNodePool } from './fixes.js'
import type { Blocker, DisruptionReason } from './verdict.js'
import { condition, deleting, isTrue, type NodeView } from './view.js'

export interface Budget {
  nodes?: string
  schedule?: string
  duration?: string
  reasons?: string[]
}

export interface BudgetCount {
  nodePool: string
  reason: DisruptionReason
  /** Disruptions allowed now, what is already disrupting taken off (never below 0). */
  allowed: number
  nodes: number
  disrupting: number
  /** The budget that sets the number, by index in spec.disruption.budgets. */
  binding?: { index: number; budget: Budget; active: boolean; change?: string; error?: string }
}

export const REASONS: DisruptionReason[] = ['Drifted', 'Underutilized', 'Empty']

const budgetsOf = (np: NodePool): Budget[] =>
  ((np.spec.disruption as { budgets?: Budget[] } | undefined)?.budgets ?? [{ nodes: '10%' }]) as Budget[]

function allowedBy(
  b: Budget,
  nodes: number,
  now: number,
): { allowed: number; active: boolean; change?: number; error?: string } {
  let active = true
  let change: number | undefined
  if (b.schedule !== undefined || b.duration !== undefined) {
    const s = parseSchedule(b.schedule ?? '')
    const d = parseDuration(b.duration)
    if (s instanceof Error || typeof d !== 'number')
      return {
        allowed: 0,
        active: true,
        error: s instanceof Error ? s.message : `duration ${JSON.stringify(b.duration)}`,
      }
    active = isActive(s, d, now)
    change = windowChange(s, d, now)
  }
  if (!active)
    return { allowed: Number.MAX_SAFE_INTEGER, active, ...(change !== undefined ? { change } : {}) }
  const text = b.nodes ?? '10%'
  const pct = /^(\d+)%$/.exec(text)
  const allowed = pct ? Math.ceil((Number(pct[1]) * nodes) / 100) : Number(text)
  return {
    allowed: Number.isFinite(allowed) ? allowed : 0,
    active,
    ...(change !== undefined ? { change } : {}),
  }
}

/** Each NodePool's budget for each reason, from the views of every node (one pass). */
export function countBudgets(pools: NodePool[], views: NodeView[], now: number): BudgetCount[] {
  const nodes = new Map<string, number>()
  const busy = new Map<string, number>()
  for (const v of views) {
    const pool = v.nodePool?.metadata.name
    if (!pool || !v.node || !isTrue(condition(v.nodeClaim?.status?.conditions, 'Initialized'))) continue
    if (isTrue(condition(v.nodeClaim?.status?.conditions, 'InstanceTerminating'))) continue
    nodes.set(pool, (nodes.get(pool) ?? 0) + 1)
    const ready = isTrue(condition(v.node.status.conditions, 'Ready'))
    if (!ready || deleting(v)) busy.set(pool, (busy.get(pool) ?? 0) + 1)
  }
  const out: BudgetCount[] = []
  for (const np of pools) {
    const pool = np.metadata.name
    const n = nodes.get(pool) ?? 0
    const d = busy.get(pool) ?? 0
    const budgets = budgetsOf(np)
    // Each budget's schedule is evaluated once, whichever reasons it names.
    const results = budgets.map((b) => allowedBy(b, n, now))
    for (const reason of REASONS) {
      let min = Number.MAX_SAFE_INTEGER
      let binding: BudgetCount['binding']
      budgets.forEach((b, index) => {
        const r = results[index] as ReturnType<typeof allowedBy>
        if (b.reasons && !b.reasons.includes(reason)) return
        if (r.allowed < min || (r.allowed === min && !binding)) {
          min = r.allowed
          binding = {
            index,
            budget: b,
            active: r.active,
            ...(r.change !== undefined ? { change: when(r.change, now) } : {}),
            ...(r.error ? { error: r.error } : {}),
          }
        }
      })
      out.push({
        nodePool: pool,
        reason,
        allowed: Math.max(Math.min(min, Number.MAX_SAFE_INTEGER) - d, 0),
        nodes: n,
        disrupting: d,
        ...(binding ? { binding } : {}),
      })
    }
  }
  return out
}

/** A budget at 0 for the reason a method would disrupt the node under: a blocker naming the budget. */
export function budgetBlocker(count: BudgetCount | undefined): Blocker | undefined {
  // Karpenter says a budget blocks only when the NodePool has initialized nodes to count (helpers.go).
  if (!count || count.allowed > 0 || count.nodes === 0) return undefined
  const b = count.binding
  const where = b ? `spec.disruption.budgets[${b.index}]` : 'spec.disruption.budgets'
  const shape = b
    ? `nodes ${JSON.stringify(b.budget.nodes ?? '10%')}${b.budget.schedule ? `, schedule ${JSON.stringify(b.budget.schedule)} for ${b.budget.duration}` : ''}${b.budget.reasons ? `, reasons ${b.budget.reasons.join(',')}` : ', every reason'}`
    : ''
  const why = b?.error
    ? `its schedule cannot be parsed (${b.error}): Karpenter fails closed`
    : count.disrupting && b && b.budget.nodes !== '0'
      ? `${count.disrupting} of its ${count.nodes} nodes are already NotReady or being deleted`
      : `it allows 0 of ${count.nodes} nodes now`
  const opens = b?.change && b.active && b.budget.schedule ? `; this window closes at ${b.change}` : ''
  return {
    kind: 'budget',
    reasons: [count.reason],
    message: `NodePool ${count.nodePool} ${where} (${shape}) blocks ${count.reason}: ${why}${opens}`,
    ...(b && !b.error && b.budget.nodes === '0'
      ? {
          fix: {
            summary: `let it go: allow 1 node in NodePool ${count.nodePool} ${where}.nodes (or wait for the window to close)`,
            commands: [
              jsonPatchNodePool(count.nodePool, [
                { op: 'replace', path: `/spec/disruption/budgets/${b.index}/nodes`, value: '1' },
              ]),
            ],
          },
        }
      : {}),
  }
}
