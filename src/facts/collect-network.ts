// EC2 facts: the subnets and security groups each EC2NodeClass selector resolves to, with rules, and
// the security groups of the instances the controller runs on.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Aws } from '../context/aws.js'
import type {
  ControllerNode,
  KubeNode,
  Pod,
  SecurityGroup,
  SelectorTerm,
  SgPermission,
  Subnet,
} from './types.js'

const tagsOf = (tags: ec2.Tag[] | undefined) =>
  Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']))

/**
 * EC2 filters for one selector term: terms are ORed by Karpenter, the keys within a term ANDed. An `id`
 * term is a filter too (`subnet-id` / `group-id`), as Karpenter v1.14.1 asks (providers/subnet,
 * providers/securitygroup getFilters): an id that does not exist then matches nothing, which is what
 * Karpenter reports (`SecurityGroupsNotFound`), where `GroupIds`/`SubnetIds` fail the whole read
 * (InvalidGroup.NotFound) and doctor could only say unknown.
 */
function filtersFor(term: SelectorTerm, fields: { id: string; name: string }): ec2.Filter[] {
  if (term.id) return [{ Name: fields.id, Values: [term.id] }]
  const filters: ec2.Filter[] = Object.entries(term.tags ?? {}).map(([k, v]) =>
    v === '*' ? { Name: 'tag-key', Values: [k] } : { Name: `tag:${k}`, Values: [v] },
  )
  if (term.name) filters.push({ Name: fields.name, Values: [term.name] })
  return filters
}

async function describeSubnets(aws: Aws, term: SelectorTerm): Promise<Subnet[]> {
  const out = await aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', {
    Filters: filtersFor(term, { id: 'subnet-id', name: 'tag:Name' }),
  })
  return (out.Subnets ?? []).map((s) => ({
    id: s.SubnetId ?? '',
    vpcId: s.VpcId ?? '',
    availabilityZone: s.AvailabilityZone ?? '',
    cidr: s.CidrBlock,
    availableIps: s.AvailableIpAddressCount,
    ...(s.MapPublicIpOnLaunch !== undefined ? { mapPublicIpOnLaunch: s.MapPublicIpOnLaunch } : {}),
    tags: tagsOf(s.Tags),
  }))
}

export function toSecurityGroup(g: ec2.SecurityGroup): SecurityGroup {
  return {
    id: g.GroupId ?? '',
    name: g.GroupName ?? '',
    vpcId: g.VpcId ?? '',
    tags: tagsOf(g.Tags),
    ingress: (g.IpPermissions ?? []).map((p): SgPermission => ({
      protocol: p.IpProtocol ?? '-1',
      fromPort: p.FromPort,
      toPort: p.ToPort,
      cidrs: (p.IpRanges ?? []).map((r) => r.CidrIp ?? ''),
      sourceGroupIds: (p.UserIdGroupPairs ?? []).map((u) => u.GroupId ?? ''),
    })),
  }
}

async function describeSecurityGroups(aws: Aws, term: SelectorTerm): Promise<SecurityGroup[]> {
  const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', {
    Filters: filtersFor(term, { id: 'group-id', name: 'group-name' }),
  })
  return (out.SecurityGroups ?? []).map(toSecurityGroup)
}

const unique = <T extends { id: string }>(items: T[]) => [...new Map(items.map((i) => [i.id, i])).values()]

export async function subnetsFor(aws: Aws, terms: SelectorTerm[]): Promise<Subnet[]> {
  return unique((await Promise.all(terms.map((t) => describeSubnets(aws, t)))).flat())
}

export async function securityGroupsFor(aws: Aws, terms: SelectorTerm[]): Promise<SecurityGroup[]> {
  return unique((await Promise.all(terms.map((t) => describeSecurityGroups(aws, t)))).flat())
}

export async function securityGroupById(aws: Aws, id: string): Promise<SecurityGroup | null> {
  const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', {
    GroupIds: [id],
  })
  const g = out.SecurityGroups?.[0]
  return g ? toSecurityGroup(g) : null
}

