// The terminal report, on results of the real catalog: the healthy facts and the broken example.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CheckResult, Finding, Status } from '../../../src/checks/types.js'
import { renderHuman } from '../../../src/report/human.js'
import { markdownReport } from '../../../src/report/machine.js'
import { failed, healthyFacts } from '../../helpers/facts.js'
import { runChecks } from '../../../src/checks/run.js'
import { catalog } from '../../../src/checks/catalog.js'
import { brokenFacts, brokenResults, healthyResults, meta, result, tally } from '../../helpers/results.js'

const ESC = String.fromCharCode(0x1b)
const ANSI = new RegExp(`${ESC}\\[[0-9;]*m`)
const stripAnsi = (s: string) => s.replace(new RegExp(ANSI.source, 'g'), '')
const symbol: Record<Status, string> = { pass: '✔', fail: '✖', warn: '!', unknown: '?', skipped: '–' }

const expectedCountLine = (results: CheckResult[]) => {
  const t = tally(results)
  return `${results.length} checks: ${t.pass} passed, ${t.fail} failed, ${t.warn} warnings, ${t.unknown} unknown, ${t.skipped} skipped`
}

/** The report cut into its category blocks: heading → the lines under it (up to the blank line). */
function blocks(text: string, withHeader: boolean): { category: string; lines: string[] }[] {
  const parts = text.split('\n\n')
  const body = parts.slice(withHeader ? 1 : 0, -1)
  return body.map((p) => {
    const [category, ...lines] = p.split('\n')
    return { category: category!, lines }
  })
}

const headLine = (r: CheckResult) => `  ${symbol[r.status]} ${r.meta.id} — ${r.meta.title}`

/** The lines a non-pass finding renders as, fix included for fail/warn. */
function findingLines(f: Finding): string[] {
  const lines = [`    ${symbol[f.status]} ${f.message}`]
  for (const c of f.caveats ?? []) lines.push(`      caveat: ${c}`)
  if (f.fix && (f.status === 'fail' || f.status === 'warn')) {
    lines.push(`      fix: ${f.fix.summary}`)
    for (const c of f.fix.commands ?? []) lines.push(`        $ ${c}`)
    if (f.fix.alternative) lines.push(`      or, ${f.fix.alternative.label}:`)
    for (const c of f.fix.alternative?.commands ?? []) lines.push(`        $ ${c}`)
    for (const l of f.fix.snippet?.text.trimEnd().split('\n') ?? []) lines.push(`        ${l}`)
  }
  return lines
}

test('healthy, color off: no ANSI, the header, and the exact count line at the end', () => {
  const results = healthyResults()
  const out = renderHuman(results, healthyFacts(), { color: false })
  assert.doesNotMatch(out, ANSI)
  const lines = out.split('\n')
  assert.equal(lines[0], 'karpctl doctor — cluster demo (us-west-2, account 123456789012)')
  assert.equal(lines[1], '')
  assert.equal(lines.at(-1), expectedCountLine(results))
  assert.equal(lines.at(-2), '')
  assert.match(lines.at(-1)!, /^21 checks: \d+ passed, 0 failed, 0 warnings, 0 unknown, \d+ skipped$/)
})

test('the count line has the exact format for every status', () => {
  const results = [
    result(meta('a'), [{ status: 'pass', message: 'ok' }]),
    result(meta('b'), [{ status: 'fail', message: 'bad' }]),
    result(meta('c'), [{ status: 'warn', message: 'meh' }]),
    result(meta('d'), [{ status: 'unknown', message: 'could not read' }]),
    result(meta('e'), [{ status: 'skipped', message: 'n/a' }]),
    result(meta('f'), [{ status: 'pass', message: 'ok' }]),
  ]
  const out = renderHuman(results, null, { color: false })
  assert.equal(out.split('\n').at(-1), '6 checks: 2 passed, 1 failed, 1 warnings, 1 unknown, 1 skipped')
})

test('checks are grouped under their category, each category once, in first-seen order', () => {
  for (const results of [healthyResults(), brokenResults()]) {
    const out = renderHuman(results, null, { color: false })
    const bs = blocks(out, false)
    const categories = [...new Set(results.map((r) => r.meta.category))]
    assert.deepEqual(
      bs.map((b) => b.category),
      categories,
    )
    const seen: string[] = []
    for (const b of bs) {
      for (const line of b.lines) {
        const m = /^ {2}\S (\S+) — /.exec(line)
        if (!m) continue
        const r = results.find((x) => x.meta.id === m[1])
        assert.ok(r, `unknown check on line ${line}`)
        assert.equal(r.meta.category, b.category, `${r.meta.id} is under its own category`)
        assert.equal(line, headLine(r))
        seen.push(r.meta.id)
      }
    }
    assert.deepEqual([...seen].sort(), results.map((r) => r.meta.id).sort())
  }
})

