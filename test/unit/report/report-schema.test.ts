// The JSON report is a contract: a versioned `schema`, the run's own facts (karpctl version, time,
// API calls, wall time), and a JSON Schema shipped in the package that every report validates
// against (issue 12, item 6).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import {
  jsonReport,
  junitReport,
  REPORT_SCHEMA,
  sarifReport,
  type ReportRun,
} from '../../../src/report/machine.js'
import { failed, healthyFacts } from '../../helpers/facts.js'
import { repoRoot } from '../../helpers/fixtures.js'
import { brokenFacts, brokenResults, healthyResults, meta, result } from '../../helpers/results.js'

const schemaPath = join(repoRoot, 'schema', 'report.schema.json')
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>
// Formats (date-time) are checked below by hand: ajv-formats is not a dependency.
const ajv = new Ajv({ strict: true, allErrors: true, validateFormats: false })
const validate = ajv.compile(schema)

function assertValid(report: unknown, what: string) {
  // Through JSON, as a consumer reads it (undefined fields vanish, Dates become strings).
  const data = JSON.parse(JSON.stringify(report)) as Record<string, unknown>
  assert.ok(validate(data), `${what}: ${ajv.errorsText(validate.errors)}`)
  for (const key of ['generatedAt', 'factsCollectedAt']) {
    const v = data[key]
    if (v !== null) assert.equal(new Date(String(v)).toISOString(), v, `${what}: ${key} is ISO 8601 UTC`)
  }
  return data
}

const run = (over: Partial<ReportRun> = {}): ReportRun => ({
  karpctlVersion: '1.2.3',
  generatedAt: new Date('2026-12-01T10:00:00.000Z'),
  source: 'live',
  calls: [
    'iam:GetRole:{"RoleName":"a"}',
    'iam:ListRolePolicies:{"RoleName":"a"}',
    'kube:GET /version',
    'sts:GetCallerIdentity:{}',
  ],
  wallTimeMs: 1234,
  ...over,
})

test('the schema is shipped: package.json "files" carries schema/, and the report names its version', () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { files: string[] }
  assert.ok(pkg.files.includes('schema'), JSON.stringify(pkg.files))
  assert.equal(REPORT_SCHEMA, 'karpctl.report/v1')
  assert.equal((schema.properties as Record<string, { const?: string }>).schema?.const, REPORT_SCHEMA)
})

test('a live report: schema, version, time, API calls per service and wall time; it validates', () => {
  const report = jsonReport(healthyResults(), healthyFacts(), run())
  const data = assertValid(report, 'healthy live')
  assert.equal(data.schema, 'karpctl.report/v1')
  assert.equal(data.karpctlVersion, '1.2.3')
  assert.equal(data.generatedAt, '2026-12-01T10:00:00.000Z')
  assert.equal(data.source, 'live')
  assert.equal(data.wallTimeMs, 1234)
  assert.deepEqual(data.apiCalls, { total: 4, byService: { iam: 2, kube: 1, sts: 1 } })
  assert.equal(data.factsCollectedAt, '2026-11-29T12:00:00.000Z')
  assert.equal(data.accountId, '123456789012')
})

test('every report shape validates: broken, snapshot, lint-only, every status, embedded (no run given)', () => {
  assertValid(
    jsonReport(brokenResults(), brokenFacts(), run({ source: 'snapshot', calls: [] })),
    'broken snapshot',
  )
  const lint = assertValid(
    jsonReport(healthyResults().slice(0, 1), null, run({ source: 'lint', calls: [] })),
    'lint',
  )
  assert.equal(lint.cluster, null)
  assert.deepEqual(lint.apiCalls, { total: 0, byService: {} })
  const unknown = healthyFacts((f) => (f.kube.release = failed('helm:karpenter/karpenter')))
  assertValid(jsonReport(runChecks(catalog, unknown), unknown, run()), 'unknown checks')
  const statuses = [
    result(meta('a'), [{ status: 'pass', message: 'ok', caveats: ['not everything was seen'] }]),
    result(meta('b'), [
      { status: 'fail', message: 'bad', fix: { summary: 's', snippet: { language: 'json', text: '{}' } } },
    ]),
    result(meta('c'), [{ status: 'warn', message: 'meh', subject: 'x', evidence: { k: 1 } }]),
    result(meta('d'), [{ status: 'unknown', message: 'could not read' }]),
    result(meta('e'), [{ status: 'skipped', message: 'n/a' }]),
  ]
  assertValid(jsonReport(statuses, healthyFacts(), run()), 'every status')
  // Embedded in install's or tenant's output: the run is described from the facts.
  const embedded = assertValid(
    jsonReport(
      healthyResults(),
      healthyFacts((f) => (f.meta.calls = { iam: 3, eks: 2 })),
    ),
    'embedded',
  )
  assert.equal(embedded.karpctlVersion, '0.1.0')
  assert.equal(embedded.wallTimeMs, null)
  assert.deepEqual(embedded.apiCalls, { total: 5, byService: { iam: 3, eks: 2 } })
})

test('the schema is strict: a report without its version, with an unknown status or an extra field is rejected', () => {
  const good = JSON.parse(JSON.stringify(jsonReport(healthyResults(), healthyFacts(), run()))) as Record<
    string,
    unknown
  >
  const broken: [string, (r: Record<string, unknown>) => void][] = [
    ['no schema', (r) => delete r.schema],
    ['another version', (r) => (r.schema = 'karpctl.report/v2')],
    ['no wall time', (r) => delete r.wallTimeMs],
    ['calls not counted', (r) => (r.apiCalls = { total: -1, byService: {} })],
    ['an unknown status', (r) => ((r.checks as { status: string }[])[0]!.status = 'ok')],
    ['an extra top-level field', (r) => (r.extra = true)],
    [
      'a finding without message',
      (r) => delete (r.checks as { findings: { message?: string }[] }[])[0]!.findings[0]!.message,
    ],
  ]
  assert.ok(validate(good))
  for (const [what, mutate] of broken) {
    const r = structuredClone(good)
    mutate(r)
    assert.equal(validate(r), false, `${what} should not validate`)
  }
})

test('SARIF and JUnit carry the karpctl version', () => {
  const sarif = JSON.parse(sarifReport(brokenResults(), catalog, '1.2.3')) as {
    runs: { tool: { driver: { version: string; semanticVersion: string } } }[]
  }
  assert.equal(sarif.runs[0]!.tool.driver.version, '1.2.3')
  assert.equal(sarif.runs[0]!.tool.driver.semanticVersion, '1.2.3')
  const xml = junitReport(brokenResults(), brokenFacts(), '1.2.3')
  assert.match(
    xml,
    /<properties>\n {6}<property name="karpctl.version" value="1.2.3"\/>\n {6}<property name="karpctl.report" value="karpctl.report\/v1"\/>\n {4}<\/properties>/,
  )
  // Without an explicit version: the facts' karpctl.
  assert.match(
    junitReport(healthyResults(), healthyFacts()),
    /<property name="karpctl.version" value="0.1.0"\/>/,
  )
})
