// The OIDC provider's teardown: deleted only when karpctl's and no kept role still trusts it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { oidcProviderAbsent } from '../../../../src/plan/resources/oidc-provider-absent.js'
import { OWN, tagList, GONE, env, run, twoPages } from '../../../helpers/teardown-env.js'

test('OIDC provider: named by its host path, trust read decoded, deleted by its ARN', async () => {
  const arn = 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/X'
  const p = oidcProviderAbsent({
    arn,
    ownership: OWN,
    keepRoles: ['ctl'],
    dependsOn: ['iam-role.controller'],
  })
  assert.deepEqual(
    [p.address, p.kind, p.name, p.group],
    ['iam-oidc-provider.cluster', 'IAM OIDC provider', 'oidc.eks.us-west-2.amazonaws.com/id/X', 'IAM'],
  )
  const trust = encodeURIComponent(JSON.stringify({ Principal: { Federated: arn } }))
  const e = env({
    aws: {
      ListOpenIDConnectProviderTags: (i) => {
        assert.deepEqual(i, { OpenIDConnectProviderArn: arn })
        return { Tags: tagList(OWN) }
      },
      ListRoles: twoPages(
        'Roles',
        [{ RoleName: 'ctl', AssumeRolePolicyDocument: trust }],
        [{ RoleName: 'unrelated', AssumeRolePolicyDocument: encodeURIComponent('{"Principal":"x"}') }],
      ),
    },
  })
  const { cur, verdict } = await run(p, e.env)
  assert.deepEqual(cur, { tags: OWN, trustedBy: [] })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [['DeleteOpenIDConnectProvider', { OpenIDConnectProviderArn: arn }]])
  assert.deepEqual(p.permissions, [])
  assert.deepEqual(p.desired, { absent: true })
  const gone = env()
  const none = await run(p, gone.env, false)
  assert.deepEqual([none.cur, none.verdict, gone.writes], [null, GONE, []])
  // Trusted by a role on the second page: kept, naming it; another tool's: kept.
  const trusted = env({
    aws: {
      ListOpenIDConnectProviderTags: () => ({ Tags: tagList(OWN) }),
      ListRoles: twoPages(
        'Roles',
        [{ RoleName: 'ctl', AssumeRolePolicyDocument: trust }],
        [
          { RoleName: 'app-a', AssumeRolePolicyDocument: trust },
          { RoleName: 'app-b', AssumeRolePolicyDocument: trust },
        ],
      ),
    },
  })
  assert.deepEqual(p.verdict(await p.observe(trusted.env)), {
    action: 'unchanged',
    changes: [],
    note: 'kept: still trusted by app-a, app-b',
  })
  const foreign = env({ aws: { ListOpenIDConnectProviderTags: () => ({}), ListRoles: () => ({}) } })
  assert.deepEqual(p.verdict(await p.observe(foreign.env)), {
    action: 'unchanged',
    changes: [],
    note: 'kept: karpctl did not make it',
  })
})