test('a skipped check shows "skipped: <reason>" under its head line', () => {
  const results = healthyResults()
  const skipped = results.filter((r) => r.status === 'skipped')
  assert.ok(skipped.length > 0, 'the healthy facts skip some checks')
  const lines = renderHuman(results, healthyFacts(), { color: false }).split('\n')
  for (const r of skipped) {
    const i = lines.indexOf(headLine(r))
    assert.ok(i >= 0, `head line of ${r.meta.id}`)
    assert.equal(lines[i + 1], `    skipped: ${r.findings[0]!.message}`)
  }
  assert.equal(lines.filter((l) => l.startsWith('    skipped: ')).length, skipped.length)
})

test('passing findings are listed only with verbose', () => {
  const results = healthyResults()
  const plain = renderHuman(results, healthyFacts(), { color: false })
  assert.ok(!plain.split('\n').some((l) => l.startsWith('    ✔')), 'no passing finding lines')

  const verbose = renderHuman(results, healthyFacts(), { color: false, verbose: true }).split('\n')
  const passing = results.flatMap((r) => r.findings.filter((f) => f.status === 'pass'))
  assert.ok(passing.length > 0)
  for (const f of passing) assert.ok(verbose.includes(`    ✔ ${f.message}`), f.message)
  assert.equal(verbose.filter((l) => l.startsWith('    ✔ ')).length, passing.length)
})

test('broken example: each failing check shows ✖ findings with fix: and $ commands, in order', () => {
  const results = brokenResults()
  const out = renderHuman(results, brokenFacts(), { color: false })
  assert.doesNotMatch(out, ANSI)
  const lines = out.split('\n')
  const failing = results.filter((r) => r.status === 'fail' || r.status === 'warn')
  assert.equal(results.filter((r) => r.status === 'fail').length, 7)
  for (const r of failing) {
    const i = lines.indexOf(headLine(r))
    assert.ok(i >= 0, `head line of ${r.meta.id}`)
    const expected = r.findings.filter((f) => f.status !== 'pass').flatMap(findingLines)
    assert.deepEqual(lines.slice(i + 1, i + 1 + expected.length), expected, r.meta.id)
    // and nothing more under it: the next line is another check or the end of the category
    assert.match(lines[i + 1 + expected.length] ?? '', /^$|^ {2}\S /)
  }
  // Literal anchors, so the test does not only agree with itself.
  assert.ok(
    lines.includes('  ✖ sg-webhook-8443 — Control plane can reach the webhook port 8443 on the nodes'),
  )
  assert.ok(lines.includes('      fix: allow the control plane to reach the webhook'))
  // the example snapshot predates the controller's nodes: the EC2NodeClasses' groups, saying so
  assert.ok(
    lines.includes(
      "      caveat: judged on the EC2NodeClasses' security groups: the controller's nodes were not read (a snapshot from before karpctl read them)",
    ),
  )
  assert.ok(
    lines.includes(
      '        $ aws ec2 authorize-security-group-ingress --group-id sg-0a0de0a0de0a0de0a --protocol tcp --port 8443 --source-group sg-0c1a5e1c1a5e1c1a5 --region us-west-2',
    ),
  )
  assert.ok(lines.includes('        $ kubectl rollout restart deployment/karpenter -n karpenter'))
  assert.equal(lines.filter((l) => /^ {4}✖ /.test(l)).length, 7)
  assert.equal(lines.filter((l) => /^ {6}fix: /.test(l)).length, 8)
  assert.equal(lines.at(-1), '21 checks: 11 passed, 7 failed, 1 warnings, 0 unknown, 2 skipped')
  assert.equal(lines.at(-1), expectedCountLine(results))
})

test('an unknown check shows "unknown: <reason>" and no fix', () => {
  const facts = healthyFacts((f) => {
    f.kube.release = failed('helm:karpenter/karpenter')
  })
  const results = runChecks(catalog, facts)
  const unknown = results.filter((r) => r.status === 'unknown')
  assert.ok(unknown.length > 0, 'a failed release read makes some checks unknown')
  const lines = renderHuman(results, facts, { color: false }).split('\n')
  for (const r of unknown) {
    const i = lines.indexOf(headLine(r))
    assert.ok(i >= 0)
    const reasons = r.findings.filter((f) => f.status === 'unknown').map((f) => `    unknown: ${f.message}`)
    for (const reason of reasons) assert.ok(lines.slice(i + 1).includes(reason), reason)
  }
  assert.ok(
    lines.some((l) =>
      l.startsWith('    unknown: could not read helm:karpenter/karpenter (permission denied'),
    ),
  )
  assert.equal(lines.at(-1), expectedCountLine(results))
})

test('notes of the facts are shown under the header', () => {
  const facts = healthyFacts((f) => {
    f.meta.notes = ['the kube context points at another cluster', 'second note']
  })
  const lines = renderHuman(healthyResults(), facts, { color: false }).split('\n')
  assert.deepEqual(lines.slice(0, 4), [
    'karpctl doctor — cluster demo (us-west-2, account 123456789012)',
    '! the kube context points at another cluster',
    '! second note',
    '',
  ])
})

test('without facts there is no header: the report starts with the first category', () => {
  const results = healthyResults()
  const out = renderHuman(results, null, { color: false })
  assert.equal(out.split('\n')[0], results[0]!.meta.category)
})

