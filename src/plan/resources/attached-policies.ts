// AWS managed policies attached to a role karpctl may not own (a node role doctor --fix repairs): only
// the missing ones are attached, and the role is tagged with their names (karpctl.io/repaired-policies)
// so a teardown of the install they repaired detaches exactly those and nothing the role had before.
import { isNotFound, type Aws } from '../../context/aws.js'
import { roleFacts } from '../../facts/collect-iam.js'
import type { Resource } from '../types.js'
import type { ManagedPolicyWant } from './managed-policy.js'
import { readRecord, recordTags, REPAIRED_POLICIES } from '../../desired/ownership.js'

export const ATTACHED_POLICIES = 'karpctl.io/attached-policies'

const nameOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1)

export const missingPolicies = (managed: ManagedPolicyWant[], attached: Iterable<string>) => {
  const have = new Set(attached)
  return managed.filter((p) => !have.has(p.arn) && !(p.orElse && have.has(p.orElse)))
}

/** Attaches each missing policy (its fallback where the first does not exist); returns what it attached. */
export async function attachMissing(
  aws: Aws,
  roleName: string,
  managed: ManagedPolicyWant[],
  attached: Iterable<string>,
): Promise<string[]> {
  const done: string[] = []
  for (const p of missingPolicies(managed, attached)) {
    try {
      await aws.write('iam', 'AttachRolePolicy', { RoleName: roleName, PolicyArn: p.arn })
      done.push(p.arn)
    } catch (err) {
      if (!p.orElse || !isNotFound(err)) throw err
      await aws.write('iam', 'AttachRolePolicy', { RoleName: roleName, PolicyArn: p.orElse })
      done.push(p.orElse)
    }
  }
  return done
}

interface AttachedState {
  attached: string[]
  tags: Record<string, string>
}

export function attachedPolicies(w: {
  address: string
  roleName: string
  roleArn: string
  managed: ManagedPolicyWant[]
  group: string
}): Resource<AttachedState> {
  return {
    address: w.address,
    kind: 'IAM role policies',
    name: w.roleName,
    group: w.group,
    dependsOn: [],
    desired: { attached: w.managed.map((p) => p.arn) },
    permissions: [
      { action: 'iam:AttachRolePolicy', resource: w.roleArn },
      { action: 'iam:TagRole', resource: w.roleArn },
    ],
    async observe({ aws }) {
      const r = await roleFacts(aws, w.roleName, false)
      if (!r.ok) throw Object.assign(new Error(r.error.message), { name: r.error.code })
      if (!r.value) return null
      const { attached } = r.value
      if (!attached.ok) throw Object.assign(new Error(attached.error.message), { name: attached.error.code })
      return { attached: attached.value.map((p) => p.arn), tags: r.value.role.tags }
    },
    verdict(cur) {
      if (!cur)
        return {
          action: 'update',
          changes: [],
          blocked: `role ${w.roleName} does not exist: nothing to attach policies to`,
        }
      const missing = missingPolicies(w.managed, cur.attached)
      return missing.length
        ? {
            action: 'update',
            changes: missing.map((p) => ({ field: 'attached policy', to: nameOf(p.arn) })),
            note: `recorded as the ${REPAIRED_POLICIES} tag`,
          }
        : { action: 'unchanged', changes: [] }
    },
    async apply({ aws }, cur) {
      const missing = missingPolicies(w.managed, cur?.attached ?? [])
      // Recorded before attaching: a run killed in between leaves a record of a policy not attached
      // (detaching it later is a no-op), never an attached policy without a record. A fallback is
      // recorded with its primary, since either may be the one that gets attached.
      const names = [
        ...readRecord(cur?.tags, REPAIRED_POLICIES),
        ...missing.flatMap((p) => [p.arn, ...(p.orElse ? [p.orElse] : [])]).map(nameOf),
      ]
      if (missing.length)
        await aws.write('iam', 'TagRole', {
          RoleName: w.roleName,
          Tags: Object.entries(recordTags(REPAIRED_POLICIES, names)).map(([Key, Value]) => ({ Key, Value })),
        })
      await attachMissing(aws, w.roleName, w.managed, cur?.attached ?? [])
    },
  }
}
