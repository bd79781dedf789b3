// EC2 facts: the subnets and security groups each EC2NodeClass selector resolves to, with rules.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Aws } from '../context/aws.js'
import type { SecurityGroup, SelectorTerm, SgPermission, Subnet } from './types.js'

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