test('color on: ANSI codes that strip to exactly the plain report', () => {
  const results = brokenResults()
  const plain = renderHuman(results, brokenFacts(), { color: false })
  const colored = renderHuman(results, brokenFacts(), { color: true })
  assert.match(colored, ANSI)
  assert.equal(stripAnsi(colored), plain)
  assert.ok(colored.includes('\u001b[31m✖\u001b[39m'), 'fail symbol in red')
  assert.ok(colored.includes('\u001b[33m!\u001b[39m'), 'warn symbol in yellow')
  assert.ok(colored.includes('\u001b[32m✔\u001b[39m'), 'pass symbol in green')
  assert.ok(
    colored.endsWith('\u001b[1m21 checks: 11 passed, 7 failed, 1 warnings, 0 unknown, 2 skipped\u001b[22m'),
    'bold count line',
  )
})

// ---- caveats: what a verdict could not see is shown, not only in the JSON evidence (issue 12, item 2) ----

test('caveats of a passing check are shown under it without --verbose, once each; with --verbose under the finding', () => {
  const caveat = 'SCPs and session policies are not seen'
  const results = [
    result(meta('local-iam', 'error', 'iam', 'IAM'), [
      { status: 'pass', message: 'may pass role A', caveats: [caveat] },
      { status: 'pass', message: 'may pass role B', caveats: [caveat, 'statement X was not judged exactly'] },
    ]),
  ]
  const plain = renderHuman(results, null, { color: false }).split('\n')
  assert.deepEqual(plain.slice(0, 4), [
    'iam',
    '  ✔ local-iam — IAM',
    `    caveat: ${caveat}`,
    '    caveat: statement X was not judged exactly',
  ])
  assert.equal(plain[4], '')
  const verbose = renderHuman(results, null, { color: false, verbose: true }).split('\n')
  assert.deepEqual(verbose.slice(1, 7), [
    '  ✔ local-iam — IAM',
    '    ✔ may pass role A',
    `      caveat: ${caveat}`,
    '    ✔ may pass role B',
    `      caveat: ${caveat}`,
    '      caveat: statement X was not judged exactly',
  ])
})

test('caveats of a failing or unknown finding come right under its message, before the fix', () => {
  const results = [
    result(meta('x'), [
      { status: 'fail', message: 'bad', caveats: ['c1'], fix: { summary: 'do it', commands: ['run'] } },
    ]),
    result(meta('y'), [{ status: 'unknown', message: 'not confirmed', caveats: ['c2'] }]),
  ]
  const lines = renderHuman(results, null, { color: false }).split('\n')
  const i = lines.indexOf('    ✖ bad')
  assert.deepEqual(lines.slice(i, i + 4), [
    '    ✖ bad',
    '      caveat: c1',
    '      fix: do it',
    '        $ run',
  ])
  const j = lines.indexOf('    unknown: not confirmed')
  assert.equal(lines[j + 1], '      caveat: c2')
  const colored = renderHuman(results, null, { color: true })
  assert.ok(colored.includes('\u001b[33mcaveat:\u001b[39m c1'), 'the caveat label in yellow')
})

test('a fix with an alternative (without eksctl): its commands under its label, after the first way', () => {
  const fix = {
    summary: 'map it',
    commands: ['eksctl create iamidentitymapping --arn r'],
    alternative: { label: 'without eksctl', commands: ['kubectl get cm', 'kubectl apply -f -'] },
  }
  const lines = renderHuman([result(meta('x'), [{ status: 'fail', message: 'bad', fix }])], null, {
    color: false,
  }).split('\n')
  const i = lines.indexOf('    ✖ bad')
  assert.deepEqual(lines.slice(i, i + 6), [
    '    ✖ bad',
    '      fix: map it',
    '        $ eksctl create iamidentitymapping --arn r',
    '      or, without eksctl:',
    '        $ kubectl get cm',
    '        $ kubectl apply -f -',
  ])
  const md = markdownReport([result(meta('x'), [{ status: 'fail', message: 'bad', fix }])], null)
  assert.ok(md.includes('Or, without eksctl:\n\n```sh\nkubectl get cm\nkubectl apply -f -\n```'), md)
})

test("the simulator unavailable: the local evaluator's pass prints what it cannot see (real catalog)", () => {
  const facts = healthyFacts((f) => {
    for (const [arn, read] of Object.entries(f.iam.passRole))
      if (read.ok)
        f.iam.passRole[arn] = {
          ok: true,
          value: { ...read.value, method: 'local', simulatorUnavailable: 'HTTP 500' },
        }
  })
  const lines = renderHuman(runChecks(catalog, facts), facts, { color: false }).split('\n')
  const i = lines.indexOf('  ✔ passrole-node-role — The controller may pass every node role to EC2')
  assert.ok(i >= 0, lines.join('\n'))
  assert.match(
    lines[i + 1] ?? '',
    /^ {4}caveat: karpctl's local evaluator does not see service control policies \(SCPs\) or session policies/,
  )
  const j = lines.indexOf(
    '  ✔ controller-policy — The controller role carries the permissions of the reference policy',
  )
  assert.match(lines[j + 1] ?? '', /^ {4}caveat: controller-policy compares the role's policy documents/)
})
