// A role's identity policies as the evaluators take them (src/policy/evaluate.ts): shared by the checks
// that judge what IAM lets a role do beside a resource policy (KMS key policies).
import type { RoleFacts } from '../../facts/types.js'
import type { PolicyDocument } from '../../policy/types.js'
import type { PrincipalPolicies } from '../../policy/evaluate.js'

/** The role's identity policies and boundary, or null when any of them could not be read. */
export function identityOf(r: RoleFacts): PrincipalPolicies | null {
  if (!r.attached.ok || !r.inline.ok) return null
  if (r.attached.value.some((p) => !p.document)) return null
  const identity = [
    ...r.attached.value.map((p) => p.document as PolicyDocument),
    ...r.inline.value.map((p) => p.document),
  ]
  if (!r.role.permissionsBoundaryArn) return { identity }
  return { identity, boundary: r.boundary?.document ?? null }
}
