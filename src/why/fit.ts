// Whether a type a NodePool's (and the pod's) requirements leave fits the pod, in Karpenter's order:
// the devices it asks for (devices.ts), its ephemeral storage (ephemeral-storage.ts), then room for
// its requests and the DaemonSets' (instance-types.ts). Each narrows the types the next one judges;
// the verdicts that depend only on a memoized list of types are shared by every pod asking alike.
import { shellQuote } from '../checks/lib/facts.js'
import type { Fix } from '../checks/types.js'
import type { EC2NodeClass, NodePool } from '../facts/types.js'
import { deviceCapacity, devicesAsked, hasDevices, judgeDevices } from './devices.js'
import { EPHEMERAL_STORAGE, judgeEphemeralStorage } from './ephemeral-storage.js'
import {
  CAPACITY_TYPE_LABEL,
  INSTANCE_TYPE_LABEL,
  judgeInstanceTypes,
  labelsOf,
  minValuesVerdict,
  unmetMinValues,
  TYPE_KEYS,
  typesLeft,
  widenFix,
  type Catalog,
  type LowerRequests,
  type PodFix,
} from './instance-types.js'
import { ZONE_LABEL } from './pod.js'
import type { PoolVerdict } from './verdict.js'
import { add, type Amounts } from './quantity.js'
import type { HostPortVerdict } from './host-ports.js'
import { daemonGroups, type DaemonGroup, type TypeDaemon } from './type-daemons.js'
import { copyRequirements, type Requirement, type Requirements } from './requirements.js'
import type { InstanceTypeInfo } from './types.js'
import type { LimitLeft } from './limits.js'

/** One requirement per (memoized) list of types and minValues: its memo key is then written once. */
const typeLists = new WeakMap<InstanceTypeInfo[], Map<number | undefined, Requirement>>()

/**
 * Narrow the requirements to these instance types (a subset of the types they leave, so no
 * intersection is needed), without making that a requirement a fix may widen. A minValues on the
 * instance type stays: Karpenter counts it over the types left (oracle seed 214).
 */
function onlyTypes(merged: Requirements, types: InstanceTypeInfo[]): Requirements {
  const out = { ...copyRequirements(merged), narrowed: merged.narrowed ?? merged }
  const minValues = merged.byKey.get(INSTANCE_TYPE_LABEL)?.minValues
  let byMin = typeLists.get(types)
  if (!byMin) typeLists.set(types, (byMin = new Map()))
  let r = byMin.get(minValues)
  if (!r)
    byMin.set(
      minValues,
      (r = {
        key: INSTANCE_TYPE_LABEL,
        complement: false,
        values: types.map((t) => t.name),
        ...(minValues !== undefined ? { minValues } : {}),
      }),
    )
  out.byKey.set(INSTANCE_TYPE_LABEL, r)
  // Where minValues stays, its fix names the NodePool's requirement that set it.
  if (minValues === undefined) out.origin.set(INSTANCE_TYPE_LABEL, { kind: 'nodeSelector' })
  return out
}

/**
 * No type with the devices is offered where the pod may run: when a zone or capacity-type requirement
 * (the NodePool's or the pod's) is what keeps out one that is offered in the EC2NodeClass's zones,
 * widening it is the fix; otherwise the cause is in AWS (no subnet where such a type is offered).
 */
