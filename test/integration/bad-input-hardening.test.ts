// The built CLI (`node bin/run.js`, after `npm run build`) fed the hostile input of issue 36 §4 the
// way a user would: environments whose cache or home cannot be used, flags whose values AWS or Helm
// would refuse later, a snapshot that is not UTF-8, names with bidirectional controls. Every case ends
// — exit 2 and one line on stderr for input karpctl refuses, the output for a cache it cannot use —
// never a hang, a stack, a raw control character or a directory made outside the test's folder.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import net from 'node:net'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { isolatedEnv } from '../helpers/cli-env.js'
import { repoRoot } from '../helpers/fixtures.js'

/** Generous: the machine is shared. A case past it was a hang. */
const HANG_MS = 60_000
let dir: string

before(() => {
  assert.ok(existsSync(join(repoRoot, 'dist', 'cli.js')), 'dist/ is missing: run `npm run build` first')
  dir = mkdtempSync(join(tmpdir(), 'karpctl-hardening-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

interface Result {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
}

/**
 * Runs the CLI in an isolated environment (test/helpers/cli-env.ts); with `shell`, through bash with
 * that prefix before the exec (`ulimit -n 20 &&`) and a redirection after it (`>&-`).
 */
function karpctl(
  args: string[],
  env: Record<string, string | undefined> = {},
  shell?: { before?: string; after?: string },
): Promise<Result> {
  const cli = [join(repoRoot, 'bin', 'run.js'), ...args]
  const [file, argv] = shell
    ? ['bash', ['-c', `${shell.before ?? ''} exec "$0" "$@" ${shell.after ?? ''}`, process.execPath, ...cli]]
    : [process.execPath, cli]
  return new Promise((resolve) => {
    execFile(
      file,
      argv,
      { cwd: dir, env: isolatedEnv(dir, env), timeout: HANG_MS, killSignal: 'SIGKILL' },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : null) : 0,
          signal: (err as { signal?: string } | null)?.signal ?? null,
          stdout,
          stderr,
        }),
    )
  })
}

/** Exit 2, one `Error:` line matching `message`, nothing raw that would reorder or split it. */
function refused(r: Result, message: RegExp): void {
  assert.equal(r.signal, null, 'it ended on its own')
  assert.equal(r.code, 2, r.stderr)
  const lines = r.stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, r.stderr)
  assert.match(lines[0]!, /^Error: /)
  assert.match(lines[0]!, message)
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(r.stderr, /[\u0000-\u0008\u000b-\u001f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack')
}

test('XDG_CACHE_HOME=/proc/self: the command prints its output and exits (no spin in the cache write)', async () => {
  const r = await karpctl(['doctor', '--help'], { XDG_CACHE_HOME: '/proc/self' })
  assert.equal(r.signal, null, 'it ended on its own')
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /doctor/)
})

test('a missing HOME is never created (HOME=<missing>/home, no XDG_CACHE_HOME)', async () => {
  const home = join(dir, 'nonexistent', 'home')
  const r = await karpctl(['doctor', '--help'], { HOME: home, XDG_CACHE_HOME: undefined })
  assert.equal(r.code, 0, r.stderr)
  assert.equal(existsSync(join(dir, 'nonexistent')), false, 'nothing made where the home should be')
})

test('upgrade --to: leading zeros and a doubled v are refused in one line (no plan to a tag that does not exist)', async () => {
  for (const to of ['01.14.1', 'vv1.14.1', '1.14.01'])
    refused(
      await karpctl(['upgrade', '--cluster', 'demo', '--to', to]),
      new RegExp(`--to: "${to}" is not a Karpenter version`),
    )
})

test('tenant add: --tag with U+2028, a right-to-left override or ESC, --subnet-tag with ESC, --instance-categories c;rm', async () => {
  const cases: [string[], RegExp][] = [
    [['--tag', 'team=a\u2028b'], /--tag value "a\\u2028b" holds U\+2028/],
    [['--tag', 'team=acme\u202e'], /--tag value "acme\\u202e" holds U\+202E/],
    [['--tag', 'team=\u001b[2J'], /--tag value "\\u001b\[2J" holds U\+001B/],
    [['--subnet-tag', 'tier=\u001b]0;x\u0007'], /--subnet-tag value ".*" holds U\+001B/],
    [['--instance-categories', 'c;rm'], /--instance-categories "c;rm" is not an EC2 instance category/],
  ]
  for (const [flags, message] of cases) refused(await karpctl(['tenant', 'add', 'acme', ...flags]), message)
})

test('bidirectional controls and U+2028 in an echoed name are quoted, as report lines quote them', async () => {
  refused(await karpctl(['why', 'web\u202eevil']), /"web\\u202eevil" is not a pod or workload name/)
  refused(await karpctl(['tenant', 'add', 'acme\u202e']), /"acme\\u202e" is not a valid tenant name/)
  refused(await karpctl(['tenant', 'add', 'acme\u2028x']), /"acme\\u2028x" is not a valid tenant name/)
})

test('why --snapshot that is not UTF-8 is refused in one line, never read with U+FFFD', async () => {
  const path = join(dir, 'latin1.json')
  writeFileSync(
    path,
    Buffer.concat([Buffer.from('{"schema":"karpctl.why/v1","x":"caf'), Buffer.from([0xe9, 0x22, 0x7d])]),
  )
  refused(await karpctl(['why', '--snapshot', path]), /is not UTF-8 text \(an invalid byte at offset 36\)/)
})

test('few open files (ulimit -n 20…40): one line naming the limit or the endpoint, never `Local (undefined:undefined)`', async () => {
  const kubeconfig = join(dir, 'kubeconfig-closed')
  // Port 9 (discard) on 127.0.0.1: nothing listens, so what is not EMFILE is a refused connection.
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: "http://127.0.0.1:9"}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\nusers: [{name: d, user: {token: x}}]\ncurrent-context: d\n',
  )
  let named = 0
  for (const n of [20, 24, 30, 40]) {
    const r = await karpctl(
      ['doctor', '--cluster', 'demo', '--region', 'us-west-2'],
      {
        KUBECONFIG: kubeconfig,
        AWS_CONFIG_FILE: undefined,
        AWS_SHARED_CREDENTIALS_FILE: undefined,
        AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'x'.repeat(40),
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      },
      { before: `ulimit -n ${n} &&` },
    )
    refused(r, /limit of open files is reached \(EMFILE\): raise it|ECONNREFUSED/)
    assert.doesNotMatch(r.stderr, /undefined/, `ulimit -n ${n}`)
    if (/EMFILE/.test(r.stderr)) named++
  }
  assert.ok(named > 0, 'at least one limit was low enough to be met')
})

