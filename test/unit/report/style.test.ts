// When to colour, and what colouring looks like.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { style, useColor } from '../../../src/report/style.js'

const tty = { isTTY: true }
const pipe = { isTTY: false }

test('a TTY gets colour; a pipe, or a stream without isTTY, does not', () => {
  assert.equal(useColor(tty, {}), true)
  assert.equal(useColor(tty, { TERM: 'xterm-256color' }), true)
  assert.equal(useColor(pipe, {}), false)
  assert.equal(useColor({}, {}), false)
})

test('NO_COLOR (non-empty) turns colour off, even with FORCE_COLOR', () => {
  assert.equal(useColor(tty, { NO_COLOR: '1' }), false)
  assert.equal(useColor(tty, { NO_COLOR: 'anything' }), false)
  assert.equal(useColor(tty, { NO_COLOR: '1', FORCE_COLOR: '1' }), false)
  // no-color.org: an empty NO_COLOR is as if unset
  assert.equal(useColor(tty, { NO_COLOR: '' }), true)
})

test('FORCE_COLOR=0 turns colour off on a TTY; FORCE_COLOR=1 turns it on for a pipe and a dumb terminal', () => {
  assert.equal(useColor(tty, { FORCE_COLOR: '0' }), false)
  assert.equal(useColor(pipe, { FORCE_COLOR: '1' }), true)
  assert.equal(useColor(pipe, { FORCE_COLOR: '1', TERM: 'dumb' }), true)
  assert.equal(useColor(pipe, { FORCE_COLOR: '0' }), false)
})

test('TERM=dumb turns colour off on a TTY', () => {
  assert.equal(useColor(tty, { TERM: 'dumb' }), false)
})

test('the defaults read process.stdout and process.env', () => {
  const saved = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR }
  try {
    delete process.env.NO_COLOR
    process.env.FORCE_COLOR = '0'
    assert.equal(useColor(), false)
    process.env.FORCE_COLOR = '1'
    assert.equal(useColor(), true)
    process.env.NO_COLOR = '1'
    assert.equal(useColor(), false)
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
})

test('style(true) wraps each colour in its SGR codes; style(false) returns the text unchanged', () => {
  const on = style(true)
  assert.equal(on.red('x'), '\u001b[31mx\u001b[39m')
  assert.equal(on.green('x'), '\u001b[32mx\u001b[39m')
  assert.equal(on.yellow('x'), '\u001b[33mx\u001b[39m')
  assert.equal(on.cyan('x'), '\u001b[36mx\u001b[39m')
  assert.equal(on.dim('x'), '\u001b[2mx\u001b[22m')
  assert.equal(on.bold('x'), '\u001b[1mx\u001b[22m')

  const off = style(false)
  for (const paint of [off.red, off.green, off.yellow, off.cyan, off.dim, off.bold])
    assert.equal(paint('plain text'), 'plain text')
})
