// Replacement consolidation: when some of a node's pods fit on no other node, Karpenter simulates one
// new NodeClaim for them and replaces the node only if an instance type that takes them all is
// cheaper than the node (sigs.k8s.io/karpenter v1.14.1 pkg/controllers/disruption/consolidation.go
// computeConsolidation: more than one new NodeClaim → "Can't remove without creating N candidates";
// RemoveInstanceTypeOptionsByPriceAndMinValues leaves none → "Can't replace with a cheaper node"; a
// spot node is replaced by spot only with the SpotToSpotConsolidation gate). Prices are the AWS
// provider's static on-demand list (prices.ts); room is Karpenter's allocatable (why's instance types).
import type { NodePool } from '../../facts/types.js'
import { allocatableOf, catalogOf, nodeSettings, typeMeetsAll, type Catalog } from '../instance-types.js'
import { nodePoolRequirements } from '../judge.js'
import { podRequests, podRequirementTerms } from '../pod.js'
import { add, type Amounts } from '../quantity.js'
import { addRequirement, copyRequirements, type Requirements } from '../requirements.js'
import type { InstanceTypeInfo, WorkloadPod } from '../types.js'
import { dollars, staticOnDemandPrice } from './prices.js'
import type { Step } from './verdict.js'
import type { ClusterView, NodeView } from './view.js'

const TYPE = 'node.kubernetes.io/instance-type'
const CAPACITY = 'karpenter.sh/capacity-type'

const catalogs = new WeakMap<InstanceTypeInfo[], Catalog>()
function catalogFor(types: InstanceTypeInfo[], region: string): Catalog {
  let c = catalogs.get(types)
  if (!c) catalogs.set(types, (c = catalogOf(types, [], undefined, region)))
  return c
}

/** The NodePool's requirements narrowed by each moving pod's first node-affinity term. */
function merged(np: NodePool, pods: WorkloadPod[]): Requirements {
  const reqs = copyRequirements(nodePoolRequirements(np))
  for (const p of pods) {
    const term = podRequirementTerms(p)[0]
    for (const [, r] of term?.byKey ?? []) addRequirement(reqs, r, { kind: 'nodeSelector' })
  }
  return reqs
}

const fits = (room: { cpu: number; memory: number; pods: number }, need: Amounts) =>
  (need.cpu ?? 0) <= room.cpu && (need.memory ?? 0) <= room.memory && (need.pods ?? 0) <= room.pods

/** `maybe` with the reason a replacement cannot be judged. */
const unjudged = (why: string): Step => ({
  method: 'consolidation',
  applies: 'maybe',
  reason: 'Underutilized',
  message: why,
})

export function judgeReplacement(c: ClusterView, v: NodeView, homeless: WorkloadPod[]): Step {
  const labels = v.node?.metadata.labels ?? v.nodeClaim?.metadata.labels ?? {}
  const current = labels[TYPE]
  const names = homeless.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
  const moving = `${names.length} of its pods fit on no other node (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''})`
  if (!v.nodePool || !current) return unjudged(`${moving}: its instance type or NodePool is not known`)
  if (labels[CAPACITY] === 'spot')
    return unjudged(
      `${moving}: a spot node is replaced only by a cheaper spot type (with the SpotToSpotConsolidation gate), and spot prices are read live by Karpenter, not here`,
    )
  const own = staticOnDemandPrice(c.region, current)
  if (own.price === undefined)
    return unjudged(`${moving}: ${current} has no price in Karpenter's static list`)
  if (!c.instanceTypes?.ok)
    return unjudged(
      `${moving}: instance types were not read${c.instanceTypes ? ` (${c.instanceTypes.error.message})` : ''}, so a cheaper replacement is not judged`,
    )
  const types = c.instanceTypes.value
  const catalog = catalogFor(types, c.region)
  const daemons = v.pods.filter(
    (p) => !homeless.includes(p) && p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet'),
  )
  let need: Amounts = { pods: homeless.length + daemons.length }
  for (const p of [...homeless, ...daemons]) need = add(need, podRequests(p.spec))
  const reqs = merged(v.nodePool, homeless)
  const ct = reqs.byKey.get(CAPACITY)
  const spotAllowed = !ct || ct.complement !== ct.values.includes('spot')
  const settings = nodeSettings(v.nodeClass)
  const options = types
    .filter(
      (it) =>
        typeMeetsAll(catalog, it, reqs) &&
        fits(allocatableOf(it, settings, catalog.vmMemoryOverheadPercent), need),
    )
    .map((it) => ({ name: it.name, price: staticOnDemandPrice(c.region, it.name).price }))
    .filter((o): o is { name: string; price: number } => o.price !== undefined)
    .sort((a, b) => a.price - b.price || a.name.localeCompare(b.name))
  const priced = `${current} at ${dollars(own.price)} (Karpenter's static on-demand list, ${own.table})`
  if (!options.length)
    return {
      method: 'consolidation',
      applies: 'no',
      message: `${moving}, and no instance type NodePool ${v.nodePool.metadata.name} allows takes them all on one node: Karpenter cannot replace it`,
    }
  const cheaper = options.filter((o) => o.price < own.price!)
  if (!cheaper.length)
    return spotAllowed
      ? unjudged(
          `${moving}; no on-demand type that takes them is cheaper than ${priced} (cheapest ${options[0]!.name} at ${dollars(options[0]!.price)}), and spot prices are read live by Karpenter, not here`,
        )
      : {
          method: 'consolidation',
          applies: 'no',
          message: `${moving}, and no type that takes them is cheaper than ${priced}: the cheapest is ${options[0]!.name} at ${dollars(options[0]!.price)} — Karpenter says "Can't replace with a cheaper node"`,
        }
  return {
    method: 'consolidation',
    applies: 'yes',
    reason: 'Underutilized',
    message: `underutilized: ${moving}, and a cheaper instance type takes them — ${cheaper
      .slice(0, 3)
      .map((o) => `${o.name} at ${dollars(o.price)}`)
      .join(
        ', ',
      )}${cheaper.length > 3 ? ` and ${cheaper.length - 3} more` : ''} against ${priced}: Karpenter replaces it (reason Underutilized)`,
  }
}
