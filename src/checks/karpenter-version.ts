import { renderedInstall } from '../facts/rendered-install.js'
import type { Facts, HelmRelease, LegacyObjects, RenderedInstall } from '../facts/types.js'
import { DEFAULT_KARPENTER_VERSION, V1_MIGRATION_URL } from './lib/compat.js'
import {
  appliedBy,
  isRendered,
  need,
  releaseVersion,
  webhooksEnabled,
  type KarpenterVersion,
} from './lib/facts.js'
import {
  controllerDeploymentName,
  crdChartCommands,
  crdGeneration,
  generationLabel,
  generationOf,
  hasLegacyObjects,
  helmInstallCommand,
  helmUpgradeCommand,
  imageVersion,
  karpenterCrds,
  LEGACY_CRDS,
  upgradePath,
  V1_CRDS,
  type Generation,
} from './lib/install.js'
import { optional, part } from './lib/parts.js'
import type { Check, Finding, Fix } from './types.js'

export const karpenterVersion: Check = {
  meta: {
    id: 'karpenter-version',
    title: 'Karpenter generation is current (v1.1 or later)',
    category: 'helm',
    severity: 'error',
    docs: `Detects the installed Karpenter from its Helm release, CRDs and legacy objects: v0.x (Provisioner / AWSNodeTemplate) needs the staged migration (${V1_MIGRATION_URL}); v1.0.x still runs webhooks on 8443; v1.1+ is current.`,
  },
  run(facts) {
    const release = need(facts.kube.release)
    // No Helm release, but Argo CD, Flux or kubectl applied the chart's objects: judge the version they show.
    const rendered = release ? null : renderedOf(facts)
    const install = release ?? (rendered && releaseVersion(rendered) ? rendered : null)
    if (install) return [...judgeRelease(facts, install), ...part(() => legacyLeftovers(facts, install))]
    return judgeWithoutRelease(facts)
  },
}

/**
 * The install with no Helm release; a snapshot saved before karpctl read it has the Deployment only:
 * read it back from that (without the ServiceAccount, which this check does not need).
 */
function renderedOf(facts: Facts): RenderedInstall | null {
  if (facts.kube.rendered) return optional(facts.kube.rendered) ?? null
  const deployment = optional(facts.kube.deployment)
  return deployment ? renderedInstall(deployment, null) : null
}

/** How the message names the install: its Helm release, or the Deployment and the tool that applied it. */
function installLabel(facts: Facts, release: HelmRelease): string {
  if (!isRendered(release)) return `Helm release ${release.namespace}/${release.name}`
  return `Deployment ${release.namespace}/${controllerDeploymentName(facts)}, no Helm release: ${appliedBy(release)}`
}

function judgeRelease(facts: Facts, release: HelmRelease): Finding[] {
  const subject = `${release.namespace}/${release.name}`
  const where = installLabel(facts, release)
  const v = releaseVersion(release)
  if (!v) {
    return [
      {
        status: 'unknown',
        subject,
        message: `${where} has chart version ${JSON.stringify(release.chartVersion)}, which is not a version karpctl can read`,
        evidence: { chartVersion: release.chartVersion, appVersion: release.appVersion },
      },
    ]
  }
  const evidence = {
    release: subject,
    chartVersion: release.chartVersion,
    appVersion: release.appVersion,
    ...(isRendered(release) ? { renderedBy: release.renderedBy } : {}),
  }
  const generation = generationOf(v)
  if (generation === 'v1alpha5' || generation === 'v1beta1') {
    return [legacyFinding(facts, v, generation, where, evidence)]
  }
  if (generation === 'v1.0') {
    const hooks = webhooksEnabled(release)
    return [
      {
        status: 'warn',
        subject,
        message: `Karpenter ${v.raw} (${where}) is the v1.0.x conversion line: ${
          hooks
            ? 'its webhooks on 8443 must be reachable from the control plane'
            : 'webhooks are disabled, so v1beta1 objects cannot be converted'
        }; upgrade to v1.1 or later to end webhooks and v1beta1`,
        evidence: { ...evidence, webhookEnabled: hooks },
        fix: upgradeFromV10(facts, release),
      },
    ]
  }
  return [
    {
      status: 'pass',
      subject,
      message: `Karpenter ${v.raw} (${where}) is a current v1 install`,
      evidence,
    },
  ]
}

