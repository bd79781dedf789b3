// What lib/read makes of a read that one part of a check depends on, one rule at a time (issue 12,
// item 8: mutation testing): its value, or an unknown finding about the subject, worded for a read
// never made and for a read that failed (with its read, code and kind as evidence).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readOr } from '../../../../src/checks/lib/read.js'
import type { Finding } from '../../../../src/checks/types.js'
import { failed, ok } from '../../../helpers/facts.js'

test('a read that succeeded: its value, no finding (also for a falsy value)', () => {
  const findings: Finding[] = []
  assert.equal(readOr(ok(0), findings, 's', 'the thing'), 0)
  assert.equal(readOr(ok(null), findings, 's', 'the thing'), null)
  assert.deepEqual(findings, [])
})

test('a read never made: undefined and an unknown "was not collected"', () => {
  const findings: Finding[] = [{ status: 'pass', message: 'earlier' }]
  assert.equal(readOr(undefined, findings, 'role/x', 'IAM role x'), undefined)
  assert.deepEqual(findings, [
    { status: 'pass', message: 'earlier' },
    { status: 'unknown', subject: 'role/x', message: 'IAM role x was not collected' },
  ])
})

test('a read that failed: undefined and an unknown with the reason and the failure as evidence', () => {
  const findings: Finding[] = []
  assert.equal(
    readOr(failed('sqs:GetQueueAttributes q', 'NotFound', 'unsupported'), findings, 'q', 'the queue'),
    undefined,
  )
  assert.deepEqual(findings, [
    {
      status: 'unknown',
      subject: 'q',
      message:
        'the queue: could not read sqs:GetQueueAttributes q (not supported by this endpoint: NotFound — NotFound for sqs:GetQueueAttributes q)',
      evidence: { read: 'sqs:GetQueueAttributes q', code: 'NotFound', kind: 'unsupported' },
    },
  ])
})
