// One inline policy on a role karpctl may not own (the controller role of any install): the policy's own
// name says it is karpctl's, so adding it and removing it never touch the role's other policies. With a
// `record` (doctor --fix's repairs), the policy's name is also listed on the role under that key, in a
// call made before the policy is put, so a teardown from any machine finds it.
import type * as iam from '@aws-sdk/client-iam'
import { isNotFound } from '../../context/aws.js'
import { parsePolicyDocument } from '../../facts/policy-document.js'
import type { PolicyDocument } from '../../policy/types.js'
import { sameDocument } from '../compare.js'
import { leafChanges } from '../diff.js'
import type { Resource } from '../types.js'
import { readRecord, recordTags } from '../../desired/ownership.js'

interface PolicyState {
  roleExists: boolean
  document: PolicyDocument | null
  tags?: Record<string, string>
}

async function observePolicy(
  aws: Parameters<Resource['observe']>[0]['aws'],
  roleName: string,
  policyName: string,
): Promise<PolicyState> {
  let tags: Record<string, string>
  try {
    const role = await aws.call<iam.GetRoleCommandOutput>('iam', 'GetRole', { RoleName: roleName })
    tags = Object.fromEntries((role.Role?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']))
  } catch (err) {
    if (isNotFound(err)) return { roleExists: false, document: null }
    throw err
  }
  try {
    const out = await aws.call<iam.GetRolePolicyCommandOutput>('iam', 'GetRolePolicy', {
      RoleName: roleName,
      PolicyName: policyName,
    })
    return {
      roleExists: true,
      document: parsePolicyDocument(out.PolicyDocument ?? '{"Statement":[]}'),
      tags,
    }
  } catch (err) {
    if (isNotFound(err)) return { roleExists: true, document: null, tags }
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
  /** The role's tag that lists the policy (a repair's record), written before the policy. */
  record?: string
}): Resource<PolicyState> {
  const unrecorded = (cur: PolicyState | null) =>
    w.record !== undefined && !readRecord(cur?.tags, w.record).includes(w.policyName)
  const recorded = w.record ? { note: `recorded as the ${w.record} tag` } : {}
  return {
    address: w.address,
    kind: 'IAM inline policy',
    name: `${w.roleName}/${w.policyName}`,
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { role: w.roleName, policy: w.policyName },
    documents: { [w.policyName]: w.document },
    permissions: [
      { action: 'iam:PutRolePolicy', resource: w.roleArn },
      ...(w.record ? [{ action: 'iam:TagRole', resource: w.roleArn }] : []),
    ],
    observe: ({ aws }) => observePolicy(aws, w.roleName, w.policyName),
    verdict(cur) {
      if (!cur?.roleExists)
        return {
          action: 'create',
          changes: [],
          blocked: `role ${w.roleName} does not exist: run \`karpctl install\` first`,
        }
      if (!cur.document)
        return { action: 'create', changes: [{ field: 'policy', to: w.policyName }], ...recorded }
      if (!sameDocument(cur.document, w.document))
        return { action: 'update', changes: leafChanges(cur.document, w.document, 'document'), ...recorded }
      // There but not listed: put before karpctl recorded its repairs (a killed run records first).
      return unrecorded(cur)
        ? {
            action: 'update',
            changes: [{ field: `tags.${w.record!}`, to: w.policyName }],
            ...recorded,
          }
        : { action: 'unchanged', changes: [] }
    },
    async apply({ aws }, cur) {
      if (unrecorded(cur))
        await aws.write('iam', 'TagRole', {
          RoleName: w.roleName,
          Tags: Object.entries(
            recordTags(w.record!, [...readRecord(cur?.tags, w.record!), w.policyName]),
          ).map(([Key, Value]) => ({ Key, Value })),
        })
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
