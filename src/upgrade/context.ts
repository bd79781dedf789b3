// What an upgrade reads before it plans: a live run context whose kube context is proven to be the
// cluster's (the upgrade writes there), and the install as doctor's collectors see it — any tool's.
import { createRunContext, type RunContext, type RunOptions } from '../context/run-context.js'
import { kubeTarget } from '../context/kube-target.js'
import { collect } from '../facts/collect.js'
import type { Facts } from '../facts/types.js'

export interface UpgradeContext {
  ctx: RunContext
  facts: Facts
  callerArn: string
}

export async function upgradeContext(options: RunOptions): Promise<UpgradeContext> {
  const ctx = await createRunContext({ ...options, retryMode: 'adaptive' })
  try {
    await kubeTarget(ctx, options.clusterName)
    const facts = await collect(ctx)
    // Memoized: collect already asked, so this costs no call.
    const who = await ctx.aws.call<{ Arn?: string }>('sts', 'GetCallerIdentity')
    return { ctx, facts, callerArn: who.Arn ?? '' }
  } catch (err) {
    ctx.aws.destroy()
    throw err
  }
}
