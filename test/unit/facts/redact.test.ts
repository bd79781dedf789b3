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
