// Which EKS clusters a fleet run covers: for each principal (a profile, the default chain, or a role
// assumed in each listed account), ListClusters in each region. A place that cannot be looked at is a
// gap in the report, never the end of the run.
import type * as ec2 from '@aws-sdk/client-ec2'
import type * as eks from '@aws-sdk/client-eks'
import type * as sts from '@aws-sdk/client-sts'
import type * as organizations from '@aws-sdk/client-organizations'
import { Aws } from '../context/aws.js'
import { CallLog, Limiter, Memo } from '../context/limiter.js'
import { KarpctlError } from '../errors.js'
import { failureOf } from '../facts/read.js'
import type { DiscoveryGap, FleetCluster, FleetScope, Principal } from './types.js'

const SESSION_NAME = 'karpctl-fleet-doctor'

/**
 * One Aws per principal and region, made on first use: its clients, its bound (AWS throttles per
 * account and region) and its memo are shared by every cluster there, so a read two clusters need
 * (the account's OIDC providers, a shared node role) is made once.
 */
export class FleetAws {
  private readonly byKey = new Map<string, Aws>()
  /** Every call of the run, discovery and clusters (each cluster also keeps its own log). */
  readonly log = new CallLog()

  constructor(
    private readonly scope: Pick<FleetScope, 'endpoint' | 'requestTimeoutMs'>,
    private readonly concurrency = 16,
  ) {}

  for(principal: Pick<Principal, 'profile' | 'credentials' | 'accountId'>, region: string): Aws {
    const key = `${principal.profile ?? ''}|${principal.credentials?.accessKeyId ?? ''}|${principal.accountId}|${region}`
    let aws = this.byKey.get(key)
    if (!aws) {
      aws = new Aws(
        {
          region,
          profile: principal.profile,
          credentials: principal.credentials,
          endpoint: this.scope.endpoint,
          requestTimeoutMs: this.scope.requestTimeoutMs,
        },
        new Limiter(this.concurrency),
        new Memo(),
        this.log,
      )
      this.byKey.set(key, aws)
    }
    return aws
  }

  destroy(): void {
    for (const aws of this.byKey.values()) aws.destroy()
  }
}

export interface Discovery {
  principals: Principal[]
  clusters: FleetCluster[]
  gaps: DiscoveryGap[]
}

const reasonOf = (err: unknown, read: string) => {
  // karpctl's own errors (credentials that cannot be loaded, an endpoint that never answered) say it all.
  if (err instanceof KarpctlError) return err.message
  const f = failureOf(err, read)
  return `${f.code}: ${f.message}`
}

/** Lists every cluster the scope covers. `home` is the region STS and EC2 are asked in. */
export async function discover(scope: FleetScope, home: string, fleet: FleetAws): Promise<Discovery> {
  const gaps: DiscoveryGap[] = []
  const bases: { profile?: string }[] = scope.profiles.length
    ? scope.profiles.map((profile) => ({ profile }))
    : [{}]
  const principals: Principal[] = []
  for (const base of bases) {
    const label = base.profile ? `profile ${base.profile}` : 'default credentials'
    const who = await fleet
      .for({ ...base, accountId: '' }, home)
      .call<sts.GetCallerIdentityCommandOutput>('sts', 'GetCallerIdentity')
      .catch((err: unknown) => {
        gaps.push({ where: label, reason: reasonOf(err, 'sts:GetCallerIdentity') })
        return null
      })
    if (!who) continue
    const self: Principal = { label, ...base, accountId: who.Account ?? '', arn: who.Arn ?? '' }
    const accounts = scope.organization ? await organizationAccounts(fleet, self, home, gaps) : scope.accounts
    if (!scope.roleName || accounts.length === 0) {
      // An organization that could not be listed leaves the caller's own account, still worth doctoring.
      principals.push(self)
      continue
    }
    const partition = self.arn.split(':')[1] || 'aws'
    const assumed = await Promise.all(
      accounts.map((account) =>
        account === self.accountId
          ? self
          : assume(
              fleet,
              self,
              home,
              `arn:${partition}:iam::${account}:role/${scope.roleName}`,
              account,
              gaps,
            ),
      ),
    )
    principals.push(...assumed.filter((p): p is Principal => p !== null))
  }
  const perPrincipal = await Promise.all(
    principals.map(async (p) => {
      const regions = scope.regions === 'all' ? await allRegions(fleet, p, home, gaps) : scope.regions
      const lists = await Promise.all(regions.map((r) => clustersIn(fleet, p, r, gaps)))
      return lists.flat()
    }),
  )
  // A cluster seen through two profiles of the same account is one cluster: judged once.
  const seen = new Set<string>()
  const clusters = perPrincipal.flat().filter((c) => !seen.has(c.arn) && seen.add(c.arn))
  return { principals, clusters, gaps }
}

