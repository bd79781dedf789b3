import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StepEvent } from '../../../src/plan/apply.js'
import { progressLine } from '../../../src/plan/progress.js'
import type { Step } from '../../../src/plan/types.js'
import { fakeResource } from '../../helpers/fake-resource.js'

const step: Step = {
  resource: fakeResource('iam.role'),
  verdict: { action: 'create', changes: [] },
  current: null,
}
const line = (e: Omit<StepEvent, 'step'>, color = false) => progressLine({ step, ...e }, color)

// Kills: the seconds' condition, division and empty fallback; each status's case and wording.
test('progressLine: one plain line per status, seconds only when timed', () => {
  assert.equal(line({ status: 'start', ms: 5 }), null)
  assert.equal(line({ status: 'done', ms: 1500 }), '✔ created thing iam.role (1.5 s)')
  assert.equal(line({ status: 'done' }), '✔ created thing iam.role')
  assert.equal(line({ status: 'failed', message: 'AccessDenied: no' }), '✖ thing iam.role: AccessDenied: no')
  assert.equal(
    line({ status: 'skipped', message: 'a dependency failed' }),
    '– thing iam.role: not applied, a dependency failed',
  )
  assert.equal(
    line({ status: 'retry', message: 'throttled', attempt: 1, attempts: 3, delayMs: 2000 }),
    '↻ thing iam.role: throttled — attempt 2 of 3 in 2.0 s',
  )
})

test('progressLine: on a terminal the marks are coloured and the seconds dimmed', () => {
  assert.equal(
    line({ status: 'done', ms: 250 }, true),
    '\u001b[32m✔\u001b[39m created thing iam.role\u001b[2m (0.3 s)\u001b[22m',
  )
  assert.equal(line({ status: 'failed', message: 'x' }, true), '\u001b[31m✖\u001b[39m thing iam.role: x')
  assert.equal(
    line({ status: 'skipped', message: 'y' }, true),
    '\u001b[2m–\u001b[22m thing iam.role: not applied, y',
  )
})
