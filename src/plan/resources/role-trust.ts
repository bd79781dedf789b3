// The trust policy of a role karpctl may not own, changed in one place (the IRSA statement): the rest of
// the document is kept, and the role is tagged with what karpctl changed.
import type * as iam from '@aws-sdk/client-iam'
import { parsePolicyDocument } from '../../facts/policy-document.js'
import type { PolicyDocument } from '../../policy/types.js'
import { sameDocument } from '../compare.js'
import type { Resource } from '../types.js'

export const CHANGED_TRUST = 'karpctl.io/changed-trust'

export function roleTrust(w: {
  address: string
  roleName: string
  roleArn: string
  trust: PolicyDocument
  why: string
  group: string
}): Resource<PolicyDocument> {
  return {
    address: w.address,
    kind: 'IAM role trust',
    name: w.roleName,
    group: w.group,
    dependsOn: [],
    desired: { trust: w.trust },
    documents: { trust: w.trust },
    permissions: [
      { action: 'iam:UpdateAssumeRolePolicy', resource: w.roleArn },
      { action: 'iam:TagRole', resource: w.roleArn },
    ],
    async observe({ aws }) {
      const r = await aws.call<iam.GetRoleCommandOutput>('iam', 'GetRole', { RoleName: w.roleName })
      return parsePolicyDocument(r.Role?.AssumeRolePolicyDocument ?? '{"Statement":[]}')
    },
    verdict: (cur) =>
      cur && sameDocument(cur, w.trust)
        ? { action: 'unchanged', changes: [] }
        : {
            action: 'update',
            changes: [{ field: 'trust', from: 'as found', to: w.why }],
            note: `recorded as the ${CHANGED_TRUST} tag`,
          },
    async apply({ aws }) {
      await aws.write('iam', 'UpdateAssumeRolePolicy', {
        RoleName: w.roleName,
        PolicyDocument: JSON.stringify(w.trust),
      })
      await aws.write('iam', 'TagRole', {
        RoleName: w.roleName,
        Tags: [{ Key: CHANGED_TRUST, Value: w.why.slice(0, 256) }],
      })
    },
  }
}
