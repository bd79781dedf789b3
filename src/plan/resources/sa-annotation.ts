// One annotation on a ServiceAccount Helm does not manage (`kubectl annotate`), recorded beside it; when
// the annotation only takes effect in new pods, the controller is restarted after it.
import type { Resource } from '../types.js'
import { restartDeployment, RESTART_PENDING, type DeploymentRef } from './restart.js'

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
  /** The Deployment whose pods read the annotation only when they start. */
  restart?: DeploymentRef
}): Resource<Sa> {
  const path = `/api/v1/namespaces/${w.namespace}/serviceaccounts/${w.name}`
  return {
    address: `kube.sa-annotation.${w.key}`,
    kind: 'ServiceAccount annotation',
    name: `${w.namespace}/${w.name} ${w.key}`,
    group: w.group,
    dependsOn: [],
    desired: { [w.key]: w.value },
    documents: {
      ServiceAccount: {
        metadata: { namespace: w.namespace, name: w.name, annotations: { [w.key]: w.value } },
      },
    },
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
      const pending = w.restart && cur.metadata.annotations?.[RESTART_PENDING] !== undefined
      if (have === w.value && !pending) return { action: 'unchanged', changes: [] }
      const restart = w.restart && {
        field: 'restart',
        to: `deployment ${w.restart.namespace}/${w.restart.name}`,
        event: true,
      }
      return {
        action: 'update',
        changes: [
          ...(have === w.value ? [] : [{ field: w.key, from: have, to: w.value }]),
          ...(restart ? [restart] : []),
        ],
        note: `recorded in the ${ADDED_ANNOTATIONS} annotation`,
      }
    },
    async apply({ kube, now }, cur) {
      const added = new Set((cur?.metadata.annotations?.[ADDED_ANNOTATIONS] ?? '').split(',').filter(Boolean))
      added.add(w.key)
      const patch = (annotations: Record<string, string | null>) =>
        kube.write('PATCH', path, { metadata: { annotations } }, 'application/merge-patch+json')
      await patch({
        [w.key]: w.value,
        [ADDED_ANNOTATIONS]: [...added].join(','),
        ...(w.restart ? { [RESTART_PENDING]: 'true' } : {}),
      })
      if (!w.restart) return
      await restartDeployment(kube, w.restart, now())
      await patch({ [RESTART_PENDING]: null })
    },
  }
}
