// An install karpctl did not make (the getting-started stack + Helm, Terraform, eksctl), found with
// doctor's collectors so install plans against it: the controller role, queue and rules it runs with
// are used by their real names, never created a second time beside them, and the release's own values
// stay the base of karpctl's.
import { controllerPolicy } from '../checks/controller-policy.js'
import { irsaTrustPolicy } from '../checks/irsa-trust-policy.js'
import { podIdentity } from '../checks/pod-identity.js'
import { runChecks } from '../checks/run.js'
import type { RunContext } from '../context/run-context.js'
import { collect } from '../facts/collect.js'
import { anyKarpenterDeployment, findRelease, releaseNamed } from '../facts/collect-kube.js'
import { appliedByWords, renderedBy } from '../facts/rendered-install.js'
import { EnvironmentError } from '../errors.js'
import type { Facts, HelmRelease } from '../facts/types.js'
import { interruptionRules } from '../desired/interruption.js'
import { OWNERSHIP } from '../desired/ownership.js'
import { sameDocument } from '../plan/compare.js'

export interface ExistingInstall {
  release: HelmRelease
  identity: 'irsa' | 'pod-identity'
  serviceAccount: string
  controllerRoleName: string
  /** Why the controller role cannot be used as it is (failing checks); empty when it can. */
  controllerProblems: string[]
  queueName?: string
  /** Rule key (SpotInterruptionRule …) → the name of the rule that already delivers it to the queue. */
  ruleNames: Record<string, string>
  /** What the plan's first lines say was found. */
  summary: string
}

/** The running Karpenter when another tool installed it; null when there is none or it is karpctl's. */
export async function findExisting(ctx: RunContext): Promise<ExistingInstall | null> {
  const any = await findRelease(ctx.kube)
  if (!any) {
    await refuseRendered(ctx)
    return null
  }
  const named = await releaseNamed(ctx.kube, any.namespace, any.name)
  if (named?.labels[OWNERSHIP.managedBy] === 'karpctl') return null
  return existingFrom(await collect(ctx))
}

/**
 * A controller that runs with no Helm release (Argo CD, Flux, `helm template | kubectl apply`): a Helm
 * install beside it would be a second Karpenter fighting the first over every NodeClaim, and Helm
 * cannot take the objects over (it refuses objects it did not create). Stop, and say what runs.
 */
async function refuseRendered(ctx: RunContext): Promise<void> {
  const d = await anyKarpenterDeployment(ctx.kube)
  if (!d) return
  throw new EnvironmentError(
    `Karpenter already runs in cluster ${ctx.options.clusterName} as Deployment ${d.metadata.namespace}/${d.metadata.name} with no Helm release (${appliedByWords(renderedBy(d))}): installing would start a second controller beside it; manage it where it is applied, and check it with \`karpctl doctor\``,
    'INSTALLED_BY_OTHER_TOOL',
  )
}

export function existingFrom(facts: Facts): ExistingInstall | null {
  const release = facts.kube.release.ok ? facts.kube.release.value : null
  const roleName = facts.iam.controllerRoleName
  if (!release || !roleName || facts.iam.controllerIdentity === 'none') return null
  const identity = facts.iam.controllerIdentity
  const checks = [controllerPolicy, identity === 'irsa' ? irsaTrustPolicy : podIdentity]
  const controllerProblems = runChecks(checks, facts).flatMap((r) =>
    r.findings.filter((f) => f.status === 'fail').map((f) => `${r.meta.id}: ${f.message}`),
  )
  const queue = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const rules = facts.events.rules.ok ? facts.events.rules.value : []
  const ruleNames: Record<string, string> = {}
  if (queue)
    for (const want of interruptionRules(facts.meta.clusterName)) {
      const found = rules.find(
        (r) => r.targetArns.includes(queue.arn) && sameDocument(r.eventPattern, want.eventPattern),
      )
      if (found) ruleNames[want.key] = found.name
    }
  const sa = facts.kube.serviceAccount.ok ? facts.kube.serviceAccount.value : null
  const serviceAccount =
    sa?.metadata.name ?? (release.values.serviceAccount as { name?: string } | undefined)?.name ?? 'karpenter'
  const summary = [
    `Karpenter ${release.chartVersion} from Helm release ${release.namespace}/${release.name} (not karpctl's)`,
    `controller role ${roleName} (${identity === 'irsa' ? 'IRSA' : 'Pod Identity'})`,
    queue
      ? `queue ${queue.name}, ${Object.keys(ruleNames).length} of 5 rules delivering to it`
      : 'no interruption queue',
  ].join('; ')
  return {
    release,
    identity,
    serviceAccount,
    controllerRoleName: roleName,
    controllerProblems,
    queueName: queue?.name,
    ruleNames,
    summary,
  }
}
