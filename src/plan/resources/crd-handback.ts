// CRDs karpctl handed to its karpenter-crd release (install --adopt), given back with Helm's marks as
// they were before.
import type { KubeClient } from '../../context/kube.js'
import { leafChanges } from '../diff.js'
import type { Resource } from '../types.js'
import { CRD_ADOPTED_BY, REPLACED_MARKS, replacedMarks, type Crd } from './crd-handover.js'

interface HandedCrd {
  name: string
  restore: Record<string, unknown>
  /** The marks `restore` sets, as they are now. */
  now: Record<string, unknown>
}

/** A merge patch's nulls are removals: absent, as a plan shows them. */
const withoutNulls = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== null)
          .map(([k, x]) => [k, withoutNulls(x)]),
      )
    : v

export async function handedCrds(kube: KubeClient, clusterName: string): Promise<Crd[]> {
  const l = await kube.get<{ items: Crd[] }>('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')
  return (l?.items ?? []).filter((c) => c.metadata.annotations?.[CRD_ADOPTED_BY] === clusterName)
}

/**
 * CRDs that existed before karpctl handed them to its karpenter-crd release (install --adopt) get back
 * Helm's marks as they were; karpctl's record and the keep policy (which kept them through the release's
 * uninstall) go in the same patch.
 */
export function handedCrdsRestore(w: { clusterName: string; dependsOn: string[] }): Resource<HandedCrd[]> {
  return {
    address: 'kube.crds.restore',
    kind: 'CRD ownership',
    name: `${CRD_ADOPTED_BY}=${w.clusterName}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ kube }) {
      return (await handedCrds(kube, w.clusterName)).map((c) => {
        let before: { labels?: object; annotations?: object } = {}
        try {
          before = JSON.parse(c.metadata.annotations?.[REPLACED_MARKS] ?? '{}') as typeof before
        } catch {
          // An unreadable record: the marks come off (the state before any Helm release held it).
        }
        const restore = replacedMarks({ metadata: { name: c.metadata.name } })
        const labels = { ...restore.labels, ...before.labels }
        const annotations = {
          ...restore.annotations,
          ...before.annotations,
          [CRD_ADOPTED_BY]: null,
          [REPLACED_MARKS]: null,
        }
        const now = (have: Record<string, string> | undefined, marks: object) =>
          Object.fromEntries(
            Object.keys(marks).flatMap((k) => (have?.[k] === undefined ? [] : [[k, have[k]]])),
          )
        return {
          name: c.metadata.name,
          restore: { labels, annotations },
          now: {
            labels: now(c.metadata.labels, labels),
            annotations: now(c.metadata.annotations, annotations),
          },
        }
      })
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            // Each mark from what it is now to what it was before karpctl (a null one comes off).
            changes: cur.flatMap((c) => leafChanges(c.now, withoutNulls(c.restore), c.name)),
          },
    async apply({ kube }, cur) {
      for (const c of cur ?? [])
        await kube.write(
          'PATCH',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.name}`,
          { metadata: c.restore },
          'application/merge-patch+json',
        )
    },
  }
}
