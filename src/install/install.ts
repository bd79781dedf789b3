// The install use case: choices → spec → plan (diffed against the cluster) → preflight → apply →
// verify. The command only parses flags, asks and renders; everything that talks to AWS is here.
import { parse } from 'yaml'
import { readFile } from 'node:fs/promises'
import type { RunContext } from '../context/run-context.js'
import { findHelm, type Helm } from '../context/helm.js'
import { InputError } from '../errors.js'
import { buildPlan } from '../plan/plan.js'
import { changing, type ApplyEnv, type Plan } from '../plan/types.js'
import { ownershipTags, type InstallSpec } from '../spec/install.js'
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

/** A values file the user adds on top of karpctl's: a YAML map, or a clear error naming the file. */
export async function loadExtraValues(file: string | undefined): Promise<Record<string, unknown>> {
  if (!file) return {}
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new InputError(
      `cannot read values file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      'INVALID_VALUES',
    )
  }
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

export function applyEnv(
  ctx: RunContext,
  spec: Pick<InstallSpec, 'clusterName'>,
  helmBin?: string,
): ApplyEnv {
  let helm: Promise<Helm> | undefined
  return {
    aws: ctx.aws,
    kube: ctx.kube,
    helm: () => (helm ??= findHelm({ bin: helmBin, kubeContext: ctx.options.kubeContext, log: ctx.log })),
    ownershipTags: ownershipTags(spec.clusterName),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: ctx.clock,
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

/** Fails before any change when a step needs helm and helm is missing or too old. */
export async function requireTools(plan: Plan, env: ApplyEnv): Promise<void> {
  if (plan.steps.some((s) => changing(s) && s.resource.address.startsWith('helm.'))) await env.helm()
}
