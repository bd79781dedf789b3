import type { SecurityGroup, SgPermission } from '../facts/types.js'
import { need, needRelease, releaseVersion, skip, webhooksEnabled } from './lib/facts.js'
import type { Check, Finding } from './types.js'

const opens8443 = (p: SgPermission) =>
  p.protocol === '-1' || (p.protocol === 'tcp' && (p.fromPort ?? 0) <= 8443 && (p.toPort ?? 65535) >= 8443)

const allows8443From = (sg: SecurityGroup, sourceSg: string) =>
  sg.ingress.some((p) => opens8443(p) && p.sourceGroupIds.includes(sourceSg))

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

export const sgWebhook8443: Check = {
  meta: {
    id: 'sg-webhook-8443',
    title: 'Control plane can reach the webhook port 8443 on the nodes',
    category: 'network',
    severity: 'error',
    docs: "Karpenter v1.0.x serves conversion/validation webhooks on 8443; the API server needs ingress tcp/8443 to the node security group from the cluster security group, or from a CIDR that holds the cluster's subnets (where the control plane's network interfaces are). From v1.1 there are no webhooks.",
  },
  run(facts) {
    const release = needRelease(facts)
    if (!webhooksEnabled(release)) {
      const v = releaseVersion(release)?.raw ?? release.chartVersion
      skip(`Karpenter ${v} runs no webhooks: an 8443 rule is not needed`)
    }
    const cluster = need(facts.eks.cluster)
    if (!cluster) skip('EKS cluster not found')
    const clusterSg = cluster.clusterSecurityGroupId ?? cluster.securityGroupIds[0]
    if (!clusterSg) skip('the cluster security group is not known (the EKS API did not return one)')
    // One finding per security group, naming every EC2NodeClass that selects it.
    const users = new Map<string, { sg: SecurityGroup; nodeClasses: string[] }>()
    for (const [nodeClass, read] of Object.entries(facts.ec2.securityGroupsByNodeClass)) {
      for (const sg of need(read)) {
        if (sg.id === clusterSg) continue // traffic within one SG is governed by its self-rule
        const entry = users.get(sg.id) ?? { sg, nodeClasses: [] }
        entry.nodeClasses.push(nodeClass)
        users.set(sg.id, entry)
      }
    }
    // The cluster's subnets whose CIDR a read of the EC2NodeClasses' subnets gave.
    const clusterCidrs = [
      ...new Set(
        Object.values(facts.ec2.subnetsByNodeClass)
          .flatMap((r) => (r.ok ? r.value : []))
          .filter((s) => cluster.subnetIds.includes(s.id) && s.cidr)
          .map((s) => s.cidr as string),
      ),
    ]
    const findings: Finding[] = []
    for (const { sg, nodeClasses } of users.values()) {
      if (allows8443From(sg, clusterSg)) {
        findings.push({
          status: 'pass',
          subject: sg.id,
          message: `${sg.id} allows tcp/8443 from ${clusterSg}`,
        })
        continue
      }
      const byCidr = cidrVerdict(sg, clusterCidrs)
      if (byCidr.reaches) {
        findings.push({
          status: 'pass',
          subject: sg.id,
          message: `${sg.id} allows tcp/8443 from ${byCidr.open.join(', ')}, which holds the cluster's subnets${clusterCidrs.length ? ` (${clusterCidrs.join(', ')})` : ''} where the control plane's network interfaces are`,
        })
        continue
      }
      if (byCidr.open.length && byCidr.reaches === undefined) {
        findings.push({
          status: 'unknown',
          subject: sg.id,
          message: `${sg.id} allows tcp/8443 from ${byCidr.open.join(', ')} only: whether that holds the control plane's addresses is unknown (the CIDRs of the cluster's subnets ${cluster.subnetIds.join(', ') || '(none listed)'} were not read)`,
        })
        continue
      }
      findings.push({
        status: 'fail',
        subject: sg.id,
        message: `node security group ${sg.id} (EC2NodeClass ${nodeClasses.join(', ')}) has no ingress tcp/8443 from the cluster security group ${clusterSg}: webhook calls time out`,
        evidence: { securityGroup: sg.id, clusterSecurityGroup: clusterSg, nodeClasses, ingress: sg.ingress },
        fix: {
          summary: 'allow the control plane to reach the webhook',
          commands: [
            `aws ec2 authorize-security-group-ingress --group-id ${sg.id} --protocol tcp --port 8443 --source-group ${clusterSg} --region ${facts.meta.region}`,
          ],
        },
      })
    }
    return findings
  },
}
