// The install use case: choices → spec → plan (diffed against the cluster) → preflight → apply →
// verify. The command only parses flags, asks and renders; everything that talks to AWS is here.
import type { RunContext } from '../context/run-context.js'
import { buildPlan } from '../plan/plan.js'
import type { ApplyEnv, Plan } from '../plan/types.js'
import type { InstallSpec } from '../desired/install.js'
import type { Discovery } from './discover.js'
import { installResources } from './resources.js'
import type { InstallChoices } from './wizard.js'

export function specOf(choices: InstallChoices, ctx: RunContext, d: Discovery): InstallSpec {
  return {
    ...choices,
    clusterName: ctx.options.clusterName,
    region: ctx.options.region,
    accountId: d.accountId,
    partition: d.partition,
    ...(d.existing
      ? {
          existing: {
            controllerRoleName: d.existing.controllerRoleName,
            controllerProblems: d.existing.controllerProblems,
            queueName: d.existing.queueName,
            ruleNames: d.existing.ruleNames,
            releaseValues: d.existing.release.values,
            summary: d.existing.summary,
          },
        }
      : {}),
  }
}

export async function planInstall(
  spec: InstallSpec,
  extraValues: Record<string, unknown>,
  env: ApplyEnv,
  d: Discovery,
): Promise<Plan> {
  const found = spec.existing ? `\nfound: ${spec.existing.summary}` : ''
  const title = `karpctl install — cluster ${spec.clusterName} (${spec.region}, account ${d.accountId}), Karpenter ${spec.karpenterVersion}, ${spec.identity === 'irsa' ? 'IRSA' : 'Pod Identity'}, nodes via ${spec.access === 'access-entry' ? 'access entry' : 'aws-auth'}${found}`
  return buildPlan(title, installResources(spec, extraValues), env)
}
