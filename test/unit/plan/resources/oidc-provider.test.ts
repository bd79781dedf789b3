// The cluster's IAM OIDC provider (issue 18): its shape, how it finds a provider for the issuer among
// the account's (by host, with or without the scheme), each verdict (an audience without
// sts.amazonaws.com blocks, never changed), and the exact create call. Each assertion fails when the
// condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import { oidcProvider } from '../../../../src/plan/resources/oidc-provider.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const HOST = 'oidc.eks.us-west-2.amazonaws.com/id/ABC123'
const ISSUER = `https://${HOST}`
const ARN = `arn:aws:iam::123456789012:oidc-provider/${HOST}`
const OTHER_ARN = 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/OTHER'
const provider = (issuer = ISSUER, arn = ARN) =>
  oidcProvider({ issuer, arn, tags: { 'karpctl.io/cluster': 'demo', team: 'infra' } })

/** ListOpenIDConnectProviders and GetOpenIDConnectProvider as IAM answers them, each input kept. */
function iam(arns: string[], get: unknown, inputs: unknown[] = []) {
  return recordingEnv({
    aws: {
      ListOpenIDConnectProviders: () => ({ OpenIDConnectProviderList: arns.map((Arn) => ({ Arn })) }),
      GetOpenIDConnectProvider: (i) => (inputs.push(i), get),
    },
  })
}

test('shape: one provider named by the issuer host, wanted with the sts.amazonaws.com audience', () => {
  const r = provider()
  // Kills: the host regex's replacement, kind, group, dependsOn, desired and permission literals.
  assert.deepEqual(shapeOf(r), {
    address: 'iam-oidc-provider.cluster',
    kind: 'IAM OIDC provider',
    name: HOST,
    group: 'IAM',
    dependsOn: [],
    desired: { url: ISSUER, clientIds: ['sts.amazonaws.com'] },
    permissions: [
      { action: 'iam:CreateOpenIDConnectProvider', resource: ARN },
      { action: 'iam:TagOpenIDConnectProvider', resource: ARN },
    ],
  })
})

test("observe: the provider whose host is the issuer's, with the audiences read by its ARN", async () => {
  const inputs: unknown[] = []
  const r = iam([OTHER_ARN, ARN], { ClientIDList: ['sts.amazonaws.com', 'other'] }, inputs)
  assert.deepEqual(await provider().observe(r.env), {
    arn: ARN,
    url: HOST,
    clientIds: ['sts.amazonaws.com', 'other'],
  })
  assert.deepEqual(r.awsCalls, [
    { service: 'iam', op: 'ListOpenIDConnectProviders' },
    { service: 'iam', op: 'GetOpenIDConnectProvider' },
  ])
  assert.deepEqual(inputs, [{ OpenIDConnectProviderArn: ARN }])
})

test('observe: a provider without audiences has none', async () => {
  // Kills: `ClientIDList ?? []` -> `&&`, and its fallback array.
  assert.deepEqual(await provider().observe(iam([ARN], {}).env), { arn: ARN, url: HOST, clientIds: [] })
})

test('observe: no provider for the host is none, and nothing more is read', async () => {
  const r = iam([OTHER_ARN], { ClientIDList: ['sts.amazonaws.com'] })
  assert.equal(await provider().observe(r.env), null)
  assert.deepEqual(r.awsCalls, [{ service: 'iam', op: 'ListOpenIDConnectProviders' }])
})

test('observe: a provider URL that carries the https scheme still matches the host', async () => {
  // Kills: the scheme stripping on the listed URL (its replacement string).
  const arn = `arn:aws:iam::123456789012:oidc-provider/${ISSUER}`
  assert.deepEqual(await provider().observe(iam([arn], { ClientIDList: [] }).env), {
    arn,
    url: ISSUER,
    clientIds: [],
  })
})

test('only a leading https:// is the scheme: one inside the path is part of the host', async () => {
  // Kills: both scheme regexes without their `^` anchor.
  const host = 'oidc.example.com/id/https://x'
  const r = provider(`https://${host}`)
  assert.equal(r.name, host)
  assert.equal(provider(host).name, host)
  const arn = `arn:aws:iam::123456789012:oidc-provider/${host}`
  assert.deepEqual(await r.observe(iam([arn], { ClientIDList: [] }).env), { arn, url: host, clientIds: [] })
})

test('verdict: none is created; one with sts.amazonaws.com is unchanged; one without it blocks', () => {
  const r = provider()
  assert.deepEqual(r.verdict(null), {
    action: 'create',
    changes: [{ field: 'url', to: ISSUER }],
    note: 'IRSA needs it',
  })
  assert.deepEqual(r.verdict({ arn: ARN, url: HOST, clientIds: ['other', 'sts.amazonaws.com'] }), {
    action: 'unchanged',
    changes: [],
  })
  const blocked = (audiences: string) => ({
    action: 'update',
    changes: [],
    blocked: `its audiences (${audiences}) lack sts.amazonaws.com: run \`aws iam add-client-id-to-open-id-connect-provider --open-id-connect-provider-arn ${ARN} --client-id sts.amazonaws.com\` or choose --identity pod-identity`,
  })
  assert.deepEqual(r.verdict({ arn: ARN, url: HOST, clientIds: ['a', 'b'] }), blocked('a, b'))
  assert.deepEqual(r.verdict({ arn: ARN, url: HOST, clientIds: [] }), blocked('none'))
})

test('apply: none is created for the issuer with the sts audience and the tags; an existing one is never written', async () => {
  const r = recordingEnv()
  await provider().apply(r.env, null)
  assert.deepEqual(r.awsCalls, [{ service: 'iam', op: 'CreateOpenIDConnectProvider' }])
  assert.deepEqual(r.awsWrites, [
    {
      op: 'CreateOpenIDConnectProvider',
      input: {
        Url: ISSUER,
        ClientIDList: ['sts.amazonaws.com'],
        Tags: [
          { Key: 'karpctl.io/cluster', Value: 'demo' },
          { Key: 'team', Value: 'infra' },
        ],
      },
    },
  ])
  const kept = recordingEnv()
  await provider().apply(kept.env, { arn: ARN, url: HOST, clientIds: [] })
  assert.deepEqual(kept.awsCalls, [])
})