/**
 * Every active account of the caller's organization (organizations:ListAccounts, every page): asked of
 * the management account or a delegated administrator. A failure is a gap, never the end of the run.
 */
async function organizationAccounts(
  fleet: FleetAws,
  self: Principal,
  home: string,
  gaps: DiscoveryGap[],
): Promise<string[]> {
  try {
    const accounts = await fleet
      .for(self, home)
      .all<organizations.ListAccountsResponse, organizations.Account>(
        'organizations',
        'ListAccounts',
        {},
        'NextToken',
        (o) => ({ items: o.Accounts, next: o.NextToken }),
      )
    // `State` replaced `Status` (deprecated in 2025); either says ACTIVE for an account in use.
    return accounts.filter((a) => a.Id && (a.State ?? a.Status) === 'ACTIVE').map((a) => a.Id as string)
  } catch (err) {
    gaps.push({
      where: `organization of ${self.label}`,
      reason: `cannot list the organization's accounts (${reasonOf(err, 'organizations:ListAccounts')}): run from the management account or a delegated administrator, or name the accounts with --accounts`,
    })
    return []
  }
}

async function assume(
  fleet: FleetAws,
  self: Principal,
  home: string,
  roleArn: string,
  account: string,
  gaps: DiscoveryGap[],
): Promise<Principal | null> {
  try {
    const out = await fleet.for(self, home).call<sts.AssumeRoleCommandOutput>('sts', 'AssumeRole', {
      RoleArn: roleArn,
      RoleSessionName: SESSION_NAME,
    })
    const c = out.Credentials
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error('AssumeRole returned no credentials')
    return {
      label: `${roleArn} (from ${self.label})`,
      credentials: {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
      },
      accountId: account,
      arn: out.AssumedRoleUser?.Arn ?? roleArn,
    }
  } catch (err) {
    gaps.push({
      where: `account ${account}`,
      reason: `cannot assume ${roleArn} as ${self.arn} (${reasonOf(err, 'sts:AssumeRole')}): create the role there with a trust policy that allows ${self.arn}, or leave the account out of --accounts`,
    })
    return null
  }
}

async function allRegions(
  fleet: FleetAws,
  p: Principal,
  home: string,
  gaps: DiscoveryGap[],
): Promise<string[]> {
  try {
    const out = await fleet.for(p, home).call<ec2.DescribeRegionsCommandOutput>('ec2', 'DescribeRegions', {})
    return (out.Regions ?? []).flatMap((r) => (r.RegionName ? [r.RegionName] : [])).sort()
  } catch (err) {
    gaps.push({
      where: `account ${p.accountId}`,
      reason: `cannot list its regions (${reasonOf(err, 'ec2:DescribeRegions')}): pass --regions, or allow ec2:DescribeRegions`,
    })
    return []
  }
}

async function clustersIn(fleet: FleetAws, p: Principal, region: string, gaps: DiscoveryGap[]) {
  try {
    const names = await fleet
      .for(p, region)
      .all<eks.ListClustersCommandOutput, string>('eks', 'ListClusters', {}, 'nextToken', (out) => ({
        items: out.clusters,
        next: out.nextToken,
      }))
    const partition = p.arn.split(':')[1] || 'aws'
    return names.map((name): FleetCluster => ({
      name,
      region,
      accountId: p.accountId,
      arn: `arn:${partition}:eks:${region}:${p.accountId}:cluster/${name}`,
      principal: p,
    }))
  } catch (err) {
    gaps.push({
      where: `account ${p.accountId} ${region}`,
      reason: `cannot list its EKS clusters as ${p.arn} (${reasonOf(err, 'eks:ListClusters')}): allow eks:ListClusters there`,
    })
    return []
  }
}
