// EKS-side identity and access: the node role's access entry (type EC2_LINUX) and the controller's
// Pod Identity association. moto offers neither: both are proven with nock (test/integration).
import type * as eks from '@aws-sdk/client-eks'
import { isNotFound } from '../../context/aws.js'
import { isOwned } from '../compare.js'
import type { Resource } from '../types.js'
import { restartDeployment, RESTART_PENDING, type DeploymentRef } from './restart.js'

interface EntryState {
  type?: string
}

export function accessEntry(w: {
  clusterName: string
  principalArn: string
  clusterArn: string
  tags: Record<string, string>
  dependsOn: string[]
}): Resource<EntryState> {
  return {
    address: 'eks-access-entry.node',
    kind: 'EKS access entry',
    name: w.principalArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: { principalArn: w.principalArn, type: 'EC2_LINUX', tags: w.tags },
    permissions: [
      { action: 'eks:CreateAccessEntry', resource: w.clusterArn },
      { action: 'eks:TagResource', resource: w.clusterArn },
    ],
    async observe({ aws }) {
      try {
        const out = await aws.call<eks.DescribeAccessEntryCommandOutput>('eks', 'DescribeAccessEntry', {
          clusterName: w.clusterName,
          principalArn: w.principalArn,
        })
        return { type: out.accessEntry?.type }
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    },
    verdict(cur) {
      if (!cur) return { action: 'create', changes: [{ field: 'type', to: 'EC2_LINUX' }] }
      if (cur.type !== 'EC2_LINUX')
        return {
          action: 'update',
          changes: [],
          blocked: `an access entry of type ${cur.type} exists for it: nodes need EC2_LINUX; delete that entry (\`aws eks delete-access-entry --cluster-name ${w.clusterName} --principal-arn ${w.principalArn}\`) and run again`,
        }
      return { action: 'unchanged', changes: [] }
    },
    async apply({ aws }, cur) {
      if (cur) return
      await aws.write('eks', 'CreateAccessEntry', {
        clusterName: w.clusterName,
        principalArn: w.principalArn,
        type: 'EC2_LINUX',
        tags: w.tags,
      })
    },
  }
}

interface AssociationState {
  associationId: string
  associationArn?: string
  roleArn?: string
  tags: Record<string, string>
}

export function podIdentityAssociation(w: {
  clusterName: string
  clusterArn: string
  namespace: string
  serviceAccount: string
  roleArn: string
  tags: Record<string, string>
  ownership: Record<string, string>
  adopt: boolean
  dependsOn: string[]
  /** The Deployment whose running pods get the credentials only when re-created (doctor --fix). */
  restart?: DeploymentRef
}): Resource<AssociationState> {
  return {
    address: 'eks-pod-identity.controller',
    kind: 'EKS Pod Identity association',
    name: `${w.namespace}/${w.serviceAccount}`,
    group: 'Controller identity',
    dependsOn: w.dependsOn,
    desired: { namespace: w.namespace, serviceAccount: w.serviceAccount, roleArn: w.roleArn, tags: w.tags },
    permissions: [
      { action: 'eks:CreatePodIdentityAssociation', resource: w.clusterArn },
      { action: 'eks:UpdatePodIdentityAssociation', resource: w.clusterArn },
      { action: 'iam:PassRole', resource: w.roleArn },
    ],
    async observe({ aws }) {
      const list = await aws.call<eks.ListPodIdentityAssociationsCommandOutput>(
        'eks',
        'ListPodIdentityAssociations',
        {
          clusterName: w.clusterName,
          namespace: w.namespace,
          serviceAccount: w.serviceAccount,
        },
      )
      const first = list.associations?.[0]
      if (!first?.associationId) return null
      const d = await aws.call<eks.DescribePodIdentityAssociationCommandOutput>(
        'eks',
        'DescribePodIdentityAssociation',
        { clusterName: w.clusterName, associationId: first.associationId },
      )
      return {
        associationId: first.associationId,
        associationArn: d.association?.associationArn,
        roleArn: d.association?.roleArn,
        tags: d.association?.tags ?? {},
      }
    },
    verdict(cur) {
      const restart = w.restart && [
        { field: 'restart', to: `deployment ${w.restart.namespace}/${w.restart.name}`, event: true },
      ]
      if (!cur) return { action: 'create', changes: [{ field: 'role', to: w.roleArn }, ...(restart ?? [])] }
      if (cur.roleArn === w.roleArn)
        return restart && cur.tags[RESTART_PENDING]
          ? { action: 'update', changes: restart, note: 'a run stopped before the restart' }
          : { action: 'unchanged', changes: [] }
      if (!isOwned(cur.tags, w.ownership) && !w.adopt)
        return {
          action: 'update',
          changes: [],
          blocked: `it grants ${cur.roleArn}, and karpctl did not make it: pass --adopt to point it at ${w.roleArn}`,
        }
      return { action: 'update', changes: [{ field: 'role', from: cur.roleArn, to: w.roleArn }] }
    },
    async apply({ aws, kube, now }, cur) {
      let associationArn = cur?.associationArn
      if (!cur) {
        // The pending-restart tag comes with the association: a run killed before the restart is
        // finished by the next one.
        const out = await aws.write<eks.CreatePodIdentityAssociationCommandOutput>(
          'eks',
          'CreatePodIdentityAssociation',
          {
            clusterName: w.clusterName,
            namespace: w.namespace,
            serviceAccount: w.serviceAccount,
            roleArn: w.roleArn,
            tags: { ...w.tags, ...(w.restart ? { [RESTART_PENDING]: 'true' } : {}) },
          },
        )
        associationArn = out.association?.associationArn
      } else if (cur.roleArn !== w.roleArn) {
        if (w.restart && associationArn)
          await aws.write('eks', 'TagResource', {
            resourceArn: associationArn,
            tags: { [RESTART_PENDING]: 'true' },
          })
        await aws.write('eks', 'UpdatePodIdentityAssociation', {
          clusterName: w.clusterName,
          associationId: cur.associationId,
          roleArn: w.roleArn,
        })
      }
      if (!w.restart || (cur && cur.roleArn === w.roleArn && !cur.tags[RESTART_PENDING])) return
      await restartDeployment(kube, w.restart, now())
      if (associationArn)
        await aws.write('eks', 'UntagResource', { resourceArn: associationArn, tagKeys: [RESTART_PENDING] })
    },
  }
}
