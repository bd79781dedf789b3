// NodePool spec.limits: Karpenter launches no node whose capacity would take a NodePool past a limit.
// What the NodePool holds is the capacity of its NodeClaims; a pod needs a node of at least its
// requests plus the DaemonSets' overhead, so a remainder smaller than that leaves no instance type.
import type { Fix } from '../checks/types.js'
import { limitFix } from './fix.js'
import { add, amounts, formatQuantity, parseQuantity, type Amounts } from './quantity.js'
import type { NodeClaim } from './types.js'
import type { NodePool } from '../facts/types.js'

export const NODEPOOL_LABEL = 'karpenter.sh/nodepool'

/** The resources a NodePool's NodeClaims hold: their capacity (their requests while not yet launched). */
export function nodePoolUsage(pool: string, nodeClaims: NodeClaim[]): Amounts {
  let used: Amounts = {}
  for (const nc of nodeClaims) {
    if (nc.metadata.labels?.[NODEPOOL_LABEL] !== pool) continue
    const capacity =
      nc.status?.capacity && Object.keys(nc.status.capacity).length
        ? nc.status.capacity
        : nc.spec?.resources?.requests
    used = add(used, { ...amounts(capacity), nodes: 1 })
  }
  return used
}

export interface LimitVerdict {
  resource: string
  limit: number
  used: number
  need: number
  message: string
  fix: Fix
}

/** The first limit the pod cannot fit under, or undefined. */
export function judgeLimits(
  np: NodePool,
  nodeClaims: NodeClaim[],
  need: Amounts,
  overheadNote = '',
): LimitVerdict | undefined {
  const name = np.metadata.name
  const used = nodePoolUsage(name, nodeClaims)
  for (const [resource, raw] of Object.entries(np.spec.limits ?? {})) {
    const limit = parseQuantity(raw)
    if (limit === undefined) continue
    // A new node adds one to the `nodes` limit, whatever the pod asks.
    const wants = resource === 'nodes' ? 1 : (need[resource] ?? 0)
    const holds = used[resource] ?? 0
    if (holds + wants <= limit) continue
    const f = (n: number) => formatQuantity(resource, n)
    const reached = holds >= limit
    const message = reached
      ? `limit ${resource} ${f(limit)} reached: its NodeClaims hold ${f(holds)} ${resource} (spec.limits.${resource})`
      : `limit ${resource} ${f(limit)} leaves ${f(limit - holds)} ${resource}: its NodeClaims hold ${f(holds)}, a node for the pod needs at least ${f(wants)}${overheadNote}`
    return {
      resource,
      limit,
      used: holds,
      need: wants,
      message,
      fix: limitFix(name, resource, f(newLimit(resource, holds + wants))),
    }
  }
  return undefined
}

/** One of a NodePool's limits, what its NodeClaims hold of it and what is left for a new node. */
export interface LimitLeft {
  resource: string
  limit: number
  used: number
  left: number
}

/**
 * What is left of each limit but `nodes` (no instance type's capacity has nodes): Karpenter launches
 * no type whose capacity exceeds it, however little the pod asks.
 */
export function limitsLeft(np: NodePool, nodeClaims: NodeClaim[]): LimitLeft[] {
  const used = nodePoolUsage(np.metadata.name, nodeClaims)
  const out: LimitLeft[] = []
  for (const [resource, raw] of Object.entries(np.spec.limits ?? {})) {
    const limit = parseQuantity(raw)
    if (limit === undefined || resource === 'nodes') continue
    const holds = used[resource] ?? 0
    out.push({ resource, limit, used: holds, left: limit - holds })
  }
  return out
}

/** A limit that fits: whole cores, memory in whole GiB. */
export function newLimit(resource: string, n: number): number {
  if (resource === 'cpu') return Math.ceil(n)
  if (/memory|storage/.test(resource)) return Math.ceil(n / 2 ** 30) * 2 ** 30
  return Math.ceil(n)
}
