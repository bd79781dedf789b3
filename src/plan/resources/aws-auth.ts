// The node role in the aws-auth ConfigMap (clusters whose authentication mode has no access entries).
// karpctl does not own aws-auth: each mapping it adds is listed in the `karpctl.io/added-map-roles`
// annotation, written in the same update as the mapping, so teardown removes exactly those.
import type { KubeClient } from '../../context/kube.js'
import type { Resource } from '../types.js'
import { mapRoles, mapRolesProblem, withMapRole, type MapRole } from './map-roles.js'

export const ADDED_MAP_ROLES = 'karpctl.io/added-map-roles'
const PATH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'
export const NODE_GROUPS = ['system:bootstrappers', 'system:nodes']

interface ConfigMap {
  metadata: {
    name: string
    namespace: string
    resourceVersion?: string
    annotations?: Record<string, string>
    labels?: Record<string, string>
  }
  data?: Record<string, string>
}
const entryFor = (cm: ConfigMap | null, arn: string) =>
  mapRoles(cm?.data?.mapRoles).find((r) => r.rolearn === arn)

export function awsAuthEntry(w: {
  roleArn: string
  dependsOn: string[]
  managedLabel: [string, string]
}): Resource<ConfigMap> {
  const wanted: MapRole = {
    rolearn: w.roleArn,
    username: 'system:node:{{EC2PrivateDNSName}}',
    groups: NODE_GROUPS,
  }
  return {
    address: 'aws-auth.node',
    kind: 'aws-auth mapping',
    name: w.roleArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: wanted as Record<string, unknown>,
    documents: { 'aws-auth mapRoles entry': wanted },
    permissions: [],
    observe: ({ kube }) => kube.get<ConfigMap>(PATH),
    verdict(cm) {
      const problem = mapRolesProblem(cm?.data?.mapRoles)
      if (problem)
        return {
          action: 'update',
          changes: [],
          blocked: `aws-auth mapRoles ${problem}: karpctl cannot add an entry to it; fix it (\`kubectl edit configmap aws-auth -n kube-system\`) and run again`,
        }
      const have = entryFor(cm, w.roleArn)
      if (!have)
        return {
          action: cm ? 'update' : 'create',
          changes: [{ field: 'mapRoles entry', to: wanted }],
          note: cm
            ? `recorded in the ${ADDED_MAP_ROLES} annotation for teardown`
            : 'aws-auth does not exist: karpctl creates it',
        }
      const lacking = NODE_GROUPS.filter((g) => !(have.groups ?? []).includes(g))
      if (lacking.length)
        return {
          action: 'update',
          changes: [],
          blocked: `aws-auth maps it without ${lacking.join(', ')}: nodes could not join; add the groups to that entry (\`kubectl edit configmap aws-auth -n kube-system\`) and run again`,
        }
      return { action: 'unchanged', changes: [] }
    },
    async apply({ kube }) {
      await addMapping(kube, wanted, w.managedLabel)
    },
  }
}

/** Read-modify-write on the live object; a concurrent writer makes it a 409, which the executor retries. */
async function addMapping(kube: KubeClient, wanted: MapRole, label: [string, string]) {
  const cm = await kube.fresh<ConfigMap>(PATH)
  if (entryFor(cm, wanted.rolearn ?? '')) return
  if (!cm) {
    await kube.write('POST', '/api/v1/namespaces/kube-system/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'aws-auth',
        namespace: 'kube-system',
        labels: { [label[0]]: label[1] },
        annotations: { [ADDED_MAP_ROLES]: JSON.stringify([wanted.rolearn]) },
      },
      data: { mapRoles: withMapRole('', wanted) },
    })
    return
  }
  const added = JSON.parse(cm.metadata.annotations?.[ADDED_MAP_ROLES] ?? '[]') as string[]
  const next: ConfigMap = {
    ...cm,
    metadata: {
      ...cm.metadata,
      annotations: {
        ...cm.metadata.annotations,
        [ADDED_MAP_ROLES]: JSON.stringify([...new Set([...added, wanted.rolearn])]),
      },
    },
    data: { ...cm.data, mapRoles: withMapRole(cm.data?.mapRoles, wanted) },
  }
  await kube.write('PUT', PATH, next)
}
