// What the Karpenter install looks like from its CRDs, image and release: shared by karpenter-version,
// helm-release, controller-ready and nodeclass-ready, which must agree on the generation they report.
import type { CustomResourceDefinition, Facts, HelmRelease, LegacyObjects } from '../../facts/types.js'
import {
  DEFAULT_KARPENTER_VERSION,
  KARPENTER_CHART,
  KARPENTER_CRD_CHART,
  V1_MIGRATION_URL,
  V1BETA1_MIGRATION_URL,
} from './compat.js'
import { appliedBy, isRendered, parseVersion, shellQuote, type KarpenterVersion } from './facts.js'
import type { Finding } from '../types.js'
import { SETTINGS_FROM_ENV } from '../../facts/rendered-install.js'
import { optional } from './parts.js'

export const KARPENTER_GROUPS = ['karpenter.sh', 'karpenter.k8s.aws']

/** The CRDs a v1 chart (v1.0 and later) needs; newer optional ones (NodeOverlay) are not required. */
export const V1_CRDS = [
  'nodepools.karpenter.sh',
  'nodeclaims.karpenter.sh',
  'ec2nodeclasses.karpenter.k8s.aws',
]

/** CRDs of the v1alpha5 era (before v0.32). */
export const LEGACY_CRDS = [
  'provisioners.karpenter.sh',
  'machines.karpenter.sh',
  'awsnodetemplates.karpenter.k8s.aws',
]

/**
 * Which API generation an install runs, from its CRDs:
 * v1alpha5 — v0.x before v0.32 (Provisioner, AWSNodeTemplate);
 * v1beta1 — v0.32 to v0.37 (NodePool, EC2NodeClass, beta);
 * v1.0 — v1.0.x (v1 stored, v1beta1 still served through the conversion webhook);
 * v1 — v1.1 and later (v1 only, no webhooks).
 */
export type Generation = 'v1alpha5' | 'v1beta1' | 'v1.0' | 'v1'

export const generationLabel: Record<Generation, string> = {
  v1alpha5: 'v0.x before v0.32 — v1alpha5: Provisioner / AWSNodeTemplate',
  v1beta1: 'v0.32 to v0.37 — v1beta1: NodePool / EC2NodeClass',
  'v1.0': 'v1.0.x — v1, with v1beta1 served through the conversion webhook',
  v1: 'v1.1 or later — v1 only',
}

export const karpenterCrds = (crds: CustomResourceDefinition[]) =>
  crds.filter((c) => KARPENTER_GROUPS.includes(c.group))

export const hasLegacyObjects = (legacy: LegacyObjects) =>
  legacy.provisioners.length > 0 || legacy.awsNodeTemplates.length > 0

/** The oldest generation any sign points to: a half-migrated install is as old as its oldest part. */
export function crdGeneration(crds: CustomResourceDefinition[], legacy?: LegacyObjects): Generation | null {
  const own = karpenterCrds(crds)
  const serves = (v: string) => own.some((c) => c.servedVersions.includes(v))
  if (
    (legacy && hasLegacyObjects(legacy)) ||
    serves('v1alpha5') ||
    own.some((c) => LEGACY_CRDS.includes(c.name))
  ) {
    return 'v1alpha5'
  }
  if (serves('v1beta1')) return serves('v1') ? 'v1.0' : 'v1beta1'
  if (serves('v1')) return 'v1'
  return null
}

export function generationOf(v: KarpenterVersion): Generation {
  if (v.major === 0) return v.minor < 32 ? 'v1alpha5' : 'v1beta1'
  return v.major === 1 && v.minor === 0 ? 'v1.0' : 'v1'
}

/** The controller version from its image (`public.ecr.aws/karpenter/controller:1.14.1@sha256:…`). */
export function imageVersion(image: string | undefined): KarpenterVersion | null {
  const tag = /:(v?\d+\.\d+\.\d+[^@]*)(@|$)/.exec(image ?? '')
  return tag ? parseVersion(tag[1]) : null
}

/** The chart version a CRD carries, when the karpenter-crd chart (or the user) labelled it. */
export function crdChartVersion(crd: CustomResourceDefinition): string | undefined {
  const explicit = crd.labels['app.kubernetes.io/version'] ?? crd.annotations['app.kubernetes.io/version']
  if (explicit) return explicit.replace(/^v/, '')
  const chart = /^karpenter-crd-(.+)$/.exec(crd.labels['helm.sh/chart'] ?? '')
  return chart?.[1]
}

/** Where the controller runs: the release's namespace, else the Deployment's, else the chart default. */
export function controllerNamespace(facts: Facts): string {
  const release = optional(facts.kube.release)
  const deployment = optional(facts.kube.deployment)
  return release?.namespace ?? deployment?.metadata.namespace ?? 'kube-system'
}

export function controllerDeploymentName(facts: Facts): string {
  return optional(facts.kube.deployment)?.metadata.name ?? optional(facts.kube.release)?.name ?? 'karpenter'
}

/**
 * A fix that changes the controller's live objects (kubectl set env, annotate) on an install with no
 * Helm release: Argo CD and Flux apply their own render again at the next sync, so say where the change
 * must also be made for it to last. Nothing for a Helm release or plain manifests.
 */
export function renderedNote(release: HelmRelease): string {
  if (!isRendered(release) || release.renderedBy.tool === 'manifests') return ''
  return `; Karpenter has no Helm release here (${appliedBy(release)}): make the same change in the Helm values it renders the chart with, or its next sync undoes it`
}

/**
 * Sets one of the chart's settings: `helm upgrade --set` on a Helm release; with no release, in the
 * controller's environment, where the chart rendered it (kubectl set env restarts the controller).
 */
