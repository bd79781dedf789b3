import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import test from 'node:test'
import { eksToken, presignedIdentityUrl, TOKEN_PREFIX } from '../../../src/fleet/token.js'

// AWS's documented example credentials (IAM user guide); a fixed instant makes the signature a vector.
const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }
const at = new Date('2026-12-04T11:30:00Z')

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** SigV4 query signing written out from AWS's spec, independent of the SDK's signer. */
function expectedSignature(url: URL, cluster: string, secret: string): string {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature')
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const canonicalQuery = params.map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`).join('&')
  const canonical = [
    'GET',
    '/',
    canonicalQuery,
    `host:${url.host}\nx-k8s-aws-id:${cluster}\n`,
    'host;x-k8s-aws-id',
    createHash('sha256').update('').digest('hex'),
  ].join('\n')
  const amzDate = url.searchParams.get('X-Amz-Date') as string
  const scope = (url.searchParams.get('X-Amz-Credential') as string).split('/').slice(1).join('/')
  const toSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n')
  const [day, region, service] = scope.split('/') as [string, string, string]
  let key = hmac(`AWS4${secret}`, day)
  key = hmac(key, region)
  key = hmac(key, service)
  key = hmac(key, 'aws4_request')
  return createHmac('sha256', key).update(toSign).digest('hex')
}

test('the presigned URL is STS GetCallerIdentity, regional, 60 s, signing host and x-k8s-aws-id', async () => {
  const url = new URL(await presignedIdentityUrl('demo', 'eu-west-1', creds, at))
  assert.equal(url.origin, 'https://sts.eu-west-1.amazonaws.com')
  assert.equal(url.searchParams.get('Action'), 'GetCallerIdentity')
  assert.equal(url.searchParams.get('Version'), '2011-06-15')
  assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256')
  assert.equal(url.searchParams.get('X-Amz-Credential'), 'AKIDEXAMPLE/20261204/eu-west-1/sts/aws4_request')
  assert.equal(url.searchParams.get('X-Amz-Date'), '20261204T113000Z')
  assert.equal(url.searchParams.get('X-Amz-Expires'), '60')
  assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'host;x-k8s-aws-id')
  // The cluster name travels as a signed header, not in the URL (as aws-iam-authenticator expects).
  assert.equal(url.searchParams.get('x-k8s-aws-id'), null)
  assert.equal(url.searchParams.get('X-Amz-Signature'), expectedSignature(url, 'demo', creds.secretAccessKey))
})

test('the signature binds the cluster name: another cluster, another signature', async () => {
  const a = new URL(await presignedIdentityUrl('demo', 'eu-west-1', creds, at))
  const b = new URL(await presignedIdentityUrl('other', 'eu-west-1', creds, at))
  assert.notEqual(a.searchParams.get('X-Amz-Signature'), b.searchParams.get('X-Amz-Signature'))
  assert.equal(b.searchParams.get('X-Amz-Signature'), expectedSignature(b, 'other', creds.secretAccessKey))
})

test('session credentials (an assumed role) sign their token too', async () => {
  const url = new URL(
    await presignedIdentityUrl('demo', 'us-east-1', { ...creds, sessionToken: 'FwoG+a/b=' }, at),
  )
  assert.equal(url.searchParams.get('X-Amz-Security-Token'), 'FwoG+a/b=')
  assert.equal(url.searchParams.get('X-Amz-Signature'), expectedSignature(url, 'demo', creds.secretAccessKey))
})

test('the token is k8s-aws-v1. + base64url of the URL, without padding', async () => {
  const token = await eksToken('demo', 'us-west-2', creds, at)
  assert.ok(token.startsWith(TOKEN_PREFIX))
  const body = token.slice(TOKEN_PREFIX.length)
  assert.match(body, /^[A-Za-z0-9_-]+$/)
  assert.equal(
    Buffer.from(body, 'base64url').toString('utf8'),
    await presignedIdentityUrl('demo', 'us-west-2', creds, at),
  )
})

test('China regions sign for their own STS host', async () => {
  const url = new URL(await presignedIdentityUrl('demo', 'cn-north-1', creds, at))
  assert.equal(url.host, 'sts.cn-north-1.amazonaws.com.cn')
})
