// The IAM OIDC provider for the cluster's issuer, which IRSA needs (what
// `eksctl utils associate-iam-oidc-provider` does). Any provider for the issuer will do: one made by
// another tool is used as it is, never changed.
import type * as iam from '@aws-sdk/client-iam'
import { oidcProviders } from '../../facts/collect-iam.js'
import type { OidcProvider } from '../../facts/types.js'
import type { Resource } from '../types.js'

export function oidcProvider(o: {
  issuer: string
  arn: string
  tags: Record<string, string>
}): Resource<OidcProvider> {
  const host = o.issuer.replace(/^https:\/\//, '')
  return {
    address: 'iam-oidc-provider.cluster',
    kind: 'IAM OIDC provider',
    name: host,
    group: 'IAM',
    dependsOn: [],
    desired: { url: o.issuer, clientIds: ['sts.amazonaws.com'] },
    permissions: [
      { action: 'iam:CreateOpenIDConnectProvider', resource: o.arn },
      { action: 'iam:TagOpenIDConnectProvider', resource: o.arn },
    ],
    async observe({ aws }) {
      const found = (await oidcProviders(aws)).find((p) => p.url.replace(/^https:\/\//, '') === host)
      if (!found) return null
      // The listing names providers only; their audiences need one more read.
      const out = await aws.call<iam.GetOpenIDConnectProviderCommandOutput>(
        'iam',
        'GetOpenIDConnectProvider',
        {
          OpenIDConnectProviderArn: found.arn,
        },
      )
      return { ...found, clientIds: out.ClientIDList ?? [] }
    },
    verdict(cur) {
      if (!cur) return { action: 'create', changes: [{ field: 'url', to: o.issuer }], note: 'IRSA needs it' }
      if (!cur.clientIds.includes('sts.amazonaws.com'))
        return {
          action: 'update',
          changes: [],
          blocked: `its audiences (${cur.clientIds.join(', ') || 'none'}) lack sts.amazonaws.com: run \`aws iam add-client-id-to-open-id-connect-provider --open-id-connect-provider-arn ${cur.arn} --client-id sts.amazonaws.com\` or choose --identity pod-identity`,
        }
      return { action: 'unchanged', changes: [] }
    },
    async apply({ aws }, cur) {
      if (cur) return
      await aws.write('iam', 'CreateOpenIDConnectProvider', {
        Url: o.issuer,
        ClientIDList: ['sts.amazonaws.com'],
        Tags: Object.entries(o.tags).map(([Key, Value]) => ({ Key, Value })),
      })
    },
  }
}
