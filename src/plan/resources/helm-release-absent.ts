// A Helm release teardown removes: uninstalled when karpctl installed it, rolled back to the revision
// before karpctl when it adopted it, only karpctl's labels off when it merely upgraded or marked it.
import type { KubeClient } from '../../context/kube.js'
import { releaseNamed } from '../../facts/collect-kube.js'
import { isOwned } from '../compare.js'
import type { Resource } from '../types.js'
import { gone } from './absent.js'
import { handedCrds } from './crd-handback.js'
import { CRD_ADOPTED_BY, HELM_RELEASE_NAME, HELM_RELEASE_NAMESPACE, type Crd } from './crd-handover.js'
import { ADOPTED_FROM_REVISION, UPGRADED_TO } from './helm-release.js'

export function helmReleaseAbsent(w: {
  address: string
  release: string
  namespace: string
  labels: Record<string, string>
  dependsOn: string[]
  /**
   * The karpenter-crd release's CRDs that existed before karpctl handed them to it (the cluster whose
   * record they carry): the release is then forgotten, never uninstalled — helm uninstall would delete
   * them with every NodePool, whatever their live annotations say (Helm reads its keep policy from the
   * release's manifest only).
   */
  handedCrdsOf?: string
}): Resource<{ labels: Record<string, string>; chart: string; revision: number; handed: string[] }> {
  return {
    address: w.address,
    kind: 'Helm release',
    name: `${w.namespace}/${w.release}`,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ kube }) {
      const r = await releaseNamed(kube, w.namespace, w.release)
      if (!r) return null
      const handed = w.handedCrdsOf ? await handedCrds(kube, w.handedCrdsOf) : []
      return {
        labels: r.labels,
        chart: `${r.release.chartName}-${r.release.chartVersion}`,
        revision: r.release.revision,
        handed: handed.map((c) => c.metadata.name),
      }
    },
    verdict(cur) {
      if (!cur) return gone
      if (!isOwned(cur.labels, w.labels)) {
        const before = cur.labels[ADOPTED_FROM_REVISION]
        if (before)
          return {
            action: 'update',
            changes: [{ field: 'revision', from: cur.revision, to: `rollback to ${before}` }],
            note: `kept: installed without karpctl; given back as it was before karpctl (revision ${before}, \`helm uninstall ${w.release} -n ${w.namespace}\` removes it)`,
          }
        const ours = karpctlLabels(cur.labels)
        const upgraded = cur.labels[UPGRADED_TO]
        if (ours.length)
          return {
            action: 'update',
            changes: ours.map((k) => ({ field: `label ${k}`, from: cur.labels[k] })),
            note: `kept: installed without karpctl${upgraded ? `, upgraded by karpctl to ${upgraded} as asked (kept at that version)` : ''}; only karpctl's labels come off (\`helm uninstall ${w.release} -n ${w.namespace}\` removes it)`,
          }
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: installed without karpctl (\`helm uninstall ${w.release} -n ${w.namespace}\`)`,
        }
      }
      if (cur.handed.length)
        return {
          action: 'delete',
          changes: [{ field: 'chart', from: cur.chart }],
          note: `its CRDs existed before karpctl (${cur.handed.join(', ')}): the release's record is removed and they are kept, with every object of their kinds`,
        }
      return { action: 'delete', changes: [{ field: 'chart', from: cur.chart }] }
    },
    async apply({ helm, kube }, cur) {
      const notOurs = cur && !isOwned(cur.labels, w.labels)
      const before = notOurs ? cur.labels[ADOPTED_FROM_REVISION] : undefined
      if (notOurs && !before) {
        await stripKarpctlLabels(kube, w.namespace, w.release)
        return
      }
      if (before) {
        // The rollback's revision is the old one's copy, labels included: no adoption mark is left.
        await (
          await helm()
        ).rollback({
          release: w.release,
          namespace: w.namespace,
          revision: Number(before),
          wait: true,
        })
        return
      }
      if (cur?.handed.length) {
        // The CRDs the release itself created (no record of existing before) are karpctl's: deleted,
        // as helm would. Then Helm's record of the release, its Secrets: without them helm forgets the
        // release and deletes nothing. The handed CRDs' marks are given back after (kube.crds.restore).
        const l = await kube.fresh<{ items: Crd[] }>(
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        )
        for (const c of l?.items ?? []) {
          const a = c.metadata.annotations ?? {}
          if (
            a[HELM_RELEASE_NAME] === w.release &&
            a[HELM_RELEASE_NAMESPACE] === w.namespace &&
            a[CRD_ADOPTED_BY] === undefined
          )
            await kube.write(
              'DELETE',
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.metadata.name}`,
            )
        }
        const sel = encodeURIComponent(`owner=helm,name=${w.release}`)
        await kube.write('DELETE', `/api/v1/namespaces/${w.namespace}/secrets?labelSelector=${sel}`)
        return
      }
      await (await helm()).uninstall(w.release, w.namespace)
    },
  }
}

/** karpctl's labels on a release (its created mark, an adoption, an upgrade's): all under karpctl.io/. */
const karpctlLabels = (labels: Record<string, string>) =>
  Object.keys(labels)
    .filter((k) => k.startsWith('karpctl.io/'))
    .sort()

/**
 * karpctl's labels off every revision of a release it keeps (Helm carries a release's labels from its
 * newest revision into the next, so each revision loses them): one merge patch per Secret.
 */
async function stripKarpctlLabels(kube: KubeClient, namespace: string, release: string) {
  const sel = encodeURIComponent(`owner=helm,name=${release}`)
  const l = await kube.fresh<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    `/api/v1/namespaces/${namespace}/secrets?labelSelector=${sel}`,
  )
  for (const s of l?.items ?? []) {
    const off = karpctlLabels(s.metadata.labels ?? {})
    if (off.length)
      await kube.write(
        'PATCH',
        `/api/v1/namespaces/${namespace}/secrets/${s.metadata.name}`,
        { metadata: { labels: Object.fromEntries(off.map((k) => [k, null])) } },
        'application/merge-patch+json',
      )
  }
}