test('an AWS endpoint that is ftp://, carries user:password@, or answers something that is not HTTP is named in one line', async (t) => {
  // A server that speaks first and not HTTP (an SSH port), on 127.0.0.1.
  const garbage = net.createServer((s) => {
    s.on('error', () => {})
    s.end('SSH-2.0-OpenSSH_9.6\r\n\r\n')
  })
  garbage.listen(0, '127.0.0.1')
  await new Promise((resolve) => garbage.once('listening', resolve))
  t.after(() => garbage.close())
  const port = (garbage.address() as net.AddressInfo).port
  const aws = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'x'.repeat(40) }
  const doctor = ['doctor', '--cluster', 'demo', '--region', 'us-west-2']
  refused(
    await karpctl(doctor, { ...aws, AWS_ENDPOINT_URL: 'ftp://127.0.0.1:21' }),
    /^Error: AWS_ENDPOINT_URL "ftp:\/\/127\.0\.0\.1:21" is not an http:\/\/ or https:\/\/ URL/,
  )
  const userinfo = await karpctl(doctor, { ...aws, AWS_ENDPOINT_URL_STS: 'http://me:hunter2@127.0.0.1:9' })
  refused(userinfo, /AWS_ENDPOINT_URL_STS "http:\/\/127\.0\.0\.1:9" carries a user name or password/)
  assert.doesNotMatch(userinfo.stderr, /hunter2/)
  // Both AWS and the Kubernetes API there: whichever is asked first names itself.
  const kubeconfig = join(dir, 'kubeconfig-ssh')
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: "http://127.0.0.1:${port}"}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\nusers: [{name: d, user: {token: x}}]\ncurrent-context: d\n`,
  )
  const notHttp = await karpctl(doctor, {
    ...aws,
    KUBECONFIG: kubeconfig,
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  })
  refused(
    notHttp,
    new RegExp(
      `(AWS [A-Z]+|the Kubernetes API) at http://127\\.0\\.0\\.1:${port}.* answered ([A-Za-z]+ )?with something that is not HTTP`,
    ),
  )
  assert.doesNotMatch(notHttp.stderr, /karpctl could not run/)
})

test('tenant list --json with stdout closed: exit 2 and the error line on stderr, not silence', async () => {
  const r = await karpctl(
    ['tenant', 'list', '--json', '--cluster', 'demo', '--region', 'us-west-2'],
    {},
    {
      after: '>&-',
    },
  )
  refused(r, /^Error: (no kubeconfig found|no AWS credentials found)/)
})

// ---- a credential source that never finishes (issue 36 §4, "from the earlier suites") ----

