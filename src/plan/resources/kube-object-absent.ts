// A Kubernetes object karpctl labelled as its own, deleted and, where asked, waited for: itself (its
// finalizer lifted) or what it leaves behind (NodeClaims and nodes).
import { isOwned } from '../compare.js'
import type { ApplyEnv, Resource } from '../types.js'
import { ignoreMissing } from './absent.js'

interface Labelled {
  metadata: { labels?: Record<string, string>; deletionTimestamp?: string; finalizers?: string[] }
}

/**
 * A Kubernetes object karpctl labelled as its own; `waitGone` lists what must disappear after it (nodes);
 * `waitSelf` waits for the object itself, until its finalizers are lifted (an EC2NodeClass: Karpenter
 * deletes its instance profile first, and must still run to do so).
 */
export function kubeObjectAbsent(w: {
  address: string
  kind: string
  name: string
  path: string
  labels: Record<string, string>
  dependsOn: string[]
  waitGone?: { paths: string[]; timeoutMs: number; what: string }
  waitSelf?: { timeoutMs: number; who: string; check?: string }
}): Resource<Labelled> {
  return {
    address: w.address,
    kind: w.kind,
    name: w.name,
    group: 'Kubernetes',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    observe: ({ kube }) => kube.get<Labelled>(w.path),
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'already gone' }
      if (!isOwned(cur.metadata.labels ?? {}, w.labels))
        return { action: 'unchanged', changes: [], note: "kept: not labelled as karpctl's" }
      return {
        action: 'delete',
        changes: [],
        note: w.waitGone
          ? `waits for its ${w.waitGone.what} to go`
          : w.waitSelf
            ? `waits until it is gone (${w.waitSelf.who} lifts its finalizers)`
            : undefined,
      }
    },
    async apply({ kube, sleep, progress }, cur) {
      if (cur && !cur.metadata.deletionTimestamp) await ignoreMissing(kube.write('DELETE', w.path))
      if (w.waitSelf) await waitSelf(kube, w, w.waitSelf, sleep, progress)
      if (!w.waitGone) return
      const t0 = Date.now()
      for (;;) {
        const left = (
          await Promise.all(w.waitGone.paths.map((p) => kube.fresh<{ items?: unknown[] }>(p)))
        ).reduce((n, l) => n + (l?.items?.length ?? 0), 0)
        if (left === 0) return
        if (Date.now() - t0 > w.waitGone.timeoutMs)
          throw new Error(
            `${left} ${w.waitGone.what} of ${w.kind} ${w.name} still draining after ${Math.round(w.waitGone.timeoutMs / 1000)} s: run the same command again to keep waiting`,
          )
        progress?.(`${w.kind} ${w.name}: waiting for ${left} ${w.waitGone.what} to go`)
        await sleep(2000)
      }
    },
  }
}

/** An EC2NodeClass's wait: Karpenter lifts its finalizer (the controller deployment named as karpctl installs it). */
export const karpenterLifts = (timeoutMs: number, namespace?: string) => ({
  timeoutMs,
  who: 'the Karpenter controller',
  ...(namespace ? { check: `kubectl -n ${namespace} get deployment karpenter` } : {}),
})

/** Until the object is gone, bounded: a line of progress every poll, the way on at the bound. */
async function waitSelf(
  kube: ApplyEnv['kube'],
  w: { kind: string; name: string; path: string },
  o: { timeoutMs: number; who: string; check?: string },
  sleep: ApplyEnv['sleep'],
  progress: ApplyEnv['progress'],
): Promise<void> {
  const t0 = Date.now()
  for (;;) {
    const left = await kube.fresh<Labelled>(w.path)
    if (!left) return
    const finalizers = left.metadata?.finalizers ?? []
    const held = finalizers.length ? ` (finalizers ${finalizers.join(', ')})` : ''
    if (Date.now() - t0 > o.timeoutMs)
      throw new Error(
        `${w.kind} ${w.name} still there after ${Math.round(o.timeoutMs / 1000)} s${held}: ${o.who} lifts them once it has cleaned up; check that it runs${o.check ? ` (\`${o.check}\`)` : ''}, then run the same command again to keep waiting`,
      )
    progress?.(`${w.kind} ${w.name}: waiting for it to go${held}`)
    await sleep(2000)
  }
}
