// A Helm release karpctl installs with the user's helm: `upgrade --install` with generated values on
// its standard input (every annotation, label and toleration value a string). The release Secret
// carries karpctl's label, so a re-run (or teardown) knows the release is karpctl's.
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { helmLeftAfter, helmProcessesFor } from '../../context/helm.js'
import { findRelease, releaseNamed } from '../../facts/collect-kube.js'
import type { HelmRelease } from '../../facts/types.js'
import { FileRefused, readRegularFileSync } from '../../fs/read-regular.js'
import { InputError, quote } from '../../errors.js'
import { karpenterVersionProblem } from '../../desired/flags.js'
import { redact } from '../../redact/redact.js'
import { isOwned, sameDocument } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { FieldChange, Resource } from '../types.js'

/** On an adopted release: the revision it had before karpctl's first upgrade. */
export const ADOPTED_FROM_REVISION = 'karpctl.io/adopted-from-revision'

/** On a release `karpctl upgrade` moved: the version it moved it to (the user's asked-for change, kept). */
export const UPGRADED_TO = 'karpctl.io/upgraded-to'

export interface ReleaseState {
  release: HelmRelease
  labels: Record<string, string>
  /** Another Karpenter release elsewhere in the cluster (a second controller would fight this one). */
  other?: HelmRelease
  /** The newest revision below `release` that was deployed: where a stuck upgrade goes back to. */
  lastDeployed?: number
  /** On a pending release: local helm processes at it (null: neither /proc nor `ps` could tell). */
  helmRunning?: number[] | null
}

/** How a release left pending by a killed helm gets unstuck before the upgrade, or why it cannot. */
export type Recovery = { rollback: number } | { uninstall: true } | { blocked: string }

/**
 * A pending release makes every helm operation fail ("another operation is in progress") until it is
 * undone. Undone only when no local helm is still at it: a killed karpctl leaves none, a running helm
 * (another terminal) must be left to finish.
 */
export function recoveryOf(cur: ReleaseState | null): Recovery | null {
  const r = cur?.release
  if (!r || !r.status.startsWith('pending-')) return null
  const where = `release ${r.namespace}/${r.name} is ${r.status} (revision ${r.revision})`
  if (cur.helmRunning === null)
    return {
      blocked: `${where} and neither /proc nor \`ps\` can tell whether a helm is still at it: once none is, run \`helm rollback ${r.name} --namespace ${r.namespace}\` (or \`helm uninstall\` for a first install), then the same command again`,
    }
  if (cur.helmRunning?.length)
    return {
      blocked: `${where}: helm (pid ${cur.helmRunning.join(', ')}) is still at it; let it finish, then run the same command again`,
    }
  if (cur.lastDeployed !== undefined) return { rollback: cur.lastDeployed }
  if (r.status === 'pending-install') return { uninstall: true }
  return {
    blocked: `${where} with no deployed revision to go back to: run \`helm uninstall ${r.name} --namespace ${r.namespace}\`, then the same command again`,
  }
}

