// Karpenter installed without a Helm release: Argo CD (which renders a chart with `helm template` and
// applies the objects: argoproj/argo-cd#3867), Flux's kustomize-controller, or `helm template | kubectl
// apply`. There are no stored values to read, but the chart wrote every setting the checks judge into
// the controller's environment and its ServiceAccount: read them back from the live objects, so doctor
// judges such an install instead of skipping half its checks.
import { judgedAnnotation } from './free-text.js'
import type { Deployment, Facts, HelmRelease, RenderedBy, RenderedInstall, ServiceAccount } from './types.js'

/**
 * The chart's settings as it renders them into the controller's environment (deployment.yaml of every
 * 1.x chart): only those a check reads, with the value's type the chart's values carry.
 */
export const SETTINGS_FROM_ENV: [env: string, key: string, type: 'string' | 'boolean' | 'number'][] = [
  ['CLUSTER_NAME', 'clusterName', 'string'],
  ['CLUSTER_ENDPOINT', 'clusterEndpoint', 'string'],
  ['INTERRUPTION_QUEUE', 'interruptionQueue', 'string'],
  ['ISOLATED_VPC', 'isolatedVPC', 'boolean'],
  ['ENABLE_ZONAL_SHIFT', 'enableZonalShift', 'boolean'],
  ['VM_MEMORY_OVERHEAD_PERCENT', 'vmMemoryOverheadPercent', 'number'],
  ['RESERVED_ENIS', 'reservedENIs', 'string'],
]

function typed(raw: string, type: 'string' | 'boolean' | 'number'): unknown {
  if (type === 'boolean') return raw === 'true'
  if (type === 'number') return Number.isFinite(Number(raw)) ? Number(raw) : raw
  return raw
}

/** Who applied the objects, from the marks each tool leaves on what it applies. */
export function renderedBy(d: Deployment): RenderedBy {
  const labels = d.metadata.labels ?? {}
  const annotations = d.metadata.annotations ?? {}
  // Argo CD's annotation tracking (the default since 3.0): `<app>:<group>/<kind>:<namespace>/<name>`.
  const tracking = annotations['argocd.argoproj.io/tracking-id']
  if (tracking) return { tool: 'argocd', name: tracking.split(':')[0] || undefined }
  const argoInstance = labels['argocd.argoproj.io/instance']
  if (argoInstance) return { tool: 'argocd', name: argoInstance }
  const flux = labels['kustomize.toolkit.fluxcd.io/name']
  if (flux) {
    const ns = labels['kustomize.toolkit.fluxcd.io/namespace']
    return { tool: 'flux', name: ns ? `${ns}/${flux}` : flux }
  }
  return { tool: 'manifests' }
}

/** Who applied an install with no release, in words: `Argo CD application "karpenter"`. */
export function appliedByWords({ tool, name }: RenderedBy): string {
  if (tool === 'argocd') return name ? `Argo CD application "${name}"` : 'Argo CD'
  if (tool === 'flux') return name ? `Flux Kustomization "${name}"` : 'Flux'
  return 'applied as manifests, e.g. helm template | kubectl apply'
}

/** The chart version a rendered object carries: its `helm.sh/chart` label, else its image's tag. */
function chartVersionOf(d: Deployment): string {
  const chart = /^karpenter-(v?\d+\.\d+\.\d+.*)$/.exec(d.metadata.labels?.['helm.sh/chart'] ?? '')
  if (chart?.[1]) return chart[1]
  const tag = /:(v?\d+\.\d+\.\d+[^@]*)(@|$)/.exec(d.image ?? '')
  return tag?.[1] ?? 'unknown'
}

/**
 * The install as the live objects show it, shaped like a release so the checks judge it the same way:
 * `values` is empty (no one stored them), `computedValues` holds what the chart rendered.
 */
export function renderedInstall(d: Deployment, sa: ServiceAccount | null): RenderedInstall {
  const settings: Record<string, unknown> = {}
  for (const [env, key, type] of SETTINGS_FROM_ENV) {
    const raw = d.env[env]
    if (raw !== undefined && raw !== '') settings[key] = typed(raw, type)
  }
  const chartVersion = chartVersionOf(d)
  const computedValues: HelmRelease['computedValues'] = {
    settings,
    serviceAccount: {
      name: d.serviceAccountName ?? 'default',
      // Only the annotations a check reads (IRSA, STS): the rest of a live object's may hold anything.
      annotations: Object.fromEntries(
        Object.entries(sa?.metadata.annotations ?? {}).filter(([k]) => judgedAnnotation(k)),
      ),
    },
  }
  // The 1.0.x chart writes DISABLE_WEBHOOK="true" when webhook.enabled is false (WEBHOOK_PORT otherwise).
  if (d.env.DISABLE_WEBHOOK !== undefined || d.env.WEBHOOK_PORT !== undefined)
    computedValues.webhook = { enabled: d.env.DISABLE_WEBHOOK !== 'true' }
  const appVersion = d.metadata.labels?.['app.kubernetes.io/version']
  return {
    name: d.metadata.labels?.['app.kubernetes.io/instance'] ?? d.metadata.name,
    namespace: d.metadata.namespace ?? 'default',
    revision: 0,
    status: 'deployed',
    chartName: 'karpenter',
    chartVersion,
    ...(appVersion ? { appVersion } : {}),
    values: {},
    computedValues,
    renderedBy: renderedBy(d),
  }
}

/** The Karpenter install: its Helm release, else what the live objects show (null: neither was found). */
export function installOf(kube: Pick<Facts['kube'], 'release' | 'rendered'>): HelmRelease | null {
  if (kube.release.ok && kube.release.value) return kube.release.value
  return kube.rendered?.ok ? kube.rendered.value : null
}
