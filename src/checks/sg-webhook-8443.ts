import type { SecurityGroup } from '../facts/types.js'
import { need, needRelease, releaseVersion, skip, webhooksEnabled } from './lib/facts.js'
import type { Check, Finding } from './types.js'

const allows8443From = (sg: SecurityGroup, sourceSg: string) =>
  sg.ingress.some(
    (p) =>
      (p.protocol === '-1' ||
        (p.protocol === 'tcp' && (p.fromPort ?? 0) <= 8443 && (p.toPort ?? 65535) >= 8443)) &&
      p.sourceGroupIds.includes(sourceSg),
  )

export const sgWebhook8443: Check = {
  meta: {
    id: 'sg-webhook-8443',
    title: 'Control plane can reach the webhook port 8443 on the nodes',
    category: 'network',
    severity: 'error',
    docs: 'Karpenter v1.0.x serves conversion/validation webhooks on 8443; the API server needs ingress tcp/8443 from the cluster security group to the node security group. From v1.1 there are no webhooks.',
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
