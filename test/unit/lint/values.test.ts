import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import {
  helmPath,
  helmSetTypedValue,
  isStringTarget,
  lintHelmValues,
  lintValuesFile,
  lintValuesText,
  parseHelmPath,
  yamlSnippet,
} from '../../../src/lint/values.js'
import { repoRoot } from '../../helpers/fixtures.js'

const fixture = (name: string) => join(repoRoot, 'test/fixtures/lint/values', name)

test('lintHelmValues: a boolean toleration value and a number annotation are named by path', () => {
  const issues = lintHelmValues(
    {
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { key: 'dedicated', value: true },
      ],
      podAnnotations: { 'prometheus.io/port': 8080, ok: 'x' },
      serviceAccount: { annotations: { 'eks.amazonaws.com/sts-regional-endpoints': true } },
      nodeSelector: { 'karpenter.sh/controller': 'true' },
      settings: { isolatedVPC: false },
    },
    'release values',
  )
  assert.deepEqual(
    issues.map((i) => [i.path, i.value, i.valueType]),
    [
      ['tolerations[1].value', true, 'boolean'],
      ['podAnnotations.prometheus\\.io/port', 8080, 'number'],
      ['serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints', true, 'boolean'],
    ],
  )
  assert.match(issues[0]!.message, /^tolerations\[1\]\.value = true \(boolean\) in release values/)
  assert.match(issues[0]!.fix, /--set-string 'tolerations\[1\]\.value=true'/)
  assert.match(issues[0]!.fix, /value: "true"/)
})

test('lintHelmValues: strings, nulls and settings are fine; non-objects yield nothing', () => {
  assert.deepEqual(
    lintHelmValues(
      {
        tolerations: [
          { key: 'a', value: 'true' },
          { key: 'b', value: null },
        ],
        podLabels: { a: null },
      },
      's',
    ),
    [],
  )
  assert.deepEqual(lintHelmValues(null, 's'), [])
  assert.deepEqual(lintHelmValues(['x'], 's'), [])
})

test('lintValuesFile: finds both mistakes with file and line, keeping the value as written', async () => {
  const issues = await lintValuesFile(fixture('values.yaml'))
  const byPath = Object.fromEntries(issues.map((i) => [i.path, i]))
  assert.equal(issues.length, 2)
  assert.equal(byPath['tolerations[1].value']?.line, 16)
  assert.equal(byPath['tolerations[1].value']?.valueType, 'boolean')
  assert.equal(byPath['podAnnotations.prometheus\\.io/port']?.line, 10)
  assert.equal(byPath['podAnnotations.prometheus\\.io/port']?.stringValue, '8080')
  assert.ok(issues.every((i) => i.file?.endsWith('values.yaml')))
})

test('lintValuesFile: a clean file has no issues (tolerationSeconds may stay a number)', async () => {
  assert.deepEqual(await lintValuesFile(fixture('clean.yaml')), [])
})

test('YAML 1.1 like Helm: yes/on are booleans, and the fix keeps the spelling the user wrote', async () => {
  const issues = await lintValuesText(
    'podLabels:\n  enabled: yes\ntolerations:\n  - key: a\n    value: On\n',
    'inline.yaml',
  )
  assert.deepEqual(
    issues.map((i) => [i.path, i.value, i.stringValue, i.line]),
    [
      ['tolerations[0].value', true, 'On', 5],
      ['podLabels.enabled', true, 'yes', 2],
    ],
  )
})

test('malformed YAML throws InputError with a one-line message naming file and line', async () => {
  await assert.rejects(lintValuesFile(fixture('broken.yaml')), (err: unknown) => {
    assert.ok(err instanceof InputError)
    assert.match(err.message, /broken\.yaml:\d+: invalid YAML: /)
    assert.ok(!err.message.includes('\n'), err.message)
    return true
  })
  await assert.rejects(
    lintValuesFile(fixture('missing.yaml')),
    (err: unknown) =>
      err instanceof InputError && /values file ".*missing\.yaml" does not exist/.test(err.message),
  )
})

test('Helm --set typing: true/false/null and plain integers are not strings; floats and 0-prefixed are', () => {
  assert.equal(helmSetTypedValue('true'), true)
  assert.equal(helmSetTypedValue('FALSE'), false)
  assert.equal(helmSetTypedValue('null'), null)
  assert.equal(helmSetTypedValue('8080'), 8080)
  assert.equal(helmSetTypedValue('-1'), -1)
  assert.equal(helmSetTypedValue('0'), 0)
  assert.equal(helmSetTypedValue('0123'), '0123')
  assert.equal(helmSetTypedValue('1.5'), '1.5')
  assert.equal(helmSetTypedValue('yes'), 'yes')
  assert.equal(helmSetTypedValue('99999999999999999999'), '99999999999999999999')
})

test('Helm paths: escaped dots round-trip; string targets are recognised', () => {
  const p = ['serviceAccount', 'annotations', 'eks.amazonaws.com/sts-regional-endpoints']
  assert.equal(helmPath(p), 'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints')
  assert.deepEqual(parseHelmPath(helmPath(p)), p)
  assert.deepEqual(parseHelmPath('tolerations[0].value'), ['tolerations', 0, 'value'])
  assert.equal(isStringTarget(['tolerations', 0, 'value']), true)
  assert.equal(isStringTarget(['tolerations', 0, 'tolerationSeconds']), false)
  assert.equal(isStringTarget(p), true)
  assert.equal(isStringTarget(['podAnnotations']), false)
  assert.equal(isStringTarget(['settings', 'clusterName']), false)
})

test('yamlSnippet quotes every string, so the fix cannot reintroduce the trap', () => {
  assert.equal(
    yamlSnippet({
      tolerations: [{ key: 'dedicated', value: 'true', tolerationSeconds: 30 }],
      podLabels: { on: 'yes' },
    }),
    'tolerations:\n  - key: "dedicated"\n    value: "true"\n    tolerationSeconds: 30\npodLabels:\n  "on": "yes"',
  )
})
