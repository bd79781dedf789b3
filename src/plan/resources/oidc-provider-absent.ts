// The cluster's IAM OIDC provider, deleted when karpctl made it and no role it keeps still trusts it.
import type * as iam from '@aws-sdk/client-iam'
import { isOwned } from '../compare.js'
import type { Resource } from '../types.js'
import { gone, orNull, tagMap } from './absent.js'

/** karpctl's OIDC provider, unless a role karpctl does not remove still trusts it (other IRSA users). */
export function oidcProviderAbsent(w: {
  arn: string
  ownership: Record<string, string>
  keepRoles: string[]
  dependsOn: string[]
}): Resource<{ tags: Record<string, string>; trustedBy: string[] }> {
  return {
    address: 'iam-oidc-provider.cluster',
    kind: 'IAM OIDC provider',
    name: w.arn.slice(w.arn.indexOf('/') + 1),
    group: 'IAM',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const t = await orNull(
        aws.call<iam.ListOpenIDConnectProviderTagsCommandOutput>('iam', 'ListOpenIDConnectProviderTags', {
          OpenIDConnectProviderArn: w.arn,
        }),
      )
      if (!t) return null
      const roles = await aws.all<iam.ListRolesCommandOutput, iam.Role>(
        'iam',
        'ListRoles',
        {},
        'Marker',
        (o) => ({ items: o.Roles, next: o.IsTruncated ? o.Marker : undefined }),
      )
      const trustedBy = roles
        .filter(
          (r) =>
            !w.keepRoles.includes(r.RoleName ?? '') &&
            decodeURIComponent(r.AssumeRolePolicyDocument ?? '').includes(w.arn),
        )
        .map((r) => r.RoleName ?? '')
      return { tags: tagMap(t.Tags), trustedBy }
    },
    verdict(cur) {
      if (!cur) return gone
      if (!isOwned(cur.tags, w.ownership))
        return { action: 'unchanged', changes: [], note: 'kept: karpctl did not make it' }
      if (cur.trustedBy.length)
        return {
          action: 'unchanged',
          changes: [],
          note: `kept: still trusted by ${cur.trustedBy.join(', ')}`,
        }
      return { action: 'delete', changes: [] }
    },
    async apply({ aws }) {
      await orNull(aws.write('iam', 'DeleteOpenIDConnectProvider', { OpenIDConnectProviderArn: w.arn }))
    },
  }
}
