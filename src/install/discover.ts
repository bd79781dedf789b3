// What install needs to know about the cluster before it asks anything: who we are, the cluster
// (active? OIDC issuer, authentication mode, subnets, security groups), the Pod Identity agent, the
// managed node groups' roles, and a cluster-autoscaler that would fight Karpenter.
import type * as ec2 from '@aws-sdk/client-ec2'
import type * as sts from '@aws-sdk/client-sts'
import type { RunContext } from '../context/run-context.js'
import { answerOf, EnvironmentError, KarpctlError } from '../errors.js'
import { addons, describeCluster, listClusters, nodegroups } from '../facts/collect-eks.js'
import { failureOf } from '../facts/read.js'
import type { EksCluster } from '../facts/types.js'
import { findRelease } from '../facts/collect-kube.js'
import { roleName } from '../desired/names.js'
import { currentSettings, type CurrentSettings } from './current.js'
import { findExisting, type ExistingInstall } from './existing.js'
import { findClusterAutoscalers, type AutoscalerDeployment } from '../facts/cluster-autoscalers.js'

export interface Discovery {
  accountId: string
  partition: string
  callerArn: string
  cluster: EksCluster
  podIdentityAgent: boolean | 'unknown'
  accessEntriesAllowed: boolean
  privateSubnetIds: string[]
  /** Roles of the managed node groups (they already join the cluster). */
  nodegroupRoles: { nodegroup: string; roleArn: string }[]
  clusterAutoscalers: AutoscalerDeployment[]
  /** A Karpenter install another tool made, running in the cluster (null: none, or karpctl's). */
  existing?: ExistingInstall | null
  /** What the running install (anyone's) is set to: the defaults of this run. */
  current?: CurrentSettings | null
}

async function identity(ctx: RunContext) {
  try {
    const out = await ctx.aws.call<sts.GetCallerIdentityCommandOutput>('sts', 'GetCallerIdentity')
    return {
      accountId: out.Account ?? '',
      partition: (out.Arn ?? '').split(':')[1] || 'aws',
      arn: out.Arn ?? '',
    }
  } catch (err) {
    if (err instanceof KarpctlError) throw err
    // It answered, but not as STS: the line says what came (not "cannot reach").
    const answer = answerOf(err)
    if (answer) throw new EnvironmentError(answer.line, answer.code)
    const f = failureOf(err, 'sts:GetCallerIdentity')
    throw new EnvironmentError(
      `cannot reach AWS STS in ${ctx.options.region} (${f.code}: ${f.message}): check the network, --region and AWS_ENDPOINT_URL`,
      'AWS_UNREACHABLE',
    )
  }
}

export async function requireActiveCluster(ctx: RunContext): Promise<EksCluster> {
  const name = ctx.options.clusterName
  const cluster = await describeCluster(ctx.aws, name)
  if (!cluster) {
    const others = await listClusters(ctx.aws).catch(() => [] as string[])
    throw new EnvironmentError(
      `EKS cluster "${name}" not found in ${ctx.options.region}: check --cluster and --region` +
        (others.length ? ` (clusters there: ${others.join(', ')})` : ' (no clusters there)'),
      'CLUSTER_NOT_FOUND',
    )
  }
  if (cluster.status && cluster.status !== 'ACTIVE')
    throw new EnvironmentError(
      `EKS cluster "${name}" is ${cluster.status}, not ACTIVE: wait until \`aws eks describe-cluster --name ${name}\` says ACTIVE, then run again`,
      'CLUSTER_NOT_ACTIVE',
    )
  return cluster
}

async function privateSubnets(ctx: RunContext, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return []
  const out = await ctx.aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', {
    SubnetIds: ids,
  })
  // Private: tagged for internal load balancers, or giving no public IP on launch.
  return (out.Subnets ?? [])
    .filter(
      (s) =>
        (s.Tags ?? []).some((t) => t.Key === 'kubernetes.io/role/internal-elb') ||
        s.MapPublicIpOnLaunch !== true,
    )
    .map((s) => s.SubnetId ?? '')
    .filter(Boolean)
}

async function nodegroupRoles(ctx: RunContext, cluster: string) {
  try {
    return (await nodegroups(ctx.aws, cluster)).flatMap((g) =>
      g.nodeRole ? [{ nodegroup: g.name, roleArn: g.nodeRole }] : [],
    )
  } catch (err) {
    if (err instanceof KarpctlError) throw err
    return []
  }
}

async function currentOf(ctx: RunContext): Promise<CurrentSettings | null> {
  const release = await findRelease(ctx.kube)
  if (!release) return null
  return currentSettings(ctx.kube, release, roleName(`KarpenterNodeRole-${ctx.options.clusterName}`))
}

export async function discover(ctx: RunContext): Promise<Discovery> {
  const name = ctx.options.clusterName
  const [who, cluster] = await Promise.all([identity(ctx), requireActiveCluster(ctx)])
  const [addonList, subnets, roles, autoscalers] = await Promise.all([
    addons(ctx.aws, name).then(
      (a) => a,
      (err) => {
        if (err instanceof KarpctlError) throw err
        return null
      },
    ),
    privateSubnets(ctx, cluster.subnetIds),
    nodegroupRoles(ctx, name),
    findClusterAutoscalers(ctx.kube).catch((err: unknown) => {
      if (err instanceof KarpctlError) throw err
      return [] as AutoscalerDeployment[]
    }),
  ])
  // Only when a release runs that karpctl did not install: doctor's collectors then name what it uses.
  const existing = await findExisting(ctx).catch((err: unknown) => {
    if (err instanceof KarpctlError) throw err
    return null
  })
  const current = await currentOf(ctx).catch((err: unknown) => {
    if (err instanceof KarpctlError) throw err
    return null
  })
  const mode = cluster.authenticationMode
  return {
    accountId: who.accountId,
    partition: who.partition,
    callerArn: who.arn,
    cluster,
    podIdentityAgent: addonList === null ? 'unknown' : addonList.includes('eks-pod-identity-agent'),
    accessEntriesAllowed: mode === 'API' || mode === 'API_AND_CONFIG_MAP',
    privateSubnetIds: subnets,
    nodegroupRoles: roles,
    clusterAutoscalers: autoscalers.filter((a) => a.replicas > 0),
    existing,
    current,
  }
}
