// Karpenter's CRDs handed to the `karpenter-crd` release before its `helm upgrade --install`. The
// getting-started install (`helm upgrade --install karpenter .../karpenter`) creates them from the
// chart's crds/ folder, which Helm never marks as a release's, and Helm refuses to install a release
// over an object without its marks (`missing key "app.kubernetes.io/managed-by"`), on every re-run.
// Helm adopts an existing object that carries them, so they are set here, in one merge patch per CRD.
// Helm's marks are the record: teardown removes them with the release (or keeps them, --keep-crds).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseVersion } from '../../desired/version.js'
import { InputError, quote } from '../../errors.js'
import { FileRefused, readRegularFileSync } from '../../fs/read-regular.js'
import type { FieldChange, Resource } from '../types.js'

export const HELM_MANAGED_BY = 'app.kubernetes.io/managed-by'
export const HELM_RELEASE_NAME = 'meta.helm.sh/release-name'
export const HELM_RELEASE_NAMESPACE = 'meta.helm.sh/release-namespace'
const RELEASE = 'karpenter-crd'
/** Releases that carry Karpenter's CRDs: the CRD chart, and the controller chart in older setups. */
const KARPENTER_RELEASES = ['karpenter', 'karpenter-crd']

/** A CustomResourceDefinition as far as ownership (and the 1.0.x conversion webhook) goes. */
export interface Crd {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  spec?: { conversion?: { strategy?: string } }
}

/**
 * The 1.0.x charts convert v1beta1 through a webhook on the controller's service (port 8443); from 1.1
 * the CRDs have none. Helm's adoption of a CRD the chart's crds/ folder made never removes a field its
 * new manifest leaves out, so the hand-over does: the CRDs then equal the target chart's (the API
 * server's default, strategy None), instead of pointing at a port the new controller no longer serves.
 */
const NO_CONVERSION = { strategy: 'None', webhook: null }

/** The CRDs of the chart that exist in the cluster. */
export interface CrdOwnership {
  crds: Crd[]
}

const V1_CRDS = ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws']
// Karpenter's own group: no other tool makes it, so it is handed over whenever it exists, even for a
// chart version older than NodeOverlay (Helm ignores marks on an object its release does not hold).
const NODE_OVERLAYS = 'nodeoverlays.karpenter.sh'
// The autoscaling SIG's CRD, which cluster-autoscaler users install too: claimed only by chart versions
// that ship it (from 1.14, as the 1.14.1 chart does).
const CAPACITY_BUFFERS = 'capacitybuffers.autoscaling.x-k8s.io'

/** The CRDs the karpenter-crd chart of a published version holds. */
export function chartCrdNames(version: string): string[] {
  const v = parseVersion(version)
  const buffers = v !== null && (v.major > 1 || (v.major === 1 && v.minor >= 14))
  return [...V1_CRDS, NODE_OVERLAYS, ...(buffers ? [CAPACITY_BUFFERS] : [])]
}

/** A chart template, only if it is a regular file of bounded size (a FIFO would block the run). */
function readTemplate(path: string): string {
  try {
    return readRegularFileSync(path)
  } catch (err) {
    throw new InputError(
      `--chart-dir: ${quote(path)} ${err instanceof FileRefused ? err.reason : 'cannot be read'}: give a chart folder of regular files`,
      'INVALID_CHART_DIR',
    )
  }
}

