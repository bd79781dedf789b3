// Label selectors (metav1.LabelSelector): as the API's `labelSelector` parameter, and matched against
// a pod's labels as Kubernetes matches them.
import type { LabelSelector } from './types.js'

/** A workload's label selector as the API's `labelSelector` parameter. */
export function selectorString(sel: LabelSelector | undefined): string {
  const parts = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`)
  for (const e of sel?.matchExpressions ?? []) {
    const vs = (e.values ?? []).join(',')
    if (e.operator === 'In') parts.push(`${e.key} in (${vs})`)
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vs})`)
    else if (e.operator === 'Exists') parts.push(e.key)
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`)
  }
  return parts.join(',')
}

/** Kubernetes' label selector semantics: matchLabels and matchExpressions AND'ed; no selector matches nothing. */
export function selects(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return false
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key)
    const value = labels[e.key] ?? ''
    const ok =
      e.operator === 'In'
        ? has && (e.values ?? []).includes(value)
        : e.operator === 'NotIn'
          ? !has || !(e.values ?? []).includes(value)
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false
    if (!ok) return false
  }
  return true
}
