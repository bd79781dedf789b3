// JSON, SARIF, JUnit and Markdown reports, on results of the real catalog and on hand-made results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import type { CheckResult } from '../../../src/checks/types.js'
import { jsonReport, junitReport, markdownReport, sarifReport } from '../../../src/report/machine.js'
import { healthyFacts } from '../../helpers/facts.js'
import { brokenFacts, brokenResults, healthyResults, meta, result, tally } from '../../helpers/results.js'

// ---- a small XML well-formedness checker (no XML parser among the dependencies) ----

interface XmlElement {
  name: string
  attrs: Record<string, string>
  text: string
}

const ENTITY = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/
const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')

/** Checks that `xml` is well formed (one root, balanced tags, escaped text and attributes); returns its elements. */
function parseXml(xml: string): XmlElement[] {
  const prolog = '<?xml version="1.0" encoding="UTF-8"?>\n'
  assert.ok(xml.startsWith(prolog), 'XML declaration first')
  const body = xml.slice(prolog.length)
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g
  const stack: XmlElement[] = []
  const elements: XmlElement[] = []
  let roots = 0
  for (const m of body.matchAll(token)) {
    const [, close, name, rawAttrs, selfClose, text, stray] = m
    if (stray) assert.fail(`unescaped < at ${m.index}: ${body.slice(m.index, m.index + 40)}`)
    if (text !== undefined) {
      assert.doesNotMatch(text, ENTITY, `unescaped & in text: ${text}`)
      if (stack.length === 0) assert.equal(text.trim(), '', `text outside the root: ${text}`)
      else stack.at(-1)!.text += unescape(text)
      continue
    }
    if (close) {
      const open = stack.pop()
      assert.equal(open?.name, name, `</${name}> closes <${open?.name}>`)
      continue
    }
    const attrs: Record<string, string> = {}
    for (const a of rawAttrs!.matchAll(/([\w:.-]+)="([^"]*)"/g)) {
      assert.doesNotMatch(a[2]!, ENTITY, `unescaped & in attribute ${a[1]}`)
      assert.ok(!(a[1]! in attrs), `duplicate attribute ${a[1]}`)
      attrs[a[1]!] = unescape(a[2]!)
    }
    const el: XmlElement = { name: name!, attrs, text: '' }
    elements.push(el)
    if (stack.length === 0) roots++
    if (!selfClose) stack.push(el)
  }
  assert.equal(stack.length, 0, `unclosed: ${stack.map((e) => e.name).join(', ')}`)
  assert.equal(roots, 1, 'exactly one root element')
  return elements
}

const errorFailures = (results: CheckResult[]) =>
  results.filter((r) => r.status === 'fail' && r.meta.severity === 'error')

// ---- JSON ----

test('jsonReport: cluster, region, summary counts and one entry per check', () => {
  for (const [results, facts] of [
    [healthyResults(), healthyFacts()],
    [brokenResults(), brokenFacts()],
  ] as const) {
    const report = jsonReport(results, facts)
    assert.equal(report.cluster, 'demo')
    assert.equal(report.region, 'us-west-2')
    assert.deepEqual(report.summary, tally(results))
    assert.deepEqual(
      report.checks.map((c) => [c.id, c.status, c.severity, c.category, c.title]),
      results.map((r) => [r.meta.id, r.status, r.meta.severity, r.meta.category, r.meta.title]),
    )
    assert.deepEqual(
      report.checks.map((c) => c.findings),
      results.map((r) => r.findings),
    )
  }
  assert.deepEqual(jsonReport(brokenResults(), brokenFacts()).summary, {
    pass: 11,
    fail: 7,
    warn: 1,
    unknown: 0,
    skipped: 2,
  })
  const bare = jsonReport([], null)
  assert.equal(bare.cluster, null)
  assert.deepEqual(bare.summary, { pass: 0, fail: 0, warn: 0, unknown: 0, skipped: 0 })
  assert.deepEqual(bare.checks, [])
})

// ---- SARIF ----

interface SarifResult {
  ruleId: string
  level: string
  message: { text: string }
  locations: { logicalLocations: { fullyQualifiedName: string }[] }[]
  properties: { status: string; fixCommands?: string[] }
}
interface Sarif {
  $schema: string
  version: string
  runs: {
    tool: {
      driver: {
        name: string
        version: string
        rules: { id: string; defaultConfiguration: { level: string }; shortDescription: { text: string } }[]
      }
    }
    results: SarifResult[]
  }[]
}

test('SARIF: valid JSON, version 2.1.0, one rule per catalog check', () => {
  const sarif = JSON.parse(sarifReport(brokenResults(), catalog, '9.9.9')) as Sarif
  assert.equal(sarif.version, '2.1.0')
  assert.equal(sarif.$schema, 'https://json.schemastore.org/sarif-2.1.0.json')
  assert.equal(sarif.runs.length, 1)
  const driver = sarif.runs[0]!.tool.driver
  assert.equal(driver.name, 'karpctl')
  assert.equal(driver.version, '9.9.9')
  assert.deepEqual(
    driver.rules.map((r) => r.id),
    catalog.map((c) => c.meta.id),
  )
  assert.equal(new Set(driver.rules.map((r) => r.id)).size, catalog.length)
  for (const [i, rule] of driver.rules.entries()) {
    const m = catalog[i]!.meta
    assert.equal(rule.shortDescription.text, m.title)
    assert.equal(rule.defaultConfiguration.level, m.severity === 'info' ? 'note' : m.severity)
  }
})

