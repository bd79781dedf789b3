// The controller's EKS Pod Identity association, deleted when karpctl made it.
import type * as eks from '@aws-sdk/client-eks'
import { toReadFailure } from '../../context/aws.js'
import type { Resource } from '../types.js'
import { orNull, ownedVerdict } from './absent.js'

export function podIdentityAbsent(w: {
  clusterName: string
  namespace: string
  serviceAccount: string
  ownership: Record<string, string>
  dependsOn: string[]
}): Resource<{ id: string; tags: Record<string, string> }> {
  return {
    address: 'eks-pod-identity.controller',
    kind: 'EKS Pod Identity association',
    name: `${w.namespace}/${w.serviceAccount}`,
    group: 'Controller identity',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      let l: eks.ListPodIdentityAssociationsCommandOutput
      try {
        l = await aws.call<eks.ListPodIdentityAssociationsCommandOutput>(
          'eks',
          'ListPodIdentityAssociations',
          {
            clusterName: w.clusterName,
            namespace: w.namespace,
            serviceAccount: w.serviceAccount,
          },
        )
      } catch (err) {
        // An endpoint without Pod Identity cannot hold an association karpctl made.
        if (toReadFailure(err, '').kind === 'unsupported') return null
        throw err
      }
      const id = l.associations?.[0]?.associationId
      if (!id) return null
      const d = await aws.call<eks.DescribePodIdentityAssociationCommandOutput>(
        'eks',
        'DescribePodIdentityAssociation',
        { clusterName: w.clusterName, associationId: id },
      )
      return { id, tags: d.association?.tags ?? {} }
    },
    verdict: (cur) => ownedVerdict(cur, w.ownership),
    async apply({ aws }, cur) {
      if (cur)
        await orNull(
          aws.write('eks', 'DeletePodIdentityAssociation', {
            clusterName: w.clusterName,
            associationId: cur.id,
          }),
        )
    },
  }
}
