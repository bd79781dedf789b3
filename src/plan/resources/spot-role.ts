// The account's spot service-linked role: account-wide, made once, never deleted by karpctl.
import { spotServiceLinkedRole } from '../../facts/collect-iam.js'
import type { IamRole } from '../../facts/types.js'
import type { Resource } from '../types.js'

export function spotRole(accountId: string, partition: string): Resource<IamRole> {
  return {
    address: 'iam-service-linked-role.spot',
    kind: 'IAM service-linked role',
    name: 'AWSServiceRoleForEC2Spot',
    group: 'IAM',
    dependsOn: [],
    desired: { service: 'spot.amazonaws.com' },
    permissions: [
      {
        action: 'iam:CreateServiceLinkedRole',
        resource: `arn:${partition}:iam::${accountId}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`,
      },
    ],
    observe: ({ aws }) => spotServiceLinkedRole(aws),
    verdict: (cur) =>
      cur
        ? { action: 'unchanged', changes: [] }
        : {
            action: 'create',
            changes: [{ field: 'service', to: 'spot.amazonaws.com' }],
            note: 'account-wide: teardown keeps it',
          },
    async apply({ aws }, cur) {
      if (cur) return
      try {
        await aws.write('iam', 'CreateServiceLinkedRole', { AWSServiceName: 'spot.amazonaws.com' })
      } catch (err) {
        // Made meanwhile (another install in the account): the end state is the same.
        if (!/has been taken|already exists/i.test((err as Error).message)) throw err
      }
    },
  }
}
