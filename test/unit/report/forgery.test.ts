// A line break in text from the cluster or AWS must not start a line of karpctl's own: a condition
// message `\n✔ all checks passed` would otherwise print as a verdict in every format.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CheckResult } from '../../../src/checks/types.js'
import { renderPlan } from '../../../src/plan/render.js'
import type { Plan } from '../../../src/plan/types.js'
import { renderHuman } from '../../../src/report/human.js'
import { junitReport, markdownReport } from '../../../src/report/machine.js'
import { debugStack } from '../../../src/report/terminal.js'
import { healthyFacts } from '../../helpers/facts.js'

const FORGED = 'node not ready\n✔ all checks passed\r✔ ok | x \u2028✔ sep'

/** No line of the output starts (after indentation) with the forged verdict. */
function unforged(text: string): void {
  assert.ok(text.includes('all checks passed'), 'the forged text is shown')
  for (const line of text.split(/\r\n|\n|\r|\u2028|\u2029/))
    assert.doesNotMatch(line, /^\s*(?:\||<[^>]*>)?\s*✔ (all checks passed|ok|sep)/, line)
}

const result = (status: 'fail' | 'pass'): CheckResult =>
  ({
    meta: { id: 'node-ready', title: 'Nodes ready', category: 'Nodes', severity: 'error', docs: '' },
    status,
    findings: [{ status, message: FORGED, caveats: [FORGED], fix: { summary: FORGED, commands: [FORGED] } }],
  }) as unknown as CheckResult

test('human, JUnit and markdown reports show a line break from the cluster, never start a line with it', () => {
  const facts = healthyFacts((f) => f.meta.notes.push(FORGED))
  for (const status of ['fail', 'pass'] as const) {
    const results = [result(status)]
    unforged(renderHuman(results, facts, { color: false, verbose: true }))
    unforged(junitReport(results, facts, '0.0.0'))
    const md = markdownReport(results, facts)
    unforged(md)
    // The table row stays one row of four cells: `|` escaped, the break shown.
    const row = md.split('\n').find((l) => l.includes('`node-ready`'))!
    assert.equal(row.split(/(?<!\\)\|/).length, 6, row)
  }
})

test('a plan shows a line break in a name, a note or a value on its own line', () => {
  const resource = {
    address: 'x',
    kind: 'IAM role',
    name: FORGED,
    group: 'IAM',
    dependsOn: [],
    desired: {},
    permissions: [],
    observe: () => Promise.resolve(null),
    apply: () => Promise.resolve(),
    verdict: () => ({ action: 'update' as const, changes: [] }),
  }
  const verdict = { action: 'update' as const, changes: [{ field: 'description', to: FORGED }], note: FORGED }
  const plan: Plan = { title: 'Plan', steps: [{ resource, verdict, current: null }] }
  unforged(renderPlan(plan, { color: false }))
})

test('--debug prints a stack whose message came from a server on one line, its escapes visible', () => {
  const err = new Error(`denied\n✔ all checks passed\u001b]52;c;ZWNobyBwd25lZA==\u0007\u001b]0;title\u0007`)
  const out = debugStack(err, err.stack!)
  unforged(out)
  assert.ok(!out.includes('\u001b') && !out.includes('\u0007'), out)
  assert.match(out, /\n {4}at /, 'the frames are still one per line')
})

test("a label value with a line break inside a fix's YAML snippet cannot start a line of markdown (issue 36 §4)", async () => {
  const { runCheck } = await import('../../../src/checks/run.js')
  const { tenantIsolation } = await import('../../../src/checks/tenant-isolation.js')
  const { withTenants } = await import('../../helpers/check-fixtures.js')
  // The tenant's NodePool labelled by a value that holds the forged lines, and no taint: the fix's
  // YAML block names the tenant.
  const facts = withTenants([[FORGED, { taints: [] }]])
  const r = runCheck(tenantIsolation, facts)
  const snippet = r.findings.find((f) => f.fix?.snippet)?.fix?.snippet?.text ?? ''
  assert.ok(snippet.includes('all checks passed'), snippet)
  unforged(markdownReport([r], facts))
  unforged(renderHuman([r], facts, { color: false, verbose: true }))
  // Still YAML that says the value: double-quoted, its breaks escaped.
  assert.match(snippet, /karpctl\.io\/tenant: "node not ready\\n✔ all checks passed\\r/)
})
