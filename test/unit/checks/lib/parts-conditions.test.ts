// What lib/parts makes of one part of a check, one rule at a time (issue 12, item 8: mutation
// testing): a failed read becomes that part's unknown finding with the read as evidence, a skip its
// skipped finding, any other error goes on up; optional() gives a read's value or undefined.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { need, skip } from '../../../../src/checks/lib/facts.js'
import { optional, part } from '../../../../src/checks/lib/parts.js'
import { failed, ok } from '../../../helpers/facts.js'

test('part returns the findings of a part that ran', () => {
  const findings = [{ status: 'pass' as const, message: 'fine' }]
  assert.equal(
    part(() => findings),
    findings,
  )
})

test('part turns a failed read into one unknown finding carrying the reason and the read', () => {
  assert.deepEqual(
    part(() => [
      { status: 'pass', message: String(need(failed('eks:ListAddons demo', 'Throttling', 'throttled'))) },
    ]),
    [
      {
        status: 'unknown',
        message:
          'could not read eks:ListAddons demo (throttled: Throttling — Throttling for eks:ListAddons demo)',
        evidence: { read: 'eks:ListAddons demo' },
      },
    ],
  )
})

test('part turns a skip into one skipped finding with the reason', () => {
  assert.deepEqual(
    part(() => skip('not applicable here')),
    [{ status: 'skipped', message: 'not applicable here' }],
  )
})

test('part lets any other error through', () => {
  assert.throws(
    () =>
      part(() => {
        throw new TypeError('bug')
      }),
    { name: 'TypeError', message: 'bug' },
  )
})

test('optional: the value of a read that succeeded, else undefined', () => {
  assert.equal(optional(ok(0)), 0)
  assert.equal(optional(ok(null)), null)
  assert.equal(optional(failed('x')), undefined)
})
