// Helm 3 stores each release revision in a Secret: data.release = base64(base64(gzip(JSON))).
// Decoding it here means doctor needs no helm binary.
import { gunzipSync, gzipSync } from 'node:zlib'
import { parseDocument } from 'yaml'
import { parseVersion } from '../desired/version.js'
import type { HelmRelease } from './types.js'

interface RawRelease {
  name: string
  namespace: string
  version: number
  info?: { status?: string }
  chart?: {
    metadata?: { name?: string; version?: string; appVersion?: string }
    values?: Record<string, unknown>
  }
  config?: Record<string, unknown> | null
  manifest?: string
}

export function decodeReleaseData(data: string): RawRelease {
  const inner = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64')
  const json =
    inner[0] === 0x1f && inner[1] === 0x8b ? gunzipSync(inner).toString('utf8') : inner.toString('utf8')
  return JSON.parse(json) as RawRelease
}

/** Encodes a release the way Helm does (used by tests and snapshots' round-trips). */
export function encodeReleaseData(release: object): string {
  return Buffer.from(gzipSync(Buffer.from(JSON.stringify(release))).toString('base64')).toString('base64')
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** Helm's coalescing: user values override chart defaults key by key; null deletes a default. */
export function mergeValues(
  defaults: Record<string, unknown>,
  user: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...defaults }
  for (const [k, v] of Object.entries(user)) {
    if (v === null) delete out[k]
    else if (isObject(v) && isObject(out[k])) out[k] = mergeValues(out[k] as Record<string, unknown>, v)
    else out[k] = v
  }
  return out
}

export function toHelmRelease(raw: RawRelease): HelmRelease {
  const values = raw.config ?? {}
  const release: HelmRelease = {
    name: raw.name,
    namespace: raw.namespace,
    revision: raw.version,
    status: raw.info?.status ?? 'unknown',
    chartName: raw.chart?.metadata?.name ?? 'unknown',
    chartVersion: raw.chart?.metadata?.version ?? 'unknown',
    appVersion: raw.chart?.metadata?.appVersion,
    values,
    computedValues: mergeValues(raw.chart?.values ?? {}, values),
  }
  const sa = renderedServiceAccount(raw.manifest ?? '')
  if (sa) release.renderedServiceAccount = sa
  return release
}

/**
 * The manifest's documents, split where YAML starts a new one (a `---` line at column 0: it ends even a
 * block scalar), as Helm's own SplitManifests does. Each keeps its marker line.
 */
export function manifestDocuments(manifest: string): string[] {
  return manifest.split(/^(?=---(?:[ \t]|$))/m)
}

/**
 * The ServiceAccount as the chart rendered it: its annotations keep the YAML types Helm wrote. Only
 * documents that mention ServiceAccount are parsed (the rendered chart is thousands of lines: parsing it
 * all was a tenth of doctor's CPU); the kind is still judged on the parsed document.
 */
export function renderedServiceAccount(manifest: string): HelmRelease['renderedServiceAccount'] {
  for (const text of manifestDocuments(manifest)) {
    if (!text.includes('ServiceAccount')) continue
    const obj = parseDocument(text).toJS() as {
      kind?: string
      metadata?: { name?: string; annotations?: Record<string, unknown> }
    } | null
    if (obj?.kind === 'ServiceAccount' && obj.metadata?.name) {
      return { name: obj.metadata.name, annotations: obj.metadata.annotations ?? {} }
    }
  }
  return undefined
}

/**
 * Whether the install serves conversion/validation webhooks on 8443: every v0.x, v1.0.x unless
 * `webhook.enabled` is false; from 1.1 there are none. The collector reads the controller's nodes only
 * then; sg-webhook-8443 judges only then.
 */
export function webhooksEnabled(release: HelmRelease | null): boolean {
  const v = parseVersion(release?.chartVersion) ?? parseVersion(release?.appVersion)
  if (!v) return false
  if (v.major === 0) return true
  const webhook = release?.computedValues.webhook as { enabled?: unknown } | undefined
  return v.major === 1 && v.minor === 0 && webhook?.enabled !== false
}
