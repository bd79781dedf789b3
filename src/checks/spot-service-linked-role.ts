import type { NodePool } from '../facts/types.js'
import { need, skip } from './lib/facts.js'
import type { Check } from './types.js'

const CAPACITY_TYPE = 'karpenter.sh/capacity-type'

/**
 * Whether a NodePool may launch spot. Requirements on one key are ANDed; with none on capacity-type
 * Karpenter launches on-demand only, so spot must be asked for explicitly.
 */
export function allowsSpot(pool: NodePool): boolean {
  const reqs = (pool.spec.template.spec.requirements ?? []).filter((r) => r.key === CAPACITY_TYPE)
  if (reqs.length === 0) return false
  return reqs.every((r) => {
    const values = r.values ?? []
    switch (r.operator) {
      case 'In':
        return values.includes('spot')
      case 'NotIn':
        return !values.includes('spot')
      case 'Exists':
        return true
      default:
        return false
    }
  })
}

export const spotServiceLinkedRole: Check = {
  meta: {
    id: 'spot-service-linked-role',
    title: 'The EC2 Spot service-linked role exists when spot is allowed',
    category: 'iam',
    severity: 'error',
    docs: 'Launching spot capacity needs the AWSServiceRoleForEC2Spot service-linked role in the account; without it CreateFleet fails with AuthFailure.ServiceLinkedRoleCreationNotPermitted unless the controller may create it.',
  },
  run(facts) {
    const pools = need(facts.kube.nodePools)
    const spotPools = pools.filter(allowsSpot).map((p) => p.metadata.name)
    if (spotPools.length === 0) {
      skip(
        pools.length === 0
          ? 'no NodePool found'
          : `no NodePool allows spot (${CAPACITY_TYPE} not requiring spot means on-demand only)`,
      )
    }
    const role = need(facts.iam.spotServiceLinkedRole)
    if (role) {
      return [
        {
          status: 'pass',
          subject: role.arn,
          message: `spot service-linked role ${role.name} exists (spot allowed by NodePool ${spotPools.join(', ')})`,
        },
      ]
    }
    return [
      {
        status: 'fail',
        subject: `account ${facts.meta.accountId ?? ''}`.trim(),
        message: `NodePool ${spotPools.join(', ')} allow${spotPools.length === 1 ? 's' : ''} spot, but the account has no EC2 Spot service-linked role: spot launches fail`,
        evidence: { nodePools: spotPools, expectedRole: 'AWSServiceRoleForEC2Spot' },
        fix: {
          summary:
            'create the service-linked role once per account (an "already exists" error means it is there)',
          commands: ['aws iam create-service-linked-role --aws-service-name spot.amazonaws.com'],
        },
      },
    ]
  },
}
