import assert from 'node:assert/strict'
import { test } from 'node:test'
import { evaluate } from '../../../src/policy/evaluate.js'
import { parsePolicyDocument, PolicyDocumentError } from '../../../src/facts/policy-document.js'

const policy = {
  Version: '2012-10-17',
  Statement: {
    Sid: 'AllowPassingInstanceRole',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo',
    Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
  },
}

test('plain JSON: a single Statement object becomes an array', () => {
  const doc = parsePolicyDocument(JSON.stringify(policy))
  assert.equal(doc.Version, '2012-10-17')
  assert.ok(Array.isArray(doc.Statement))
  assert.equal(doc.Statement.length, 1)
  assert.equal(doc.Statement[0]?.Sid, 'AllowPassingInstanceRole')
})

test('URL-encoded JSON, as IAM returns it (%7B%22Version...)', () => {
  const encoded = encodeURIComponent(JSON.stringify(policy, null, 2))
  assert.ok(encoded.startsWith('%7B%0A%20%20%22Version%22'))
  const doc = parsePolicyDocument(encoded)
  assert.equal(doc.Statement[0]?.Effect, 'Allow')
  // the decoded document is usable as is
  const r = evaluate([doc], {
    action: 'iam:PassRole',
    resource: 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo',
    context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
  })
  assert.equal(r.decision, 'allowed')
})

test('URL-encoded with + for spaces (form encoding) still parses', () => {
  const doc = parsePolicyDocument(
    '%7B%22Statement%22%3A+%5B%7B%22Effect%22%3A+%22Deny%22%2C+%22Action%22%3A+%22*%22%2C+%22Resource%22%3A+%22*%22%7D%5D%7D',
  )
  assert.equal(doc.Statement[0]?.Effect, 'Deny')
})

test('a trust policy (Principal, no Resource) parses', () => {
  const doc = parsePolicyDocument(
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}',
  )
  assert.deepEqual(doc.Statement[0]?.Principal, { Service: 'ec2.amazonaws.com' })
})

test('garbage throws a clear PolicyDocumentError', () => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['not json at all', /not an IAM policy document: .*"not json at all"/],
    ['%7Bbroken', /URL-decoded text is not JSON/],
    ['[1,2]', /expected a JSON object/],
    ['{"Version":"2012-10-17"}', /no "Statement"/],
    ['{"Statement":[{"Effect":"allow","Action":"*"}]}', /Statement\[0\]\.Effect must be "Allow" or "Deny"/],
    ['{"Statement":[{"Effect":"Allow","Resource":"*"}]}', /neither Action nor NotAction/],
    ['{"Statement":[{"Effect":"Allow","Action":["a",1]}]}', /Action must be a string or a list of strings/],
  ]
  for (const [text, pattern] of cases) {
    assert.throws(
      () => parsePolicyDocument(text),
      (err: unknown) => err instanceof PolicyDocumentError && pattern.test(err.message),
      `for ${JSON.stringify(text)}`,
    )
  }
})
