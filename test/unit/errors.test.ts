// The quoting every one-line error uses for what the user (or a server) gave: nothing in it may split
// the line, reach the terminal as an escape, or reorder what the line says (issue 36 §4).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { oneLine, outOfFiles, quote } from '../../src/errors.js'

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

test('outOfFiles names the open-files limit and how to raise it, for EMFILE and ENFILE only', () => {
  const emfile = Object.assign(new Error('connect EMFILE 127.0.0.1:443 - Local (undefined:undefined)'), {
    code: 'EMFILE',
  })
  const err = outOfFiles(emfile, 'a request to the Kubernetes API at https://127.0.0.1:6443')
  assert.equal(
    err?.message,
    "a request to the Kubernetes API at https://127.0.0.1:6443 failed: karpctl's limit of open files is reached (EMFILE): raise it (`ulimit -n 1024`) and run again",
  )
  assert.equal(err?.code, 'TOO_MANY_OPEN_FILES')
  assert.doesNotMatch(err!.message, /undefined/)
  // The SDK wraps the socket's error: its cause is looked at too.
  assert.match(outOfFiles({ name: 'Error', cause: { code: 'ENFILE' } }, 'x')!.message, /the system's limit/)
  assert.equal(outOfFiles(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), 'x'), undefined)
  assert.equal(outOfFiles(null, 'x'), undefined)
})
