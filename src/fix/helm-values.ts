// Repairs that live in the Helm values (a toleration or annotation value that is not a string, the
// queue's ARN where its name belongs) become ONE new revision of the release: the same chart version,
// upgraded with the user's own values — those of the newest revision, the one that failed — with each
// repaired path set. Every check's edits go into that one revision.
//
// Why not `helm upgrade --reuse-values --set-string …`: after a failed upgrade Helm reuses the values
// of the last *deployed* revision, not of the failed one, so the user's intended change would be lost,
// and a lone `--set-string tolerations[0].value=…` would replace the whole list with one half-made
// entry. A full values file made from the newest revision keeps everything the user asked for.
import type { Finding } from '../checks/types.js'
import { KARPENTER_CHART } from '../checks/lib/compat.js'
import type { HelmRelease } from '../facts/types.js'
import { helmPath, lintHelmValues, type KeyPath } from '../lint/values.js'
import { chartDirVersion, helmRelease } from '../plan/resources/helm-release.js'
import type { Resource } from '../plan/types.js'

/** Put on the release (its Secret) so `helm history` and teardown can tell karpctl made the revision. */
export const REPAIRED_LABEL = 'karpctl.io/repaired'

export interface HelmFixOptions {
  /** A folder holding `karpenter/` (as install's --chart-dir), instead of the OCI chart. */
  chartDir?: string
}

export interface ValueEdit {
  path: KeyPath
  value: unknown
  /** The finding it repairs. */
  finding: Finding
}

/** Failing findings about a value type whose path is in the user values: that path as a string. */
export function valueTypeEdits(release: HelmRelease, failing: Finding[]): ValueEdit[] {
  const issues = lintHelmValues(release.values, 'the Helm values')
  return failing.flatMap((finding) => {
    const path = (finding.evidence as { path?: string } | undefined)?.path
    const issue = issues.find((i) => i.path === path)
    return issue ? [{ path: issue.keyPath, value: issue.stringValue, finding }] : []
  })
}

function setAt(root: Record<string, unknown>, path: KeyPath, value: unknown): void {
  let node = root as Record<string | number, unknown>
  for (const seg of path.slice(0, -1)) {
    const next = node[seg]
    if (next === null || typeof next !== 'object') node[seg] = {}
    node = node[seg] as Record<string | number, unknown>
  }
  node[path[path.length - 1]!] = value
}

export function editedValues(release: HelmRelease, edits: ValueEdit[]): Record<string, unknown> {
  const values = structuredClone(release.values)
  for (const e of edits) setAt(values, e.path, e.value)
  return values
}

export function helmRepair(
  release: HelmRelease,
  edits: ValueEdit[],
  opts: HelmFixOptions,
  group: string,
): Resource {
  const dir = opts.chartDir && `${opts.chartDir}/karpenter`
  const paths = [...new Set(edits.map((e) => helmPath(e.path)))]
  return {
    ...helmRelease({
      address: 'helm.karpenter.repair',
      release: release.name,
      namespace: release.namespace,
      chartName: release.chartName,
      chart: dir ?? KARPENTER_CHART,
      version: dir ? undefined : release.chartVersion,
      expectedVersion: release.chartVersion,
      chartFolderVersion: dir ? chartDirVersion(dir) : undefined,
      values: editedValues(release, edits),
      labels: { [REPAIRED_LABEL]: 'doctor-fix' },
      adopt: false,
      repair: `sets ${paths.join(', ')}`,
      dependsOn: [],
    }),
    group,
  }
}
