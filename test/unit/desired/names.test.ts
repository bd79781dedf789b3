// Names shortened to an AWS limit: untouched up to the limit, else a prefix (its trailing separators
// dropped) and the first 8 hex characters of the full name's SHA-256, the same every run.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { roleName, shortenName } from '../../../src/desired/names.js'

const hash8 = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 8)

test('a name of exactly the limit is kept as it is', () => {
  // Kills: `name.length <= max` narrowed to `<`.
  assert.equal(shortenName('x'.repeat(64), 64), 'x'.repeat(64))
  assert.equal(roleName('r'.repeat(64)), 'r'.repeat(64))
})

test('a longer name is its prefix, without any trailing - _ or ., then - and the hash of the whole name', () => {
  // Kills: only one trailing separator dropped; the separators replaced by anything but nothing.
  const name = 'abcdefghi-_.-zzzzzzzzzz'
  assert.equal(shortenName(name, 22), `abcdefghi-${hash8(name)}`)
  assert.equal(shortenName(name, 22).length, 18)
  const plain = 'abcdefghijklmnopqrstuvwxyz'
  assert.equal(shortenName(plain, 20), `abcdefghijk-${hash8(plain)}`)
  assert.equal(shortenName(plain, 20).length, 20)
})
