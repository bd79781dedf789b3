// The clients a plan's resources use, from the run context: one per run, so reads stay memoized
// across resources and helm is looked for only when a step needs it.
import type { RunContext } from '../context/run-context.js'
import { findHelm, type Helm } from '../context/helm.js'
import { interrupt } from '../context/interrupt.js'
import { kubeTarget } from '../context/kube-target.js'
import { redactClip } from '../redact/redact.js'
import { ownershipTags } from '../desired/install.js'
import { lockNamespace, takeLock, thisRun } from './lock.js'
import { changing, type ApplyEnv, type Plan } from './types.js'

/**
 * Fails before any change when the kube context is not the EKS cluster's (see kube-target.ts): every
 * command that changes a cluster builds its env here, so none can write to the wrong one.
 */
export async function applyEnv(
  ctx: RunContext,
  spec: { clusterName: string },
  helmBin?: string,
): Promise<ApplyEnv> {
  const target = await kubeTarget(ctx, spec.clusterName)
  let helm: Promise<Helm> | undefined
  // helm is given the context judged above, never "the current one": a `kubectl config use-context`
  // in another terminal during the run must not move the release.
  const kubeContext = target.context
  return {
    aws: ctx.aws,
    kube: ctx.kube,
    kubeTarget: target,
    helm: () => (helm ??= findHelm({ bin: helmBin, kubeContext, cluster: ctx.kube.server, log: ctx.log })),
    ownershipTags: ownershipTags(spec.clusterName),
    // Cut short by Ctrl-C: a step waiting for nodes to drain must not hold the stop for minutes.
    sleep: (ms) => interrupt.sleep(ms),
    now: ctx.clock,
    ...(ctx.forget ? { forget: ctx.forget } : {}),
    lock: async ({ wait, say }) =>
      takeLock(ctx.kube, {
        namespace: await lockNamespace(ctx.kube),
        holder: thisRun(commandLine(), ctx.clock()),
        wait,
        now: ctx.clock,
        sleep: (ms) => interrupt.sleep(ms),
        say,
      }),
  }
}

/** The command as the lock shows it to another run: redacted, one line, bounded. */
function commandLine(): string {
  return `karpctl ${redactClip(process.argv.slice(2).join(' '), 160)}`.replace(/[\r\n]+/g, ' ')
}

/** Fails before any change when a step needs helm and helm is missing or too old. */
export async function requireTools(plan: Plan, env: ApplyEnv): Promise<void> {
  if (plan.steps.some((s) => changing(s) && s.resource.address.startsWith('helm.'))) await env.helm()
}