/** The cluster's VPC, from the EKS answer or (emulators omit it) from its first subnet. */
export async function vpcOfSubnet(aws: Aws, subnetId: string): Promise<string | undefined> {
  const out = await aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', {
    SubnetIds: [subnetId],
  })
  return out.Subnets?.[0]?.VpcId
}

/** The instance id in an EC2 node's spec.providerID (`aws:///us-west-2a/i-0abc…`). */
export function instanceIdOf(providerID: string | undefined): string | undefined {
  return /^aws:\/\/\/[^/]*\/(i-[0-9a-f]+)$/.exec(providerID ?? '')?.[1]
}

/** EKS Fargate's nodes: their label, their `fargate-ip-…` names, a providerID naming Fargate. */
export const isFargate = (node: KubeNode) =>
  node.labels['eks.amazonaws.com/compute-type'] === 'fargate' ||
  node.name.startsWith('fargate-') ||
  /fargate/.test(node.providerID ?? '')

/** The groups on every network interface of each instance (the VPC CNI gives its ENIs the primary's). */
async function instanceGroups(aws: Aws, ids: string[]): Promise<Map<string, string[]>> {
  // A filter, not InstanceIds: an id that is gone then matches nothing instead of failing the whole read.
  const out = await aws.call<ec2.DescribeInstancesCommandOutput>('ec2', 'DescribeInstances', {
    Filters: [{ Name: 'instance-id', Values: ids }],
  })
  const groups = new Map<string, string[]>()
  for (const i of (out.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
    const onEnis = (i.NetworkInterfaces ?? []).flatMap((n) => n.Groups ?? [])
    const all = [...onEnis, ...(i.SecurityGroups ?? [])].map((g) => g.GroupId ?? '').filter(Boolean)
    groups.set(i.InstanceId ?? '', [...new Set(all)])
  }
  return groups
}

/**
 * The nodes the controller's pods run on, each with its instance's security groups and their rules.
 * Groups already read (the EC2NodeClasses', the cluster's: `known`) are not asked again.
 */
export async function controllerNodesOf(
  aws: Aws,
  w: { pods: Pod[]; nodes: KubeNode[]; known: () => Promise<SecurityGroup[]> },
): Promise<ControllerNode[]> {
  const names = [...new Set(w.pods.map((p) => p.nodeName ?? '').filter(Boolean))].sort()
  const found = names.map((name) => {
    const node = w.nodes.find((n) => n.name === name)
    const fargate = node ? isFargate(node) : name.startsWith('fargate-')
    return { name, fargate, instanceId: fargate ? undefined : instanceIdOf(node?.providerID) }
  })
  const ids = [...new Set(found.flatMap((n) => (n.instanceId ? [n.instanceId] : [])))].sort()
  if (ids.length === 0) return found.map((n) => withGroups(n, undefined, new Map()))
  const [groupsOf, known] = await Promise.all([instanceGroups(aws, ids), w.known()])
  const byId = new Map(known.map((g) => [g.id, g]))
  const missing = [...new Set([...groupsOf.values()].flat())].filter((id) => !byId.has(id)).sort()
  if (missing.length) {
    const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', {
      Filters: [{ Name: 'group-id', Values: missing }],
    })
    for (const g of out.SecurityGroups ?? []) byId.set(g.GroupId ?? '', toSecurityGroup(g))
  }
  return found.map((n) => withGroups(n, n.instanceId ? groupsOf.get(n.instanceId) : undefined, byId))
}

function withGroups(
  n: { name: string; fargate: boolean; instanceId?: string },
  groupIds: string[] | undefined,
  byId: Map<string, SecurityGroup>,
): ControllerNode {
  const base = { name: n.name, fargate: n.fargate, ...(n.instanceId ? { instanceId: n.instanceId } : {}) }
  if (n.fargate) return base
  if (!n.instanceId) return { ...base, unresolved: 'its spec.providerID names no EC2 instance' }
  if (!groupIds) return { ...base, unresolved: `instance ${n.instanceId} was not found` }
  const groups = groupIds.map((id) => byId.get(id))
  if (groups.some((g) => !g))
    return { ...base, unresolved: `a security group of ${n.instanceId} was not found` }
  return { ...base, securityGroups: groups as SecurityGroup[] }
}
