// The quoting every one-line error uses for what the user (or a server) gave: nothing in it may split
// the line, reach the terminal as an escape, or reorder what the line says (issue 36 §4).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { oneLine, quote } from '../../src/errors.js'

test('quote escapes U+2028/U+2029 and every bidirectional control, as report lines do', () => {
  assert.equal(quote('web\u202eevil'), '"web\\u202eevil"')
  assert.equal(quote('acme\u2028x'), '"acme\\u2028x"')
  for (const c of [
    '\u202a',
    '\u202b',
    '\u202c',
    '\u202d',
    '\u202e',
    '\u2066',
    '\u2067',
    '\u2068',
    '\u2069',
    '\u2029',
  ])
    assert.doesNotMatch(quote(`a${c}b`), new RegExp(c), `U+${c.charCodeAt(0).toString(16)} is escaped`)
  // What is not a control stays as it is: a name in another script is not mangled.
  assert.equal(quote('ノード'), '"ノード"')
})

test('oneLine (what every printed error goes through) escapes the same set', () => {
  assert.equal(oneLine('cluster web\u202eevil\nnot found'), 'cluster web\\u202eevil\\nnot found')
  assert.equal(oneLine('tag \u2067x\u2069'), 'tag \\u2067x\\u2069')
})