test('SARIF: the healthy results have no SARIF results', () => {
  const sarif = JSON.parse(sarifReport(healthyResults(), catalog, '0.1.0')) as Sarif
  assert.deepEqual(sarif.runs[0]!.results, [])
  assert.equal(sarif.runs[0]!.tool.driver.rules.length, catalog.length)
})

test('SARIF: results only for fail/warn/unknown findings; error-severity fails are level error', () => {
  const results = brokenResults()
  const sarif = JSON.parse(sarifReport(results, catalog, '0.1.0')) as Sarif
  const got = sarif.runs[0]!.results
  const expected = results.flatMap((r) =>
    r.findings
      .filter((f) => f.status === 'fail' || f.status === 'warn' || f.status === 'unknown')
      .map((f) => ({ ruleId: r.meta.id, status: f.status })),
  )
  assert.deepEqual(
    got.map((r) => ({ ruleId: r.ruleId, status: r.properties.status })),
    expected,
  )
  assert.equal(got.length, 8)
  assert.equal(got.filter((r) => r.level === 'error').length, 7)
  assert.deepEqual(
    got.filter((r) => r.level !== 'error').map((r) => [r.ruleId, r.level]),
    [['karpenter-version', 'warning']],
  )
  const sg = got.find((r) => r.ruleId === 'sg-webhook-8443')!
  assert.match(sg.message.text, / Fix: allow the control plane to reach the webhook$/)
  assert.equal(sg.properties.fixCommands?.length, 1)
})

test('SARIF: level per finding status and check severity; subject as a logical location', () => {
  const results = [
    result(meta('err-check', 'error'), [
      { status: 'fail', message: 'broken', subject: 'arn:aws:iam::1:role/x', fix: { summary: 'fix it' } },
      { status: 'pass', message: 'fine' },
    ]),
    result(meta('warn-check', 'warning'), [{ status: 'fail', message: 'soft' }]),
    result(meta('info-check', 'info'), [{ status: 'warn', message: 'hint' }]),
    result(meta('unknown-check'), [{ status: 'unknown', message: 'could not read' }]),
    result(meta('skipped-check'), [{ status: 'skipped', message: 'n/a' }]),
  ]
  const sarif = JSON.parse(sarifReport(results, [], '0.1.0')) as Sarif
  assert.deepEqual(sarif.runs[0]!.tool.driver.rules, [])
  assert.deepEqual(
    sarif.runs[0]!.results.map((r) => [r.ruleId, r.level, r.message.text, r.locations]),
    [
      [
        'err-check',
        'error',
        'broken Fix: fix it',
        [{ logicalLocations: [{ fullyQualifiedName: 'arn:aws:iam::1:role/x' }] }],
      ],
      ['warn-check', 'warning', 'soft', []],
      ['info-check', 'warning', 'hint', []],
      ['unknown-check', 'note', 'could not read', []],
    ],
  )
})

// ---- JUnit ----

test('JUnit: well formed, one testcase per check, failures = failing error-severity checks', () => {
  for (const [results, facts] of [
    [healthyResults(), healthyFacts()],
    [brokenResults(), brokenFacts()],
  ] as const) {
    const xml = junitReport(results, facts)
    const els = parseXml(xml)
    const t = tally(results)
    const failures = errorFailures(results)
    const [suites, suite] = els
    assert.equal(suites?.name, 'testsuites')
    assert.deepEqual(suites?.attrs, {
      name: 'karpctl doctor demo',
      tests: String(results.length),
      failures: String(failures.length),
    })
    assert.equal(suite?.name, 'testsuite')
    assert.deepEqual(suite?.attrs, {
      name: 'karpctl doctor demo',
      tests: String(results.length),
      failures: String(failures.length),
      skipped: String(t.skipped + t.unknown),
    })
    const cases = els.filter((e) => e.name === 'testcase')
    assert.equal(cases.length, results.length)
    assert.equal((xml.match(/<testcase /g) ?? []).length, results.length)
    assert.deepEqual(
      cases.map((c) => [c.attrs.classname, c.attrs.name]),
      results.map((r) => [r.meta.category, r.meta.id]),
    )
    assert.equal(els.filter((e) => e.name === 'failure').length, failures.length)
    assert.equal(els.filter((e) => e.name === 'skipped').length, t.skipped + t.unknown)
  }
  assert.match(
    junitReport(brokenResults(), brokenFacts()),
    /<testsuites name="karpctl doctor demo" tests="21" failures="7">/,
  )
})

