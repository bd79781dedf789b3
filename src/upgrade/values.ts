// The user's Helm values carried from one Karpenter chart to another: the keys a newer chart no longer
// has are taken out (Helm would keep them in the release and render nothing from them, and a 1.0-era
// `webhook.enabled: true` reads as if webhooks still ran), and every annotation, label and toleration
// value becomes a string (the API server rejects the object otherwise, which fails the upgrade).
//
// The table is read from the charts' values.yaml (fixtures/karpenter/v1.0.14 → v1.14.1): between those
// two, only the `webhook` block of the controller chart and of the CRD chart went (in 1.1, with the
// conversion webhooks); no key was renamed. A key's removal applies when an upgrade crosses `since`.
import { helmPath, lintHelmValues, type KeyPath } from '../lint/values.js'
import { compareVersions } from '../desired/reference-policy.js'

export type Chart = 'karpenter' | 'karpenter-crd'

export interface ValueRemoval {
  chart: Chart
  /** First version whose chart no longer has the key. */
  since: string
  path: KeyPath
  why: string
}

export const VALUE_REMOVALS: readonly ValueRemoval[] = [
  {
    chart: 'karpenter',
    since: '1.1.0',
    path: ['webhook'],
    why: 'Karpenter 1.1 has no webhooks (the chart dropped webhook.enabled, webhook.port, webhook.metrics.port)',
  },
  {
    chart: 'karpenter-crd',
    since: '1.1.0',
    path: ['webhook'],
    why: 'the 1.1 CRDs serve only v1, with no conversion webhook (the chart dropped webhook.*)',
  },
]

/** One edit the migration made, as the plan's note says it. */
export interface ValueMigration {
  path: string
  from: unknown
  to?: unknown
  why: string
}

export interface MigratedValues {
  values: Record<string, unknown>
  migrations: ValueMigration[]
}

const crosses = (from: string, to: string, since: string) =>
  compareVersions(from, since) < 0 && compareVersions(to, since) >= 0

type Node = Record<string | number, unknown>

/** The parent of `path`'s last segment in `root`, or undefined when a segment on the way is missing. */
function parentOf(root: Node, path: KeyPath): Node | undefined {
  let node: unknown = root
  for (const seg of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Node)[seg]
  }
  return node !== null && typeof node === 'object' ? (node as Node) : undefined
}

/** `values` (never changed) as the chart of `to` takes them, from a release of `from`. */
export function migrateValues(
  chart: Chart,
  values: Record<string, unknown>,
  from: string,
  to: string,
): MigratedValues {
  const out = structuredClone(values)
  const migrations: ValueMigration[] = []
  for (const r of VALUE_REMOVALS) {
    if (r.chart !== chart || !crosses(from, to, r.since)) continue
    const parent = parentOf(out, r.path)
    const key = r.path[r.path.length - 1] as string | number
    if (!parent || !(key in parent)) continue
    migrations.push({ path: helmPath(r.path), from: parent[key], why: r.why })
    delete parent[key]
  }
  for (const issue of lintHelmValues(out, 'the Helm values')) {
    const parent = parentOf(out, issue.keyPath)
    if (!parent) continue
    parent[issue.keyPath[issue.keyPath.length - 1] as string | number] = issue.stringValue
    migrations.push({
      path: issue.path,
      from: issue.value,
      to: issue.stringValue,
      why: 'Kubernetes takes only strings there',
    })
  }
  return { values: out, migrations }
}
