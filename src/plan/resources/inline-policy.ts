// One inline policy on a role karpctl may not own (the controller role of any install): the policy's own
// name says it is karpctl's, so adding it and removing it never touch the role's other policies.
import type * as iam from '@aws-sdk/client-iam'
import { isNotFound } from '../../context/aws.js'
import { parsePolicyDocument } from '../../iam/policy-document.js'
import type { PolicyDocument } from '../../facts/types.js'
import { sameDocument } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { Resource } from '../types.js'

interface PolicyState {
  roleExists: boolean
  document: PolicyDocument | null
}

async function observePolicy(
  aws: Parameters<Resource['observe']>[0]['aws'],
  roleName: string,
  policyName: string,
): Promise<PolicyState> {
  try {
    await aws.call<iam.GetRoleCommandOutput>('iam', 'GetRole', { RoleName: roleName })
  } catch (err) {
    if (isNotFound(err)) return { roleExists: false, document: null }
    throw err
  }
  try {
    const out = await aws.call<iam.GetRolePolicyCommandOutput>('iam', 'GetRolePolicy', {
      RoleName: roleName,
      PolicyName: policyName,
    })
    return { roleExists: true, document: parsePolicyDocument(out.PolicyDocument ?? '{"Statement":[]}') }
  } catch (err) {
    if (isNotFound(err)) return { roleExists: true, document: null }
    throw err
  }
}

export function inlinePolicy(w: {
  address: string
  roleName: string
  roleArn: string
  policyName: string
  document: PolicyDocument
  dependsOn: string[]
}): Resource<PolicyState> {
  return {
    address: w.address,
    kind: 'IAM inline policy',
    name: `${w.roleName}/${w.policyName}`,
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { role: w.roleName, policy: w.policyName },
    documents: { [w.policyName]: w.document },
    permissions: [{ action: 'iam:PutRolePolicy', resource: w.roleArn }],
    observe: ({ aws }) => observePolicy(aws, w.roleName, w.policyName),
    verdict(cur) {
      if (!cur?.roleExists)
        return {
          action: 'create',
          changes: [],
          blocked: `role ${w.roleName} does not exist: run \`karpctl install\` first`,
        }
      if (!cur.document) return { action: 'create', changes: [{ field: 'policy', to: w.policyName }] }
      return sameDocument(cur.document, w.document)
        ? { action: 'unchanged', changes: [] }
        : { action: 'update', changes: leafChanges(cur.document, w.document, 'document') }
    },
    async apply({ aws }) {
      await aws.write('iam', 'PutRolePolicy', {
        RoleName: w.roleName,
        PolicyName: w.policyName,
        PolicyDocument: JSON.stringify(w.document),
      })
    },
  }
}

export function inlinePolicyAbsent(w: {
  address: string
  roleName: string
  policyName: string
  dependsOn: string[]
}): Resource<PolicyState> {
  return {
    address: w.address,
    kind: 'IAM inline policy',
    name: `${w.roleName}/${w.policyName}`,
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    observe: ({ aws }) => observePolicy(aws, w.roleName, w.policyName),
    verdict: (cur) =>
      cur?.document
        ? { action: 'delete', changes: [] }
        : { action: 'unchanged', changes: [], note: 'already gone' },
    async apply({ aws }) {
      try {
        await aws.write('iam', 'DeleteRolePolicy', { RoleName: w.roleName, PolicyName: w.policyName })
      } catch (err) {
        if (!isNotFound(err)) throw err
      }
    },
  }
}
