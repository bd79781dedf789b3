import assert from 'node:assert/strict'
import { test } from 'node:test'
import { forTerminal, jsonText, terminalLine, visible } from '../../../src/report/terminal.js'
import { style } from '../../../src/report/style.js'

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

test('every C0 and C1 control, DEL, line break and bidirectional override is made visible; tab stays', () => {
  assert.equal(visible('a\u001b]0;title\u0007b'), 'a\\u001b]0;title\\u0007b')
  assert.equal(visible('\u001b[2J'), '\\u001b[2J')
  assert.equal(visible('\u009b31m'), '\\u009b31m')
  assert.equal(visible('ok\rFAIL\u0008\u007f'), 'ok\\rFAIL\\u0008\\u007f')
  assert.equal(visible('a\u202eb'), 'a\\u202eb')
  assert.equal(visible('two\nlines\tand a tab'), 'two\\nlines\tand a tab')
  assert.equal(visible('a\u2028b'), 'a\\u2028b')
  for (let c = 0; c <= 0x9f; c++) {
    const ch = String.fromCharCode(c)
    if ((c >= 0x20 && c < 0x7f) || ch === '\t') continue
    assert.doesNotMatch(visible(ch), RAW, `U+${c.toString(16)}`)
  }
})

test("a printed line keeps karpctl's own colours and nothing else", () => {
  const s = style(true)
  const line = `${s.red('✖')} role ${'x\u001b[8mhidden\u001b]8;;https://e/\u0007'} ${s.dim('—')}`
  const out = terminalLine(line)
  assert.ok(out.startsWith('\u001b[31m✖\u001b[39m'), out)
  assert.ok(out.includes('\u001b[2m—\u001b[22m'))
  assert.ok(out.includes('x\\u001b[8mhidden\\u001b]8;;https://e/\\u0007'), out)
})

test('forTerminal copies plain data with every string and key visible, without recursion', () => {
  const out = forTerminal({ a: ['x\u001b[2J', 1, null, true], 'k\u0007': { b: 'y\u009b' } })
  assert.deepEqual(out, { a: ['x\\u001b[2J', 1, null, true], 'k\\u0007': { b: 'y\\u009b' } })
  const deep: Record<string, unknown> = {}
  let cur = deep
  for (let i = 0; i < 100_000; i++) cur = (cur.a = { s: '\u001b' }) as Record<string, unknown>
  assert.doesNotThrow(() => forTerminal(deep))
})

test('JSON text stays valid JSON with no raw DEL or C1 (JSON.stringify leaves them)', () => {
  const value = { s: 'a\u009b31m\u007f\u001b]0;t\u0007\u2028' }
  assert.match(JSON.stringify(value), /\u009b/, 'JSON.stringify alone leaves U+009B raw')
  const text = jsonText(value, 2)
  assert.doesNotMatch(text, RAW)
  assert.deepEqual(JSON.parse(text), value)
})