function upgradeFromV10(facts: Facts, release: HelmRelease): Fix {
  if (isRendered(release))
    return {
      summary: `first make sure no manifest or tool still writes karpenter.sh/v1beta1 objects; then raise the chart version ${appliedBy(release)} renders to ${DEFAULT_KARPENTER_VERSION}, CRDs included`,
    }
  const crds = optional(facts.kube.crds) ?? []
  return {
    summary: `run \`karpctl upgrade\` (it checks that no object is still stored as v1beta1, adds the IAM statements ${DEFAULT_KARPENTER_VERSION} needs, then upgrades the CRDs and the chart with your values), or by hand: first make sure no manifest or tool still writes karpenter.sh/v1beta1 objects; then upgrade the CRDs and the chart to ${DEFAULT_KARPENTER_VERSION} (Helm does not upgrade CRDs from the chart's crds/ folder)`,
    commands: [
      ...crdChartCommands(
        release.namespace,
        DEFAULT_KARPENTER_VERSION,
        karpenterCrds(crds).filter((c) => V1_CRDS.includes(c.name)),
      ),
      helmUpgradeCommand(release, DEFAULT_KARPENTER_VERSION),
    ],
  }
}

/** A v0.x install, wherever it was found: explain the staged path rather than fail obscurely. */
function legacyFinding(
  facts: Facts,
  v: KarpenterVersion | null,
  generation: Generation,
  where: string,
  evidence: Record<string, unknown>,
): Finding {
  const legacy = optional(facts.kube.legacy)
  const what = v ? `Karpenter ${v.raw}` : `Karpenter ${generationLabel[generation]}`
  const objects = legacy && hasLegacyObjects(legacy) ? `; ${describeLegacy(legacy)} still exist` : ''
  return {
    status: 'fail',
    subject: where,
    message: `${what} (${where}) is a v0.x install, out of support: it cannot be upgraded to v1 in one step${objects}`,
    evidence: {
      ...evidence,
      generation: generationLabel[generation],
      ...(legacy ? { legacyObjects: legacy } : {}),
    },
    fix: {
      summary: `upgrade in stages: ${upgradePath(generation)}`,
      commands: [
        generation === 'v1alpha5'
          ? 'kubectl get provisioners.karpenter.sh,awsnodetemplates.karpenter.k8s.aws -o yaml > karpenter-v1alpha5-backup.yaml'
          : 'kubectl get nodepools.karpenter.sh,ec2nodeclasses.karpenter.k8s.aws -o yaml > karpenter-v1beta1-backup.yaml',
      ],
    },
  }
}

function describeLegacy(legacy: LegacyObjects): string {
  const parts: string[] = []
  if (legacy.provisioners.length > 0) parts.push(`Provisioners ${legacy.provisioners.join(', ')}`)
  if (legacy.awsNodeTemplates.length > 0) parts.push(`AWSNodeTemplates ${legacy.awsNodeTemplates.join(', ')}`)
  return parts.join(' and ')
}

/** On a v1 release, v0.x objects left behind are reconciled by nothing. */
function legacyLeftovers(facts: Facts, release: HelmRelease): Finding[] {
  const v = releaseVersion(release)
  if (!v || v.major === 0) return []
  const legacy = need(facts.kube.legacy)
  if (!hasLegacyObjects(legacy)) return []
  const commands: string[] = []
  if (legacy.provisioners.length > 0)
    commands.push(`kubectl delete provisioners.karpenter.sh ${legacy.provisioners.join(' ')}`)
  if (legacy.awsNodeTemplates.length > 0) {
    commands.push(`kubectl delete awsnodetemplates.karpenter.k8s.aws ${legacy.awsNodeTemplates.join(' ')}`)
  }
  commands.push(`kubectl delete crd ${LEGACY_CRDS.join(' ')} --ignore-not-found`)
  return [
    {
      status: 'warn',
      subject: 'v1alpha5 objects',
      message: `${describeLegacy(legacy)} remain from a v0.x install: Karpenter ${v.raw} ignores them, so they configure nothing`,
      evidence: { legacyObjects: legacy },
      fix: {
        summary:
          'once their settings live in NodePools / EC2NodeClasses and no node carries karpenter.sh/provisioner-name, delete them',
        commands,
      },
    },
  ]
}