function zoneOrCapacityFix(
  pool: string,
  merged: Requirements,
  nodeClass: EC2NodeClass | undefined,
  catalog: Catalog,
  asked: [string, number][],
  fixes: PodFixes,
  lower: (what: string) => Fix | undefined,
): Fix | undefined {
  const key = [ZONE_LABEL, CAPACITY_TYPE_LABEL].find((k) => {
    if (!merged.byKey.has(k)) return false
    const without = copyRequirements(merged)
    without.byKey.delete(k)
    return typesLeft({ merged: without, nodeClass, catalog }).inZones.some((it) => hasDevices(it, asked))
  })
  if (key) return widenFix(pool, merged, key, fixes.podFix).fix
  const what = asked.map(([k, n]) => `${k} ${n}`).join(', ')
  const zones = [
    ...new Set(
      catalog.types
        .filter((it) => hasDevices(it, asked))
        .flatMap((it) => [...(catalog.zones.get(it.name) ?? [])]),
    ),
  ].sort()
  if (!zones.length) {
    const summary = `no instance type EC2 describes here has ${what}: lower the pod's request (or split it across pods)`
    return lower(summary) ?? { summary }
  }
  const name = nodeClass?.metadata.name
  const summary = `EC2 offers types with ${what} in ${zones.join(', ')} only: give EC2NodeClass ${name ?? '(its class)'} a subnet there (tag one so its spec.subnetSelectorTerms select it), or lower the pod's request`
  const tagged = fixes.tagSubnets?.((z) => zones.includes(z), `EC2 offers types with ${what} there`)
  if (tagged) return tagged
  return {
    summary,
    ...(name
      ? {
          commands: [
            `kubectl get ec2nodeclass ${shellQuote(name)} -o jsonpath='{.spec.subnetSelectorTerms}'`,
            `aws ec2 describe-subnets --filters Name=availability-zone,Values=${shellQuote(zones.join(','))} --query 'Subnets[].[SubnetId,AvailabilityZone,VpcId,Tags]'`,
          ],
        }
      : {}),
  }
}

/** The fixes only the pod's side can build: its workload patched, or its EC2NodeClass's subnets tagged. */
export interface PodFixes {
  /** Drop the pod's own requirement on a key. */
  podFix?: PodFix
  /** Lower the pod's requests. */
  lowerRequests?: LowerRequests
  /** Tag a subnet of one of these zones for the NodePool's EC2NodeClass (subnets.ts). */
  tagSubnets?: (zones: (zone: string) => boolean, because: string) => Fix | undefined
}

/**
 * What the pod may ask of each device so that one type has room for it with its DaemonSets': the type
 * that keeps most of the ask, from the first list that has a type with some of every device asked
 * (the types the NodePool leaves, then those offered in its zones, then any EC2 describes).
 */
function mostDevices(
  lists: InstanceTypeInfo[][],
  asked: [string, number][],
  podAsks: Amounts,
): Record<string, number> | undefined {
  for (const types of lists) {
    let best: Record<string, number> | undefined
    let kept = 0
    for (const it of types) {
      const cap = deviceCapacity(it)
      if (!cap) continue
      // A DaemonSet's share of the device (asked, counted with the pod's) stays on the node.
      const to = asked.map(
        ([k, n]) =>
          [k, Math.max(0, Math.min(podAsks[k] ?? 0, (cap[k] ?? 0) - (n - (podAsks[k] ?? 0))))] as const,
      )
      const kinds = to.filter(([, v]) => v > 0)
      if (!kinds.length) continue
      // Kinds first (a whole number), then the smallest share of an ask kept (below 1).
      const score = kinds.length + Math.min(...kinds.map(([k, v]) => v / (podAsks[k] ?? 1))) / 2
      if (score > kept) [best, kept] = [Object.fromEntries(to), score]
    }
    if (best) return best
  }
  return undefined
}

const formatDevices = (to: Record<string, number>) =>
  Object.entries(to)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')

/**
 * Verdicts that depend only on the types a NodePool's requirements leave (the memoized `left` list,
 * one per NodePool and requirements) and on the pod's asks: a thousand pods asking alike cost one.
 */
const deviceVerdicts = new WeakMap<object, Map<string, ReturnType<typeof judgeDevices>>>()
const storageVerdicts = new WeakMap<object, Map<string, ReturnType<typeof judgeEphemeralStorage>>>()
const knownDevices = new WeakMap<Catalog, boolean>()

function memoized<V>(cache: WeakMap<object, Map<string, V>>, on: object, key: string, compute: () => V): V {
  let m = cache.get(on)
  if (!m) cache.set(on, (m = new Map()))
  let v = m.get(key)
  if (v === undefined) m.set(key, (v = compute()))
  return v
}

