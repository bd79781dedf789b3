import type { EC2NodeClass, NodePool } from '../../facts/types.js'

export const CAPACITY_TYPE = 'karpenter.sh/capacity-type'

/**
 * Whether a NodePool may launch capacity of `type` (spot, on-demand, reserved). Requirements on one
 * key are ANDed; with none on capacity-type Karpenter launches on-demand only, so spot and reserved
 * must be asked for explicitly.
 */
export function allowsCapacityType(pool: NodePool, type: string): boolean {
  const reqs = (pool.spec.template.spec.requirements ?? []).filter((r) => r.key === CAPACITY_TYPE)
  if (reqs.length === 0) return type === 'on-demand'
  return reqs.every((r) => {
    const values = r.values ?? []
    switch (r.operator) {
      case 'In':
        return values.includes(type)
      case 'NotIn':
        return !values.includes(type)
      case 'Exists':
        return true
      default:
        return false
    }
  })
}

/**
 * Whether the cluster may use capacity reservations: a NodePool allows `reserved`, or an
 * EC2NodeClass selects reservations (Karpenter 1.3+ launches into them through the NodeClass).
 */
export function reservedCapacityUsers(pools: NodePool[], classes: EC2NodeClass[]): string[] {
  return [
    ...pools.filter((p) => allowsCapacityType(p, 'reserved')).map((p) => `NodePool ${p.metadata.name}`),
    ...classes
      .filter((c) => (c.spec.capacityReservationSelectorTerms ?? []).length > 0)
      .map((c) => `EC2NodeClass ${c.metadata.name}`),
  ]
}
