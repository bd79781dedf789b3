import assert from 'node:assert/strict'
import { test } from 'node:test'
import { REDACTED, redact } from '../../../src/facts/redact.js'

test('secret-named keys and credential-shaped values are blanked; the rest is kept', () => {
  const input = {
    values: {
      settings: { clusterName: 'demo' },
      serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' } },
      webhook: { caBundle: 'LS0tLS1CRUdJTi...', tls: { 'tls.key': 'abc' } },
      extraEnv: [{ name: 'X', value: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0.c2lnbmF0dXJl' }],
      aws: { secretAccessKey: 'wJalrXUtnFEMI/K7MDENG', accessKeyId: 'AKIAIOSFODNN7EXAMPLE' },
      password: { nested: 'x', list: ['a'] },
    },
    note: 'key AKIAIOSFODNN7EXAMPLE here',
    pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIE...',
  }
  const out = redact(input)
  assert.equal(out.values.settings.clusterName, 'demo')
  assert.equal(out.values.serviceAccount.annotations['eks.amazonaws.com/role-arn'], 'arn:aws:iam::1:role/x')
  assert.equal(out.values.webhook.caBundle, REDACTED)
  assert.equal(out.values.webhook.tls['tls.key'], REDACTED)
  assert.equal(out.values.extraEnv[0]!.value, REDACTED)
  assert.equal(out.values.aws.secretAccessKey, REDACTED)
  assert.equal(out.values.aws.accessKeyId, REDACTED)
  assert.deepEqual(out.values.password, { nested: REDACTED, list: [REDACTED] })
  // A credential inside text is blanked where it is; the words around it stay.
  assert.equal(out.note, `key ${REDACTED} here`)
  assert.equal(out.pem, REDACTED)
  assert.ok(!JSON.stringify(out).includes('AKIA'))
})

test('a multi-megabyte line is redacted, not a stack overflow of the regular expressions', () => {
  // `key: <16 MiB on one line>` overflowed the key/value expression (one repetition per character).
  const long = 'ab '.repeat(5_500_000)
  const out = redact({ note: `setting: ${long}`, other: `password: ${long}` })
  assert.equal(out.note, `setting: ${long}`)
  assert.equal(out.other, `password: ${REDACTED}`)
  // The deep guard: a 100 000-deep value is cut below the walk's bound, never a stack overflow.
  const deep: Record<string, unknown> = {}
  let cur = deep
  for (let i = 0; i < 100_000; i++) cur = (cur.a = {}) as Record<string, unknown>
  assert.doesNotThrow(() => JSON.stringify(redact(deep)))
})
