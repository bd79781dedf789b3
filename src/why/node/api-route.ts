// Whether a node in the EC2NodeClass's subnets can reach the cluster's API endpoint. A private endpoint
// (endpointPrivateAccess) is reached inside the VPC by its local route. A public-only endpoint is
// reached only by a route out: the subnet's default route to a NAT gateway, or to an internet gateway
// with a public address on the instance. Read from EKS's resourcesVpcConfig, doctor's subnets and the
// VPC's route tables (an explicit association, else the main table).
import { shellQuote } from '../../checks/lib/facts.js'
import type { EC2NodeClass, EksCluster, Read, Subnet } from '../../facts/types.js'
import type { RouteTable } from './types.js'
import type { JoinCause } from './verdict.js'

const SOURCE = 'api-route'

export interface RouteInputs {
  cluster: Read<EksCluster | null> | undefined
  nodeClass?: EC2NodeClass
  subnets: Read<Subnet[]> | undefined
  /** The NodeClaim's zone: only the subnets there could hold its instance. */
  zone?: string | undefined
  tables: Read<RouteTable[]> | undefined
}

const unknown = (message: string): JoinCause => ({ source: SOURCE, status: 'unknown', message })

/** The table that routes a subnet: its explicit association, else the VPC's main table. */
export const tableOf = (tables: RouteTable[], subnetId: string) =>
  tables.find((t) => t.subnetIds.includes(subnetId)) ?? tables.find((t) => t.main)

const privateFix = (c: EksCluster) => {
  const region = c.arn.split(':')[3]
  return {
    summary: `let nodes reach the API inside the VPC: turn on the private endpoint (or give the subnet a default route to a NAT gateway)`,
    commands: [
      `aws eks update-cluster-config${region ? ` --region ${region}` : ''} --name ${shellQuote(c.name)} --resources-vpc-config endpointPrivateAccess=true`,
    ],
  }
}

/** The public endpoint admits only some CIDRs: the address the node leaves by must be one of them. */
function cidrNote(c: EksCluster, subnet: string, via: string): JoinCause | undefined {
  const cidrs = c.publicAccessCidrs ?? []
  if (!cidrs.length || cidrs.includes('0.0.0.0/0')) return undefined
  return {
    source: SOURCE,
    status: 'warn',
    message: `subnet ${subnet} leaves by ${via}, and the public endpoint admits only ${cidrs.join(', ')} (publicAccessCidrs): the address it leaves by must be among them`,
    fix: privateFix(c),
  }
}

function judgeSubnet(c: EksCluster, s: Subnet, tables: RouteTable[], nc?: EC2NodeClass): JoinCause[] {
  const t = tableOf(tables, s.id)
  if (!t) return [unknown(`subnet ${s.id}: no route table of its VPC was read`)]
  const out = t.routes.find((r) => r.destination === '0.0.0.0/0')
  const where = `subnet ${s.id} (${s.availabilityZone}, route table ${t.id})`
  if (!out || out.state === 'blackhole')
    return [
      {
        source: SOURCE,
        status: 'fail',
        message: `${where} has ${out ? `a blackhole default route (to ${out.target})` : 'no default route (0.0.0.0/0)'} and the cluster's API endpoint is public only (endpointPrivateAccess false): a node there cannot reach it`,
        fix: privateFix(c),
      },
    ]
  if (out.target.startsWith('nat-')) {
    const note = cidrNote(c, s.id, `NAT gateway ${out.target}`)
    return note ? [note] : []
  }
  if (out.target.startsWith('igw-')) {
    const publicIp = nc?.spec.associatePublicIPAddress ?? s.mapPublicIpOnLaunch
    if (!publicIp)
      return [
        {
          source: SOURCE,
          status: 'fail',
          message: `${where} routes out by internet gateway ${out.target}, but its instances get no public address (${nc?.spec.associatePublicIPAddress === false ? 'associatePublicIPAddress false' : 'MapPublicIpOnLaunch false, associatePublicIPAddress unset'}): a node there cannot reach the public-only API endpoint`,
          fix: privateFix(c),
        },
      ]
    const note = cidrNote(c, s.id, `internet gateway ${out.target}`)
    return note ? [note] : []
  }
  return [
    {
      source: SOURCE,
      status: 'info',
      message: `${where} routes out by ${out.target}: whether that reaches the public API endpoint is beyond what karpctl reads`,
    },
  ]
}

export function apiRouteCauses(i: RouteInputs): JoinCause[] {
  if (!i.cluster) return [unknown("the EKS cluster was not read (doctor's facts were not collected)")]
  if (!i.cluster.ok) return [unknown(`the EKS cluster could not be read (${i.cluster.error.message})`)]
  const c = i.cluster.value
  if (!c) return [unknown('EKS has no such cluster')]
  if (c.endpointPrivateAccess === undefined && c.endpointPublicAccess === undefined)
    return [unknown("EKS's answer does not say how the API endpoint is reached (resourcesVpcConfig)")]
  if (c.endpointPrivateAccess)
    return [
      {
        source: SOURCE,
        status: 'pass',
        message: `the API endpoint is private (endpointPrivateAccess): nodes reach it inside the VPC by its local route (its name resolves there only with the VPC's DNS support and hostnames on)`,
      },
    ]
  if (!i.subnets) return [unknown("the EC2NodeClass's subnets were not read")]
  if (!i.subnets.ok)
    return [unknown(`the EC2NodeClass's subnets could not be read (${i.subnets.error.message})`)]
  if (!i.tables) return [unknown('the route tables were not read')]
  if (!i.tables.ok)
    return [
      unknown(
        `the route tables could not be read (${i.tables.error.message}); it needs ec2:DescribeRouteTables`,
      ),
    ]
  const inZone = i.subnets.value.filter((s) => s.availabilityZone === i.zone)
  const subnets = inZone.length ? inZone : i.subnets.value
  if (!subnets.length) return [unknown("the EC2NodeClass's selectors match no subnet")]
  const tables = i.tables.value
  const found = subnets.flatMap((s) => judgeSubnet(c, s, tables, i.nodeClass))
  return found.length
    ? found
    : [
        {
          source: SOURCE,
          status: 'pass',
          message: `the API endpoint is public only; subnet${subnets.length > 1 ? 's' : ''} ${subnets.map((s) => s.id).join(', ')} route out to reach it`,
        },
      ]
}
