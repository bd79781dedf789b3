// An EKS access entry karpctl created, deleted; another's kept.
import type * as eks from '@aws-sdk/client-eks'
import { isNotFound, toReadFailure } from '../../context/aws.js'
import { isOwned } from '../compare.js'
import type { Resource } from '../types.js'
import { ignoreMissing } from './absent.js'

export function accessEntryAbsent(w: {
  clusterName: string
  principalArn: string
  ownership: Record<string, string>
  dependsOn: string[]
}): Resource<{ tags: Record<string, string> }> {
  return {
    address: 'eks-access-entry.remove',
    kind: 'EKS access entry',
    name: w.principalArn,
    group: 'Cluster access',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      try {
        const out = await aws.call<eks.DescribeAccessEntryCommandOutput>('eks', 'DescribeAccessEntry', {
          clusterName: w.clusterName,
          principalArn: w.principalArn,
        })
        return { tags: out.accessEntry?.tags ?? {} }
      } catch (err) {
        // An endpoint without access entries cannot hold one karpctl made.
        if (isNotFound(err) || toReadFailure(err, '').kind === 'unsupported') return null
        throw err
      }
    },
    verdict(cur) {
      if (!cur) return { action: 'unchanged', changes: [], note: 'already gone' }
      if (!isOwned(cur.tags, w.ownership))
        return { action: 'unchanged', changes: [], note: 'kept: karpctl did not make it' }
      return { action: 'delete', changes: [] }
    },
    async apply({ aws }) {
      await ignoreMissing(
        aws.write('eks', 'DeleteAccessEntry', { clusterName: w.clusterName, principalArn: w.principalArn }),
      )
    },
  }
}
