// The 1.0.x webhook's endpoints are the controller pods' IPs, which the VPC CNI puts on the network
// interfaces of the nodes those pods run on (a managed node group, Fargate): their security groups are
// what the API server's call meets, not necessarily the EC2NodeClasses' (Karpenter's own nodes).
import type { ControllerNode, Facts, SecurityGroup } from '../facts/types.js'
import { describeFailure, need, needRelease, releaseVersion, skip, webhooksEnabled } from './lib/facts.js'
import { reach8443 } from './lib/ingress-8443.js'
import type { Check, Finding } from './types.js'

interface Judged {
  /** the groups on one set of network interfaces */
  groups: SecurityGroup[]
  /** who sits behind them, as the message names them: `EC2NodeClass default`, `node ip-…` */
  who: string
  evidence: Record<string, unknown>
}

interface Ctx {
  clusterSg: string
  clusterCidrs: string[]
  subnetIds: string[]
  region: string
  caveats?: string[]
}

function judge(j: Judged, c: Ctx): Finding {
  const extra = c.caveats ? { caveats: c.caveats } : {}
  const r = reach8443(j.groups, c.clusterSg, c.clusterCidrs)
  const first = j.groups[0]!
  if (r.status === 'pass')
    return {
      status: 'pass',
      subject: r.sg.id,
      message: `${r.sg.id} allows tcp/8443 from ${r.from}`,
      ...extra,
    }
  if (r.status === 'unknown')
    return {
      status: 'unknown',
      subject: r.sg.id,
      message: `${r.sg.id} allows tcp/8443 from ${r.open.join(', ')} only: whether that holds the control plane's addresses is unknown (the CIDRs of the cluster's subnets ${c.subnetIds.join(', ') || '(none listed)'} were not read)`,
      ...extra,
    }
  const others =
    j.groups.length > 1
      ? `, nor do ${j.groups
          .slice(1)
          .map((g) => g.id)
          .join(', ')} beside it`
      : ''
  return {
    status: 'fail',
    subject: first.id,
    message: `node security group ${first.id} (${j.who}) has no ingress tcp/8443 from the cluster security group ${c.clusterSg}${others}: webhook calls time out`,
    evidence: {
      securityGroup: first.id,
      clusterSecurityGroup: c.clusterSg,
      ...j.evidence,
      ingress: first.ingress,
    },
    fix: {
      summary: 'allow the control plane to reach the webhook',
      commands: [
        `aws ec2 authorize-security-group-ingress --group-id ${first.id} --protocol tcp --port 8443 --source-group ${c.clusterSg} --region ${c.region}`,
      ],
    },
    ...extra,
  }
}

/** The EC2NodeClasses' groups, one finding per group naming every EC2NodeClass that selects it. */
function byNodeClass(facts: Facts, c: Ctx): Finding[] {
  const users = new Map<string, { sg: SecurityGroup; nodeClasses: string[] }>()
  for (const [nodeClass, read] of Object.entries(facts.ec2.securityGroupsByNodeClass)) {
    for (const sg of need(read)) {
      if (sg.id === c.clusterSg) continue // traffic within one SG is governed by its self-rule
      const entry = users.get(sg.id) ?? { sg, nodeClasses: [] }
      entry.nodeClasses.push(nodeClass)
      users.set(sg.id, entry)
    }
  }
  return [...users.values()].map(({ sg, nodeClasses }) =>
    judge({ groups: [sg], who: `EC2NodeClass ${nodeClasses.join(', ')}`, evidence: { nodeClasses } }, c),
  )
}

/** The controller's nodes, one finding per set of groups they carry (naming the nodes). */
function byControllerNode(nodes: ControllerNode[], c: Ctx): Finding[] {
  const findings: Finding[] = []
  const fargate = nodes.filter((n) => n.fargate).map((n) => n.name)
  if (fargate.length)
    findings.push({
      status: 'pass',
      subject: c.clusterSg,
      message: `the controller runs on EKS Fargate (${fargate.join(', ')}): its pods' network interfaces carry the cluster security group ${c.clusterSg}, so the control plane reaches the webhook within one group`,
    })
  for (const n of nodes.filter((x) => !x.fargate && !x.securityGroups))
    findings.push({
      status: 'unknown',
      subject: n.name,
      message: `node ${n.name} runs a controller pod, but its security groups are not known: ${n.unresolved ?? 'not read'}`,
    })
  const sets = new Map<string, { groups: SecurityGroup[]; names: string[] }>()
  for (const n of nodes) {
    if (!n.securityGroups) continue
    const key = n.securityGroups.map((g) => g.id).join(',')
    const set = sets.get(key) ?? { groups: n.securityGroups, names: [] }
    set.names.push(n.name)
    sets.set(key, set)
  }
  for (const { groups, names } of sets.values()) {
    const who = `the controller's node${names.length > 1 ? 's' : ''} ${names.join(', ')}`
    if (groups.some((g) => g.id === c.clusterSg))
      findings.push({
        status: 'pass',
        subject: c.clusterSg,
        message: `${who} carry the cluster security group ${c.clusterSg}: the control plane reaches the webhook within one group`,
      })
    else findings.push(judge({ groups, who, evidence: { nodes: names } }, c))
  }
  return findings
}

/** Why the controller's nodes cannot be judged (then the EC2NodeClasses' groups are), or undefined. */
function noControllerNodes(facts: Facts): string | undefined {
  const read = facts.ec2.controllerNodes
  if (!read) return "the controller's nodes were not read (a snapshot from before karpctl read them)"
  for (const listing of [facts.kube.pods, facts.kube.nodes])
    if (!listing.ok)
      return `the controller's pods or nodes could not be listed (${describeFailure(listing.error)})`
  if (read.ok && read.value.length === 0) return 'no controller pod is scheduled on a node'
  return undefined
}

export const sgWebhook8443: Check = {
  meta: {
    id: 'sg-webhook-8443',
    title: 'Control plane can reach the webhook port 8443 on the nodes',
    category: 'network',
    severity: 'error',
    docs: "Karpenter v1.0.x serves conversion/validation webhooks on 8443 from its controller pods; the API server needs ingress tcp/8443 to the security groups of the nodes those pods run on (their instances', read with DescribeInstances; the cluster security group on Fargate) from the cluster security group, or from a CIDR that holds the cluster's subnets (where the control plane's network interfaces are). When those nodes are not known, the EC2NodeClasses' groups are judged, saying so. From v1.1 there are no webhooks.",
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
    // The cluster's subnets whose CIDR a read of the EC2NodeClasses' subnets gave.
    const clusterCidrs = [
      ...new Set(
        Object.values(facts.ec2.subnetsByNodeClass)
          .flatMap((r) => (r.ok ? r.value : []))
          .filter((s) => cluster.subnetIds.includes(s.id) && s.cidr)
          .map((s) => s.cidr as string),
      ),
    ]
    const c: Ctx = { clusterSg, clusterCidrs, subnetIds: cluster.subnetIds, region: facts.meta.region }
    const why = noControllerNodes(facts)
    if (why)
      return byNodeClass(facts, { ...c, caveats: [`judged on the EC2NodeClasses' security groups: ${why}`] })
    // Pods run but their instances could not be read: unknown, with the reason (need throws it).
    return byControllerNode(need(facts.ec2.controllerNodes!), c)
  },
}
