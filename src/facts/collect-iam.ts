// IAM facts: roles with their trust and permission policies, OIDC providers, instance profiles,
// the spot service-linked role, and whether the controller may pass each node role to EC2.
import type * as iam from '@aws-sdk/client-iam'
import type { Aws } from '../context/aws.js'
import { isNotFound } from '../context/aws.js'
import { evaluateWithBoundary } from '../policy/evaluate.js'
import { parsePolicyDocument } from './policy-document.js'
import { failureOf, read } from './read.js'
import type {
  AttachedPolicy,
  IamRole,
  InlinePolicy,
  InstanceProfile,
  OidcProvider,
  PermissionEvaluation,
  Read,
  RoleFacts,
} from './types.js'
import type { PolicyDocument } from '../policy/types.js'

const decode = (doc: string | undefined): PolicyDocument => parsePolicyDocument(doc ?? '{"Statement":[]}')

function toRole(r: iam.Role): IamRole {
  return {
    name: r.RoleName ?? '',
    arn: r.Arn ?? '',
    path: r.Path ?? '/',
    trust: decode(r.AssumeRolePolicyDocument),
    tags: Object.fromEntries((r.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
    ...(r.PermissionsBoundary?.PermissionsBoundaryArn
      ? { permissionsBoundaryArn: r.PermissionsBoundary.PermissionsBoundaryArn }
      : {}),
  }
}

/** A managed policy with its default version's document; a failed read is kept as `documentError`. */
async function managedPolicy(aws: Aws, arn: string, name: string): Promise<AttachedPolicy> {
  try {
    const meta = await aws.call<iam.GetPolicyCommandOutput>('iam', 'GetPolicy', { PolicyArn: arn })
    const version = await aws.call<iam.GetPolicyVersionCommandOutput>('iam', 'GetPolicyVersion', {
      PolicyArn: arn,
      VersionId: meta.Policy?.DefaultVersionId,
    })
    return { arn, name, document: decode(version.PolicyVersion?.Document) }
  } catch (err) {
    return { arn, name, document: null, documentError: failureOf(err, `iam:GetPolicyVersion ${arn}`) }
  }
}

async function getRole(aws: Aws, name: string): Promise<IamRole | null> {
  try {
    const out = await aws.call<iam.GetRoleCommandOutput>('iam', 'GetRole', { RoleName: name })
    return out.Role ? toRole(out.Role) : null
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

/** The managed policies attached to a role (memoized: roleFacts and the ownership lookups share it). */
function listAttached(aws: Aws, roleName: string): Promise<iam.AttachedPolicy[]> {
  return aws.all<iam.ListAttachedRolePoliciesCommandOutput, iam.AttachedPolicy>(
    'iam',
    'ListAttachedRolePolicies',
    { RoleName: roleName },
    'Marker',
    (out) => ({ items: out.AttachedPolicies, next: out.IsTruncated ? out.Marker : undefined }),
  )
}

/**
 * What roleFacts learns first about a role (GetRole and ListAttachedRolePolicies, the same memoized
 * reads): whether it exists and the ARNs attached, for reads that need no policy document.
 */
export async function roleListing(
  aws: Aws,
  name: string,
): Promise<{ role: Read<IamRole | null>; attachedArns: Read<string[]> }> {
  const [role, attached] = await Promise.all([
    read(`iam:GetRole ${name}`, () => getRole(aws, name)),
    read(`iam:ListAttachedRolePolicies ${name}`, async () =>
      (await listAttached(aws, name)).map((p) => p.PolicyArn ?? ''),
    ),
  ])
  return { role, attachedArns: attached }
}

/** Reads a managed policy's default version; AWS-managed policies are read by name only unless asked. */
async function attachedPolicies(
  aws: Aws,
  roleName: string,
  withDocuments: boolean,
): Promise<AttachedPolicy[]> {
  const policies = await listAttached(aws, roleName)
  return Promise.all(
    policies.map(async (p): Promise<AttachedPolicy> => {
      const base = { arn: p.PolicyArn ?? '', name: p.PolicyName ?? '' }
      if (!withDocuments) return { ...base, document: null }
      return managedPolicy(aws, base.arn, base.name)
    }),
  )
}

async function inlinePolicies(aws: Aws, roleName: string): Promise<InlinePolicy[]> {
  const names = await aws.all<iam.ListRolePoliciesCommandOutput, string>(
    'iam',
    'ListRolePolicies',
    { RoleName: roleName },
    'Marker',
    (out) => ({ items: out.PolicyNames, next: out.IsTruncated ? out.Marker : undefined }),
  )
  return Promise.all(
    names.map(async (name) => {
      const out = await aws.call<iam.GetRolePolicyCommandOutput>('iam', 'GetRolePolicy', {
        RoleName: roleName,
        PolicyName: name,
      })
      return { name, document: decode(out.PolicyDocument) }
    }),
  )
}

/**
 * A role and its policies; the listings start together with GetRole, so they cost one round trip.
 * With documents, the permissions boundary GetRole names is read too (its managed policy, memoized
 * like every read: a boundary that is also attached costs nothing more).
 */
export async function roleFacts(
  aws: Aws,
  name: string,
  withDocuments: boolean,
): Promise<Read<RoleFacts | null>> {
  const roleP = read(`iam:GetRole ${name}`, () => getRole(aws, name))
  const boundaryP = roleP.then((r) => {
    const arn = r.ok ? r.value?.permissionsBoundaryArn : undefined
    return withDocuments && arn ? managedPolicy(aws, arn, arn.slice(arn.lastIndexOf('/') + 1)) : undefined
  })
  const [role, attached, inline, boundary] = await Promise.all([
    roleP,
    read(`iam:ListAttachedRolePolicies ${name}`, () => attachedPolicies(aws, name, withDocuments)),
    read(`iam:ListRolePolicies ${name}`, () => inlinePolicies(aws, name)),
    boundaryP,
  ])
  if (!role.ok) return role
  if (!role.value) return { ok: true, value: null }
  return { ok: true, value: { role: role.value, attached, inline, ...(boundary ? { boundary } : {}) } }
}

export async function oidcProviders(aws: Aws): Promise<OidcProvider[]> {
  const out = await aws.call<iam.ListOpenIDConnectProvidersCommandOutput>('iam', 'ListOpenIDConnectProviders')
  // The provider's URL is the ARN's resource part: no GetOpenIDConnectProvider round trip per provider.
  return (out.OpenIDConnectProviderList ?? []).map((p) => {
    const arn = p.Arn ?? ''
    return { arn, url: arn.slice(arn.indexOf(':oidc-provider/') + ':oidc-provider/'.length), clientIds: [] }
  })
}

export async function instanceProfile(aws: Aws, name: string): Promise<InstanceProfile | null> {
  try {
    const out = await aws.call<iam.GetInstanceProfileCommandOutput>('iam', 'GetInstanceProfile', {
      InstanceProfileName: name,
    })
    const p = out.InstanceProfile
    return p
      ? {
          name: p.InstanceProfileName ?? name,
          arn: p.Arn ?? '',
          roles: (p.Roles ?? []).map((r) => r.RoleName ?? ''),
        }
      : null
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
}

/** AWS names it AWSServiceRoleForEC2Spot; some emulators differ, so it is found by its path. */
export async function spotServiceLinkedRole(aws: Aws): Promise<IamRole | null> {
  const out = await aws.call<iam.ListRolesCommandOutput>('iam', 'ListRoles', {
    PathPrefix: '/aws-service-role/spot.amazonaws.com/',
  })
  const role = out.Roles?.[0]
  return role ? toRole(role) : null
}

/**
 * May the controller role pass each node role to EC2? IAM's policy simulator answers when it is
 * allowed and implemented; otherwise karpctl evaluates the role's identity policies itself and says so.
 */
export async function passRoleEvaluations(
  aws: Aws,
  controllerRoleArn: string,
  nodeRoleArns: string[],
  controllerRole: () => Promise<Read<RoleFacts | null>>,
): Promise<Record<string, Read<PermissionEvaluation>>> {
  const context = { 'iam:PassedToService': 'ec2.amazonaws.com' }
  const out: Record<string, Read<PermissionEvaluation>> = {}
  if (nodeRoleArns.length === 0) return out
  let simulatorUnavailable: string
  try {
    const sim = await aws.call<iam.SimulatePrincipalPolicyCommandOutput>('iam', 'SimulatePrincipalPolicy', {
      PolicySourceArn: controllerRoleArn,
      ActionNames: ['iam:PassRole'],
      ResourceArns: nodeRoleArns,
      ContextEntries: [
        {
          ContextKeyName: 'iam:PassedToService',
          ContextKeyType: 'string',
          ContextKeyValues: ['ec2.amazonaws.com'],
        },
      ],
    })
    for (const r of sim.EvaluationResults ?? []) {
      const resource = r.EvalResourceName ?? ''
      out[resource] = {
        ok: true,
        value: {
          action: 'iam:PassRole',
          resource,
          context,
          decision:
            r.EvalDecision === 'allowed'
              ? 'allowed'
              : r.EvalDecision === 'explicitDeny'
                ? 'explicitDeny'
                : 'implicitDeny',
          method: 'simulator',
          matchedStatements: (r.MatchedStatements ?? []).map((s) => s.SourcePolicyId ?? ''),
        },
      }
    }
    if (nodeRoleArns.every((a) => out[a])) return out
    simulatorUnavailable = 'the simulator returned no result for some roles'
  } catch (err) {
    const f = failureOf(err, 'iam:SimulatePrincipalPolicy')
    simulatorUnavailable = `${f.code}: ${f.message}`
  }
  const role = await controllerRole()
  for (const arn of nodeRoleArns) {
    if (out[arn]) continue
    out[arn] = localPassRole(role, arn, context, simulatorUnavailable)
  }
  return out
}

function localPassRole(
  role: Read<RoleFacts | null>,
  arn: string,
  context: Record<string, string>,
  simulatorUnavailable: string,
): Read<PermissionEvaluation> {
  if (!role.ok) return role
  if (!role.value) {
    return {
      ok: false,
      error: {
        code: 'NoSuchEntity',
        kind: 'error',
        message: 'the controller role does not exist',
        read: 'iam:GetRole',
      },
    }
  }
  const { attached, inline, boundary } = role.value
  if (!attached.ok) return attached
  if (!inline.ok) return inline
  const unreadable = attached.value.find((p) => !p.document)
  if (unreadable?.documentError) return { ok: false, error: unreadable.documentError }
  const docs = [
    ...attached.value.map((p) => p.document as PolicyDocument),
    ...inline.value.map((p) => p.document),
  ]
  const boundaryArn = role.value.role.permissionsBoundaryArn
  const result = evaluateWithBoundary(
    { identity: docs, boundary: boundaryArn ? (boundary?.document ?? null) : undefined },
    { action: 'iam:PassRole', resource: arn, context },
  )
  return {
    ok: true,
    value: {
      action: 'iam:PassRole',
      resource: arn,
      context,
      decision: result.decision,
      method: 'local',
      simulatorUnavailable,
      matchedStatements: result.matchedStatements,
      notes: result.notes,
      ...(boundaryArn && result.boundary
        ? {
            identityDecision: result.identity.decision,
            permissionsBoundary: {
              arn: boundaryArn,
              decision: result.boundary.decision,
              matchedStatements: result.boundary.matchedStatements,
              ...(boundary?.documentError ? { error: boundary.documentError } : {}),
            },
          }
        : {}),
    },
  }
}
