// One annotation on a ServiceAccount Helm does not manage (`kubectl annotate`), recorded beside it.
import type { Resource } from '../types.js'

export const ADDED_ANNOTATIONS = 'karpctl.io/added-annotations'

interface Sa {
  metadata: { annotations?: Record<string, string> }
}

export function serviceAccountAnnotation(w: {
  namespace: string
  name: string
  key: string
  value: string
  group: string
}): Resource<Sa> {
  const path = `/api/v1/namespaces/${w.namespace}/serviceaccounts/${w.name}`
  return {
    address: `kube.sa-annotation.${w.key}`,
    kind: 'ServiceAccount annotation',
    name: `${w.namespace}/${w.name} ${w.key}`,
    group: w.group,
    dependsOn: [],
    desired: { [w.key]: w.value },
    permissions: [],
    observe: ({ kube }) => kube.get<Sa>(path),
    verdict(cur) {
      if (!cur)
        return {
          action: 'update',
          changes: [],
          blocked: `ServiceAccount ${w.namespace}/${w.name} does not exist`,
        }
      const have = cur.metadata.annotations?.[w.key]
      return have === w.value
        ? { action: 'unchanged', changes: [] }
        : {
            action: 'update',
            changes: [{ field: w.key, from: have, to: w.value }],
            note: `recorded in the ${ADDED_ANNOTATIONS} annotation`,
          }
    },
    async apply({ kube }, cur) {
      const added = new Set((cur?.metadata.annotations?.[ADDED_ANNOTATIONS] ?? '').split(',').filter(Boolean))
      added.add(w.key)
      await kube.write(
        'PATCH',
        path,
        { metadata: { annotations: { [w.key]: w.value, [ADDED_ANNOTATIONS]: [...added].join(',') } } },
        'application/merge-patch+json',
      )
    },
  }
}
