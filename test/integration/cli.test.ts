// The built CLI as a user runs it (`node bin/run.js doctor …`, after `npm run build`), as a subprocess:
// exit codes, output formats, and one-line errors for bad input. A subprocess is beyond nock's reach,
// so these cases never touch the network: snapshots and input that fails before any read.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { CONTROLLER_ROLE, healthyFacts, irsaTrust } from '../helpers/facts.js'
import { repoRoot } from '../helpers/fixtures.js'
import { isolatedEnv } from '../helpers/cli-env.js'
import { kubeconfigYaml } from '../helpers/mock-cluster.js'

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

let dir: string
let healthy: string
let broken: string

/** Runs the CLI with a clean environment: a temp HOME, no AWS or kube setup of the host. */
function karpctl(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'run.js'), ...args],
      {
        cwd: repoRoot,
        timeout: 60_000,
        env: isolatedEnv(dir, { NO_COLOR: undefined, ...env }),
      },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** The CLI's own stderr lines (Node's runtime warnings, if any, are not the CLI's output). */
const errorLines = (r: Result) =>
  r.stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .filter((l) => !/^\(node:\d+\)|^\(Use `node --trace-warnings/.test(l))

function assertOneLineError(r: Result, pattern: RegExp) {
  const lines = errorLines(r)
  assert.equal(r.code, 2, `exit code 2 (stderr: ${r.stderr})`)
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`)
  assert.match(lines[0] as string, /^Error: /)
  assert.match(lines[0] as string, pattern)
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace')
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-cli-'))
  assert.ok(
    existsSync(join(repoRoot, 'dist', 'cli.js')),
    'dist/ is missing: run `npm run build` first (npm test builds before the integration tests)',
  )
  // The examples the repo ships; when absent, equivalent snapshots made from the test facts.
  healthy = join(repoRoot, 'examples', 'healthy.json')
  if (!existsSync(healthy)) {
    healthy = join(dir, 'healthy.json')
    writeFileSync(healthy, JSON.stringify(healthyFacts()))
  }
  broken = join(repoRoot, 'examples', 'shared-cluster-broken.json')
  if (!existsSync(broken)) {
    broken = join(dir, 'broken.json')
    const facts = healthyFacts((f) => {
      const role = f.iam.roles[CONTROLLER_ROLE]
      if (role?.ok && role.value) role.value.role.trust = irsaTrust('karpenter', 'default')
    })
    writeFileSync(broken, JSON.stringify(facts))
  }
})

after(() => rmSync(dir, { recursive: true, force: true }))

test('--version prints what oclif prints, from the boot file alone', async () => {
  const { Config } = await import('@oclif/core')
  const expected = (await Config.load(repoRoot)).userAgent
  const r = await karpctl(['--version'])
  assert.equal(r.code, 0)
  assert.equal(r.stdout, `${expected}\n`)
  assert.equal(r.stderr, '')
  // Only as the first word, as oclif reads it: elsewhere it is a flag the command does not have.
  const late = await karpctl(['doctor', '--version'])
  assert.equal(late.code, 2)
  assert.match(errorLines(late).join('\n'), /Nonexistent flag: --version/)
})

test('a help screen shown once is printed from the cache next time, and only for the same screen', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'karpctl-help-screens-'))
  try {
    const env = { XDG_CACHE_HOME: cache }
    const screens = () => readdirSync(join(cache, 'karpctl')).filter((n) => n.startsWith('help-'))
    const first = await karpctl(['doctor', '--help'], env)
    assert.equal(first.code, 0)
    assert.match(first.stdout, /^Find every known Karpenter misconfiguration/)
    assert.equal(screens().length, 1, 'the screen was recorded')
    const file = join(cache, 'karpctl', screens()[0] as string)
    assert.equal(readFileSync(file, 'utf8'), first.stdout)
    // Printed from the file: the CLI bundle is not what answers.
    writeFileSync(file, 'from the cache\n')
    const second = await karpctl(['doctor', '--help'], env)
    assert.deepEqual([second.code, second.stdout, second.stderr], [0, 'from the cache\n', ''])
    // Another width, another screen: rendered by oclif, and recorded beside the first.
    const wide = await karpctl(['doctor', '--help'], { ...env, OCLIF_COLUMNS: '200' })
    assert.equal(wide.code, 0)
    assert.match(wide.stdout, /^Find every known Karpenter misconfiguration/)
    assert.equal(screens().length, 2)
    // A topic alone is a help screen too; a run that is not help records nothing.
    assert.equal((await karpctl(['tenant'], env)).code, 0)
    assert.equal(screens().length, 3)
    assert.equal((await karpctl(['doctor', '--only', 'nope'], env)).code, 2)
    assert.equal(screens().length, 3)
    // KARPCTL_CODE_CACHE=0 turns every cache off.
    const off = mkdtempSync(join(tmpdir(), 'karpctl-help-off-'))
    assert.equal(
      (await karpctl(['doctor', '--help'], { XDG_CACHE_HOME: off, KARPCTL_CODE_CACHE: '0' })).code,
      0,
    )
    assert.deepEqual(readdirSync(off), [])
    rmSync(off, { recursive: true, force: true })
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
})

