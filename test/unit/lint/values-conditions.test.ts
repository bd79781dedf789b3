// The conditions the values lint judges, one at a time (issue 12, item 8: mutation testing).
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import {
  helmPath,
  helmSetTypedValue,
  helmSetValue,
  isStringTarget,
  lintHelmValues,
  lintValuesFile,
  lintValuesText,
  makeIssue,
  MAX_LINT_FILE_BYTES,
  parseHelmPath,
  readTextFile,
  STRING_MAP_PATHS,
  valueType,
  yamlSnippet,
} from '../../../src/lint/values.js'

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-values-cond-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

async function inputError(p: Promise<unknown>): Promise<InputError> {
  try {
    await p
  } catch (err) {
    assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`)
    return err
  }
  assert.fail('expected an InputError')
}

// ---- lintHelmValues ----

test('every string map of the chart is walked, and only its direct entries', () => {
  const values: Record<string, unknown> = {}
  for (const p of STRING_MAP_PATHS) {
    let cur = values
    for (const seg of p.slice(0, -1)) cur = (cur[seg as string] ??= {}) as Record<string, unknown>
    cur[p[p.length - 1] as string] = { n: 1 }
  }
  const issues = lintHelmValues(values, 'v')
  assert.deepEqual(
    issues.map((i) => i.keyPath),
    STRING_MAP_PATHS.map((p) => [...p, 'n']),
  )
  assert.deepEqual(
    issues.map((i) => i.path),
    [
      'podAnnotations.n',
      'podLabels.n',
      'additionalAnnotations.n',
      'additionalLabels.n',
      'nodeSelector.n',
      'serviceAccount.annotations.n',
      'service.annotations.n',
      'serviceMonitor.additionalLabels.n',
    ],
  )
})

test('a map path that is not a map (a list, a string, missing parent) is skipped', () => {
  assert.deepEqual(
    lintHelmValues(
      { podLabels: [1], podAnnotations: 'x', serviceAccount: 'sa', service: { annotations: null } },
      'v',
    ),
    [],
  )
})

test('tolerations: only entries that are maps with a value key are judged; a non-list is skipped', () => {
  assert.deepEqual(lintHelmValues({ tolerations: { value: true } }, 'v'), [])
  const issues = lintHelmValues({ tolerations: [true, ['value'], { key: 'a' }, { value: 0 }] }, 'v')
  assert.deepEqual(
    issues.map((i) => [i.path, i.value]),
    [['tolerations[3].value', 0]],
  )
})

test('an object, a list or a number as a map entry is reported with its JSON as the string meant', () => {
  const issues = lintHelmValues({ podLabels: { o: { a: 1 }, l: [1, 'x'], u: undefined, n: 1.5 } }, 'src')
  assert.deepEqual(
    issues.map((i) => [i.path, i.valueType, i.stringValue]),
    [
      ['podLabels.o', 'object', '{"a":1}'],
      ['podLabels.l', 'array', '[1,"x"]'],
      ['podLabels.n', 'number', '1.5'],
    ],
  )
})

// ---- makeIssue ----

test('makeIssue: the whole issue as the user sees it', () => {
  assert.deepEqual(makeIssue(['podAnnotations', "it's=a,b"], true, 'values.yaml'), {
    path: "podAnnotations.it's\\=a\\,b",
    keyPath: ['podAnnotations', "it's=a,b"],
    value: true,
    valueType: 'boolean',
    source: 'values.yaml',
    stringValue: 'true',
    message: "podAnnotations.it's\\=a\\,b = true (boolean) in values.yaml: Kubernetes needs a string here",
    fix: `quote it in YAML (it's=a,b: "true") or pass it with --set-string 'podAnnotations.it'\\''s\\=a\\,b=true'`,
  })
})

test('makeIssue: the value as written wins; a value with a comma or backslash is escaped for --set-string', () => {
  const i = makeIssue(['tolerations', 0, 'value'], 1.5, 'f', '1.50')
  assert.equal(i.stringValue, '1.50')
  assert.match(i.fix, /\(value: "1\.50"\)/)
  const j = makeIssue(['podLabels', 'x'], ['a,b\\c'], 'f')
  assert.equal(j.stringValue, '["a,b\\\\c"]')
  assert.ok(j.fix.endsWith(`--set-string 'podLabels.x=["a\\,b\\\\\\\\c"]'`), j.fix)
  assert.match(makeIssue([0], 1, 'f').fix, /^quote it in YAML \(\[0\]: "1"\)/)
})

// ---- readTextFile ----

test('readTextFile: a regular UTF-8 file is read as text', async () => {
  const p = join(dir, 'ok.yaml')
  writeFileSync(p, 'a: "é"\n')
  assert.equal(await readTextFile(p, 'values file', 'X'), 'a: "é"\n')
})

test('readTextFile: a missing file, a path through a file, a device, an oversized file: each its message and code', async () => {
  const p = join(dir, 'f.yaml')
  writeFileSync(p, 'a: 1\n')
  const missing = await inputError(readTextFile(join(dir, 'nope.yaml'), 'values file', 'VALUES_FILE'))
  assert.equal(missing.code, 'VALUES_FILE_UNREADABLE')
  assert.equal(missing.message, `values file "${join(dir, 'nope.yaml')}" does not exist: check the path`)
  const notDir = await inputError(readTextFile(join(p, 'x'), 'Terraform file', 'TERRAFORM_FILE'))
  assert.equal(notDir.code, 'TERRAFORM_FILE_UNREADABLE')
  assert.equal(notDir.message, `Terraform file "${join(p, 'x')}" cannot be read (ENOTDIR)`)
  const device = await inputError(readTextFile('/dev/null', 'values file', 'VALUES_FILE'))
  assert.equal(device.code, 'VALUES_FILE_INVALID')
  assert.equal(device.message, 'values file "/dev/null" is not a regular file: pass a YAML file')
  const big = join(dir, 'big.yaml')
  writeFileSync(big, '')
  truncateSync(big, MAX_LINT_FILE_BYTES + 1)
  const large = await inputError(readTextFile(big, 'values file', 'VALUES_FILE'))
  assert.equal(large.code, 'VALUES_FILE_INVALID')
  assert.equal(large.message, `values file "${big}" is 16 MiB: larger than 16 MiB, not a values file`)
  truncateSync(big, MAX_LINT_FILE_BYTES)
  assert.equal((await readTextFile(big, 'values file', 'VALUES_FILE')).length, MAX_LINT_FILE_BYTES)
})

test('readTextFile: a directory is INVALID, not UNREADABLE', async () => {
  const err = await inputError(readTextFile(dir, 'values file', 'VALUES_FILE'))
  assert.equal(err.code, 'VALUES_FILE_INVALID')
  assert.equal(err.message, `values file "${dir}" is a directory: pass a YAML file`)
})

test('readTextFile: a UTF-8 byte order mark is dropped, not read as text', async () => {
  const p = join(dir, 'bom.yaml')
  writeFileSync(p, Buffer.from([0xef, 0xbb, 0xbf, 0x61]))
  assert.equal(await readTextFile(p, 'values file', 'X'), 'a')
})

// ---- lintValuesText ----

test('invalid YAML: the line counts the offset, and the position suffix of the parser is cut', async () => {
  const err = await inputError(lintValuesText('a: 1\nb: [1, 2\n', 'inline', 10))
  assert.equal(err.code, 'VALUES_FILE_INVALID')
  assert.match(err.message, /^inline:1\d: invalid YAML: /)
  assert.doesNotMatch(err.message, /at line \d+, column \d+/)
  assert.ok(!err.message.includes('\n'))
})

test('a document that is a scalar is named with its type and its start, at most 40 characters', async () => {
  const err = await inputError(lintValuesText(`"${'x'.repeat(60)}"\n`, 'f.yaml'))
  assert.equal(err.code, 'VALUES_FILE_INVALID')
  assert.equal(err.message, `f.yaml is a string ("${'x'.repeat(39)}), not a map of Helm values (key: value)`)
  const list = await inputError(lintValuesText('[]\n', 'l.yaml'))
  assert.equal(list.message, 'l.yaml is a YAML list, not a map of Helm values (key: value)')
})

test('an explicit null document (~) is valid: no values', async () => {
  assert.deepEqual(await lintValuesText('~\n', 'n.yaml'), [])
})

test('an alias bomb is refused with its own message and code', async () => {
  const bomb = ['a: &a [x,x,x,x,x,x,x,x,x,x]', 'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]']
  for (const c of 'cdef')
    bomb.push(
      `${c}: &${c} [${Array(10)
        .fill(`*${String.fromCharCode(c.charCodeAt(0) - 1)}`)
        .join(',')}]`,
    )
  const err = await inputError(lintValuesText(bomb.join('\n'), 'bomb.yaml'))
  assert.equal(err.code, 'VALUES_FILE_INVALID')
  assert.equal(
    err.message,
    'bomb.yaml refused: its YAML aliases expand more than 1000 times (an alias bomb?)',
  )
})

test('each issue names the file and its line, offset by lineOffset; a map value keeps its JSON, not its source', async () => {
  const issues = await lintValuesText('podLabels:\n  a: {b: 1}\n  c: 0x1F\n', 'f.yaml', 100)
  assert.deepEqual(
    issues.map((i) => [i.path, i.file, i.line, i.stringValue, i.value]),
    [
      ['podLabels.a', 'f.yaml', 102, '{"b":1}', { b: 1 }],
      ['podLabels.c', 'f.yaml', 103, '0x1F', 31],
    ],
  )
  assert.match(issues[1]!.fix, /c: "0x1F"/)
  assert.equal(issues[1]!.source, 'f.yaml')
})

// ---- helpers ----

test('valueType: null, array, and typeof for the rest', () => {
  assert.equal(valueType(null), 'null')
  assert.equal(valueType([]), 'array')
  assert.equal(valueType({}), 'object')
  assert.equal(valueType(undefined), 'undefined')
  assert.equal(valueType(1), 'number')
})

test('helmPath escapes backslash, dot, comma and equals in keys; indexes go in brackets', () => {
  assert.equal(helmPath(['a\\b', 'c.d', 'e,f', 'g=h']), 'a\\\\b.c\\.d.e\\,f.g\\=h')
  assert.equal(helmPath(['tolerations', 0, 'value']), 'tolerations[0].value')
  assert.equal(helmPath([0, 'a']), '[0].a')
})

test('parseHelmPath: escapes, brackets, empty segments and a trailing backslash', () => {
  assert.deepEqual(parseHelmPath('a\\\\b.c\\.d'), ['a\\b', 'c.d'])
  assert.deepEqual(parseHelmPath('a..b.'), ['a', 'b'])
  assert.deepEqual(parseHelmPath('a.\\.'), ['a', '.'])
  assert.deepEqual(parseHelmPath('a[0][1].b'), ['a', 0, 1, 'b'])
  assert.deepEqual(parseHelmPath('a[x].b'), ['a', 'x', 'b'])
  assert.deepEqual(parseHelmPath('a[0'), ['a[0'])
  assert.deepEqual(parseHelmPath('a\\'), ['a\\'])
  assert.deepEqual(parseHelmPath('\\[0]'), ['[0]'])
  assert.deepEqual(parseHelmPath('x\\[0]'), ['x[0]'])
  assert.deepEqual(parseHelmPath('\\.[0]'), ['.', 0])
  assert.deepEqual(parseHelmPath(''), [])
})

test('isStringTarget: exactly tolerations[<index>].value, or one string key below a string map', () => {
  assert.equal(isStringTarget(['tolerations', 0, 'value', 'x']), false)
  assert.equal(isStringTarget(['tolerations', 'a', 'value']), false)
  assert.equal(isStringTarget(['other', 0, 'value']), false)
  assert.equal(isStringTarget(['tolerations', 0, 'key']), false)
  assert.equal(isStringTarget(['podLabels', 'a']), true)
  assert.equal(isStringTarget(['podLabels', 0]), false)
  assert.equal(isStringTarget(['podLabels', 'a', 'b']), false)
  assert.equal(isStringTarget(['serviceAccount', 'annotations', 'a']), true)
  assert.equal(isStringTarget(['serviceAccount', 'labels', 'a']), false)
  assert.equal(isStringTarget(['serviceAccount', 'a']), false)
})

test('helmSetTypedValue: signs, the int64 range, and case of the keywords', () => {
  assert.equal(helmSetTypedValue('True'), true)
  assert.equal(helmSetTypedValue('NULL'), null)
  assert.equal(helmSetTypedValue('+5'), 5)
  assert.equal(helmSetTypedValue(''), '')
  assert.equal(helmSetTypedValue('00'), '00')
  assert.equal(helmSetTypedValue('1a'), '1a')
  assert.equal(helmSetTypedValue('a1'), 'a1')
  assert.equal(helmSetTypedValue('9223372036854775807'), Number(2n ** 63n - 1n))
  assert.equal(helmSetTypedValue('9223372036854775808'), '9223372036854775808')
  assert.equal(helmSetTypedValue('-9223372036854775808'), -(2 ** 63))
  assert.equal(helmSetTypedValue('-9223372036854775809'), '-9223372036854775809')
})

test('helmSetValue escapes every backslash and comma', () => {
  assert.equal(helmSetValue('a,b,c\\d\\e'), 'a\\,b\\,c\\\\d\\\\e')
})

test('yamlSnippet: empty collections, nested lists, null, quoted keys and indentation', () => {
  assert.equal(yamlSnippet([]), '[]')
  assert.equal(yamlSnippet({}), '{}')
  assert.equal(yamlSnippet([], 2), '  []')
  assert.equal(yamlSnippet({}, 2), '  {}')
  assert.equal(yamlSnippet('x', 2), '  "x"')
  assert.equal(yamlSnippet(null), 'null')
  assert.equal(
    yamlSnippet({
      a: [],
      b: {},
      c: [[1, 'x'], { k: null }],
      'needs quote': undefined,
      '1st': false,
      No: 2,
      'eks.amazonaws.com/role-arn': 'r',
      'a_b-c': 1,
    }),
    [
      'a: []',
      'b: {}',
      'c:',
      '  - - 1',
      '    - "x"',
      '  - k: null',
      '"needs quote": null',
      '"1st": false',
      '"No": 2',
      'eks.amazonaws.com/role-arn: "r"',
      'a_b-c: 1',
    ].join('\n'),
  )
  assert.equal(yamlSnippet({ a: { b: { c: 'd' } } }, 1), ' a:\n   b:\n     c: "d"')
  assert.equal(yamlSnippet({ y: 1, Off: 1, yesno: 1 }), '"y": 1\n"Off": 1\nyesno: 1')
})

test('tolerations: a null entry is skipped like any entry that is not a map', () => {
  assert.deepEqual(
    lintHelmValues({ tolerations: [null, { value: 1 }] }, 'v').map((i) => i.path),
    ['tolerations[1].value'],
  )
})

test('lintValuesFile: a missing file is VALUES_FILE_UNREADABLE; a non-UTF-8 one VALUES_FILE_INVALID', async () => {
  assert.equal((await inputError(lintValuesFile(join(dir, 'none.yaml')))).code, 'VALUES_FILE_UNREADABLE')
  const latin1 = join(dir, 'latin1.yaml')
  writeFileSync(latin1, Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]))
  const err = await inputError(lintValuesFile(latin1))
  assert.equal(err.code, 'VALUES_FILE_INVALID')
  assert.equal(
    err.message,
    `values file "${latin1}" is not UTF-8 text (binary, or UTF-16?): save it as UTF-8`,
  )
})

