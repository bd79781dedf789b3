import type { EC2NodeClass, SelectorTerm, Tags } from '../facts/types.js'
import { need, shellQuote, skip } from './lib/facts.js'
import type { Check, Finding, Fix } from './types.js'

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

type TermsField = 'subnetSelectorTerms' | 'securityGroupSelectorTerms'

/** A term that tagging with karpenter.sh/discovery=<cluster> satisfies: its only tag is that one (or `*`). */
const taggingMatches = (t: SelectorTerm, cluster: string) =>
  !t.id &&
  !t.name &&
  !!t.tags &&
  Object.keys(t.tags).length === 1 &&
  (t.tags[DISCOVERY] === cluster || t.tags[DISCOVERY] === '*')

/**
 * A selector that matches nothing. Tagging the cluster's resources fixes it only when one of its terms
 * asks for nothing but the discovery tag: an `id` term naming a deleted group, a `name` term or a term
 * with other tags stays unmatched after the tagging (Karpenter v1.14.1 then keeps
 * `SecurityGroupsReady`/`SubnetsReady=False`, seen on the bed). Terms are ORed, so the discovery term is
 * added to the selector (a JSON patch `add …/-`: the user's terms stay) and the resources tagged.
 */
function unmatchedFix(
  nc: EC2NodeClass,
  field: TermsField,
  resources: string[],
  cluster: string,
  region: string,
  what: 'subnets' | 'security-groups',
): Fix {
  const tagging = tagFix(resources, cluster, region, what)
  if (nc.spec[field].some((t) => taggingMatches(t, cluster))) return tagging
  const op = [{ op: 'add', path: `/spec/${field}/-`, value: { tags: { [DISCOVERY]: cluster } } }]
  return {
    summary: `no term of ${field} is satisfied by the discovery tag alone, so tagging is not enough: add the term ${DISCOVERY}=${cluster} to the selector (its terms are ORed; yours stay), then tag the cluster's ${what}`,
    commands: [
      `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type json -p ${shellQuote(JSON.stringify(op))}`,
      ...tagging.commands,
    ],
  }
}

/** A tag term picks a resource when each of its tags is on it (`*`: any value). */
const tagsMatch = (term: SelectorTerm, tags: Tags) =>
  !!term.tags &&
  Object.entries(term.tags).every(([k, v]) => tags[k] !== undefined && (v === '*' || tags[k] === v))

/**
 * Resources of another VPC that an EC2NodeClass selects. One picked by an `id` term is picked whatever
 * its tags, so deleting a tag changes nothing: the terms naming it are removed from the selector, by
 * a JSON patch whose every removal is guarded by a `test` of the id (a selector changed since the read
 * is refused, not cut at the wrong index), from the last index down so earlier ones do not shift. A
 * selector left without a term (the CRD wants one) gets the discovery term in place of its first, and
 * the cluster's resources that tag. One picked by a tag term loses the discovery tag.
 */
