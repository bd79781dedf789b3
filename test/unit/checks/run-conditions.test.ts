// The exit-code policy's "could not tell" line and the id errors, one condition at a time (issue 12,
// item 8: mutation testing): which checks count, how reasons are deduplicated, cut and capped, how
// many ids are listed, and the wording for one or several unknown ids.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { couldNotTell, selectChecks, UnknownCheckIdError } from '../../../src/checks/run.js'
import type { Severity } from '../../../src/checks/types.js'
import { meta, result } from '../../helpers/results.js'

const unknown = (id: string, reason = `reason of ${id}`, severity: Severity = 'error') =>
  result(meta(id, severity), [
    { status: 'pass', message: 'a first finding that passed' },
    { status: 'unknown', message: reason },
  ])
const pass = (id: string) => result(meta(id), [{ status: 'pass', message: 'fine' }])
const skipped = (id: string) => result(meta(id), [{ status: 'skipped', message: 'n/a' }])
const TAIL = '; the report says why for each, and exit 0 needs every error check judged'

test('couldNotTell: skipped and warning checks are not among the error checks counted', () => {
  assert.equal(
    couldNotTell([pass('a'), skipped('s'), unknown('c'), unknown('w', 'w', 'warning')]),
    `could not tell: 1 of 2 error checks are unknown (c: reason of c)${TAIL}`,
  )
})

test('couldNotTell: the same reason twice is given once', () => {
  assert.equal(
    couldNotTell([unknown('a', 'denied'), unknown('b', 'denied')]),
    `could not tell: 2 of 2 error checks are unknown (a, b: denied)${TAIL}`,
  )
})

test('couldNotTell: three reasons are all given; a fourth is counted, not shown', () => {
  const three = ['a', 'b', 'c'].map((id) => unknown(id))
  assert.equal(
    couldNotTell(three),
    `could not tell: 3 of 3 error checks are unknown (a, b, c: reason of a; reason of b; reason of c)${TAIL}`,
  )
  assert.equal(
    couldNotTell([...three, unknown('d')]),
    `could not tell: 4 of 4 error checks are unknown (a, b, c, d: reason of a; reason of b; reason of c; and 1 more)${TAIL}`,
  )
})

test('couldNotTell: a reason of 100 characters is kept, a longer one cut to 99 and an ellipsis', () => {
  const hundred = 'x'.repeat(100)
  assert.equal(
    couldNotTell([unknown('a', hundred)]),
    `could not tell: 1 of 1 error checks are unknown (a: ${hundred})${TAIL}`,
  )
  assert.equal(
    couldNotTell([unknown('a', `${hundred}y`)]),
    `could not tell: 1 of 1 error checks are unknown (a: ${'x'.repeat(99)}…)${TAIL}`,
  )
})

test('couldNotTell: five ids are all listed, without an ellipsis', () => {
  const five = ['a', 'b', 'c', 'd', 'e'].map((id) => unknown(id, 'same'))
  assert.equal(
    couldNotTell(five),
    `could not tell: 5 of 5 error checks are unknown (a, b, c, d, e: same)${TAIL}`,
  )
})

test('UnknownCheckIdError: "ids" for several, each listed', () => {
  assert.throws(() => selectChecks(catalog, ['typo'], ['other']), {
    message: 'unknown check ids: typo, other',
    ids: ['typo', 'other'],
  })
  assert.ok(new UnknownCheckIdError(['x']) instanceof Error)
})
