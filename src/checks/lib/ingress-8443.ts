// Whether a set of security groups lets the control plane reach tcp/8443 (sg-webhook-8443's rule
// logic): from the cluster security group, or from a CIDR that holds the cluster's subnets.
import type { SecurityGroup, SgPermission } from '../../facts/types.js'

const opens8443 = (p: SgPermission) =>
  p.protocol === '-1' || (p.protocol === 'tcp' && (p.fromPort ?? 0) <= 8443 && (p.toPort ?? 65535) >= 8443)

/** An IPv4 CIDR as [network, prefix length], or undefined (IPv6, malformed). */
function ipv4(cidr: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr)
  if (!m) return undefined
  const bits = Number(m[5])
  const ip = m.slice(1, 5).reduce((a, o) => a * 256 + Number(o), 0)
  const size = 2 ** (32 - bits)
  return [ip - (ip % size), bits]
}

/** Whether `outer` holds every address of `inner`. */
function covers(outer: string, inner: string): boolean {
  const o = ipv4(outer)
  const i = ipv4(inner)
  if (!o || !i || o[1] > i[1]) return false
  const size = 2 ** (32 - o[1])
  return i[0] - (i[0] % size) === o[0]
}

/**
 * The CIDRs the group opens tcp/8443 to, judged against the cluster's subnets, where EKS puts the
 * control plane's network interfaces: a rule from the VPC's CIDR (or anywhere) reaches the webhook as
 * well as one from the cluster security group (field corpus: the rule terraform and CDK users write).
 */
function cidrVerdict(sg: SecurityGroup, clusterCidrs: string[]): { open: string[]; reaches?: boolean } {
  const open = [...new Set(sg.ingress.filter(opens8443).flatMap((p) => p.cidrs))]
  if (open.includes('0.0.0.0/0')) return { open, reaches: true }
  if (!open.length || !clusterCidrs.length) return { open }
  return { open, reaches: clusterCidrs.every((c) => open.some((o) => covers(o, c))) }
}

export type Reach =
  | { status: 'pass'; sg: SecurityGroup; from: string }
  | { status: 'unknown'; sg: SecurityGroup; open: string[] }
  | { status: 'fail' }

/**
 * Whether the groups on one network interface let the control plane in on tcp/8443. AWS allows what
 * any of an interface's groups allows, so one group with the rule is enough.
 */
export function reach8443(groups: SecurityGroup[], clusterSg: string, clusterCidrs: string[]): Reach {
  const bySource = groups.find((sg) =>
    sg.ingress.some((p) => opens8443(p) && p.sourceGroupIds.includes(clusterSg)),
  )
  if (bySource) return { status: 'pass', sg: bySource, from: clusterSg }
  const verdicts = groups.map((sg) => ({ sg, ...cidrVerdict(sg, clusterCidrs) }))
  const byCidr = verdicts.find((v) => v.reaches)
  if (byCidr) {
    const held = clusterCidrs.length ? ` (${clusterCidrs.join(', ')})` : ''
    return {
      status: 'pass',
      sg: byCidr.sg,
      from: `${byCidr.open.join(', ')}, which holds the cluster's subnets${held} where the control plane's network interfaces are`,
    }
  }
  const undecided = verdicts.find((v) => v.open.length && v.reaches === undefined)
  return undecided ? { status: 'unknown', sg: undecided.sg, open: undecided.open } : { status: 'fail' }
}
