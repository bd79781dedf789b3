import type * as eks from '@aws-sdk/client-eks'
import type { Aws } from '../context/aws.js'
import { isNotFound } from '../context/aws.js'
import type { AccessEntry, EksCluster, Nodegroup, PodIdentityAssociation } from './types.js'

/** The endpoint's reach, only the fields EKS answered (older snapshots and emulators may lack them). */
const endpointAccess = (v: eks.VpcConfigResponse | undefined) => ({
  ...(v?.endpointPublicAccess !== undefined ? { endpointPublicAccess: v.endpointPublicAccess } : {}),
  ...(v?.endpointPrivateAccess !== undefined ? { endpointPrivateAccess: v.endpointPrivateAccess } : {}),
  ...(v?.publicAccessCidrs ? { publicAccessCidrs: v.publicAccessCidrs } : {}),
})

export async function describeCluster(aws: Aws, name: string): Promise<EksCluster | null> {
  try {
    const out = await aws.call<eks.DescribeClusterCommandOutput>('eks', 'DescribeCluster', { name })
    const c = out.cluster
    if (!c) return null
    return {
      name: c.name ?? name,
      arn: c.arn ?? '',
      version: c.version ?? '',
      endpoint: c.endpoint,
      status: c.status,
      oidcIssuer: c.identity?.oidc?.issuer,
      vpcId: c.resourcesVpcConfig?.vpcId,
      subnetIds: c.resourcesVpcConfig?.subnetIds ?? [],
      securityGroupIds: c.resourcesVpcConfig?.securityGroupIds ?? [],
      clusterSecurityGroupId: c.resourcesVpcConfig?.clusterSecurityGroupId,
      ...endpointAccess(c.resourcesVpcConfig),
      authenticationMode: c.accessConfig?.authenticationMode,
      tags: c.tags ?? {},
    }
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

export async function listClusters(aws: Aws): Promise<string[]> {
  const out = await aws.call<eks.ListClustersCommandOutput>('eks', 'ListClusters', {})
  return out.clusters ?? []
}

/** Access entries, described only for the principals doctor cares about (node roles). */
export async function accessEntries(
  aws: Aws,
  cluster: string,
  principals: () => Promise<string[]>,
): Promise<AccessEntry[]> {
  const arns = await aws.all<eks.ListAccessEntriesCommandOutput, string>(
    'eks',
    'ListAccessEntries',
    { clusterName: cluster },
    'nextToken',
    (out) => ({ items: out.accessEntries, next: out.nextToken }),
  )
  const wanted = new Set(await principals())
  return Promise.all(
    arns.map(async (arn): Promise<AccessEntry> => {
      if (!wanted.has(arn)) return { principalArn: arn, kubernetesGroups: [] }
      const out = await aws.call<eks.DescribeAccessEntryCommandOutput>('eks', 'DescribeAccessEntry', {
        clusterName: cluster,
        principalArn: arn,
      })
      const e = out.accessEntry
      return {
        principalArn: arn,
        type: e?.type,
        kubernetesGroups: e?.kubernetesGroups ?? [],
        username: e?.username,
      }
    }),
  )
}

export async function podIdentityAssociations(aws: Aws, cluster: string): Promise<PodIdentityAssociation[]> {
  const out = await aws.call<eks.ListPodIdentityAssociationsCommandOutput>(
    'eks',
    'ListPodIdentityAssociations',
    {
      clusterName: cluster,
    },
  )
  return Promise.all(
    (out.associations ?? []).map(async (a) => {
      const d = await aws.call<eks.DescribePodIdentityAssociationCommandOutput>(
        'eks',
        'DescribePodIdentityAssociation',
        {
          clusterName: cluster,
          associationId: a.associationId,
        },
      )
      return {
        associationId: a.associationId ?? '',
        namespace: a.namespace ?? '',
        serviceAccount: a.serviceAccount ?? '',
        roleArn: d.association?.roleArn,
      }
    }),
  )
}

export async function addons(aws: Aws, cluster: string): Promise<string[]> {
  const out = await aws.call<eks.ListAddonsCommandOutput>('eks', 'ListAddons', { clusterName: cluster })
  return out.addons ?? []
}

/** The managed node groups with their role and Auto Scaling groups (install and doctor both read them). */
export async function nodegroups(aws: Aws, cluster: string): Promise<Nodegroup[]> {
  const names = await aws.all<eks.ListNodegroupsCommandOutput, string>(
    'eks',
    'ListNodegroups',
    { clusterName: cluster },
    'nextToken',
    (out) => ({ items: out.nodegroups, next: out.nextToken }),
  )
  return Promise.all(
    names.map(async (name): Promise<Nodegroup> => {
      const out = await aws.call<eks.DescribeNodegroupCommandOutput>('eks', 'DescribeNodegroup', {
        clusterName: cluster,
        nodegroupName: name,
      })
      const ng = out.nodegroup
      return {
        name: ng?.nodegroupName ?? name,
        ...(ng?.nodeRole ? { nodeRole: ng.nodeRole } : {}),
        ...(ng?.scalingConfig?.maxSize !== undefined ? { maxSize: ng.scalingConfig.maxSize } : {}),
        autoScalingGroups: (ng?.resources?.autoScalingGroups ?? []).flatMap((g) => (g.name ? [g.name] : [])),
      }
    }),
  )
}