const recoveryNote = (cur: ReleaseState, rec: Recovery): string =>
  'rollback' in rec
    ? `left ${cur.release.status} by a stopped helm: rolled back to revision ${rec.rollback} first, then upgraded`
    : `left ${cur.release.status} by a stopped first install: uninstalled first, then installed`

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
  /**
   * `karpctl upgrade`'s: every revision it writes carries `labels` (on an install karpctl did not make,
   * the adoption and UPGRADED_TO), never a rollback point — the upgrade is what the user asked for, so
   * teardown keeps it (and takes karpctl's labels off), and any rollback point an earlier adoption
   * left is cleared (Helm merges a release's labels across revisions; "null" removes one).
   */
  upgradedTo?: string
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
    async observe({ kube, kubeTarget }) {
      const [first, any] = await Promise.all([
        releaseNamed(kube, w.namespace, w.release),
        w.unique ? findRelease(kube) : Promise.resolve(null),
      ])
      const other = any && (any.name !== w.release || any.namespace !== w.namespace) ? any : undefined
      let mine = first
      if (!mine) return other ? ({ other } as ReleaseState) : null
      // Only a pending release needs to know whether a helm is at it (ps is not run otherwise).
      let helmRunning: number[] | null | undefined
      if (mine.release.status.startsWith('pending-')) {
        const probe = () =>
          helmProcessesFor({
            cluster: kube.server,
            namespace: w.namespace,
            release: w.release,
            kubeContext: kubeTarget?.context,
          })
        helmRunning = await probe()
        // A helm at this release (a killed run's, still finishing): waited for, then the release read
        // again — what it left is what this run plans from.
        if (helmRunning?.length) {
          helmRunning = await helmLeftAfter(probe)
          mine = await releaseNamed(kube, w.namespace, w.release, true)
          if (!mine) return other ? ({ other } as ReleaseState) : null
          if (!mine.release.status.startsWith('pending-')) helmRunning = undefined
        }
      }
      return { ...mine, other, ...(helmRunning === undefined ? {} : { helmRunning }) }
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
      // No adoption labels asked for is no adoption: another tool's release is never taken silently.
      if (adopted && !w.adopt && !(w.adoptLabels !== undefined && isOwned(cur.labels, w.adoptLabels)))
        return {
          action: 'update',
          changes: [],
          blocked:
            'installed without karpctl: pass --adopt to let karpctl upgrade it, or leave it to the tool that made it',
        }
      const rec = recoveryOf(cur)
      if (rec && 'blocked' in rec) return { action: 'update', changes: [], blocked: rec.blocked }
      // Undone only when the stuck revision is karpctl's own (or its adoption's): another tool's
      // pending operation is that tool's to finish.
      const ours =
        cur?.release &&
        (isOwned(cur.labels, w.labels) || (w.adoptLabels !== undefined && isOwned(cur.labels, w.adoptLabels)))
      if (rec && !ours)
        return {
          action: 'update',
          changes: [],
          blocked: `release ${w.namespace}/${w.release} is ${cur?.release?.status} by a helm run karpctl did not start: let its tool finish it (or \`helm rollback\` it), then run the same command again`,
        }
      const changes = changesOf(cur)
      const notes = [
        ...(adopted && w.upgradedTo
          ? [
              `installed without karpctl: upgraded as asked, its new revisions labelled ${Object.keys(w.labels).join(', ')} (no rollback point); teardown keeps it at ${w.upgradedTo}, taking off karpctl's labels only`,
            ]
          : []),
        ...(adopted && !w.upgradedTo
          ? [
              w.adoptLabels
                ? `adopted (installed without karpctl): its revisions are labelled ${Object.keys(w.adoptLabels).join(', ')}, never as karpctl's; teardown keeps it`
                : "adopted (installed without karpctl): never labelled as karpctl's; teardown keeps it",
            ]
          : []),
        ...(rec && cur ? [recoveryNote(cur, rec)] : []),
      ]
      return {
        action: !cur ? 'create' : changes.length ? 'update' : 'unchanged',
        changes,
        note: notes.length ? notes.join('; ') : undefined,
      }
    },
    async apply({ helm }, cur) {
      const h = await helm()
      // A release karpctl did not install keeps its owner: it gains the adoption label and the revision
      // it had before karpctl (what `helm rollback` gives back), never karpctl's created mark.
      const adopted = cur?.release && !isOwned(cur.labels, w.labels) && !w.repair
      const labels = w.upgradedTo
        ? { ...w.labels, ...(adopted ? { [ADOPTED_FROM_REVISION]: 'null' } : {}) }
        : adopted
          ? {
              ...w.adoptLabels,
              [ADOPTED_FROM_REVISION]: cur.labels[ADOPTED_FROM_REVISION] ?? String(cur.release.revision),
            }
          : w.labels
      // A stuck release first (each a step helm finishes or leaves as it was: a re-run observes again).
      const rec = w.repair ? null : recoveryOf(cur)
      // No --wait: the upgrade right after rolls out anyway (and a rollout waited on here may never end
      // where the old revision's pods cannot start).
      if (rec && 'rollback' in rec)
        await h.rollback({ release: w.release, namespace: w.namespace, revision: rec.rollback, wait: false })
      else if (rec && 'uninstall' in rec) await h.uninstall(w.release, w.namespace)
      // The values may hold the role ARN and the user's secrets: they go to helm on its standard input,
      // never through a file a kill would leave behind.
      await h.upgradeInstall({
        release: w.release,
        chart: w.chart,
        version: w.version,
        namespace: w.namespace,
        values: stringify(w.values),
        labels,
      })
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