test('invalid YAML: the exact line (offset included) and the reason without its position', async () => {
  const pre = Array.from({ length: 11 }, (_, i) => `k${i}: v`).join('\n')
  const err = await inputError(lintValuesText(`${pre}\nkkkkkkkkkkkk: a: b\n`, 'inline', 100))
  assert.equal(err.message, 'inline:112: invalid YAML: Nested mappings are not allowed in compact mappings')
})

test('duplicate keys are read as Helm reads them: no error, the last one wins', async () => {
  const issues = await lintValuesText('podLabels:\n  a: "x"\npodLabels:\n  a: 1\n', 'd.yaml')
  assert.deepEqual(
    issues.map((i) => [i.path, i.value]),
    [['podLabels.a', 1]],
  )
})

test('aliases expanding fewer than 1000 times are read (more than the parser default of 100)', async () => {
  const yaml = [
    'a: &a [x,x,x,x,x,x,x,x,x,x]',
    `b: &b [${Array(10).fill('*a').join(',')}]`,
    `c: [${Array(40).fill('*b').join(',')}]`,
    'podLabels: {k: 1}',
  ].join('\n')
  assert.deepEqual(
    (await lintValuesText(yaml, 'a.yaml')).map((i) => i.path),
    ['podLabels.k'],
  )
})

