// A role's aws-auth mapping karpctl added (its record in karpctl.io/added-map-roles says so), removed
// with its record; every other byte of aws-auth kept.
import type { Resource } from '../types.js'
import { ADDED_MAP_ROLES } from './aws-auth.js'
import { mapRoles, mapRolesProblem, withoutMapRole } from './map-roles.js'

const AWS_AUTH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'
interface ConfigMap {
  metadata: { annotations?: Record<string, string> }
  data?: Record<string, string>
}
const added = (cm: ConfigMap | null) =>
  JSON.parse(cm?.metadata.annotations?.[ADDED_MAP_ROLES] ?? '[]') as string[]
const mapped = (cm: ConfigMap | null) => mapRoles(cm?.data?.mapRoles)

export function awsAuthEntryAbsent(w: { roleArn: string; dependsOn: string[] }): Resource<ConfigMap> {
  return {
    address: 'aws-auth.remove',
    kind: 'aws-auth mapping',
    name: w.roleArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    observe: ({ kube }) => kube.get<ConfigMap>(AWS_AUTH),
    verdict(cm) {
      const problem = mapRolesProblem(cm?.data?.mapRoles)
      if (problem)
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: aws-auth mapRoles ${problem}, so karpctl cannot read it; if it maps this role for karpctl (${ADDED_MAP_ROLES}), remove that entry by hand (\`kubectl edit configmap aws-auth -n kube-system\`)`,
        }
      if (!mapped(cm).some((r) => r.rolearn === w.roleArn)) {
        // A record that outlived its entry (removed by hand) would make a later hand-made entry of the
        // same role look like karpctl's: it goes too.
        if (added(cm).includes(w.roleArn))
          return {
            action: 'update',
            changes: [{ field: ADDED_MAP_ROLES, from: w.roleArn }],
            note: 'the mapping is already gone; its record goes',
          }
        return { action: 'unchanged', changes: [], note: 'already gone' }
      }
      if (!added(cm).includes(w.roleArn))
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: not in ${ADDED_MAP_ROLES}, so karpctl did not add it`,
        }
      return { action: 'delete', changes: [] }
    },
    async apply({ kube }) {
      // Read-modify-write on the live object; a concurrent writer's 409 is retried by the executor.
      const cm = await kube.fresh<ConfigMap & { metadata: Record<string, unknown> }>(AWS_AUTH)
      if (!cm || !added(cm).includes(w.roleArn)) return
      const rest = added(cm).filter((a) => a !== w.roleArn)
      // The record goes with its last entry: aws-auth is left as it was before karpctl.
      const annotations: Record<string, string> = {
        ...cm.metadata.annotations,
        [ADDED_MAP_ROLES]: JSON.stringify(rest),
      }
      if (rest.length === 0) delete annotations[ADDED_MAP_ROLES]
      const still = mapped(cm).some((r) => r.rolearn === w.roleArn)
      await kube.write('PUT', AWS_AUTH, {
        ...cm,
        metadata: { ...cm.metadata, annotations },
        data: still ? { ...cm.data, mapRoles: withoutMapRole(cm.data?.mapRoles, w.roleArn) } : cm.data,
      })
    },
  }
}
