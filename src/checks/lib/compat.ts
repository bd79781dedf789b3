// Which Kubernetes versions each Karpenter version supports, as data, plus the install coordinates
// doctor's fixes point at.
//
// Sources (read 2026): aws/karpenter-provider-aws hack/docs/compatibilitymatrix_gen/compatibility.yaml
// (0.x through 1.2), the compatibility matrix on https://karpenter.sh/docs/upgrading/compatibility/
// (1.31 needs >= 1.0.5, 1.32 >= 1.2, 1.33 >= 1.5) and https://endoflife.date/karpenter (1.7 and 1.8: 1.29-1.34).
// Deliberately conservative: endoflife.date also lists 1.6 with 1.34 (a late patch) and 1.9+ with 1.35;
// neither is claimed here until the upstream matrix shows it. The minimum is the one the controller
// itself enforces at start-up (MinK8sVersion in pkg/providers/version), not the narrower documented range.
// Update KNOWN_THROUGH when a new Karpenter minor is reviewed.
import { cmpVersion, parseVersion, type KarpenterVersion } from '../../desired/version.js'

export const KARPENTER_CHART = 'oci://public.ecr.aws/karpenter/karpenter'
export const KARPENTER_CRD_CHART = 'oci://public.ecr.aws/karpenter/karpenter-crd'
/** The chart karpctl installs and recommends. */
export const DEFAULT_KARPENTER_VERSION = '1.14.1'
export const V1_MIGRATION_URL = 'https://karpenter.sh/docs/upgrading/v1-migration/'
export const V1BETA1_MIGRATION_URL = 'https://karpenter.sh/v0.32/upgrading/v1beta1-migration/'
export const COMPATIBILITY_URL = 'https://karpenter.sh/docs/upgrading/compatibility/'

export interface CompatEntry {
  /** First Karpenter version (x.y.z) with this range; it holds until the next entry. */
  since: string
  /** Oldest Kubernetes minor the controller accepts. */
  minKubernetes: string
  /** Newest Kubernetes minor supported. */
  maxKubernetes: string
}

/** Ordered by `since`, ascending. */
export const KARPENTER_K8S_COMPAT: readonly CompatEntry[] = [
  { since: '0.21.0', minKubernetes: '1.21', maxKubernetes: '1.24' },
  { since: '0.25.0', minKubernetes: '1.21', maxKubernetes: '1.25' },
  { since: '0.28.0', minKubernetes: '1.23', maxKubernetes: '1.27' },
  { since: '0.31.0', minKubernetes: '1.23', maxKubernetes: '1.28' },
  { since: '0.34.0', minKubernetes: '1.23', maxKubernetes: '1.29' },
  { since: '0.37.0', minKubernetes: '1.23', maxKubernetes: '1.30' },
  { since: '1.0.0', minKubernetes: '1.25', maxKubernetes: '1.30' },
  { since: '1.0.5', minKubernetes: '1.25', maxKubernetes: '1.31' },
  { since: '1.2.0', minKubernetes: '1.25', maxKubernetes: '1.32' },
  { since: '1.5.0', minKubernetes: '1.25', maxKubernetes: '1.33' },
  { since: '1.7.0', minKubernetes: '1.25', maxKubernetes: '1.34' },
]

/** The newest Karpenter minor whose support range was reviewed for this table. */
export const KNOWN_THROUGH = { major: 1, minor: 14 }

export interface KubernetesMinor {
  major: number
  minor: number
}

export function parseKubernetesMinor(raw: string | null | undefined): KubernetesMinor | null {
  const m = /^v?(\d+)\.(\d+)/.exec(raw ?? '')
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null
}

const cmpMinor = (a: KubernetesMinor, b: KubernetesMinor) => a.major - b.major || a.minor - b.minor

export interface SupportRange {
  entry: CompatEntry
  /** False when the Karpenter version is newer than the table: its real range may be wider. */
  reviewed: boolean
}

/** The supported Kubernetes range of a Karpenter version, or null when it predates the table. */
export function supportRange(version: KarpenterVersion): SupportRange | null {
  let found: CompatEntry | null = null
  for (const entry of KARPENTER_K8S_COMPAT) {
    if (cmpVersion(version, parseVersion(entry.since) as KarpenterVersion) >= 0) found = entry
  }
  if (!found) return null
  const reviewed = cmpMinor(version, KNOWN_THROUGH) <= 0
  return { entry: found, reviewed }
}

export type Support = 'supported' | 'too-old' | 'too-new' | 'unknown'

export function kubernetesSupport(version: KarpenterVersion, kubernetes: KubernetesMinor): Support {
  const range = supportRange(version)
  if (!range) return 'unknown'
  if (cmpMinor(kubernetes, parseKubernetesMinor(range.entry.minKubernetes) as KubernetesMinor) < 0)
    return 'too-old'
  if (cmpMinor(kubernetes, parseKubernetesMinor(range.entry.maxKubernetes) as KubernetesMinor) > 0)
    return 'too-new'
  return 'supported'
}

/** The oldest Karpenter version in the table that supports a Kubernetes minor, if any. */
export function minimumKarpenterFor(kubernetes: KubernetesMinor): string | null {
  const entry = KARPENTER_K8S_COMPAT.find(
    (e) =>
      cmpMinor(kubernetes, parseKubernetesMinor(e.maxKubernetes) as KubernetesMinor) <= 0 &&
      cmpMinor(kubernetes, parseKubernetesMinor(e.minKubernetes) as KubernetesMinor) >= 0,
  )
  return entry?.since ?? null
}

export const formatMinor = (k: KubernetesMinor) => `${k.major}.${k.minor}`
