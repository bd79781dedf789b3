// What keeps Karpenter from choosing the node, in the order it checks them
// (sigs.k8s.io/karpenter pkg/controllers/state/statenode.go ValidateNodeDisruptable, then
// ValidatePodsDisruptable; pkg/controllers/disruption/types.go NewCandidate): not initialized,
// nominated for a pending pod, karpenter.sh/do-not-disrupt on the node, a NodePool it can find,
// then pods with karpenter.sh/do-not-disrupt and PodDisruptionBudgets that allow no eviction. With a
// terminationGracePeriod the pod blockers do not hold back drift (eventual disruption).
import { shellQuote } from '../../checks/lib/facts.js'
import { selects, selectorString } from '../selector.js'
import type { WorkloadPod } from '../types.js'
import { annotate } from './fixes.js'
import type { PodDisruptionBudget } from './types.js'
import type { Blocker } from './verdict.js'
import { condition, DO_NOT_DISRUPT, isTrue, reschedulable, type ClusterView, type NodeView } from './view.js'

const active = (p: WorkloadPod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'

/** `unhealthyPodEvictionPolicy: AlwaysAllow` lets a pod that is not Ready go whatever the budget says. */
const evictableUnhealthy = (b: PodDisruptionBudget, pod: WorkloadPod) =>
  b.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' &&
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'False')

/** No disruption controller has written the status for the PDB's current spec. */
const uncomputed = (b: PodDisruptionBudget) =>
  b.status?.disruptionsAllowed === undefined ||
  b.status.observedGeneration === undefined ||
  (b.metadata.generation !== undefined && b.status.observedGeneration < b.metadata.generation)

/** The PDB blocker for one pod, keyed by the PDBs it names (a PDB over many pods is said once). */
function pdbBlocker(
  pod: WorkloadPod,
  pdbs: PodDisruptionBudget[],
  tgp: boolean,
): [string, Blocker] | undefined {
  const ns = pod.metadata.namespace ?? ''
  const mine = pdbs.filter(
    (b) =>
      (b.metadata.namespace ?? '') === ns &&
      b.spec.selector &&
      selects(b.spec.selector, pod.metadata.labels ?? {}),
  )
  const name = `${ns}/${pod.metadata.name}`
  if (mine.length > 1)
    return [
      mine.map((b) => b.metadata.name).join(','),
      {
        kind: 'pdb',
        passedByGracePeriod: tgp,
        message: `pod ${name} is selected by ${mine.length} PodDisruptionBudgets (${mine.map((b) => b.metadata.name).join(', ')}): eviction does not support multiple PDBs`,
        fix: {
          summary: `let it go: leave one PodDisruptionBudget selecting pod ${name} (delete or narrow the others' spec.selector)`,
          commands: mine
            .slice(1)
            .map((b) => `kubectl -n ${shellQuote(ns)} delete pdb ${shellQuote(b.metadata.name)}`),
        },
      },
    ]
  const b = mine[0]
  // Karpenter reads status.disruptionsAllowed as Go's int32: missing is 0 and blocks
  // (sigs.k8s.io/karpenter pkg/utils/pdb newPdb, CanEvictPods). The API server writes a new PDB's
  // status as zeros; only observedGeneration tells that no disruption controller has computed it.
  if (!b || (b.status?.disruptionsAllowed ?? 0) > 0 || evictableUnhealthy(b, pod)) return undefined
  const s = b.status ?? {}
  const computed = uncomputed(b)
    ? ' (its status was not computed for this spec — no observedGeneration reaching its generation — and Karpenter reads that as 0)'
    : ''
  const limit =
    b.spec.maxUnavailable !== undefined
      ? `maxUnavailable ${b.spec.maxUnavailable}`
      : `minAvailable ${b.spec.minAvailable}`
  return [
    b.metadata.name,
    {
      kind: 'pdb',
      passedByGracePeriod: tgp,
      message: `PodDisruptionBudget ${ns}/${b.metadata.name} (selector ${selectorString(b.spec.selector)}, ${limit}; ${s.currentHealthy ?? '?'} healthy of ${s.expectedPods ?? '?'}, ${s.desiredHealthy ?? '?'} needed) allows 0 disruptions${computed}: pod ${name} cannot be evicted`,
      fix: {
        summary: `let it go: allow one eviction in PodDisruptionBudget ${ns}/${b.metadata.name} (spec.maxUnavailable), or add replicas so more are healthy than needed`,
        commands: [
          `kubectl -n ${shellQuote(ns)} patch pdb ${shellQuote(b.metadata.name)} --type merge -p '{"spec":{"minAvailable":null,"maxUnavailable":1}}'`,
        ],
      },
    },
  ]
}

export function judgeBlockers(c: ClusterView, v: NodeView): Blocker[] {
  const out: Blocker[] = []
  const nc = v.nodeClaim
  const node = v.node
  if (nc && node && !isTrue(condition(nc.status?.conditions, 'Initialized')))
    out.push({
      kind: 'not-initialized',
      message: `NodeClaim ${nc.metadata.name} is not Initialized: Karpenter does not disrupt a node before it is`,
    })
  for (const p of node ? (c.nominated.get(node.metadata.name) ?? []) : [])
    out.push({
      kind: 'nominated',
      message: `pending pod ${p.metadata.namespace}/${p.metadata.name} is nominated to this node (status.nominatedNodeName): Karpenter keeps it while the pod may land there`,
    })
  for (const [kind, obj] of [
    ['node', node],
    ['nodeclaim', nc],
  ] as const)
    if (obj?.metadata.annotations?.[DO_NOT_DISRUPT] === 'true')
      out.push({
        kind: 'node-annotation',
        message: `${kind} ${obj.metadata.name} has annotation ${DO_NOT_DISRUPT}=true (metadata.annotations)`,
        fix: {
          summary: `let it go: remove the annotation from ${kind} ${obj.metadata.name}`,
          commands: [annotate(kind, obj.metadata.name, false)],
        },
      })
  if (!v.nodePool)
    out.push({
      kind: 'no-nodepool',
      message: `its NodePool (label karpenter.sh/nodepool) does not exist: Karpenter does not disrupt it`,
    })
  const tgp = Boolean(nc?.spec.terminationGracePeriod)
  for (const p of v.pods.filter(active))
    if (p.metadata.annotations?.[DO_NOT_DISRUPT] === 'true')
      out.push({
        kind: 'pod-annotation',
        passedByGracePeriod: tgp,
        message: `pod ${p.metadata.namespace}/${p.metadata.name} has annotation ${DO_NOT_DISRUPT}=true (metadata.annotations)`,
        fix: {
          summary: `let it go: remove the annotation from pod ${p.metadata.namespace}/${p.metadata.name} (and from its workload's spec.template.metadata.annotations, or new pods bring it back)`,
          commands: [annotate('pod', p.metadata.name, false, p.metadata.namespace)],
        },
      })
  const seen = new Set<string>()
  for (const p of reschedulable(v.pods).filter(active)) {
    const found = pdbBlocker(p, c.pdbs, tgp)
    if (!found || seen.has(`${p.metadata.namespace}/${found[0]}`)) continue
    seen.add(`${p.metadata.namespace}/${found[0]}`)
    out.push(found[1])
  }
  return out
}
