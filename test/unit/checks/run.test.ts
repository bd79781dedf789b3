// The check runner: selection by id, how a check's throw becomes a finding, and the exit-code policy.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { NotCollected, skip, Skipped } from '../../../src/checks/lib/facts.js'
import {
  couldNotTell,
  hasErrorFailure,
  runCheck,
  runChecks,
  selectChecks,
  UnknownCheckIdError,
  worst,
} from '../../../src/checks/run.js'
import type { Check, Finding, Severity, Status } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import { healthyFacts } from '../../helpers/facts.js'
import { meta, result } from '../../helpers/results.js'

const facts = healthyFacts()
const check = (id: string, run: (f: Facts) => Finding[], severity: Severity = 'error'): Check => ({
  meta: meta(id, severity),
  run,
})
const ids = (checks: Check[]) => checks.map((c) => c.meta.id)
const catalogIds = ids(catalog)

test('selectChecks: no --only and no --skip selects the whole catalog in order', () => {
  assert.deepEqual(ids(selectChecks(catalog)), catalogIds)
  assert.deepEqual(ids(selectChecks(catalog, [], [])), catalogIds)
})

test('selectChecks: --only keeps the named checks in catalog order', () => {
  assert.deepEqual(ids(selectChecks(catalog, ['helm-release', 'sg-webhook-8443'])), [
    'sg-webhook-8443',
    'helm-release',
  ])
})

test('selectChecks: --skip drops the named checks; --skip wins over --only', () => {
  const selected = ids(selectChecks(catalog, [], ['sg-webhook-8443', 'helm-registry-auth']))
  assert.deepEqual(
    selected,
    catalogIds.filter((id) => id !== 'sg-webhook-8443' && id !== 'helm-registry-auth'),
  )
  assert.equal(selected.length, catalog.length - 2)
  assert.deepEqual(ids(selectChecks(catalog, ['node-role', 'pod-identity'], ['pod-identity'])), ['node-role'])
})

test('selectChecks: unknown ids in --only and --skip throw UnknownCheckIdError listing all of them', () => {
  assert.throws(
    () => selectChecks(catalog, ['node-role', 'no-such-check'], ['also-missing']),
    (err: unknown) => {
      assert.ok(err instanceof UnknownCheckIdError)
      assert.deepEqual(err.ids, ['no-such-check', 'also-missing'])
      assert.equal(err.message, 'unknown check ids: no-such-check, also-missing')
      return true
    },
  )
  assert.throws(() => selectChecks(catalog, [], ['typo']), {
    message: 'unknown check id: typo',
    ids: ['typo'],
  })
})

test('runCheck: findings pass through and the status is the worst of them', () => {
  const findings: Finding[] = [
    { status: 'pass', message: 'a' },
    { status: 'unknown', message: 'b' },
    { status: 'warn', message: 'c' },
    { status: 'pass', message: 'd' },
  ]
  const c = check('mixed', () => findings)
  const r = runCheck(c, facts)
  assert.equal(r.meta, c.meta)
  assert.equal(r.status, 'warn')
  assert.deepEqual(r.findings, findings)
})

test('runCheck: the facts reach the check', () => {
  const r = runCheck(
    check('sees-facts', (f) => [{ status: 'pass', message: f.meta.clusterName }]),
    facts,
  )
  assert.deepEqual(r.findings, [{ status: 'pass', message: 'demo' }])
})

test('runCheck: a thrown NotCollected becomes unknown with the reason of the failed read', () => {
  const r = runCheck(
    check('needs-a-read', () => {
      throw new NotCollected({ code: 'AccessDenied', kind: 'denied', message: 'no', read: 'iam:GetRole' })
    }),
    facts,
  )
  assert.equal(r.status, 'unknown')
  assert.deepEqual(r.findings, [
    {
      status: 'unknown',
      message: 'could not read iam:GetRole (permission denied: AccessDenied — no)',
      evidence: { read: 'iam:GetRole' },
    },
  ])
})

test('runCheck: a thrown Skipped (skip()) becomes skipped with its reason', () => {
  const r = runCheck(
    check('not-applicable', () => skip('the controller uses Pod Identity')),
    facts,
  )
  assert.equal(r.status, 'skipped')
  assert.deepEqual(r.findings, [{ status: 'skipped', message: 'the controller uses Pod Identity' }])

  const direct = runCheck(
    check('direct', () => {
      throw new Skipped('no queue configured')
    }),
    facts,
  )
  assert.deepEqual(direct.findings, [{ status: 'skipped', message: 'no queue configured' }])
})

