import type { EC2NodeClass, SelectorTerm } from '../facts/types.js'
import { need, skip } from './lib/facts.js'
import type { Check, Finding } from './types.js'

const DISCOVERY = 'karpenter.sh/discovery'

const describeTerms = (terms: SelectorTerm[]) =>
  terms
    .map((t) =>
      t.id
        ? `id=${t.id}`
        : [
            ...Object.entries(t.tags ?? {}).map(([k, v]) => `${k}=${v}`),
            ...(t.name ? [`name=${t.name}`] : []),
          ].join(','),
    )
    .join(' OR ')

function tagFix(resources: string[], cluster: string, region: string, what: string) {
  return {
    summary: `tag the cluster's ${what} so the selector finds them`,
    commands: [
      `aws ec2 create-tags --region ${region} --resources ${resources.length ? resources.join(' ') : `<${what}-ids>`} --tags Key=${DISCOVERY},Value=${cluster}`,
    ],
  }
}

/** A selector term that keys on karpenter.sh/discovery must name this cluster (a copied tutorial value does not). */
function foreignDiscovery(nc: EC2NodeClass, cluster: string): string[] {
  return [...nc.spec.subnetSelectorTerms, ...nc.spec.securityGroupSelectorTerms]
    .map((t) => t.tags?.[DISCOVERY])
    .filter((v): v is string => v !== undefined && v !== '*' && v !== cluster)
}

export const discoveryTags: Check = {
  meta: {
    id: 'discovery-tags',
    title: 'EC2NodeClass selectors find subnets and security groups in the cluster VPC',
    category: 'network',
    severity: 'error',
    docs: 'Every EC2NodeClass subnet and security-group selector must resolve to resources in the cluster VPC (subnets in at least two AZs); the getting-started convention tags them karpenter.sh/discovery=<cluster>.',
  },
  run(facts) {
    const nodeClasses = need(facts.kube.nodeClasses)
    if (nodeClasses.length === 0) skip('no EC2NodeClasses in the cluster')
    const cluster = need(facts.eks.cluster)
    const vpc = cluster?.vpcId
    const { clusterName, region } = facts.meta
    const clusterSubnets = cluster?.subnetIds ?? []
    const findings: Finding[] = []

    for (const nc of nodeClasses) {
      const name = nc.metadata.name
      const foreign = foreignDiscovery(nc, clusterName)
      if (foreign.length > 0) {
        findings.push({
          status: 'fail',
          subject: `EC2NodeClass/${name}`,
          message: `EC2NodeClass ${name} selects ${DISCOVERY}=${foreign.join(', ')}, not this cluster (${clusterName}): a value copied from another cluster or tutorial`,
          evidence: { selectorValues: foreign },
          fix: {
            summary: `select ${DISCOVERY}=${clusterName}`,
            commands: [
              `kubectl patch ec2nodeclass ${name} --type merge -p '{"spec":{"subnetSelectorTerms":[{"tags":{"${DISCOVERY}":"${clusterName}"}}],"securityGroupSelectorTerms":[{"tags":{"${DISCOVERY}":"${clusterName}"}}]}}'`,
            ],
          },
        })
      }

      const subnetsRead = facts.ec2.subnetsByNodeClass[name]
      const subnets = subnetsRead
        ? need(subnetsRead)
        : skip(`subnets of EC2NodeClass ${name} were not collected`)
      const subnetTerms = describeTerms(nc.spec.subnetSelectorTerms)
      if (subnets.length === 0) {
        findings.push({
          status: 'fail',
          subject: `EC2NodeClass/${name}`,
          message: `subnet selector of EC2NodeClass ${name} (${subnetTerms}) matches no subnet: Karpenter cannot launch nodes`,
          code: 'subnets-unmatched',
          evidence: { selector: nc.spec.subnetSelectorTerms, clusterSubnets },
          fix: tagFix(clusterSubnets, clusterName, region, 'subnets'),
        })
      } else {
        const outside = vpc ? subnets.filter((s) => s.vpcId !== vpc) : []
        const zones = new Set(subnets.filter((s) => !vpc || s.vpcId === vpc).map((s) => s.availabilityZone))
        if (outside.length > 0) {
          findings.push({
            status: 'fail',
            subject: outside.map((s) => s.id).join(','),
            message: `EC2NodeClass ${name} selects subnets outside the cluster VPC ${vpc}: ${outside.map((s) => `${s.id} (${s.vpcId})`).join(', ')}`,
            evidence: { outside: outside.map((s) => ({ id: s.id, vpcId: s.vpcId })), vpc },
            fix: {
              summary: 'remove the discovery tag from the foreign subnets (or narrow the selector)',
              commands: [
                `aws ec2 delete-tags --region ${region} --resources ${outside.map((s) => s.id).join(' ')} --tags Key=${DISCOVERY}`,
              ],
            },
          })
        }
        if (zones.size < 2) {
          findings.push({
            status: 'warn',
            subject: `EC2NodeClass/${name}`,
            message: `EC2NodeClass ${name} has subnets in only ${zones.size} availability zone (${[...zones].join(', ')}): one AZ outage stops all provisioning`,
            evidence: { zones: [...zones] },
            fix: tagFix(
              clusterSubnets.filter((id) => !subnets.some((s) => s.id === id)),
              clusterName,
              region,
              'subnets',
            ),
          })
        }
        if (outside.length === 0 && zones.size >= 2) {
          findings.push({
            status: 'pass',
            subject: `EC2NodeClass/${name}`,
            message: `EC2NodeClass ${name}: ${subnets.length} subnets in ${zones.size} AZs (${[...zones].sort().join(', ')})`,
          })
        }
      }

      const sgRead = facts.ec2.securityGroupsByNodeClass[name]
      const sgs = sgRead ? need(sgRead) : skip(`security groups of EC2NodeClass ${name} were not collected`)
      if (sgs.length === 0) {
        findings.push({
          status: 'fail',
          subject: `EC2NodeClass/${name}`,
          message: `security-group selector of EC2NodeClass ${name} (${describeTerms(nc.spec.securityGroupSelectorTerms)}) matches no security group`,
          code: 'security-groups-unmatched',
          evidence: { selector: nc.spec.securityGroupSelectorTerms },
          fix: tagFix(
            cluster?.clusterSecurityGroupId ? [cluster.clusterSecurityGroupId] : [],
            clusterName,
            region,
            'security-groups',
          ),
        })
      } else {
        const foreignSgs = vpc ? sgs.filter((g) => g.vpcId !== vpc) : []
        if (foreignSgs.length > 0) {
          findings.push({
            status: 'fail',
            subject: foreignSgs.map((g) => g.id).join(','),
            message: `EC2NodeClass ${name} selects security groups of another VPC: ${foreignSgs.map((g) => `${g.id} (${g.vpcId})`).join(', ')}: RunInstances will fail`,
            evidence: { foreign: foreignSgs.map((g) => g.id), vpc },
            fix: {
              summary: 'remove the discovery tag from those security groups',
              commands: [
                `aws ec2 delete-tags --region ${region} --resources ${foreignSgs.map((g) => g.id).join(' ')} --tags Key=${DISCOVERY}`,
              ],
            },
          })
        } else {
          findings.push({
            status: 'pass',
            subject: `EC2NodeClass/${name}`,
            message: `EC2NodeClass ${name}: security groups ${sgs.map((g) => g.id).join(', ')}`,
          })
        }
      }
    }
    return findings
  },
}