test('an aliased value keeps its value as the string meant (not the alias name); a key YAML reads as a number has no line', async () => {
  const issues = await lintValuesText('x: &x true\npodLabels: {a: *x, 1: true}\n', 'f')
  assert.deepEqual(
    issues.map((i) => [i.path, i.stringValue, i.file, i.line]),
    [
      ['podLabels.1', 'true', 'f', undefined],
      ['podLabels.a', 'true', 'f', 2],
    ],
  )
  assert.equal(issues[0]!.message, 'podLabels.1 = true (boolean) in f: Kubernetes needs a string here')
  assert.ok(!('line' in issues[0]!))
})

test('parseHelmPath: a leading dot adds no empty segment; only an index of digits is a number', () => {
  assert.deepEqual(parseHelmPath('.a'), ['a'])
  assert.deepEqual(parseHelmPath('a[x1]'), ['a', 'x1'])
  assert.deepEqual(parseHelmPath('a[1x]'), ['a', '1x'])
  assert.deepEqual(parseHelmPath('a[10]'), ['a', 10])
})

test('a number JSON cannot spell (Infinity, NaN) is meant as the string it prints', () => {
  assert.deepEqual(
    lintHelmValues({ podLabels: { a: Infinity, b: NaN } }, 'v').map((i) => i.stringValue),
    ['Infinity', 'NaN'],
  )
})

test(
  'readTextFile closes the file it opened, read or refused',
  { skip: !existsSync('/proc/self/fd') },
  async () => {
    const p = join(dir, 'fd.yaml')
    writeFileSync(p, 'a: 1\n')
    const open = () => readdirSync('/proc/self/fd').length
    const before = open()
    for (let i = 0; i < 5; i++) await readTextFile(p, 'values file', 'X')
    for (let i = 0; i < 5; i++) await inputError(readTextFile(dir, 'values file', 'X'))
    assert.equal(open(), before)
  },
)
