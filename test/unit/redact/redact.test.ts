import assert from 'node:assert/strict'
import { test } from 'node:test'
import { REDACTED, redact } from '../../../src/redact/redact.js'

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

test('an 8 MiB unbroken string is redacted in one pass, whatever it is made of', () => {
  // One run of base64-like characters overflowed `[…]{24,}` ("Maximum call stack size exceeded").
  const size = 8 * 1024 * 1024
  for (const unit of ['a', 'QUJD', 'eyJ', '%2F', 'x']) {
    const long = unit.repeat(Math.ceil(size / unit.length))
    const out = redact({ values: { blob: long, password: long } })
    assert.equal(out.values.blob, long, unit)
    assert.equal(out.values.password, REDACTED, unit)
  }
  // A token prefix before the run: the whole run is the token.
  assert.equal(redact({ t: `github_pat_${'a'.repeat(size)}` }).t, REDACTED)
  const planted = `${'a'.repeat(size)} AKIAIOSFODNN7EXAMPLE`
  assert.equal(redact({ note: planted }).note, `${'a'.repeat(size)} ${REDACTED}`)
})

test('the last-applied-configuration annotation is redacted inside, or dropped when it is not JSON', () => {
  const key = 'kubectl.kubernetes.io/last-applied-configuration'
  const applied = { kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'hunter2hunter2' } }
  const out = redact({ annotations: { [key]: JSON.stringify(applied) } })
  assert.deepEqual(JSON.parse(out.annotations[key]), { ...applied, stringData: { password: REDACTED } })
  assert.equal(redact({ [key]: '{"password": "hunter2hunter2"' })[key], REDACTED)
})
