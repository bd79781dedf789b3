// A Helm release karpctl installs with the user's helm: `upgrade --install` with a generated values
// file (every annotation, label and toleration value a string). The release Secret carries karpctl's
// label, so a re-run (or teardown) knows the release is karpctl's.
import { randomBytes } from 'node:crypto'
import { rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { findRelease, releaseNamed } from '../../facts/collect-kube.js'
import type { HelmRelease } from '../../facts/types.js'
import { writeFileAtomic } from '../../fs/atomic-write.js'
import { FileRefused, readRegularFileSync } from '../../fs/read-regular.js'
import { InputError, quote } from '../../errors.js'
import { karpenterVersionProblem } from '../../spec/flags.js'
import { redact } from '../../facts/redact.js'
import { isOwned, sameDocument } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { FieldChange, Resource } from '../types.js'

/** On an adopted release: the revision it had before karpctl's first upgrade. */
export const ADOPTED_FROM_REVISION = 'karpctl.io/adopted-from-revision'

export interface ReleaseState {
  release: HelmRelease
  labels: Record<string, string>
  /** Another Karpenter release elsewhere in the cluster (a second controller would fight this one). */
  other?: HelmRelease
}

export interface ReleaseWant {
  address: string
  release: string
  namespace: string
  chart: string
  chartName: string
  /** Passed to helm as --version (not for a chart folder, whose Chart.yaml says it). */
  version?: string
  expectedVersion: string
  values: Record<string, unknown>
  labels: Record<string, string>
  /** The labels an adopted release's new revisions carry instead of `labels` (karpctl.io/adopted-by). */
  adoptLabels?: Record<string, string>
  adopt: boolean
  dependsOn: string[]
  /** Look for another release of this chart anywhere (the controller chart). */
  unique?: boolean
  /**
   * A repair of a release karpctl may not own (doctor --fix): why, as the plan says it. The release is
   * not taken over: it keeps its version, gains only the `labels` given, and is never blocked as foreign.
   */
  repair?: string
  /** The version a chart folder holds, when it must equal `expectedVersion` (a repair never upgrades). */
  chartFolderVersion?: string
}

/** Chart version of a chart folder, from its Chart.yaml. */
/** A Chart.yaml is a few hundred bytes; a larger one is not a chart's. */
const MAX_CHART_YAML_BYTES = 1 << 20

const CHART_DIR_FIX = 'give the folder that holds karpenter-crd/ and karpenter/ of Karpenter 1.0 – 1.14'

/**
 * The version a chart folder's Chart.yaml declares: what helm will install, so it is checked as
 * --karpenter-version is (the supported range; strict x.y.z, so no `../` or escape sequence reaches
 * a plan, a path or the terminal). Chart.yaml is read only if it is a regular file of bounded size.
 */
export function chartDirVersion(dir: string): string {
  const file = join(dir, 'Chart.yaml')
  const refuse = (why: string) =>
    new InputError(`--chart-dir: ${quote(file)} ${why}: ${CHART_DIR_FIX}`, 'INVALID_CHART_DIR')
  let text: string
  try {
    text = readRegularFileSync(file, MAX_CHART_YAML_BYTES)
  } catch (err) {
    throw refuse(err instanceof FileRefused ? err.reason : 'cannot be read')
  }
  const m = /^version:[ \t]*["']?([^"'\s]+)/m.exec(text)
  if (!m?.[1]) throw refuse('has no version')
  const problem = karpenterVersionProblem(m[1])
  if (problem) throw refuse(`declares a version karpctl does not install: ${problem}`)
  return m[1].replace(/^v/, '')
}

/**
 * A --chart-dir, before anything is read from the cluster: it exists, and each of `charts` in it has a
 * Chart.yaml chartDirVersion accepts. One line now, not helm's failure half-way through an apply.
 */
export function checkChartDir(dir: string, charts: string[]): void {
  let isDir = false
  try {
    isDir = statSync(dir).isDirectory()
  } catch {
    // reported below
  }
  if (!isDir)
    throw new InputError(`--chart-dir ${quote(dir)} is not a folder: ${CHART_DIR_FIX}`, 'INVALID_CHART_DIR')
  for (const chart of charts) chartDirVersion(join(dir, chart))
}

export function helmRelease(w: ReleaseWant): Resource<ReleaseState> {
  const changesOf = (cur: ReleaseState | null): FieldChange[] => {
    const r = cur?.release
    const c: FieldChange[] = []
    if (r?.chartVersion !== w.expectedVersion)
      c.push({
        field: 'chart',
        from: r && `${r.chartName}-${r.chartVersion}`,
        to: `${w.chartName}-${w.expectedVersion}`,
      })
    if (r && r.status !== 'deployed') c.push({ field: 'status', from: r.status, to: 'deployed' })
    // Each value key that differs, old → new (all of them on install); shown redacted, diffed real.
    if (!r || !sameDocument(r.values, w.values))
      c.push(...leafChanges(r?.values, w.values, 'values', { from: redact(r?.values), to: redact(w.values) }))
    return c
  }
  return {
    address: w.address,
    kind: 'Helm release',
    name: `${w.namespace}/${w.release}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { chart: w.chart, version: w.expectedVersion, namespace: w.namespace, values: w.values },
    documents: { values: w.values },
    permissions: [],
    async observe({ kube }) {
      const [mine, any] = await Promise.all([
        releaseNamed(kube, w.namespace, w.release),
        w.unique ? findRelease(kube) : Promise.resolve(null),
      ])
      const other = any && (any.name !== w.release || any.namespace !== w.namespace) ? any : undefined
      if (!mine) return other ? ({ other } as ReleaseState) : null
      return { ...mine, other }
    },
    verdict(cur) {
      if (w.repair) return repairVerdict(w, cur, changesOf(cur))
      if (cur?.other)
        return {
          action: cur.release ? 'update' : 'create',
          changes: [],
          blocked: `Karpenter is already installed as release ${cur.other.namespace}/${cur.other.name} (chart ${cur.other.chartVersion}): a second controller would fight it; run \`karpctl doctor\` on that install, or remove it first`,
        }
      const adopted = cur?.release && !isOwned(cur.labels, w.labels)
      if (adopted && !w.adopt && !isOwned(cur.labels, w.adoptLabels ?? {}))
        return {
          action: 'update',
          changes: [],
          blocked:
            'installed without karpctl: pass --adopt to let karpctl upgrade it, or leave it to the tool that made it',
        }
      const changes = changesOf(cur)
      return {
        action: !cur ? 'create' : changes.length ? 'update' : 'unchanged',
        changes,
        note: adopted
          ? `adopted (installed without karpctl): its revisions are labelled ${Object.keys(w.adoptLabels ?? {}).join(', ')}, never as karpctl's; teardown keeps it`
          : undefined,
      }
    },
    async apply({ helm }, cur) {
      const h = await helm()
      // A release karpctl did not install keeps its owner: it gains the adoption label and the revision
      // it had before karpctl (what `helm rollback` gives back), never karpctl's created mark.
      const adopted = cur?.release && !isOwned(cur.labels, w.labels) && !w.repair
      const labels = adopted
        ? {
            ...w.adoptLabels,
            [ADOPTED_FROM_REVISION]: cur.labels[ADOPTED_FROM_REVISION] ?? String(cur.release.revision),
          }
        : w.labels
      // The values may hold the role ARN: a private file, removed whatever happens.
      const file = join(tmpdir(), `karpctl-values-${randomBytes(6).toString('hex')}.yaml`)
      await writeFileAtomic(file, stringify(w.values))
      try {
        await h.upgradeInstall({
          release: w.release,
          chart: w.chart,
          version: w.version,
          namespace: w.namespace,
          valuesFiles: [file],
          labels,
        })
      } finally {
        rmSync(file, { force: true })
      }
    },
  }
}

function repairVerdict(w: ReleaseWant, cur: ReleaseState | null, changes: FieldChange[]) {
  if (!cur?.release)
    return {
      action: 'update' as const,
      changes: [],
      blocked: `release ${w.namespace}/${w.release} is gone: nothing to repair`,
    }
  if (w.chartFolderVersion && w.chartFolderVersion !== w.expectedVersion)
    return {
      action: 'update' as const,
      changes: [],
      blocked: `--chart-dir holds ${w.chartName} ${w.chartFolderVersion} but the release runs ${w.expectedVersion}: a repair keeps the version; give the folder of ${w.expectedVersion}`,
    }
  const rest = changes.filter((c) => c.field !== 'chart')
  return rest.length
    ? {
        action: 'update' as const,
        changes: rest,
        note: `${w.repair}: a new revision (helm rollback undoes it), labelled ${Object.keys(w.labels).join(', ')}`,
      }
    : { action: 'unchanged' as const, changes: [] }
}