/** Whether the facts hold every type's devices (an older karpctl read none). */
function devicesKnown(catalog: Catalog): boolean {
  let known = knownDevices.get(catalog)
  if (known === undefined)
    knownDevices.set(catalog, (known = catalog.types.every((it) => !!deviceCapacity(it))))
  return known
}

/** Where the type requirements come from: a fix names them, so verdicts are shared only among equals. */
const originsKey = (merged: Requirements) =>
  TYPE_KEYS.map((k) => {
    const o = merged.origin.get(k)
    return o ? `${o.kind}${'index' in o ? o.index : ''}` : ''
  }).join('|')

/** Devices, then ephemeral storage, then room: the instance-type judgement of one candidate. */
export function judgeCandidate(
  merged: Requirements,
  np: NodePool,
  nodeClass: EC2NodeClass | undefined,
  catalog: Catalog,
  need: Amounts,
  podAsks: Amounts,
  base: { nodePool: string; weight: number },
  limits?: LimitLeft[],
  opts: { skipMinValues?: boolean; fitting?: InstanceTypeInfo[] } & PodFixes = {},
): PoolVerdict {
  const pool = np.metadata.name
  const asked = devicesAsked(need)
  const notes: string[] = []
  let reqs = merged
  if (asked.length || need[EPHEMERAL_STORAGE]) {
    const { inZones, left, zonesFor } = typesLeft({ merged, nodeClass, catalog })
    let usable = left
    if (asked.length) {
      if (!devicesKnown(catalog))
        return {
          ...base,
          status: 'unknown',
          rule: 'devices',
          message: `devices not judged: the facts hold no GPU, Neuron or EFA counts of the instance types (read by an older karpctl); the pod asks for ${asked.map(([k, n]) => `${k} ${n}`).join(', ')}`,
        }
      const v = memoized(deviceVerdicts, left, `${JSON.stringify(asked)}${originsKey(merged)}`, () =>
        judgeDevices({
          pool,
          merged,
          asked,
          offered: inZones,
          left,
          typeKeys: TYPE_KEYS,
          labels: (it) => catalog.labels.get(it.name) ?? labelsOf(it),
          where: `in [${zonesFor.join(' ')}]`,
        }),
      )
      if ('message' in v) {
        const own =
          v.podSide &&
          opts.podFix?.(
            v.podSide.key,
            v.podSide.origin,
            `it leaves no instance type with ${asked.map(([k, n]) => `${k} ${n}`).join(', ')}`,
          )
        const lower = (summary: string) => {
          const to = mostDevices([left, inZones, catalog.types], asked, podAsks)
          // No type EC2 describes has any of them: the requests go (a 0 is a removal).
          if (!to)
            return opts.lowerRequests?.(
              Object.fromEntries(asked.map(([k]) => [k, 0])),
              `${summary}; here they are dropped: no type EC2 describes has any`,
            )
          return opts.lowerRequests?.(to, `${summary}; here to ${formatDevices(to)}, the most one type has`)
        }
        const widened =
          !own && v.noneOffered
            ? zoneOrCapacityFix(pool, merged, nodeClass, catalog, asked, opts, lower)
            : undefined
        return {
          ...base,
          status: 'ruled-out',
          rule: 'devices',
          message: v.message,
          fix: own ?? widened ?? v.fix,
        }
      }
      usable = v.only
      notes.push(`${v.only.length} of them with ${asked.map(([k, n]) => `${k} ${n}`).join(', ')}`)
    }
    const storage = need[EPHEMERAL_STORAGE]
    if (storage && usable.length) {
      const v = memoized(storageVerdicts, usable, String(storage), () =>
        judgeEphemeralStorage({ pool, nodeClass, need: storage, left: usable }),
      )
      if ('unknown' in v) return { ...base, status: 'unknown', rule: 'ephemeral-storage', message: v.unknown }
      if ('message' in v)
        return { ...base, status: 'ruled-out', rule: 'ephemeral-storage', message: v.message, fix: v.fix }
      usable = v.only
    }
    if (usable.length < left.length) reqs = onlyTypes(merged, usable)
  }
  const v = judgeInstanceTypes({
    pool,
    merged: reqs,
    nodeClass,
    need,
    podAsks,
    catalog,
    limits,
    skipMinValues: opts.skipMinValues,
    podFix: opts.podFix,
    lowerRequests: opts.lowerRequests,
    ...(asked.length ? { admits: (it: InstanceTypeInfo) => hasDevices(it, asked) } : {}),
  })
  opts.fitting?.push(...(v.types ?? []))
  return {
    ...base,
    status: v.status,
    rule: 'instance-types',
    message: v.message + (notes.length && v.status === 'fits' ? ` (${notes.join('; ')})` : ''),
    ...(v.fix ? { fix: v.fix } : {}),
  }
}

