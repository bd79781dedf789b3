// The install use case: choices → spec → plan (diffed against the cluster) → preflight → apply →
// verify. The command only parses flags, asks and renders; everything that talks to AWS is here.
import { parse } from 'yaml'
import type { RunContext } from '../context/run-context.js'
import { InputError } from '../errors.js'
import { readTextFile } from '../lint/values.js'
import { buildPlan } from '../plan/plan.js'
import type { ApplyEnv, Plan } from '../plan/types.js'
import type { InstallSpec } from '../spec/install.js'
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

/**
 * A values file the user adds on top of karpctl's: a regular UTF-8 file of bounded size (a FIFO would
 * block the run, a 50 MB file is not values) holding a YAML map, or a clear error naming the file.
 */
export async function loadExtraValues(file: string | undefined): Promise<Record<string, unknown>> {
  if (!file) return {}
  return valuesOf(await readTextFile(file, 'values file', 'VALUES_FILE'), file)
}

/** For the wizard: the typed path is checked as it is typed, not after the last question. */
export async function valuesFileProblem(file: string): Promise<true | string> {
  if (!file.trim()) return true
  try {
    await loadExtraValues(file)
    return true
  } catch (err) {
    if (err instanceof InputError) return err.message
    throw err
  }
}

function valuesOf(text: string, file: string): Record<string, unknown> {
  let v: unknown
  try {
    v = parse(text, { version: '1.1', maxAliasCount: 100 })
  } catch (err) {
    throw new InputError(
      `values file ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
      'INVALID_VALUES',
    )
  }
  if (v === null || v === undefined) return {}
  if (typeof v !== 'object' || Array.isArray(v))
    throw new InputError(
      `values file ${file} must be a YAML map of Helm values, not a ${Array.isArray(v) ? 'list' : typeof v}`,
      'INVALID_VALUES',
    )
  return v as Record<string, unknown>
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
