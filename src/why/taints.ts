// Taints against tolerations, as Kubernetes matches them (k8s.io/api core/v1 Toleration.ToleratesTaint)
// and as Karpenter applies them to a NodePool: its template's `taints` must all be tolerated; its
// `startupTaints` are expected to be removed once the node is up, so a pod need not tolerate them.
import type { Taint, Toleration } from './types.js'

/** `key=value:Effect`, or `key:Effect` for a taint without a value (kubectl's notation). */
export const taintText = (t: Taint) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`

export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false
  if (t.key && t.key !== taint.key) return false
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      // The API server keeps a toleration's value a string; anything else matches no taint.
      return (
        (typeof t.value === 'string' ? t.value : t.value === undefined ? '' : undefined) ===
        (taint.value ?? '')
      )
    case 'Exists':
      return true
    default:
      return false
  }
}

/**
 * The first taint no toleration of the pod tolerates, or undefined when the pod tolerates them all.
 * `soft`: a PreferNoSchedule taint never keeps a pending pod off a NodePool — when a NodePool has one,
 * Karpenter's scheduler relaxes the pod with a toleration of every PreferNoSchedule taint
 * (scheduling/preferences.go, toleratePreferNoSchedule). A DaemonSet's pod gets the same toleration
 * when Karpenter counts its overhead (scheduler.go isDaemonPodCompatible): `soft` for both.
 */
export function untolerated(
  taints: Taint[] | undefined,
  tolerations: Toleration[] | undefined,
  { soft = false } = {},
): Taint | undefined {
  return (taints ?? []).find(
    (taint) =>
      !(soft && taint.effect === 'PreferNoSchedule') && !(tolerations ?? []).some((t) => tolerates(t, taint)),
  )
}

/** The toleration that makes a pod tolerate exactly this taint. */
export function tolerationFor(taint: Taint): Toleration {
  return taint.value
    ? { key: taint.key, operator: 'Equal', value: taint.value, effect: taint.effect }
    : { key: taint.key, operator: 'Exists', effect: taint.effect }
}
