// What the three tenant commands share: a live run context, the install's facts (doctor's collectors),
// and the session that applies a plan.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Aws } from '../context/aws.js'
import { createRunContext, type RunContext, type RunOptions } from '../context/run-context.js'
import { kubeTarget } from '../context/kube-target.js'
import { collect } from '../facts/collect.js'
import type { Facts } from '../facts/types.js'
import type { InstallFacts } from '../desired/tenant.js'
import { installOf } from './tenant.js'

export interface TenantContext {
  ctx: RunContext
  facts: Facts
  install: InstallFacts
  callerArn: string
}

/** `changes`: the command writes, so the kube context is proven to be the cluster's before any read. */
export async function tenantContext(options: RunOptions, changes = false): Promise<TenantContext> {
  const ctx = await createRunContext({ ...options, retryMode: 'adaptive' })
  try {
    if (changes) await kubeTarget(ctx, options.clusterName)
    const facts = await collect(ctx)
    // Memoized: collect already asked, so this costs no call.
    const who = await ctx.aws.call<{ Arn?: string }>('sts', 'GetCallerIdentity')
    return { ctx, facts, install: installOf(facts), callerArn: who.Arn ?? '' }
  } catch (err) {
    ctx.aws.destroy()
    throw err
  }
}

/**
 * The region's zones by name (Local and Wavelength Zones too, opted in or not: a NodePool may name
 * them), or undefined when AWS does not say (denied): the caller then checks the zones' shape only.
 */
export async function regionZones(aws: Aws): Promise<string[] | undefined> {
  try {
    const out = await aws.call<ec2.DescribeAvailabilityZonesCommandOutput>(
      'ec2',
      'DescribeAvailabilityZones',
      {
        AllAvailabilityZones: true,
      },
    )
    const names = (out.AvailabilityZones ?? []).map((z) => z.ZoneName ?? '').filter(Boolean)
    return names.length ? names : undefined
  } catch {
    return undefined
  }
}
