// Helpers that let a check read facts in straight-line code: a read that failed throws
// `NotCollected`, which the runner turns into an `unknown` finding carrying the reason;
// `skip()` throws a `Skipped` that becomes a `skipped` finding. So no check can pass on missing data.
import type {
  EC2NodeClass,
  Facts,
  HelmRelease,
  Read,
  ReadFailure,
  RenderedInstall,
} from '../../facts/types.js'
import { type KarpenterVersion, parseVersion } from '../../desired/version.js'
import { webhooksEnabled } from '../../facts/helm-release.js'
import { appliedByWords } from '../../facts/rendered-install.js'

export class NotCollected extends Error {
  constructor(readonly failure: ReadFailure) {
    super(`${failure.read}: ${failure.message}`)
  }
}

export class Skipped extends Error {}

export function need<T>(read: Read<T>): T {
  if (!read.ok) throw new NotCollected(read.error)
  return read.value
}

export function skip(reason: string): never {
  throw new Skipped(reason)
}

export function describeFailure(f: ReadFailure): string {
  const why: Record<ReadFailure['kind'], string> = {
    denied: 'permission denied',
    throttled: 'throttled',
    unsupported: 'not supported by this endpoint',
    network: 'network error',
    error: 'error',
  }
  return `could not read ${f.read} (${why[f.kind]}: ${f.code}${f.message ? ` — ${f.message}` : ''})`
}

/** Walks a dotted path into nested values (`settings.clusterName`). */
export function valueAt(values: Record<string, unknown> | undefined, path: string): unknown {
  let cur: unknown = values
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

export { type KarpenterVersion, parseVersion }

/**
 * The install: its Helm release, else, when Argo CD, Flux or `kubectl apply` put Karpenter there
 * without one, what its live Deployment and ServiceAccount show (facts/rendered-install.ts). A skip
 * when neither was found.
 */
export function needRelease(facts: Facts): HelmRelease | RenderedInstall {
  const release = need(facts.kube.release)
  if (release) return release
  const rendered = facts.kube.rendered ? need(facts.kube.rendered) : null
  if (!rendered) skip('no Karpenter Helm release and no controller Deployment found in the cluster')
  return rendered
}

/** The Helm release itself, for what only Helm holds (its values as typed, its history): a skip without one. */
export function needHelmRelease(facts: Facts): HelmRelease {
  const release = need(facts.kube.release)
  if (release) return release
  const rendered = facts.kube.rendered?.ok ? facts.kube.rendered.value : null
  if (rendered)
    skip(`Karpenter was installed without Helm (${appliedBy(rendered)}): there is no Helm release to judge`)
  skip('no Karpenter Helm release found in the cluster')
}

export const isRendered = (r: HelmRelease): r is RenderedInstall => 'renderedBy' in r

/** Who applied an install with no release, in words: `Argo CD application "karpenter"`. */
export const appliedBy = (r: RenderedInstall): string => appliedByWords(r.renderedBy)

export function releaseVersion(release: HelmRelease): KarpenterVersion | null {
  return parseVersion(release.chartVersion) ?? parseVersion(release.appVersion)
}

export { webhooksEnabled }

export function isLegacy(release: HelmRelease): boolean {
  const v = releaseVersion(release)
  return v !== null && v.major === 0
}

/** The chart's settings, from the merged values (chart defaults + user values). */
export function setting(release: HelmRelease, key: string): unknown {
  return valueAt(release.computedValues, `settings.${key}`)
}

export const partitionOf = (facts: Facts) => facts.meta.partition || 'aws'

export function roleNameFromArn(arn: string): string {
  return arn.slice(arn.lastIndexOf('/') + 1)
}

/** The role an EC2NodeClass launches nodes with: spec.role (a name or an ARN), or its instance profile's role. */
export function nodeClassRoleName(facts: Facts, nc: EC2NodeClass): string | undefined {
  if (nc.spec.role) return nc.spec.role.startsWith('arn:') ? roleNameFromArn(nc.spec.role) : nc.spec.role
  const profile = nc.spec.instanceProfile ? facts.iam.instanceProfiles[nc.spec.instanceProfile] : undefined
  return profile?.ok && profile.value ? profile.value.roles[0] : undefined
}

/**
 * A value from the cluster or AWS as a YAML scalar in a fix snippet: plain when it is a plain word,
 * else double-quoted with its line breaks and controls escaped. A snippet keeps its own line breaks
 * (markdown prints it in a code block), so a raw label value with a newline would start a line of
 * its own there (`✔ FORGED …`).
 */
export function yamlString(s: string): string {
  const plain = /^[A-Za-z][\w@%+:,./-]*$/.test(s) && !s.endsWith(':') && !YAML_WORDS.test(s)
  return plain ? s : JSON.stringify(s).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
}

/** Words YAML 1.1 reads as a boolean or null, not as text. */
const YAML_WORDS = /^(y|yes|n|no|true|false|on|off|null)$/i

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}