export function setSettingCommand(facts: Facts, release: HelmRelease, key: string, value: string): string {
  const env = SETTINGS_FROM_ENV.find(([, k]) => `settings.${k}` === key)?.[0]
  if (isRendered(release) && env) return setEnvCommand(facts, release.namespace, env, value)
  return helmUpgradeCommand(release, release.chartVersion, ` --set ${key}=${shellQuote(value)}`)
}

/** One variable of the controller's environment set on the live Deployment (which rolls its pods). */
export const setEnvCommand = (facts: Facts, namespace: string, env: string, value: string): string =>
  `kubectl set env deployment/${controllerDeploymentName(facts)} --namespace ${namespace} ${env}=${shellQuote(value)}`

/** The findings with `renderedNote` added to every fix that changes the controller's live objects. */
export function withRenderedNote(release: HelmRelease, findings: Finding[]): Finding[] {
  const note = renderedNote(release)
  if (!note) return findings
  const live = /^kubectl (set env deployment\/|annotate serviceaccount )/
  return findings.map((f) =>
    f.fix?.commands?.some((c) => live.test(c))
      ? { ...f, fix: { ...f.fix, summary: f.fix.summary + note } }
      : f,
  )
}

export function helmInstallCommand(
  clusterName: string,
  version = DEFAULT_KARPENTER_VERSION,
  namespace = 'kube-system',
  releaseName = 'karpenter',
): string {
  return [
    `helm upgrade --install ${releaseName} ${KARPENTER_CHART}`,
    `--version ${version}`,
    `--namespace ${namespace} --create-namespace`,
    `--set settings.clusterName=${shellQuote(clusterName)}`,
    '--wait',
  ].join(' ')
}

/** Upgrades the chart in place, keeping the user's values. */
export function helmUpgradeCommand(release: HelmRelease, version: string, extra = ''): string {
  // To another version, `--reuse-values` keeps the old chart's whole values and drops the new chart's
  // defaults: 1.0.14 → 1.14.1 then fails on `.Values.service.annotations` (nil pointer), as the field
  // corpus replayed. `--reset-then-reuse-values` (Helm 3.14+) takes the new defaults, then the user's.
  const values = version === release.chartVersion ? '--reuse-values' : '--reset-then-reuse-values'
  return `helm upgrade ${release.name} ${KARPENTER_CHART} --namespace ${release.namespace} --version ${version} ${values}${extra}`
}

/**
 * Installs or upgrades the CRDs through the karpenter-crd chart (Helm never upgrades the CRDs that the
 * karpenter chart ships in crds/). CRDs created by that crds/ folder must first be adopted by the release.
 */
export function crdChartCommands(
  namespace: string,
  version: string,
  existing: CustomResourceDefinition[],
  controllerService = 'karpenter',
): string[] {
  const commands: string[] = []
  const toAdopt = existing
    .filter((c) => c.annotations['meta.helm.sh/release-name'] !== 'karpenter-crd')
    .map((c) => c.name)
  if (toAdopt.length > 0) {
    const names = toAdopt.join(' ')
    commands.push(
      `kubectl label crd ${names} app.kubernetes.io/managed-by=Helm --overwrite`,
      `kubectl annotate crd ${names} meta.helm.sh/release-name=karpenter-crd meta.helm.sh/release-namespace=${namespace} --overwrite`,
    )
  }
  const v = parseVersion(version)
  // The 1.0.x CRD chart points the conversion webhook at a Service named `karpenter` unless told otherwise.
  const webhook =
    v && v.major === 1 && v.minor === 0
      ? ` --set webhook.enabled=true --set webhook.serviceName=${controllerService} --set webhook.port=8443`
      : ''
  commands.push(
    `helm upgrade --install karpenter-crd ${KARPENTER_CRD_CHART} --namespace ${namespace} --version ${version}${webhook}`,
  )
  // Past 1.0 the chart's CRDs have no conversion, but Helm's adoption keeps the 1.0.x crds/ folder's
  // webhook, which the new controller no longer serves (#6544; replayed by the field corpus).
  if (v && (v.major > 1 || (v.major === 1 && v.minor >= 1)))
    for (const c of existing.filter((x) => x.conversion?.service))
      commands.push(`kubectl patch crd ${c.name} --type merge -p ${shellQuote(NO_CONVERSION_PATCH)}`)
  return commands
}

/** A CRD's conversion back to the API server's default (strategy None), as Karpenter ≥ 1.1's CRDs have it. */
export const NO_CONVERSION_PATCH = JSON.stringify({
  spec: { conversion: { strategy: 'None', webhook: null } },
})

/** The way from a v0.x install to today's chart, in the order Karpenter's migration guides require. */
export function upgradePath(generation: Generation): string {
  const steps: string[] = []
  if (generation === 'v1alpha5') {
    steps.push(
      `upgrade to v0.32.x/v0.33.x and migrate Provisioner → NodePool, AWSNodeTemplate → EC2NodeClass, Machine → NodeClaim (v1beta1; ${V1BETA1_MIGRATION_URL})`,
    )
  }
  if (generation === 'v1alpha5' || generation === 'v1beta1') {
    steps.push(`move to the latest patch of your v0.3x minor, then to v1.0.x (v1 API; ${V1_MIGRATION_URL})`)
  }
  if (generation !== 'v1') {
    steps.push(
      `upgrade the CRDs, then the chart, to v1.1 or later (latest: ${DEFAULT_KARPENTER_VERSION}); from v1.1 there are no webhooks and no v1beta1`,
    )
  }
  return steps.map((s, i) => `${i + 1}) ${s}`).join('; ')
}
