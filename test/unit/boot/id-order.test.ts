// The comparator the build puts in place of oclif's localeCompare sort of command ids: the same order.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { idOrder } from '../../../src/boot/id-order.js'

const sign = (n: number) => Math.sign(n)

test("karpctl's command ids sort as oclif sorts them", async () => {
  const { COMMANDS } = await import('../../../src/commands.js')
  const ids = Object.keys(COMMANDS)
  assert.ok(ids.length >= 6)
  const shuffled = [...ids].reverse()
  assert.deepEqual(
    [...shuffled].sort(idOrder),
    [...shuffled].sort((a, b) => a.localeCompare(b)),
  )
})

test('ids of lowercase letters and colons: the sign of localeCompare, for every pair drawn', () => {
  // A fixed pseudo-random sequence: the same pairs on every run.
  let seed = 42
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0)
  const alphabet = 'abcdez:'
  const word = () => Array.from({ length: next() % 9 }, () => alphabet[next() % alphabet.length]).join('')
  for (let i = 0; i < 5000; i++) {
    const a = word()
    const b = i % 10 === 0 ? a : word()
    assert.equal(sign(idOrder(a, b)), sign(a.localeCompare(b)), `${a} vs ${b}`)
  }
  for (const [a, b] of [
    ['tenant', 'tenant:add'],
    ['tenant:add', 'teardown'],
    ['a:z', 'aa'],
    ['', 'a'],
  ])
    assert.equal(sign(idOrder(a as string, b as string)), sign((a as string).localeCompare(b as string)))
})

test('anything else is left to localeCompare (where code points and the collator disagree)', () => {
  // By code point 'B' < 'a' and '_' < 'a'; the collator puts 'a' before 'B', '_' before 'a'.
  for (const [a, b] of [
    ['B', 'a'],
    ['a_b', 'a-b'],
    ['a1', 'a:b'],
    ['é', 'f'],
  ])
    assert.equal(idOrder(a as string, b as string), (a as string).localeCompare(b as string), `${a} vs ${b}`)
})
