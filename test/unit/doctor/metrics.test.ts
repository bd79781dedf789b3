// /metrics of doctor --serve: the Prometheus text format (0.0.4) from the last run's results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  encodeFamilies,
  escapeLabel,
  readFailuresIn,
  renderMetrics,
  type ServeState,
} from '../../../src/doctor/metrics.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'
import { brokenResults, meta, result } from '../../helpers/results.js'

const empty = (): ServeState => ({ runs: { ok: 0, error: 0 }, events: { posted: 0, failed: 0 } })

/** `name{labels} value` lines of one family, parsed back. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => {
      const m = /^[a-z_]+(?:\{(.*)\})? (\S+)$/.exec(l)
      assert.ok(m, `not a sample line: ${l}`)
      const labels = Object.fromEntries(
        [...(m[1] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
      )
      return { labels, value: Number(m[2]) }
    })
}

test('label values escape backslash, double quote and newline, and nothing else', () => {
  assert.equal(escapeLabel('a\\b"c\nd é'), 'a\\\\b\\"c\\nd é')
})

test('each family has HELP and TYPE before its samples; an empty family is left out', () => {
  const text = encodeFamilies([
    { name: 'x_total', help: 'line one\nline two', type: 'counter', samples: [{ value: 3 }] },
    { name: 'y', help: 'nothing', type: 'gauge', samples: [] },
    { name: 'z', help: 'z', type: 'gauge', samples: [{ labels: { a: '1', b: 'q"' }, value: Infinity }] },
  ])
  assert.equal(
    text,
    '# HELP x_total line one\\nline two\n# TYPE x_total counter\nx_total 3\n# HELP z z\n# TYPE z gauge\nz{a="1",b="q\\""} +Inf\n',
  )
  assert.equal(encodeFamilies([]), '')
})

test('before the first run: only the run and event counters, at zero', () => {
  const text = renderMetrics(empty())
  assert.deepEqual(samples(text, 'karpctl_check'), [])
  assert.doesNotMatch(text, /karpctl_last_run_timestamp_seconds/)
  assert.deepEqual(samples(text, 'karpctl_runs_total'), [
    { labels: { result: 'ok' }, value: 0 },
    { labels: { result: 'error' }, value: 0 },
  ])
})

test('karpctl_check has one sample per check, its status labelled, and findings are counted by status', () => {
  const m = meta('node-role', 'error')
  const results = [
    result(m, [
      { status: 'fail', message: 'a', subject: 'EC2NodeClass/a' },
      { status: 'fail', message: 'b', subject: 'EC2NodeClass/b' },
      { status: 'pass', message: 'c' },
    ]),
    result(meta('discovery-tags', 'warning'), [{ status: 'unknown', message: 'denied' }]),
  ]
  const state: ServeState = {
    ...empty(),
    last: { results, readFailures: { denied: 2 }, apiCalls: 41 },
    lastRunEndedS: 1_780_000_000,
    lastRunDurationS: 1.25,
    lastRunOk: true,
    runs: { ok: 3, error: 1 },
  }
  const text = renderMetrics(state)
  assert.deepEqual(samples(text, 'karpctl_check'), [
    { labels: { check: 'node-role', severity: 'error', status: 'fail' }, value: 1 },
    { labels: { check: 'discovery-tags', severity: 'warning', status: 'unknown' }, value: 1 },
  ])
  assert.deepEqual(samples(text, 'karpctl_check_findings'), [
    { labels: { check: 'node-role', severity: 'error', status: 'fail' }, value: 2 },
    { labels: { check: 'node-role', severity: 'error', status: 'pass' }, value: 1 },
    { labels: { check: 'discovery-tags', severity: 'warning', status: 'unknown' }, value: 1 },
  ])
  assert.deepEqual(samples(text, 'karpctl_read_failures'), [{ labels: { kind: 'denied' }, value: 2 }])
  assert.deepEqual(samples(text, 'karpctl_api_calls'), [{ labels: {}, value: 41 }])
  assert.deepEqual(samples(text, 'karpctl_last_run_timestamp_seconds'), [
    { labels: {}, value: 1_780_000_000 },
  ])
  assert.deepEqual(samples(text, 'karpctl_last_run_duration_seconds'), [{ labels: {}, value: 1.25 }])
  assert.deepEqual(samples(text, 'karpctl_last_run_success'), [{ labels: {}, value: 1 }])
  assert.match(
    text,
    /# TYPE karpctl_runs_total counter\nkarpctl_runs_total\{result="ok"\} 3\nkarpctl_runs_total\{result="error"\} 1\n/,
  )
})

test('a run that could not run says 0 on karpctl_last_run_success', () => {
  const text = renderMetrics({ ...empty(), lastRunOk: false, lastRunEndedS: 5 })
  assert.deepEqual(samples(text, 'karpctl_last_run_success'), [{ labels: {}, value: 0 }])
})

test('the whole catalog on the broken example: every check once, every finding counted', () => {
  const results = brokenResults()
  const text = renderMetrics({ ...empty(), last: { results, readFailures: {}, apiCalls: 0 } })
  assert.equal(samples(text, 'karpctl_check').length, results.length)
  const counted = samples(text, 'karpctl_check_findings').reduce((n, s) => n + s.value, 0)
  assert.equal(
    counted,
    results.reduce((n, r) => n + r.findings.length, 0),
  )
  assert.ok(samples(text, 'karpctl_check').some((s) => s.labels.status === 'fail'))
})

test('read failures are counted once each, by kind, wherever they are in the facts', () => {
  const facts = healthyFacts((f) => {
    f.iam.oidcProviders = failed('iam:ListOpenIDConnectProviders')
    f.kube.nodes = failed('kube:GET:/api/v1/nodes', 'Throttling', 'throttled')
    const shared = failed<null>('iam:GetRole X')
    f.iam.roles = { X: shared, Y: shared }
  })
  assert.deepEqual(readFailuresIn(facts), { denied: 2, throttled: 1 })
  assert.deepEqual(readFailuresIn({ a: ok(1), b: [ok(2)] }), {})
})
