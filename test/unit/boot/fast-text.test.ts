// The fast paths the build puts around string-width and strip-ansi: the packages' own answers.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { fastStringWidth, fastStripAnsi } from '../../../src/boot/fast-text.js'

// The copies oclif's help uses (node_modules/string-width 4, strip-ansi 6), unpatched.
const require = createRequire(import.meta.url)
const stringWidth = require('string-width') as (s: string) => number
const stripAnsi = require('strip-ansi') as (s: string) => string
const width = fastStringWidth(stringWidth)
const strip = fastStripAnsi(stripAnsi)

/** Strings drawn from printable ASCII and from what the fast paths must leave to the packages. */
function corpus(): string[] {
  const parts = [
    'a',
    'Z',
    ' ',
    '~',
    '-',
    '<%= config.bin %>',
    '--kube-context=<value>',
    '\u001b[1m',
    '\u001b[22m',
    '\u001b[38;5;12m',
    '\u009b31m',
    '\u001b]8;;https://x\u0007',
    '\u001b[0m',
    '\u00e9',
    'e\u0301',
    '\u4e2d\u6587',
    '\uff21',
    '\u{1f600}',
    '#\ufe0f\u20e3',
    '1\u20e3',
    '\t',
    '\n',
    '\u007f',
    '\u0085',
  ]
  let seed = 7
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0)
  const out: string[] = ['', ...parts]
  for (let i = 0; i < 4000; i++)
    out.push(Array.from({ length: next() % 7 }, () => parts[next() % parts.length]).join(''))
  return out
}

test("string-width's answer for every string, printable ASCII by its length", () => {
  for (const s of corpus()) assert.equal(width(s), stringWidth(s), JSON.stringify(s))
  assert.equal(width('  --cluster=<value>  EKS cluster name'), '  --cluster=<value>  EKS cluster name'.length)
  assert.equal(width(undefined as unknown as string), stringWidth(undefined as unknown as string))
})

test("strip-ansi's answer for every string; a string without ESC or CSI comes back as it is", () => {
  for (const s of corpus()) assert.equal(strip(s), stripAnsi(s), JSON.stringify(s))
  assert.equal(strip('\u001b[1mUSAGE\u001b[22m'), 'USAGE')
  assert.equal(strip(5 as unknown as string), stripAnsi(5 as unknown as string))
})

test('the fast paths do not call the packages for plain text, and do for anything else', () => {
  const calls: string[] = []
  const w = fastStringWidth((s) => (calls.push(s), 0))
  const st = fastStripAnsi((s: string) => (calls.push(s), s))
  w('plain text')
  st('plain text')
  assert.deepEqual(calls, [])
  w('caf\u00e9')
  st('\u001b[1mx')
  assert.deepEqual(calls, ['caf\u00e9', '\u001b[1mx'])
})
