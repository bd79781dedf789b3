import type { NodePool } from '../facts/types.js'
import { allowsCapacityType, CAPACITY_TYPE } from './lib/capacity.js'
import { need, skip } from './lib/facts.js'
import type { Check } from './types.js'

/** Whether a NodePool may launch spot (see allowsCapacityType: spot must be asked for explicitly). */
export const allowsSpot = (pool: NodePool): boolean => allowsCapacityType(pool, 'spot')

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