/** A kubeconfig whose API is port 9 (discard) on 127.0.0.1: nothing listens there. */
function closedKubeconfig(): string {
  const path = join(dir, 'kubeconfig-port9')
  writeFileSync(
    path,
    'apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: "http://127.0.0.1:9"}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\nusers: [{name: d, user: {token: x}}]\ncurrent-context: d\n',
  )
  return path
}

/** Whether `pid` still runs (a zombie no parent reaps has ended: its state is Z). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

test('a credential_process that never exits: every command ends in one line naming the profile and the command (redacted), with no --timeout, and the process is stopped', async () => {
  const live = ['--cluster', 'demo', '--region', 'us-west-2']
  const commands = [
    ['install'],
    ['install', '--dry-run'],
    ['doctor'],
    ['upgrade', '--dry-run'],
    ['teardown', '--dry-run'],
    ['tenant', 'add', 'acme', '--dry-run'],
    ['tenant', 'remove', 'acme', '--dry-run'],
    ['tenant', 'list', '--json'],
  ]
  for (const [n, command] of commands.entries()) {
    // A real script, run by the SDK as `/bin/sh -c …`: it says who it is, then waits for ever.
    const pidFile = join(dir, `creds-${n}.pid`)
    const script = join(dir, `creds-${n}.sh`)
    writeFileSync(script, `#!/bin/sh\necho $$ > ${pidFile}\nwhile :; do sleep 1; done\n`, { mode: 0o755 })
    const config = join(dir, `aws-config-${n}`)
    writeFileSync(config, `[profile hangs]\ncredential_process = ${script} --password hunter2\n`)
    const r = await karpctl([...command, ...live, '--profile', 'hangs'], {
      AWS_CONFIG_FILE: config,
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      KUBECONFIG: closedKubeconfig(),
      KARPCTL_CREDENTIALS_TIMEOUT: '1',
    })
    const pid = Number(readFileSync(pidFile, 'utf8'))
    try {
      if (command.includes('--json')) {
        assert.equal(r.code, 2, r.stdout)
        assert.equal(JSON.parse(r.stdout).error.code, 'CREDENTIALS_TIMEOUT')
      } else
        refused(
          r,
          /^Error: AWS credentials of profile "hangs" were not resolved within 1 s: its credential_process ".*creds-\d\.sh --password \[REDACTED\]" never finished; run it by hand to see why, .* KARPCTL_CREDENTIALS_TIMEOUT=<seconds>$/,
        )
      assert.doesNotMatch(r.stdout + r.stderr, /hunter2/)
      // Stopped by karpctl before it exited: nothing of the run outlives it.
      for (let i = 0; i < 50 && running(pid); i++) await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(
        running(pid),
        false,
        `${command.join(' ')}: the credential_process ${pid} was left running`,
      )
    } finally {
      if (running(pid)) process.kill(pid, 'SIGKILL')
    }
  }
})

test('a web identity token exchange that never answers is bounded and named; KARPCTL_CREDENTIALS_TIMEOUT is checked', async (t) => {
  // STS on 127.0.0.1 accepts the connection and never answers.
  const silent = net.createServer((s) => s.on('error', () => {}))
  silent.listen(0, '127.0.0.1')
  await new Promise((resolve) => silent.once('listening', resolve))
  t.after(() => silent.close())
  const token = join(dir, 'web-identity-token')
  writeFileSync(token, 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n')
  const env = {
    AWS_WEB_IDENTITY_TOKEN_FILE: token,
    AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/web',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`,
    KUBECONFIG: closedKubeconfig(),
  }
  const doctor = ['doctor', '--cluster', 'demo', '--region', 'us-west-2']
  refused(
    await karpctl(doctor, { ...env, KARPCTL_CREDENTIALS_TIMEOUT: '1.5' }),
    /^Error: AWS credentials of the default chain were not resolved within 1\.5 s: web identity \(AWS_WEB_IDENTITY_TOKEN_FILE ".*web-identity-token"\) never finished; check the network and any proxy/,
  )
  for (const bad of ['0', 'soon'])
    refused(
      await karpctl(doctor, { ...env, KARPCTL_CREDENTIALS_TIMEOUT: bad }),
      new RegExp(
        `^Error: KARPCTL_CREDENTIALS_TIMEOUT "${bad}" is not a number of seconds from 0\\.1 to 3600`,
      ),
    )
})

test('why with a Kubernetes API that refuses the connection: one line, exit 2, no unhandled rejection and its stack', async () => {
  const aws = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'x'.repeat(40) }
  for (const target of [['web'], ['--all-pending'], ['deployment/web']])
    refused(
      await karpctl(['why', ...target, '--cluster', 'demo', '--region', 'us-west-2'], {
        ...aws,
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
        KUBECONFIG: closedKubeconfig(),
      }),
      /^Error: the Kubernetes API at http:\/\/127\.0\.0\.1:9 \(kube context "d"\) refused the connection/,
    )
})
