// Lint must not pass garbage: a values file that is not a map of values (a list, a scalar), not
// UTF-8, not a regular file (a FIFO would hang the run), an alias bomb, and a --terraform directory
// with nothing to lint are each an InputError naming the file — never a ✔.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { lintLocal } from '../../../src/doctor/local-lint.js'
import { InputError } from '../../../src/errors.js'
import { lintValuesFile } from '../../../src/lint/values.js'

let dir: string
let n = 0
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-garbage-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

function file(content: string | Buffer, name = `values-${++n}.yaml`): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

async function inputError(p: Promise<unknown>): Promise<InputError> {
  try {
    await p
  } catch (err) {
    assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`)
    assert.ok(!err.message.includes('\n'), `one line: ${err.message}`)
    return err
  }
  assert.fail('expected an InputError: the garbage was linted as fine')
}

const bomb = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  'podAnnotations: {x: *f}',
].join('\n')

const cases: [string, () => string, RegExp][] = [
  ['a YAML list', () => file('- a\n- b\n'), /is a YAML list, not a map of Helm values/],
  ['a list of maps', () => file('- podAnnotations: {a: true}\n'), /is a YAML list/],
  ['a scalar string', () => file('just some text\n'), /is a string \("just some text"\), not a map/],
  ['a scalar number', () => file('42\n'), /is a number \(42\), not a map/],
  ['a scalar boolean', () => file('yes\n'), /is a boolean \(true\), not a map/],
  ['not UTF-8 (Latin-1)', () => file(Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0xe8, 0x0a])), /is not UTF-8 text/],
  [
    'UTF-16 with a BOM',
    () => file(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a: 1\n', 'utf16le')])),
    /is not UTF-8 text/,
  ],
  ['binary', () => file(Buffer.from([0x00, 0xff, 0x13, 0x37, 0xc3, 0x28])), /is not UTF-8 text/],
  ['an alias bomb', () => file(bomb), /refused: its YAML aliases expand more than 1000 times/],
  [
    'a directory',
    () => mkdirSync(join(dir, `d-${++n}`), { recursive: true }) ?? join(dir, `d-${n}`),
    /is a directory/,
  ],
  [
    'a FIFO with no writer',
    () => {
      const path = join(dir, `fifo-${++n}`)
      execFileSync('mkfifo', [path])
      return path
    },
    /is a FIFO/,
  ],
  ['a file that does not exist', () => join(dir, 'nope.yaml'), /does not exist/],
  ['malformed YAML', () => file('a: [1, 2\n'), /:\d+: invalid YAML/],
]

for (const [what, make, message] of cases) {
  test(`--values: ${what} is an error naming the file`, async () => {
    const path = make()
    const started = Date.now()
    const err = await inputError(lintValuesFile(path))
    assert.ok(Date.now() - started < 5_000, 'no hang')
    assert.match(err.message, message)
    assert.ok(err.message.includes(path), `names the file: ${err.message}`)
    // Through doctor's lint too: an error, not a result.
    await inputError(lintLocal([path]))
  })
}

test('an empty values file (or only comments) is valid: no values, nothing to fix', async () => {
  assert.deepEqual(await lintValuesFile(file('')), [])
  assert.deepEqual(await lintValuesFile(file('# nothing here\n')), [])
  const [result] = await lintLocal([file('podAnnotations: {a: "x"}\n')])
  assert.equal(result?.status, 'pass')
})

test('--terraform: an empty directory, and one without a Karpenter helm_release, are errors naming it', async () => {
  const empty = join(dir, 'tf-empty')
  mkdirSync(empty)
  const none = await inputError(lintLocal([], empty))
  assert.equal(none.code, 'TERRAFORM_NO_FILES')
  assert.match(none.message, /--terraform ".*tf-empty" has no \.tf files/)

  const other = join(dir, 'tf-other')
  mkdirSync(other)
  writeFileSync(
    join(other, 'main.tf'),
    'resource "helm_release" "nginx" {\n  name = "nginx"\n  chart = "ingress-nginx"\n}\n',
  )
  const noRelease = await inputError(lintLocal([], other))
  assert.equal(noRelease.code, 'TERRAFORM_NO_RELEASE')
  assert.match(noRelease.message, /no helm_release of a Karpenter chart in its 1 \.tf file\(s\) \(main\.tf\)/)

  const latin1 = join(dir, 'tf-latin1')
  mkdirSync(latin1)
  writeFileSync(join(latin1, 'main.tf'), Buffer.from([0x23, 0x20, 0xe9, 0x0a]))
  assert.match((await inputError(lintLocal([], latin1))).message, /main\.tf" is not UTF-8 text/)
})
