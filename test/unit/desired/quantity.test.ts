// The one quantity parser (issue 36 §4, impossible quantities): Kubernetes' grammar and bound, so
// karpctl never judges, prints or suggests Infinity or NaN.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_QUANTITY, parseQuantity } from '../../../src/desired/quantity.js'
import { amounts, formatQuantity } from '../../../src/why/quantity.js'

test("parseQuantity: Kubernetes' grammar (signs, fractions, SI, binary SI, exponents)", () => {
  const cases: [string, number][] = [
    ['500m', 0.5],
    ['2', 2],
    ['+1.5', 1.5],
    ['.5Gi', 2 ** 29],
    ['1.', 1],
    ['1Ki', 1024],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['12n', 12e-9],
    ['3u', 3e-6],
    ['-1', -1],
    ['1Ei', 2 ** 60],
  ]
  for (const [q, n] of cases) assert.equal(parseQuantity(q), n, q)
})

test('parseQuantity refuses what Kubernetes refuses: other suffixes, spaces, fractional exponents, two signs', () => {
  for (const q of [
    '1g',
    '1KB',
    '1 Gi',
    ' 1',
    '1e1.5',
    '1e',
    '+-1',
    '0x10',
    'Infinity',
    'NaN',
    '1mi',
    '',
    '.',
    '1Gi ',
  ])
    assert.equal(parseQuantity(q), undefined, JSON.stringify(q))
})

test('parseQuantity refuses what is past the bound (2^63-1) instead of Infinity', () => {
  for (const q of ['1e400', '1e19', `${'9'.repeat(400)}`, '9Ei', '16Ei'])
    assert.equal(parseQuantity(q), undefined, q)
  assert.equal(parseQuantity('8Ei'), undefined, '8Ei is 2^63, one past the bound')
  assert.equal(parseQuantity('7Ei'), 7 * 2 ** 60)
  assert.equal(parseQuantity(Number.POSITIVE_INFINITY), undefined, 'JSON 1e400 parses to Infinity')
  assert.equal(parseQuantity(Number.NaN), undefined)
  assert.equal(parseQuantity(12), 12)
  assert.ok(MAX_QUANTITY > 9e18)
})

test('amounts: a value past the bound ends the judgement in one line naming it (never judged as nothing)', () => {
  assert.throws(
    () => amounts({ cpu: '1e400' }),
    (err: Error & { code?: string }) =>
      err.code === 'BAD_QUANTITY' &&
      /^"cpu": "1e400" is not a Kubernetes quantity within its bounds/.test(err.message),
  )
  assert.deepEqual(amounts({ cpu: '250m', memory: '1Gi' }), { cpu: 0.25, memory: 2 ** 30 })
})

test('formatQuantity never prints Infinity or NaN', () => {
  assert.equal(formatQuantity('cpu', Number.NaN), '?')
  assert.equal(formatQuantity('memory', Number.POSITIVE_INFINITY), '?')
  assert.equal(formatQuantity('cpu', 0.5), '500m')
})