function foreignFix(
  nc: EC2NodeClass,
  field: TermsField,
  foreign: { id: string; tags: Tags }[],
  what: 'subnets' | 'security-groups',
  tagTargets: string[],
  cluster: string,
  region: string,
): { fix: Fix; byId: string[] } {
  const terms = nc.spec[field]
  const named = terms.flatMap((t, i) => (t.id && foreign.some((r) => r.id === t.id) ? [{ i, id: t.id }] : []))
  const byId = [...new Set(named.map((n) => n.id))]
  const byTag = foreign.filter(
    (r) => !byId.includes(r.id) || terms.some((t) => !t.id && tagsMatch(t, r.tags)),
  )
  const emptied = named.length === terms.length
  const commands: string[] = []
  const steps: string[] = []
  if (named.length > 0) {
    const ops = [...named]
      .sort((a, b) => b.i - a.i)
      .flatMap(({ i, id }) => [
        { op: 'test', path: `/spec/${field}/${i}/id`, value: id },
        emptied && i === named[0]!.i
          ? { op: 'replace', path: `/spec/${field}/${i}`, value: { tags: { [DISCOVERY]: cluster } } }
          : { op: 'remove', path: `/spec/${field}/${i}` },
      ])
    commands.push(
      `kubectl patch ec2nodeclass ${shellQuote(nc.metadata.name)} --type json -p ${shellQuote(JSON.stringify(ops))}`,
    )
    steps.push(
      `remove the selector term${named.length > 1 ? 's' : ''} naming ${byId.join(', ')} by id from ${field} (deleting a tag changes nothing for an id term)${emptied ? `; no term would be left, so the first becomes ${DISCOVERY}=${cluster} and the cluster's ${what} are tagged` : ''}`,
    )
    if (emptied) commands.push(...tagFix(tagTargets, cluster, region, what).commands)
  }
  if (byTag.length > 0) {
    commands.push(
      `aws ec2 delete-tags --region ${region} --resources ${byTag.map((r) => r.id).join(' ')} --tags Key=${DISCOVERY}`,
    )
    steps.push(
      what === 'subnets'
        ? `remove the discovery tag from ${byId.length > 0 ? byTag.map((r) => r.id).join(', ') : 'the foreign subnets'} (or narrow the selector)`
        : `remove the discovery tag from ${byId.length > 0 ? byTag.map((r) => r.id).join(', ') : 'those security groups'}`,
    )
  }
  return { fix: { summary: steps.join('; then '), commands }, byId }
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
          fix: unmatchedFix(nc, 'subnetSelectorTerms', clusterSubnets, clusterName, region, 'subnets'),
        })
      } else {
        const outside = vpc ? subnets.filter((s) => s.vpcId !== vpc) : []
        const zones = new Set(subnets.filter((s) => !vpc || s.vpcId === vpc).map((s) => s.availabilityZone))
        if (outside.length > 0) {
          const { fix, byId } = foreignFix(
            nc,
            'subnetSelectorTerms',
            outside,
            'subnets',
            clusterSubnets,
            clusterName,
            region,
          )
          findings.push({
            status: 'fail',
            subject: outside.map((s) => s.id).join(','),
            message: `EC2NodeClass ${name} selects subnets outside the cluster VPC ${vpc}: ${outside.map((s) => `${s.id} (${s.vpcId})`).join(', ')}`,
            code: 'subnets-outside-vpc',
            evidence: {
              outside: outside.map((s) => ({ id: s.id, vpcId: s.vpcId })),
              vpc,
              ...(byId.length > 0 ? { selectedById: byId } : {}),
            },
            fix,
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
          fix: unmatchedFix(
            nc,
            'securityGroupSelectorTerms',
            // The cluster security group; where EKS names none (an older cluster), the groups the
            // cluster was created with: a command with ids, not a placeholder, whenever any is known.
            cluster?.clusterSecurityGroupId
              ? [cluster.clusterSecurityGroupId]
              : (cluster?.securityGroupIds ?? []),
            clusterName,
            region,
            'security-groups',
          ),
        })
      } else {
        const foreignSgs = vpc ? sgs.filter((g) => g.vpcId !== vpc) : []
        if (foreignSgs.length > 0) {
          const { fix, byId } = foreignFix(
            nc,
            'securityGroupSelectorTerms',
            foreignSgs,
            'security-groups',
            cluster?.clusterSecurityGroupId ? [cluster.clusterSecurityGroupId] : [],
            clusterName,
            region,
          )
          findings.push({
            status: 'fail',
            subject: foreignSgs.map((g) => g.id).join(','),
            message: `EC2NodeClass ${name} selects security groups of another VPC: ${foreignSgs.map((g) => `${g.id} (${g.vpcId})`).join(', ')}: RunInstances will fail`,
            code: 'security-groups-outside-vpc',
            evidence: {
              foreign: foreignSgs.map((g) => g.id),
              vpc,
              ...(byId.length > 0 ? { selectedById: byId } : {}),
            },
            fix,
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
