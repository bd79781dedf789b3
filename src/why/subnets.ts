// The fix when an EC2NodeClass has no subnet where a pod must run, or none at all: tag a subnet of the
// cluster's VPC so that the class's subnetSelectorTerms select it. Karpenter's subnet reconciler finds
// it at its next run (every minute): DescribeSubnets with `tag:K=V` for each tag of a term (`tag-key`
// for `*`) or `subnet-id` for an id term (karpenter-provider-aws pkg/providers/subnet getFilterSets).
import { shellQuote } from '../checks/lib/facts.js'
import type { Fix } from '../checks/types.js'
import type { EC2NodeClass } from '../facts/types.js'
import type { VpcSubnet, WhyFacts } from './types.js'

/** Private first (nodes do not belong in a public subnet), then the most free addresses, then by id. */
const best = (a: VpcSubnet, b: VpcSubnet) =>
  Number(!!a.public) - Number(!!b.public) || b.availableIps - a.availableIps || a.id.localeCompare(b.id)

/**
 * Tag the best subnet of each of these zones (of the first zone that has one, with `one`) that the class
 * does not select yet. Undefined when the VPC's subnets were not read, none is left in those zones, or
 * the class has no selector a subnet can be added to.
 */
export function tagSubnetsFix(
  facts: WhyFacts,
  nc: EC2NodeClass,
  zones: (zone: string) => boolean,
  opts: { one?: boolean; because: string },
): Fix | undefined {
  if (!facts.subnets?.ok) return undefined
  const selected = new Set((nc.status?.subnets ?? []).map((s) => s.id))
  const vpcs = new Set(facts.subnets.value.filter((s) => selected.has(s.id)).map((s) => s.vpcId))
  const byZone = new Map<string, VpcSubnet>()
  for (const s of [...facts.subnets.value].sort(best))
    if (!selected.has(s.id) && zones(s.zone) && (!vpcs.size || vpcs.has(s.vpcId)) && !byZone.has(s.zone))
      byZone.set(s.zone, s)
  const picked = [...byZone.values()]
    .sort((a, b) => a.zone.localeCompare(b.zone))
    .slice(0, opts.one ? 1 : undefined)
  if (!picked.length) return undefined
  const name = nc.metadata.name
  const which = picked
    .map((s) => `${s.id} (${s.zone}${s.public ? ', public' : ''}, ${s.availableIps} free addresses)`)
    .join(', ')
  const terms = nc.spec.subnetSelectorTerms ?? []
  const term = terms.find((t) => t.tags && Object.keys(t.tags).length)
  if (term?.tags) {
    // `*` selects any value of the key: the cluster's name says whose it is.
    const tags = Object.entries(term.tags).map(([Key, v]) => ({
      Key,
      Value: v === '*' ? facts.meta.clusterName : v,
    }))
    return {
      summary: `tag ${which} with ${tags.map((t) => `${t.Key}=${t.Value}`).join(', ')} so that EC2NodeClass ${name}'s spec.subnetSelectorTerms select it: ${opts.because}; Karpenter re-resolves the class within a minute`,
      commands: [
        `aws ec2 create-tags --region ${shellQuote(facts.meta.region)} --resources ${picked.map((s) => s.id).join(' ')} --tags ${shellQuote(JSON.stringify(tags))}`,
      ],
    }
  }
  if (!terms.some((t) => t.id)) return undefined
  const ops = picked.map((s) => ({ op: 'add', path: '/spec/subnetSelectorTerms/-', value: { id: s.id } }))
  return {
    summary: `add ${which} to EC2NodeClass ${name}'s spec.subnetSelectorTerms (it selects subnets by id): ${opts.because}`,
    commands: [
      `kubectl patch ec2nodeclass ${shellQuote(name)} --type json -p ${shellQuote(JSON.stringify(ops))}`,
    ],
  }
}
