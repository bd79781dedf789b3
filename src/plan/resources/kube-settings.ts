// What a created Kubernetes object gets, as plan lines: one per top-level setting (requirements,
// limits, disruption, role, selector terms…), so a reviewer reads the chosen NodePool and
// EC2NodeClass before they exist, not just their names.
import type { FieldChange } from '../types.js'
import type { KubeObject } from './kube-shape.js'

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** A pod-template-like wrapper (a NodePool's `template`): its settings are the ones a reader means. */
const isTemplate = (v: unknown): v is Record<string, unknown> =>
  isMap(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k === 'metadata' || k === 'spec')

function settings(spec: Record<string, unknown>, prefix: string): FieldChange[] {
  return Object.entries(spec).flatMap(([k, v]) =>
    isTemplate(v)
      ? Object.entries(v).flatMap(([part, inner]) =>
          isMap(inner) ? settings(inner, `${prefix}.${k}.${part}`) : [],
        )
      : [{ field: `${prefix}.${k}`, to: v }],
  )
}

export function createdSettings(o: KubeObject): FieldChange[] {
  const labels = o.metadata.labels && Object.keys(o.metadata.labels).length ? o.metadata.labels : undefined
  return [...(labels ? [{ field: 'metadata.labels', to: labels }] : []), ...settings(o.spec ?? {}, 'spec')]
}