function judgeWithoutRelease(facts: Facts): Finding[] {
  const crds = karpenterCrds(need(facts.kube.crds))
  const legacy = need(facts.kube.legacy)
  const deployment = need(facts.kube.deployment)
  const generation = crdGeneration(crds, legacy)
  const evidence = {
    crds: crds.map((c) => ({ name: c.name, servedVersions: c.servedVersions })),
    legacyObjects: legacy,
    deployment: deployment ? `${deployment.metadata.namespace}/${deployment.metadata.name}` : null,
    image: deployment?.image,
  }

  if (!deployment && crds.length === 0 && !hasLegacyObjects(legacy)) return [notInstalled(facts)]

  if (deployment) {
    const where = `Deployment ${deployment.metadata.namespace}/${deployment.metadata.name}`
    const v = imageVersion(deployment.image)
    const gen = v ? generationOf(v) : generation
    if (gen === 'v1alpha5' || gen === 'v1beta1') return [legacyFinding(facts, v, gen, where, evidence)]
    const what = v ? `Karpenter ${v.raw}` : `Karpenter (image ${deployment.image ?? 'unknown'})`
    const line = gen === 'v1.0' ? '; it is the v1.0.x webhook/conversion line: upgrade to v1.1 or later' : ''
    return [
      {
        status: 'warn',
        subject: where,
        message: v
          ? `${what} runs as ${where} with no Helm release (helm template | kubectl apply, Argo CD or similar)${line}`
          : `${what} runs as ${where} with no Helm release, and neither its labels nor its image tag name its version${line || ': its generation cannot be judged'}`,
        evidence,
        // No `helm install` here: Helm refuses objects it did not create ("invalid ownership metadata",
        // aws/karpenter-provider-aws#5096), and with Argo CD or Flux the tool that applied them owns them.
        fix: {
          summary: `label the controller's image or Deployment with its version (the chart's helm.sh/chart and app.kubernetes.io/version labels say it), or use an image tag that names it, so its generation can be judged`,
        },
      },
    ]
  }

  // CRDs or objects without a controller: a removal that stopped half-way, or a failed install.
  const names = crds.map((c) => c.name)
  const old = generation === 'v1alpha5' || generation === 'v1beta1'
  const found = [
    names.length > 0 ? `CRDs ${names.join(', ')}` : '',
    hasLegacyObjects(legacy) ? describeLegacy(legacy) : '',
  ]
    .filter(Boolean)
    .join(' and ')
  const era = generation ? ` (${generationLabel[generation]})` : ''
  return [
    {
      status: 'fail',
      subject: names.length > 0 ? names.join(', ') : 'v1alpha5 objects',
      message: `Karpenter is partially installed: ${found} exist${era}, but there is no Helm release and no controller`,
      evidence,
      fix: {
        summary: old
          ? `either remove the leftovers, or reinstall and migrate: ${upgradePath(generation)}`
          : 'either reinstall Karpenter (the CRDs and any NodePools are reused), or remove the leftover CRDs — which deletes every NodePool, NodeClaim and EC2NodeClass; without a controller, objects with finalizers block the deletion',
        commands: [
          helmInstallCommand(facts.meta.clusterName),
          ...(names.length > 0 ? [`kubectl delete crd ${names.join(' ')}`] : []),
        ],
      },
    },
  ]
}

function notInstalled(facts: Facts): Finding {
  return {
    status: 'fail',
    subject: facts.meta.clusterName,
    message: `Karpenter is not installed in cluster ${facts.meta.clusterName}: no Helm release, no Karpenter CRDs, no controller`,
    fix: {
      summary:
        'create the controller IAM role (IRSA or Pod Identity), the node role and, optionally, the interruption queue first (https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/), then install the chart',
      commands: [helmInstallCommand(facts.meta.clusterName)],
    },
  }
}