test('doctor --snapshot of a healthy cluster exits 0 with a closing count line', async () => {
  const r = await karpctl(['doctor', '--snapshot', healthy])
  assert.equal(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, /\d+ checks: \d+ passed, 0 failed/)
})

test('doctor --snapshot of a broken cluster exits 1 and names the failing checks', async () => {
  const r = await karpctl(['doctor', '--snapshot', broken])
  assert.equal(r.code, 1, r.stdout + r.stderr)
  assert.match(r.stdout, /✖/)
  assert.match(r.stdout, /[1-9]\d* failed/)
})

test('doctor --json prints one JSON document with every check', async () => {
  const r = await karpctl(['doctor', '--snapshot', healthy, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout) as { checks: { id: string; status: string }[]; summary: unknown }
  assert.ok(Array.isArray(report.checks) && report.checks.length > 10)
  assert.ok(report.checks.every((c) => typeof c.id === 'string' && typeof c.status === 'string'))
  assert.ok(!report.checks.some((c) => c.status === 'fail'))

  const b = await karpctl(['doctor', '--snapshot', broken, '--json'])
  assert.equal(b.code, 1)
  const brokenReport = JSON.parse(b.stdout) as { checks: { status: string }[] }
  assert.ok(brokenReport.checks.some((c) => c.status === 'fail'))
})

test('doctor --only nope: exit 2, one line, no stack trace', async () => {
  const r = await karpctl(['doctor', '--snapshot', healthy, '--only', 'nope'])
  assertOneLineError(r, /unknown check id: nope/)
})

test('doctor --snapshot /nonexistent: exit 2, one line', async () => {
  const r = await karpctl(['doctor', '--snapshot', '/nonexistent/snapshot.json'])
  assertOneLineError(r, /does not exist/)
})

test('a corrupt or foreign snapshot: exit 2, one line', async () => {
  const corrupt = join(dir, 'corrupt.json')
  writeFileSync(corrupt, '{"schema": "karpctl.facts/v1", "meta": ')
  assertOneLineError(await karpctl(['doctor', '--snapshot', corrupt]), /not valid JSON/)
  const foreign = join(dir, 'foreign.json')
  writeFileSync(foreign, JSON.stringify({ apiVersion: 'v1', kind: 'List' }))
  assertOneLineError(await karpctl(['doctor', '--snapshot', foreign]), /not a karpctl snapshot/)
  const incomplete = join(dir, 'incomplete.json')
  writeFileSync(incomplete, JSON.stringify({ schema: 'karpctl.facts/v1', meta: {} }))
  assertOneLineError(await karpctl(['doctor', '--snapshot', incomplete]), /incomplete/)
})

test('--kube-context nope with a kubeconfig that lacks it: exit 2 naming the context and the choices', async () => {
  const kubeconfig = join(dir, 'kubeconfig')
  // Port 9 on localhost: nothing is read before the context is resolved, so nothing is ever sent there.
  writeFileSync(kubeconfig, kubeconfigYaml('https://127.0.0.1:9', 'token'))
  const r = await karpctl(
    ['doctor', '--kube-context', 'nope', '--cluster', 'demo', '--region', 'us-west-2'],
    {
      KUBECONFIG: kubeconfig,
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    },
  )
  assertOneLineError(r, /kube context "nope" does not exist/)
  assert.match(r.stderr, /one of: demo/)
})

test('--region nowhere: exit 2, one line', async () => {
  const r = await karpctl(['doctor', '--cluster', 'demo', '--region', 'nowhere'])
  assertOneLineError(r, /"nowhere" is not an AWS region/)
})

test('--output sarif is SARIF 2.1.0 JSON with a result per failing finding', async () => {
  const r = await karpctl(['doctor', '--snapshot', broken, '--output', 'sarif'])
  assert.equal(r.code, 1, r.stderr)
  const sarif = JSON.parse(r.stdout) as {
    version: string
    runs: {
      tool: { driver: { name: string; rules: unknown[] } }
      results: { ruleId: string; level: string }[]
    }[]
  }
  assert.equal(sarif.version, '2.1.0')
  const run = sarif.runs[0]
  assert.ok(run)
  assert.ok(run.tool.driver.rules.length > 10)
  assert.ok(
    run.results.some((x) => x.level === 'error'),
    'a failing error check is an error result',
  )
})

test('--output junit is JUnit XML', async () => {
  const r = await karpctl(['doctor', '--snapshot', broken, '--output', 'junit'])
  assert.equal(r.code, 1, r.stderr)
  assert.ok(r.stdout.startsWith('<?xml'), r.stdout.slice(0, 100))
  assert.match(r.stdout, /<testsuites[^>]*>/)
  assert.match(r.stdout, /<failure/)
  assert.match(r.stdout.trimEnd(), /<\/testsuites>$/)
})

test('--output markdown is a Markdown report', async () => {
  const r = await karpctl(['doctor', '--snapshot', healthy, '--output', 'markdown'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^# /m)
  assert.match(r.stdout, /^\|.*\|$/m)
})

test('NO_COLOR wins over FORCE_COLOR: no ANSI escapes (and FORCE_COLOR alone does colour)', async () => {
  // eslint-disable-next-line no-control-regex
  const ansi = /\u001b\[/
  const plain = await karpctl(['doctor', '--snapshot', broken], { NO_COLOR: '1', FORCE_COLOR: '1' })
  assert.equal(plain.code, 1)
  assert.doesNotMatch(plain.stdout + plain.stderr, ansi)
  const forced = await karpctl(['doctor', '--snapshot', broken], { FORCE_COLOR: '1' })
  assert.match(
    forced.stdout,
    ansi,
    'the control case: FORCE_COLOR does colour, so the NO_COLOR assertion can fail',
  )
})

// ---- escape sequences from the cluster, AWS or a file never reach the terminal (issue 10) ----

/** A window title, a screen clear, an OSC 8 hyperlink, CSI through U+009B, CR, backspace, DEL. */
const HOSTILE =
  '\u001b]0;pwned\u0007\u001b[2J\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\\u009b31m\r\u0008\u007f'
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g
// eslint-disable-next-line no-control-regex
const OWN_COLOUR = /\u001b\[(?:0|1|2|22|31|32|33|36|39)m/g

test('escape sequences in a cluster name, a finding message and a note are made visible in every format', async () => {
  const facts = healthyFacts((f) => {
    f.meta.clusterName = `demo${HOSTILE}`
    f.meta.notes = [`a note${HOSTILE}`]
    // The IRSA trust names the role: the failing finding's message and fix carry it.
    if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
      f.kube.serviceAccount.value.metadata.annotations = {
        'eks.amazonaws.com/role-arn': `arn:aws:iam::123456789012:role/ctl${HOSTILE}`,
      }
  })
  const path = join(dir, 'hostile.json')
  writeFileSync(path, JSON.stringify(facts))
  const runs: [string, string[], Record<string, string>][] = [
    ['human', [], { NO_COLOR: '1' }],
    ['human in colour', [], { FORCE_COLOR: '1' }],
    ['verbose', ['--verbose'], { FORCE_COLOR: '1' }],
    ['markdown', ['-o', 'markdown'], {}],
    ['junit', ['-o', 'junit'], {}],
    ['sarif', ['-o', 'sarif'], {}],
    ['json', ['--json'], {}],
  ]
  for (const [name, args, env] of runs) {
    const r = await karpctl(['doctor', '--snapshot', path, ...args], env)
    assert.ok(r.code === 0 || r.code === 1, `${name}: exit ${r.code}\n${r.stderr}`)
    const out = r.stdout + r.stderr
    // karpctl's own colours are the only escape sequences left, and they still work.
    const foreign = out.replace(OWN_COLOUR, '').match(RAW_CONTROL) ?? []
    assert.deepEqual(foreign, [], `${name}: a raw control character reached the terminal`)
    if (env.FORCE_COLOR) assert.match(out, OWN_COLOUR, `${name}: karpctl's colours are kept`)
    assert.ok(out.includes('pwned'), `${name}: the text is shown, made visible`)
    assert.match(out, /demo\\u001b\]0;pwned\\u0007/, `${name}: the cluster name, visible`)
    if (name === 'json' || name === 'sarif') {
      const doc = JSON.parse(r.stdout) as unknown
      // Valid JSON, and the original text once parsed (escaping changes how it is written, not what).
      if (name === 'json') assert.equal((doc as { cluster: string }).cluster, `demo${HOSTILE}`)
    } else if (name.startsWith('human') || name === 'verbose')
      // Only the human report prints the notes.
      assert.match(out, /a note\\u001b/, `${name}: the note, visible`)
  }
})