/** Groups per memoized list of types and NodePool DaemonSets: equal pods share their onlyTypes lists. */
const groupMemo = new WeakMap<InstanceTypeInfo[], WeakMap<TypeDaemon[], DaemonGroup[]>>()

/**
 * judgeCandidate once per group of types that would run the same type-dependent DaemonSets, each with
 * that group's overhead (type-daemons.ts): the pod fits when one group has a type with room. A group
 * whose DaemonSets bind one of the pod's host ports launches nothing for it.
 */
export function judgeWithDaemons(
  merged: Requirements,
  np: NodePool,
  nodeClass: EC2NodeClass | undefined,
  catalog: Catalog,
  need: Amounts,
  podAsks: Amounts,
  base: { nodePool: string; weight: number },
  limits: LimitLeft[] | undefined,
  daemons: TypeDaemon[],
  portClash: (d: TypeDaemon) => HostPortVerdict | undefined,
  fixes: PodFixes = {},
): PoolVerdict {
  const judge = (reqs: Requirements, n: Amounts, opts?: Parameters<typeof judgeCandidate>[8]) =>
    judgeCandidate(reqs, np, nodeClass, catalog, n, podAsks, base, limits, { ...opts, ...fixes })
  if (!daemons.length) return judge(merged, need)
  const { left, zonesFor } = typesLeft({ merged, nodeClass, catalog })
  if (!left.length) return judge(merged, need)
  let byDaemons = groupMemo.get(left)
  if (!byDaemons) groupMemo.set(left, (byDaemons = new WeakMap()))
  let groups = byDaemons.get(daemons)
  if (!groups) byDaemons.set(daemons, (groups = daemonGroups(catalog, left, daemons)))
  // minValues counts the types every group leaves together (filterInstanceTypesByRequirements'
  // `remaining`): each group is judged without it, then it is counted over their union.
  const minValues = groups.length > 1 && [...merged.byKey.values()].some((r) => r.minValues)
  const fitting: InstanceTypeInfo[] = []
  const largest = left[left.length - 1]
  let fit: PoolVerdict | undefined
  let shown: PoolVerdict | undefined
  let clash: HostPortVerdict | undefined
  for (const g of groups) {
    const blocked = g.daemons.map(portClash).find((v) => v !== undefined)
    if (blocked) {
      clash ??= blocked
      continue
    }
    const extra = g.daemons.reduce<Amounts>((sum, d) => add(sum, d.requests), {})
    const reqs = g.types.length === left.length ? merged : onlyTypes(merged, g.types)
    const groupNeed = { ...add(need, extra), pods: (need.pods ?? 1) + g.daemons.length }
    const v = judge(reqs, groupNeed, minValues ? { skipMinValues: true, fitting } : undefined)
    if (v.status === 'fits') {
      if (!minValues) return v
      fit ??= v
    }
    // The "no room" message names the largest type: show the group that holds it.
    else if (!shown || g.types.includes(largest as InstanceTypeInfo)) shown = v
  }
  if (fit) {
    const unmet = unmetMinValues(merged, fitting, catalog, zonesFor)
    return unmet
      ? {
          ...base,
          status: 'ruled-out',
          rule: 'instance-types',
          ...minValuesVerdict(np.metadata.name, unmet, fitting.length),
        }
      : fit
  }
  if (!shown)
    return { ...base, status: 'ruled-out', rule: 'host-ports', message: clash!.message, fix: clash!.fix }
  return shown
}