test('runCheck: a crash becomes unknown "check crashed", never pass', () => {
  const r = runCheck(
    check('buggy', (f) => [{ status: 'pass', message: String((f as unknown as { x: { y: 1 } }).x.y) }]),
    facts,
  )
  assert.equal(r.status, 'unknown')
  assert.equal(r.findings.length, 1)
  assert.equal(r.findings[0]!.status, 'unknown')
  assert.match(r.findings[0]!.message, /^check crashed: Cannot read properties of undefined \(reading 'y'\)$/)

  const thrownString = runCheck(
    check('throws-a-string', () => {
      throw 'oops'
    }),
    facts,
  )
  assert.deepEqual(thrownString.findings, [{ status: 'unknown', message: 'check crashed: oops' }])
})

test('runCheck: no findings at all is skipped "nothing to check"', () => {
  const r = runCheck(
    check('empty', () => []),
    facts,
  )
  assert.equal(r.status, 'skipped')
  assert.deepEqual(r.findings, [{ status: 'skipped', message: 'nothing to check' }])
})

test('worst: fail > warn > unknown > pass > skipped, and skipped for none', () => {
  assert.equal(worst([]), 'skipped')
  const order: Status[] = ['skipped', 'pass', 'unknown', 'warn', 'fail']
  for (const [i, s] of order.entries()) {
    assert.equal(worst([s]), s)
    for (const lower of order.slice(0, i)) {
      assert.equal(worst([lower, s]), s, `${s} over ${lower}`)
      assert.equal(worst([s, lower]), s, `${s} over ${lower}`)
    }
  }
  assert.equal(worst(['pass', 'skipped', 'pass']), 'pass')
  assert.equal(worst(['unknown', 'pass', 'skipped']), 'unknown')
})

test('runChecks: one result per check, in order', () => {
  const checks = [
    check('one', () => [{ status: 'pass', message: '1' }]),
    check('two', () => [{ status: 'fail', message: '2' }]),
    check('three', () => []),
  ]
  const results = runChecks(checks, facts)
  assert.deepEqual(
    results.map((r) => [r.meta.id, r.status]),
    [
      ['one', 'pass'],
      ['two', 'fail'],
      ['three', 'skipped'],
    ],
  )
})

test('hasErrorFailure: only a failing error-severity check counts', () => {
  const fail = (severity: Severity) =>
    result(meta(`fail-${severity}`, severity), [{ status: 'fail', message: 'x' }])
  const warnError = result(meta('warn-error', 'error'), [{ status: 'warn', message: 'x' }])
  const unknownError = result(meta('unknown-error', 'error'), [{ status: 'unknown', message: 'x' }])

  assert.equal(hasErrorFailure([]), false)
  assert.equal(hasErrorFailure([fail('error')]), true)
  assert.equal(hasErrorFailure([fail('warning')]), false)
  assert.equal(hasErrorFailure([fail('info')]), false)
  assert.equal(hasErrorFailure([warnError, unknownError, fail('warning')]), false)
  assert.equal(hasErrorFailure([warnError, fail('info'), fail('error')]), true)
})

test('hasErrorFailure on the real catalog: healthy facts exit clean', () => {
  assert.equal(hasErrorFailure(runChecks(catalog, facts)), false)
})

test('exit 0 means judged clean: an unknown error check with no failure could not tell; a failure wins', () => {
  const pass = (id: string, severity: 'error' | 'warning' = 'error') =>
    result(meta(id, severity), [{ status: 'pass', message: 'fine' }])
  const unknown = (id: string, severity: 'error' | 'warning' = 'error') =>
    result(meta(id, severity), [{ status: 'unknown', message: `iam:GetRole ${id}: access denied` }])
  const skipped = (id: string) => result(meta(id), [{ status: 'skipped', message: 'n/a' }])
  const failed = (id: string) => result(meta(id), [{ status: 'fail', message: 'broken' }])

  assert.equal(couldNotTell([pass('a'), pass('b'), skipped('c')]), null, 'all judged')
  assert.equal(couldNotTell([pass('a'), unknown('w', 'warning')]), null, 'a warning check does not count')
  assert.equal(couldNotTell([unknown('a'), failed('b')]), null, 'a failure wins: exit 1')
  assert.equal(
    couldNotTell([pass('a'), pass('b'), skipped('s'), unknown('c')]),
    'could not tell: 1 of 3 error checks are unknown (c: iam:GetRole c: access denied); the report says why for each, and exit 0 needs every error check judged',
  )
  const many = couldNotTell(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => unknown(id)))
  assert.match(
    many ?? '',
    /^could not tell: 6 of 6 error checks are unknown \(a, b, c, d, e, …: .*; and 3 more\)/,
  )
})
