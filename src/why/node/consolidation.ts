// Emptiness and consolidation, as the disruption controller's methods decide them
// (sigs.k8s.io/karpenter pkg/controllers/disruption/emptiness.go and consolidation.go ShouldDisrupt):
// both need spec.disruption.consolidateAfter not Never and the NodeClaim's Consolidatable condition,
// which the nodeclaim disruption controller sets consolidateAfter after the last pod event (or after
// initialization) (pkg/controllers/nodeclaim/disruption/consolidation.go). Emptiness deletes an empty
// node under any policy; consolidation needs WhenEmptyOrUnderutilized and a node whose pods fit
// elsewhere (delete) or on a cheaper replacement (replace: replacement.ts).
import type { NodePool } from '../../facts/types.js'
import { humanSpan, parseDuration, when } from './duration.js'
import { patchNodePool } from './fixes.js'
import { placeElsewhere } from './fit-elsewhere.js'
import { judgeReplacement } from './replacement.js'
import type { Step } from './verdict.js'
import { condition, isTrue, reschedulable, type ClusterView, type NodeView } from './view.js'

interface Disruption {
  consolidationPolicy?: string
  consolidateAfter?: string
}

export const disruptionOf = (np: NodePool | undefined): Disruption =>
  (np?.spec.disruption ?? {}) as Disruption

/** When the node becomes (or became) consolidatable: last pod event, else initialization, plus consolidateAfter. */
function consolidatableAt(v: NodeView, afterMs: number): number | undefined {
  const nc = v.nodeClaim
  const init = condition(nc?.status?.conditions, 'Initialized')
  const from = Date.parse(nc?.status?.lastPodEventTime ?? init?.lastTransitionTime ?? '')
  return Number.isNaN(from) ? undefined : from + afterMs
}

/** What the consolidateAfter and Consolidatable pieces say, shared by both methods; a Step when they stop it. */
function gate(c: ClusterView, v: NodeView, method: 'emptiness' | 'consolidation'): Step | { at?: number } {
  const now = c.now
  const pool = v.nodePool?.metadata.name ?? ''
  const d = disruptionOf(v.nodePool)
  const after = parseDuration(d.consolidateAfter)
  if (after === null || after === undefined)
    return {
      method,
      applies: 'no',
      message: `NodePool ${pool} spec.disruption.consolidateAfter is ${d.consolidateAfter ?? 'not set'}: consolidation is disabled`,
      fix: {
        summary: `let Karpenter consolidate it: set NodePool ${pool} spec.disruption.consolidateAfter`,
        commands: [patchNodePool(pool, { spec: { disruption: { consolidateAfter: '1m' } } })],
      },
    }
  const consolidatable = condition(v.nodeClaim?.status?.conditions, 'Consolidatable')
  const at = consolidatableAt(v, after)
  // Under --with the condition reflects the live consolidateAfter: recompute it as Karpenter would.
  const recomputed =
    c.whatIf &&
    at !== undefined &&
    at <= now &&
    isTrue(condition(v.nodeClaim?.status?.conditions, 'Initialized'))
  if (!isTrue(consolidatable) && !recomputed)
    return {
      method,
      applies: at !== undefined && at > now ? 'later' : 'no',
      ...(at !== undefined ? { at: when(at, now) } : {}),
      message:
        at !== undefined && at > now
          ? `not consolidatable yet: consolidateAfter ${d.consolidateAfter} (${humanSpan(after)}) after its last pod event runs until ${when(at, now)}`
          : `NodeClaim has no Consolidatable=True condition (Karpenter sets it consolidateAfter ${d.consolidateAfter} after the last pod event, once initialized)`,
    }
  return at !== undefined ? { at } : {}
}

export function judgeEmptiness(c: ClusterView, v: NodeView): Step {
  const now = c.now
  const busy = reschedulable(v.pods)
  if (busy.length)
    return {
      method: 'emptiness',
      applies: 'no',
      message: `not empty: ${busy.length} pod${busy.length === 1 ? '' : 's'} to move (DaemonSet and mirror pods aside)`,
    }
  const g = gate(c, v, 'emptiness')
  if ('method' in g) return g
  return {
    method: 'emptiness',
    applies: 'yes',
    reason: 'Empty',
    ...(g.at !== undefined ? { at: when(g.at, now) } : {}),
    message: `empty and consolidatable${g.at !== undefined ? ` since ${when(g.at, now)}` : ''}: Karpenter deletes it (reason Empty)`,
  }
}

export function judgeConsolidation(c: ClusterView, v: NodeView): Step {
  const pool = v.nodePool?.metadata.name ?? ''
  const busy = reschedulable(v.pods)
  if (!busy.length)
    return {
      method: 'consolidation',
      applies: 'no',
      message: 'empty: emptiness handles it, not consolidation',
    }
  const g = gate(c, v, 'consolidation')
  if ('method' in g) return g
  const policy = disruptionOf(v.nodePool).consolidationPolicy ?? 'WhenEmptyOrUnderutilized'
  if (policy === 'WhenEmpty')
    return {
      method: 'consolidation',
      applies: 'no',
      message: `NodePool ${pool} spec.disruption.consolidationPolicy is WhenEmpty and the node is not empty`,
      fix: {
        summary: `let Karpenter consolidate busy nodes: set NodePool ${pool} spec.disruption.consolidationPolicy to WhenEmptyOrUnderutilized`,
        commands: [
          patchNodePool(pool, { spec: { disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized' } } }),
        ],
      },
    }
  const placed = placeElsewhere(c, v.node?.metadata.name ?? '', v.pods)
  const homeless = placed.filter((p) => !p.node)
  if (!homeless.length)
    return {
      method: 'consolidation',
      applies: 'yes',
      reason: 'Underutilized',
      message: `underutilized: its ${placed.length} pod${placed.length === 1 ? '' : 's'} fit on other nodes (${placed
        .slice(0, 3)
        .map((p) => `${p.pod} → ${p.node}`)
        .join(', ')}${placed.length > 3 ? ', …' : ''}): Karpenter can delete it (reason Underutilized)`,
    }
  const names = new Set(homeless.map((p) => p.pod))
  return judgeReplacement(
    c,
    v,
    reschedulable(v.pods).filter((p) => names.has(`${p.metadata.namespace}/${p.metadata.name}`)),
  )
}