test('JUnit: messages and bodies are XML-escaped', () => {
  const nasty = `a < b && "c" > 'd'`
  const results = [
    result(meta('esc<check>', 'error', 'iam'), [
      { status: 'fail', message: nasty, fix: { summary: 's', commands: [`echo '<x>' && echo "&"`] } },
    ]),
    result(meta('soft', 'warning'), [{ status: 'fail', message: 'x & y' }]),
    result(meta('unk'), [{ status: 'unknown', message: 'could not read <thing> & more' }]),
  ]
  const facts = healthyFacts((f) => {
    f.meta.clusterName = 'c&<d>'
  })
  const xml = junitReport(results, facts)
  assert.ok(!xml.includes(nasty), 'the raw message is not in the XML')
  assert.ok(xml.includes('message="a &lt; b &amp;&amp; &quot;c&quot; &gt; &apos;d&apos;"'), xml)
  const els = parseXml(xml)

  const failure = els.find((e) => e.name === 'failure')!
  assert.equal(failure.attrs.message, nasty)
  assert.equal(failure.text, `fail: ${nasty}\nfix: echo '<x>' && echo "&"`)
  assert.equal(els.find((e) => e.name === 'testcase')!.attrs.name, 'esc<check>')
  assert.equal(els[0]!.attrs.name, 'karpctl doctor c&<d>')
  // A failing warning-severity check is no JUnit failure: its findings go to system-out.
  assert.equal(els.filter((e) => e.name === 'failure').length, 1)
  assert.equal(els.find((e) => e.name === 'system-out')!.text, 'fail: x & y')
  assert.equal(els.find((e) => e.name === 'skipped')!.attrs.message, 'unknown: could not read <thing> & more')
  assert.equal(els[0]!.attrs.failures, '1')
})

// ---- Markdown ----

test('Markdown: a title, one table row per check, and the count line', () => {
  const results = brokenResults()
  const md = markdownReport(results, brokenFacts())
  const lines = md.split('\n')
  assert.equal(lines[0], '# karpctl doctor — demo (us-west-2)')
  assert.ok(lines.includes('| | check | status | finding |'))
  const rows = lines.filter((l) => /^\| \S+ \| `[^`]+` \| \w+ \| /.test(l))
  assert.equal(rows.length, results.length)
  for (const [i, r] of results.entries()) {
    assert.ok(
      rows[i]!.startsWith(
        `| ${{ pass: '✅', fail: '❌', warn: '⚠️', unknown: '❔', skipped: '➖' }[r.status]} | \`${r.meta.id}\` | ${r.status} | `,
      ),
      rows[i],
    )
  }
  assert.ok(rows.includes(`| ❌ | \`sg-webhook-8443\` | fail | ${results[0]!.findings[0]!.message} |`))
  assert.equal(lines.at(-1), '_21 checks: 11 passed, 7 failed, 1 warnings, 0 unknown, 2 skipped_')
})

test('Markdown: a ## Fixes section with a fenced sh block per fix with commands', () => {
  const results = brokenResults()
  const md = markdownReport(results, brokenFacts())
  const lines = md.split('\n')
  assert.equal(lines.filter((l) => l === '## Fixes').length, 1)
  const fixesAt = lines.indexOf('## Fixes')
  const fixes = results.flatMap((r) =>
    r.findings.filter((f) => f.fix && (f.status === 'fail' || f.status === 'warn')).map((f) => ({ r, f })),
  )
  assert.equal(fixes.length, 8)
  assert.equal(lines.filter((l) => l.startsWith('### `')).length, fixes.length)
  for (const { r, f } of fixes) {
    const h = lines.indexOf(`### \`${r.meta.id}\`: ${f.fix!.summary}`)
    assert.ok(h > fixesAt, `heading for ${r.meta.id}`)
    assert.deepEqual(lines.slice(h + 1, h + 4), ['', f.message, ''])
    if (f.fix!.commands?.length) {
      const block = ['```sh', ...f.fix!.commands, '```']
      assert.deepEqual(lines.slice(h + 4, h + 4 + block.length), block, r.meta.id)
    }
  }
  assert.equal(
    lines.filter((l) => l === '```sh').length,
    fixes.filter((x) => x.f.fix!.commands?.length).length,
  )
  const snippets = fixes.filter((x) => x.f.fix!.snippet)
  assert.ok(snippets.length > 0)
  for (const { f } of snippets)
    assert.ok(md.includes(`\`\`\`${f.fix!.snippet!.language}\n${f.fix!.snippet!.text.trimEnd()}\n\`\`\``))
})

test('Markdown: no Fixes section without fixes; pipes in a finding are escaped', () => {
  const healthy = markdownReport(healthyResults(), healthyFacts())
  assert.ok(!healthy.includes('## Fixes'))
  assert.ok(!healthy.includes('```'))

  const md = markdownReport([result(meta('pipes'), [{ status: 'warn', message: 'a | b' }])], null)
  const lines = md.split('\n')
  assert.equal(lines[0], '# karpctl doctor')
  assert.ok(lines.includes('| ⚠️ | `pipes` | warn | a \\| b |'))
  assert.ok(!md.includes('## Fixes'))
  assert.equal(lines.at(-1), '_1 checks: 0 passed, 0 failed, 1 warnings, 0 unknown, 0 skipped_')
})
