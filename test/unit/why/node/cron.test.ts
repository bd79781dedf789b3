import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  isActive,
  nextHit,
  parseSchedule,
  windowChange,
  type Schedule,
} from '../../../../src/why/node/cron.js'
import { humanSpan, parseDuration } from '../../../../src/why/node/duration.js'

const at = (iso: string) => Date.parse(iso)
const sched = (text: string) => {
  const s = parseSchedule(text)
  assert.ok(!(s instanceof Error), String(s))
  return s as Schedule
}

test('Go durations as NodePool fields take them; Never is null; garbage is undefined', () => {
  assert.equal(parseDuration('720h'), 720 * 3600e3)
  assert.equal(parseDuration('1h30m'), 5400e3)
  assert.equal(parseDuration('30s'), 30e3)
  assert.equal(parseDuration('Never'), null)
  assert.equal(parseDuration(undefined), null)
  assert.equal(parseDuration('3 days'), undefined)
  assert.equal(parseDuration('10x'), undefined)
  assert.equal(humanSpan(3 * 86400e3 + 4 * 3600e3), '3d4h')
  assert.equal(humanSpan(12 * 60e3), '12m')
})

test('a budget schedule is active while a hit falls within the last duration (Budget.IsActive)', () => {
  // Business hours, Monday to Friday, 9:00 UTC for 8h: the budget from the Karpenter docs.
  const s = sched('0 9 * * mon-fri')
  const friday10 = at('2026-12-04T10:00:00Z') // a Friday
  assert.equal(isActive(s, 8 * 3600e3, friday10), true)
  assert.equal(windowChange(s, 8 * 3600e3, friday10), at('2026-12-04T17:00:00Z'), 'closes at 17:00')
  const friday18 = at('2026-12-04T18:00:00Z')
  assert.equal(isActive(s, 8 * 3600e3, friday18), false)
  assert.equal(windowChange(s, 8 * 3600e3, friday18), at('2026-12-07T09:00:00Z'), 'opens again on Monday')
})

test('cron fields: steps, lists, names, macros; robfig day-of-month/day-of-week rule', () => {
  assert.equal(nextHit(sched('*/15 * * * *'), at('2026-12-04T10:01:00Z')), at('2026-12-04T10:15:00Z'))
  assert.equal(nextHit(sched('@daily'), at('2026-12-04T10:00:00Z')), at('2026-12-05T00:00:00Z'))
  assert.equal(nextHit(sched('0 0 1 jan *'), at('2026-12-04T10:00:00Z')), at('2027-01-01T00:00:00Z'))
  // Both restricted: either matches (the 13th, or a Friday).
  assert.equal(nextHit(sched('0 0 13 * 5'), at('2026-12-05T00:00:00Z')), at('2026-12-11T00:00:00Z'))
  assert.ok(parseSchedule('0 9 * *') instanceof Error, 'four fields')
  assert.ok(parseSchedule('61 * * * *') instanceof Error, 'out of range')
})