/** The CRDs a karpenter-crd chart folder holds: each template's metadata.name. */
export function chartDirCrdNames(dir: string): string[] {
  const templates = join(dir, 'templates')
  let files: string[]
  try {
    files = readdirSync(templates).filter((f) => f.endsWith('.yaml'))
  } catch {
    files = []
  }
  const names = files
    .map((f) => readTemplate(join(templates, f)))
    .filter((text) => /^kind: CustomResourceDefinition$/m.test(text))
    .map((text) => /^ {2}name: (\S+)$/m.exec(text)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort()
  // A folder without them is not the CRD chart: one line before the plan, not helm's failure mid-apply.
  if (names.length === 0)
    throw new InputError(
      `--chart-dir: ${quote(templates)} holds no CustomResourceDefinition: give the folder that holds karpenter-crd/ and karpenter/`,
    )
  return names
}

const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`

/** On a CRD karpctl handed over: the cluster, and Helm's marks as they were (teardown writes them back). */
export const CRD_ADOPTED_BY = 'karpctl.io/adopted-by'
export const REPLACED_MARKS = 'karpctl.io/replaced-marks'
/** Helm never deletes an object with this annotation: a CRD that existed before karpctl outlives its release. */
export const HELM_KEEP = 'helm.sh/resource-policy'

/** The marks a CRD had before the handover, as a merge patch that restores them (null: absent). */
export function replacedMarks(c: Crd): {
  labels: Record<string, string | null>
  annotations: Record<string, string | null>
} {
  return {
    labels: { [HELM_MANAGED_BY]: c.metadata.labels?.[HELM_MANAGED_BY] ?? null },
    annotations: {
      [HELM_RELEASE_NAME]: c.metadata.annotations?.[HELM_RELEASE_NAME] ?? null,
      [HELM_RELEASE_NAMESPACE]: c.metadata.annotations?.[HELM_RELEASE_NAMESPACE] ?? null,
      [HELM_KEEP]: c.metadata.annotations?.[HELM_KEEP] ?? null,
    },
  }
}

export function crdHandover(w: {
  clusterName: string
  namespace: string
  /** The CRDs the target chart holds. */
  names: string[]
  adopt: boolean
  /**
   * Record the marks as they were, for teardown to give back (default). Not for an upgrade of an install
   * karpctl did not make: the handover is part of the upgrade the user keeps.
   */
  record?: boolean
  /** The target chart's CRDs have no conversion webhook (Karpenter ≥ 1.1): remove one that is there. */
  dropConversion?: boolean
  dependsOn: string[]
}): Resource<CrdOwnership> {
  const record = w.record ?? true
  const marks = {
    labels: { [HELM_MANAGED_BY]: 'Helm' },
    annotations: { [HELM_RELEASE_NAME]: RELEASE, [HELM_RELEASE_NAMESPACE]: w.namespace },
  }
  const converts = (c: Crd) => w.dropConversion === true && c.spec?.conversion?.strategy === 'Webhook'
  const markChanges = (c: Crd): FieldChange[] => [
    ...Object.entries(marks.labels)
      .filter(([k, v]) => c.metadata.labels?.[k] !== v)
      .map(([k, v]) => ({ field: `${c.metadata.name} label ${k}`, from: c.metadata.labels?.[k], to: v })),
    ...Object.entries(marks.annotations)
      .filter(([k, v]) => c.metadata.annotations?.[k] !== v)
      .map(([k, v]) => ({
        field: `${c.metadata.name} annotation ${k}`,
        from: c.metadata.annotations?.[k],
        to: v,
      })),
  ]
  const changesOf = (c: Crd): FieldChange[] => [
    ...(converts(c)
      ? [{ field: `${c.metadata.name} spec.conversion.strategy`, from: 'Webhook', to: 'None' }]
      : []),
    ...markChanges(c),
  ]
  const target = `${w.namespace}/${RELEASE}`
  return {
    address: `crd-handover.${RELEASE}`,
    kind: 'CRD ownership',
    name: target,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { release: RELEASE, namespace: w.namespace, crds: w.names },
    permissions: [],
    async observe({ kube }) {
      const found = await Promise.all(w.names.map((n) => kube.get<Crd>(crdPath(n))))
      const crds = found.filter((c): c is Crd => c !== null)
      return crds.length ? { crds } : null
    },
    verdict(cur) {
      const pending = (cur?.crds ?? []).filter((c) => changesOf(c).length > 0)
      if (pending.length === 0) return { action: 'unchanged', changes: [] }
      const converting = pending.some(converts)
      const dropNote = `the 1.0.x conversion webhook removed (the target chart's CRDs have none; Helm's adoption would keep it)`
      const marking = pending.filter((c) => markChanges(c).length > 0)
      // Already the release's: only the webhook goes.
      if (!marking.length) return { action: 'update', changes: pending.flatMap(changesOf), note: dropNote }
      const owners = previousOwners(marking, target)
      if (!w.adopt)
        return {
          action: 'update',
          changes: [],
          blocked: blockedReason(marking, owners, target),
        }
      return {
        action: 'update',
        changes: pending.flatMap(changesOf),
        note: [
          ...(converting ? [dropNote] : []),
          record
            ? `handed to Helm release ${target}, whose upgrade then takes them over; they existed before karpctl, so they are marked ${HELM_KEEP}=keep and recorded (${REPLACED_MARKS}): teardown removes the release and gives them back as they were, with every object of their kinds`
            : `handed to Helm release ${target} for good, whose upgrade then takes them over (part of the upgrade, kept by teardown; marked ${HELM_KEEP}=keep)`,
          ...owners.map(
            (o) =>
              `taken from Helm release ${o.release}${o.foreign ? ' (another tool)' : ''}, which must stop managing ${o.crds.join(', ')}: its uninstall would delete them with every object of their kinds`,
          ),
        ].join('; '),
      }
    },
    async apply({ kube }, cur) {
      const pending = (cur?.crds ?? []).filter((c) => changesOf(c).length > 0)
      // A merge patch sets exactly the three marks and leaves the rest of the CRD alone; the same patch
      // again changes nothing, so a run that stopped half-way is finished by running it again.
      // The record rides in the same patch as the marks; a re-run keeps the first record (the marks
      // as they were before karpctl), not the marks of its own half-finished run.
      for (const c of pending)
        await kube.write(
          'PATCH',
          crdPath(c.metadata.name),
          {
            ...(converts(c) ? { spec: { conversion: NO_CONVERSION } } : {}),
            // Already the release's (only the webhook goes): its marks and records stay as they are.
            ...(markChanges(c).length
              ? {
                  metadata: {
                    labels: marks.labels,
                    annotations: {
                      ...marks.annotations,
                      [HELM_KEEP]: 'keep',
                      ...(record
                        ? {
                            [CRD_ADOPTED_BY]: w.clusterName,
                            [REPLACED_MARKS]:
                              c.metadata.annotations?.[REPLACED_MARKS] ?? JSON.stringify(replacedMarks(c)),
                          }
                        : {}),
                    },
                  },
                }
              : {}),
          },
          'application/merge-patch+json',
        )
    },
  }
}

interface PreviousOwner {
  release: string
  foreign: boolean
  crds: string[]
}

/** The Helm releases (other than the target) that marked CRDs as theirs. */
function previousOwners(crds: Crd[], target: string): PreviousOwner[] {
  const owners = new Map<string, PreviousOwner>()
  for (const c of crds) {
    const name = c.metadata.annotations?.[HELM_RELEASE_NAME]
    if (!name) continue
    const release = `${c.metadata.annotations?.[HELM_RELEASE_NAMESPACE] ?? '?'}/${name}`
    if (release === target) continue
    const o = owners.get(release) ?? { release, foreign: !KARPENTER_RELEASES.includes(name), crds: [] }
    o.crds.push(c.metadata.name)
    owners.set(release, o)
  }
  return [...owners.values()]
}

function blockedReason(pending: Crd[], owners: PreviousOwner[], target: string): string {
  const owned = new Set(owners.flatMap((o) => o.crds))
  const unmarked = pending.map((c) => c.metadata.name).filter((n) => !owned.has(n))
  const reasons = [
    ...(unmarked.length
      ? [
          `${unmarked.join(', ')} exist without Helm's marks for release ${target} (the karpenter chart's crds/ folder or kubectl made them), so helm would refuse to install over them`,
        ]
      : []),
    ...owners.map(
      (o) =>
        `${o.crds.join(', ')} belong to Helm release ${o.release}${o.foreign ? ' (another tool)' : ''}, which must stop managing them once taken: its uninstall would delete them`,
    ),
  ]
  return `${reasons.join('; ')}; pass --adopt to hand them to ${target}`
}
