// The built CLI (`node bin/run.js`, after `npm run build`) fed bad input the way a new user would:
// flags, files, environment, and servers on 127.0.0.1 that misbehave — one that accepts the connection
// and never answers, one that answers 401 (or 403) to everything, one that refuses. Every case must end
// with exit 2 and one line on stderr (`Error: …`), or with --json one `{"error": {"code", "message"}}`
// object on stdout, never a stack trace, never a control character from the input, and never a hang.
import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  closeSync,
  openSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { stringify } from 'yaml'
import { repoRoot } from '../helpers/fixtures.js'
import { isolatedEnv } from '../helpers/cli-env.js'

interface Result {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

/** No case may take longer than this: past it, the CLI is killed and the case fails as a hang. */
const HANG_MS = 45_000

let dir: string
const servers: { close(): void }[] = []
const sockets: net.Socket[] = []
type Server =
  | 'silent'
  | 'refused'
  | 'kube401'
  | 'kube403'
  | 'kubeAnonymous'
  | 'aws'
  | 'aws401'
  | 'aws500'
  | 'awsHtml'
  | 'awsRedirect'
  | 'kubeHtml'
  | 'kubeNull'
  | 'kubeText500'
const url = {} as Record<Server, string>

const listen = async (server: net.Server | http.Server): Promise<string> => {
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  servers.push(server)
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`
}

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code })

/** A Kubernetes API that answers every request with `answer` (the version aside, when `version`). */
function kubeServer(code: number, reason: string, message: string, version = false) {
  return http.createServer((req, res) => {
    if (version && req.url === '/version') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ gitVersion: 'v1.34.1' }))
    }
    res.writeHead(code, { 'content-type': 'application/json' })
    res.end(status(code, reason, message))
  })
}

/**
 * Just enough AWS for a run to get past its first call: STS says who we are; `ghost` is a cluster that
 * does not exist; everything else is denied (each read then fails as data, as with a narrow policy).
 */
function awsServer() {
  return http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      if (body.includes('Action=GetCallerIdentity')) {
        res.writeHead(200, { 'content-type': 'text/xml' })
        return res.end(
          '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>' +
            '<Arn>arn:aws:iam::123456789012:user/test</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>' +
            '</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>',
        )
      }
      if (req.method === 'GET' && req.url?.startsWith('/clusters/ghost')) {
        res.writeHead(404, {
          'content-type': 'application/json',
          'x-amzn-errortype': 'ResourceNotFoundException',
        })
        return res.end(JSON.stringify({ message: 'No cluster found for name: ghost.' }))
      }
      if ((req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')) {
        res.writeHead(403, { 'content-type': 'text/xml' })
        return res.end(
          '<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>denied by the test</Message></Error><RequestId>1</RequestId></ErrorResponse>',
        )
      }
      res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' })
      res.end(JSON.stringify({ message: 'denied by the test' }))
    })
  })
}

const STS_IDENTITY =
  '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>' +
  '<Arn>arn:aws:iam::123456789012:user/test</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>' +
  '</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>'

/** AWS where STS answers and every other call gets `answer` (issue 20.6: whose fault it is). */
function awsAnswering(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, sts = true) {
  return http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      if (sts && body.includes('Action=GetCallerIdentity')) {
        res.writeHead(200, { 'content-type': 'text/xml' })
        return res.end(STS_IDENTITY)
      }
      answer(req, res)
    })
  })
}

/** A "Kubernetes API" that answers every request 200 with `body` (a proxy's login page, `null`). */
function kubeAnswering(code: number, type: string, body: string) {
  return http.createServer((_req, res) => {
    res.writeHead(code, { 'content-type': type })
    res.end(body)
  })
}

before(async () => {
  assert.ok(
    existsSync(join(repoRoot, 'dist', 'cli.js')),
    'dist/ is missing: run `npm run build` first (npm test builds before the integration tests)',
  )
  dir = mkdtempSync(join(tmpdir(), 'karpctl-bad-input-'))
  url.silent = await listen(net.createServer((s) => sockets.push(s)))
  const closed = net.createServer()
  url.refused = await listen(closed)
  closed.close()
  url.kube401 = await listen(kubeServer(401, 'Unauthorized', 'Unauthorized'))
  url.kube403 = await listen(
    kubeServer(
      403,
      'Forbidden',
      'forbidden: User "arn:aws:iam::123456789012:user/ci" cannot list this',
      true,
    ),
  )
  url.kubeAnonymous = await listen(
    kubeServer(403, 'Forbidden', 'forbidden: User "system:anonymous" cannot list resource', true),
  )
  url.aws = await listen(awsServer())
  url.aws500 = await listen(
    awsAnswering((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'x-amzn-errortype': 'InternalError' })
      res.end(JSON.stringify({ message: 'We encountered an internal error' }))
    }),
  )
  url.awsHtml = await listen(
    awsAnswering((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end('<html><body><h1>502 Bad Gateway</h1>\u001b[2J</body></html>')
    }, false),
  )
  // Every request sent back to itself: a redirect loop, were it followed.
  url.awsRedirect = await listen(
    awsAnswering((req, res) => {
      res.writeHead(301, { location: `http://${url.awsRedirect}${req.url ?? '/'}` })
      res.end()
    }, false),
  )
  url.kubeHtml = await listen(kubeAnswering(200, 'text/html', '<!doctype html><html>Sign in</html>'))
  url.kubeNull = await listen(kubeAnswering(200, 'application/json', 'null'))
  url.kubeText500 = await listen(kubeAnswering(503, 'text/plain', 'upstream connect error\u001b[2J'))
  url.aws401 = await listen(
    http.createServer((_req, res) => {
      res.writeHead(401)
      res.end('Unauthorized')
    }),
  )
})

after(() => {
  for (const s of sockets) s.destroy()
  for (const s of servers) s.close()
  rmSync(dir, { recursive: true, force: true })
})

// ---------- files the cases use ----------

let fileNo = 0
function file(content: string | Buffer, name = `f-${++fileNo}`): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
function emptyDir(name: string): string {
  const path = join(dir, name)
  mkdirSync(path, { recursive: true })
  return path
}
function fifo(): string {
  const path = join(dir, `fifo-${++fileNo}`)
  execFileSync('mkfifo', [path])
  return path
}
function executable(body: string): string {
  const path = file(`#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

interface KubeconfigOptions {
  server?: string
  user?: Record<string, unknown>
  cluster?: Record<string, unknown>
  current?: string | null
  contextCluster?: string
}
function kubeconfig(o: KubeconfigOptions = {}): string {
  const doc: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'demo',
        cluster: {
          server: o.server ?? `http://${url.kube401}`,
          ...(o.cluster ?? { 'insecure-skip-tls-verify': true }),
        },
      },
    ],
    contexts: [{ name: 'demo', context: { cluster: o.contextCluster ?? 'demo', user: 'demo' } }],
    users: [{ name: 'demo', user: o.user ?? { token: 'not-a-real-token' } }],
  }
  if (o.current !== null) doc['current-context'] = o.current ?? 'demo'
  return file(stringify(doc), `kubeconfig-${++fileNo}`)
}

const healthy = () => join(repoRoot, 'examples', 'healthy.json')
const wrongContent = () => {
  const facts = JSON.parse(readFileSync(healthy(), 'utf8')) as Record<string, unknown>
  facts.kube = {}
  return file(JSON.stringify(facts), `wrong-content-${++fileNo}.json`)
}
/** healthy.json with `edit` applied: content that is wrong in one place. */
const edited = (edit: (f: Record<string, unknown> & { kube: Record<string, unknown> }) => void) => () => {
  const facts = JSON.parse(readFileSync(healthy(), 'utf8')) as Record<string, unknown> & {
    kube: Record<string, unknown>
  }
  edit(facts)
  return file(JSON.stringify(facts), `edited-${++fileNo}.json`)
}
/** healthy.json with its Helm values nested `depth` objects deep (as text: JSON.stringify would overflow). */
const deepSnapshot = (depth: number) => () =>
  file(
    readFileSync(healthy(), 'utf8').replace(
      /"values": \{/,
      `"values": {"deep": ${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},`,
    ),
    `deep-${++fileNo}.json`,
  )
/** A sparse file one byte over the snapshot limit (64 MiB): costs no disk. */
const oversized = () => {
  const path = join(dir, `big-${++fileNo}.json`)
  writeFileSync(path, '{')
  truncateSync(path, 64 * 1024 * 1024 + 1)
  return path
}
/** healthy.json in which every Kubernetes read was denied: most error checks are unknown. */
const kubeDenied = edited((f) => {
  for (const key of Object.keys(f.kube))
    f.kube[key] = {
      ok: false,
      error: { code: 'Forbidden', kind: 'denied', message: 'forbidden by the test', read: `kube:${key}` },
    }
})

const bomb = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'podAnnotations: {x: *e}',
].join('\n')

// ---------- running the CLI ----------

const AWS_KEYS = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'x'.repeat(40) }

function karpctl(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const started = Date.now()
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'run.js'), ...args],
      {
        cwd: dir,
        timeout: HANG_MS,
        killSignal: 'SIGKILL',
        env: isolatedEnv(dir, env),
      },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0
        resolve({ code, stdout, stderr, ms: Date.now() - started })
      },
    )
  })
}

const cliLines = (s: string) =>
  s
    .split('\n')
    .filter((l) => l.trim() !== '')
    .filter((l) => !/^\(node:\d+\)|^\(Use `node --trace-warnings/.test(l))

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

interface Case {
  name: string
  args: () => string[]
  env?: () => Record<string, string>
  /** What the one line (or the JSON message) must say. */
  message: RegExp
  /** The JSON error code, when the case runs with --json. */
  code?: string
  /**
   * false: the line is one line with exit 2, but not yet a clear one (an error nothing classified,
   * reported as "karpctl could not run: …"). Counted apart in the closing numbers.
   */
  clear?: boolean
  /**
   * The run has a report worth reading although it ends with exit 2 (a failed --save-snapshot, a run
   * that could not tell): the report on stdout and the one line on stderr, or with --json the report
   * with an `error` object.
   */
  report?: boolean
}

const live = ['--cluster', 'demo', '--region', 'us-west-2']
/** AWS at `aws` (STS answers, the rest is denied), the kube API as `k` says; both read when the case runs. */
const kubeAnd =
  (k: () => KubeconfigOptions = () => ({}), aws: () => string = () => url.aws) =>
  () => ({
    ...AWS_KEYS,
    AWS_MAX_ATTEMPTS: '1',
    AWS_ENDPOINT_URL: `http://${aws()}`,
    KUBECONFIG: kubeconfig(k()),
  })

const cases: Case[] = [
  // ---- flags ----
  {
    name: 'unknown flag',
    args: () => ['doctor', '--nope'],
    message: /^Nonexistent flag: --nope \(see `karpctl doctor --help`\)$/,
  },
  {
    name: 'unknown flag, --json',
    args: () => ['doctor', '--nope', '--json'],
    message: /Nonexistent flag: --nope/,
    code: 'USAGE',
  },
  {
    name: 'two unknown flags',
    args: () => ['doctor', '--nope', '--worse'],
    message: /Nonexistent flags: --nope, --worse/,
  },
  { name: 'unknown short flag', args: () => ['doctor', '-Z'], message: /Nonexistent flag: -Z/ },
  // ---- doctor --serve ----
  {
    name: '--interval without --serve',
    args: () => ['doctor', '--cluster', 'demo', '--region', 'us-west-2', '--interval', '5m'],
    message: /^--interval goes with --serve: add it, or drop --interval$/,
  },
  {
    name: '--no-events without --serve',
    args: () => ['doctor', '--cluster', 'demo', '--region', 'us-west-2', '--no-events'],
    message: /^--no-events goes with --serve/,
  },
  {
    name: '--serve --interval shorter than 10s',
    args: () => ['doctor', '--serve', '--cluster', 'demo', '--region', 'us-west-2', '--interval', '1s'],
    message: /^--interval "1s" is not a duration from 10s to \d+h \(e\.g\. 30s, 5m, 1h\): fix --interval$/,
  },
  {
    name: '--serve --listen without a port',
    args: () => ['doctor', '--serve', '--cluster', 'demo', '--region', 'us-west-2', '--listen', '127.0.0.1'],
    message: /^--listen "127\.0\.0\.1" is not host:port/,
  },
  {
    name: '--serve with --json',
    args: () => ['doctor', '--serve', '--cluster', 'demo', '--region', 'us-west-2', '--json'],
    message: /--json cannot be combined with --serve/,
    code: 'INVALID_INPUT',
  },
  {
    name: '--output not one of the formats',
    args: () => ['doctor', '--output', 'yaml'],
    message: /Expected --output=yaml to be one of: human, sarif, junit, markdown/,
  },
  {
    name: '--output bad, --json',
    args: () => ['doctor', '-o', 'yaml', '--json'],
    message: /to be one of/,
    code: 'USAGE',
  },
  {
    name: '--cluster without a value',
    args: () => ['doctor', '--cluster'],
    message: /Flag --cluster expects a value/,
  },
  {
    name: '--snapshot without a value',
    args: () => ['doctor', '--snapshot'],
    message: /Flag --snapshot expects a value/,
  },
  {
    name: '--timeout not a number',
    args: () => ['doctor', '--timeout', 'soon'],
    message: /--timeout.*Expected an integer but received: soon/,
  },
  { name: '--timeout 0', args: () => ['doctor', '--timeout', '0'], message: /greater than or equal to 1/ },
  {
    name: 'unknown flag of tenant list',
    args: () => ['tenant', 'list', '--nope'],
    message: /Nonexistent flag: --nope \(see `karpctl tenant list --help`\)/,
  },
  {
    name: 'unknown flag of install, --json',
    args: () => ['install', '--nope', '--json'],
    message: /Nonexistent flag/,
    code: 'USAGE',
  },
  {
    name: 'unknown flag of teardown',
    args: () => ['teardown', '--nope'],
    message: /Nonexistent flag: --nope/,
  },
  {
    name: '--only an unknown id',
    args: () => ['doctor', '--snapshot', healthy(), '--only', 'nope'],
    message: /unknown check id: nope/,
  },
  {
    name: '--only an unknown id, --json',
    args: () => ['doctor', '--snapshot', healthy(), '--only', 'nope', '--json'],
    message: /unknown check id: nope/,
    code: 'UNKNOWN_CHECK',
  },
  {
    name: '--skip an unknown id',
    args: () => ['doctor', '--snapshot', healthy(), '--skip', 'helm-release,nope'],
    message: /unknown check id: nope/,
  },
  {
    name: '--only with a newline',
    args: () => ['doctor', '--snapshot', healthy(), '--only', 'nope\nsecond line'],
    message: /nope\\nsecond line/,
  },
  {
    name: '--fix with --snapshot',
    args: () => ['doctor', '--fix', '--snapshot', healthy()],
    message: /--fix repairs a live cluster/,
  },
  // ---- flags of the commands that plan (issue 20.5): refused before anything is read or planned ----
  ...(
    [
      [
        'install --timeout -1',
        ['install', ...live, '--timeout=-1', '--dry-run'],
        /--timeout.*greater than or equal to 1/,
      ],
      [
        'install --timeout 0',
        ['install', ...live, '--timeout', '0', '--dry-run'],
        /greater than or equal to 1/,
      ],
      [
        'tenant add --timeout past a Node timer',
        ['tenant', 'add', 'acme', '--timeout', '2147484'],
        /less than or equal to 2147483/,
      ],
      [
        'doctor --timeout past a Node timer',
        ['doctor', '--timeout', '2147484'],
        /less than or equal to 2147483/,
      ],
      ['teardown --timeout 0', ['teardown', '--timeout', '0'], /greater than or equal to 1/],
      [
        'install --cpu-limit 2^70',
        ['install', ...live, '--cpu-limit', '1180591620717411303424', '--dry-run'],
        /^--cpu-limit .* is not a whole number of cores/,
      ],
      [
        'tenant add --cpu-limit 2^70',
        ['tenant', 'add', 'acme', '--cpu-limit', '1180591620717411303424'],
        /is not a whole number of cores/,
      ],
      [
        'tenant add --memory-limit 400XYZ',
        ['tenant', 'add', 'acme', '--memory-limit', '400XYZ'],
        /^--memory-limit "400XYZ" is not a Kubernetes quantity/,
      ],
      [
        'tenant add --consolidate-after forever',
        ['tenant', 'add', 'acme', '--consolidate-after', 'forever'],
        /^--consolidate-after "forever" is not a duration/,
      ],
      [
        'tenant add --instance-families *',
        ['tenant', 'add', 'acme', '--instance-families', '*'],
        /no wildcards/,
      ],
      [
        'tenant add --zones of another region',
        ['tenant', 'add', 'acme', ...live, '--zones', 'eu-west-1a'],
        /^--zones "eu-west-1a" is not an availability zone of us-west-2/,
      ],
      [
        'tenant add --tag aws:',
        ['tenant', 'add', 'acme', '--tag', 'aws:createdBy=me'],
        /"aws:createdBy" is reserved/,
      ],
      [
        'tenant add --tag karpctl.io/cluster',
        ['tenant', 'add', 'acme', '--tag', 'karpctl.io/cluster=other', '--json'],
        /"karpctl.io\/cluster" is reserved/,
      ],
      [
        'tenant add --tag key too long',
        ['tenant', 'add', 'acme', '--tag', `${'k'.repeat(129)}=v`],
        /longer than 128 characters/,
      ],
      [
        'tenant add --tag value too long',
        ['tenant', 'add', 'acme', '--tag', `k=${'v'.repeat(257)}`],
        /longer than 256 characters/,
      ],
      [
        'tenant add --policy-arn with ..',
        ['tenant', 'add', 'acme', '--policy-arn', 'arn:aws:iam::123456789012:policy/team/../admin'],
        /is not an IAM policy ARN/,
      ],
    ] as [string, string[], RegExp][]
  ).map(([name, args, message]) => ({ name, args: () => args, message })),
  {
    name: 'install --chart-dir missing',
    args: () => ['install', ...live, '--chart-dir', join(dir, 'no-charts'), '--dry-run'],
    message: /^--chart-dir ".*no-charts" is not a folder/,
  },
  {
    name: 'install --chart-dir with a version out of range',
    args: () => {
      const charts = emptyDir(`charts-${++fileNo}`)
      for (const c of ['karpenter-crd', 'karpenter']) {
        mkdirSync(join(charts, c))
        writeFileSync(join(charts, c, 'Chart.yaml'), 'name: karpenter\nversion: 2.0.0\n')
      }
      return ['install', ...live, '--chart-dir', charts, '--dry-run']
    },
    message: /Chart\.yaml" declares a version karpctl does not install/,
  },
  {
    name: 'install --chart-dir whose Chart.yaml is a FIFO',
    args: () => {
      const charts = emptyDir(`charts-${++fileNo}`)
      mkdirSync(join(charts, 'karpenter-crd'))
      execFileSync('mkfifo', [join(charts, 'karpenter-crd', 'Chart.yaml')])
      return ['install', ...live, '--chart-dir', charts, '--dry-run']
    },
    message: /Chart\.yaml" is a FIFO, not a regular file/,
  },
  // ---- files named by the environment or the kubeconfig (issue 20.1): refused, never a hang ----
  {
    name: 'KUBECONFIG a FIFO',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: fifo() }),
    message: /^kubeconfig ".*fifo-\d+" is a FIFO, not a regular file: fix KUBECONFIG$/,
  },
  {
    name: "the kubeconfig's tokenFile a FIFO",
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ user: { tokenFile: fifo() } }) }),
    message: /^the tokenFile ".*" is a FIFO/,
  },
  {
    name: "the kubeconfig's certificate-authority a device",
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ cluster: { 'certificate-authority': '/dev/zero' } }) }),
    message: /^the certificate-authority "\/dev\/zero" of kube context "demo" is a device/,
  },
  {
    name: 'AWS_CONFIG_FILE a FIFO',
    args: () => ['doctor', ...live],
    env: () => ({ ...kubeAnd()(), AWS_CONFIG_FILE: fifo() }),
    message: /^the AWS config file ".*" is a FIFO, not a regular file: point AWS_CONFIG_FILE/,
  },
  {
    name: 'AWS_SHARED_CREDENTIALS_FILE a FIFO',
    args: () => ['doctor', ...live],
    env: () => ({ ...kubeAnd()(), AWS_SHARED_CREDENTIALS_FILE: fifo() }),
    message: /^the AWS credentials file ".*" is a FIFO/,
  },
  // ---- cluster and region ----
  { name: 'no cluster anywhere', args: () => ['doctor'], message: /which cluster\? pass --cluster/ },
  {
    name: 'no region anywhere',
    args: () => ['doctor', '--cluster', 'demo'],
    message: /which region\? pass --region/,
  },
  {
    name: '--cluster empty',
    args: () => ['doctor', '--cluster', '', '--region', 'us-west-2'],
    message: /which cluster\?/,
  },
  {
    name: '--cluster with a space and !',
    args: () => ['doctor', '--cluster', 'my cluster!', '--region', 'us-west-2'],
    message: /^"my cluster!" is not a valid EKS cluster name/,
  },
  {
    name: '--cluster with a newline',
    args: () => ['doctor', '--cluster', 'demo\nrm -rf /', '--region', 'us-west-2'],
    message: /^"demo\\nrm -rf \/" is not a valid EKS cluster name/,
  },
  {
    name: '--cluster with an escape sequence, --json',
    args: () => ['doctor', '--cluster', 'x\u001b]0;pwned\u0007', '--region', 'us-west-2', '--json'],
    message: /"x\\u001b\]0;pwned\\u0007" is not a valid/,
    code: 'INVALID_CLUSTER',
  },
  {
    name: '--cluster 101 characters',
    args: () => ['doctor', '--cluster', 'a'.repeat(101), '--region', 'us-west-2'],
    message: /is not a valid EKS cluster name/,
  },
  {
    name: 'KARPCTL_CLUSTER invalid',
    args: () => ['doctor', '--region', 'us-west-2'],
    env: () => ({ KARPCTL_CLUSTER: '-bad' }),
    message: /"-bad" is not a valid EKS cluster name/,
  },
  {
    name: '--region not a region',
    args: () => ['doctor', '--cluster', 'demo', '--region', 'nowhere'],
    message: /^"nowhere" is not an AWS region/,
  },
  {
    name: '--region with a newline',
    args: () => ['doctor', '--cluster', 'demo', '--region', 'us-west-2\nFAKE'],
    message: /^"us-west-2\\nFAKE" is not an AWS region/,
  },
  {
    name: 'AWS_REGION not a region',
    args: () => ['doctor', '--cluster', 'demo'],
    env: () => ({ AWS_REGION: 'mars-1' }),
    message: /"mars-1" is not an AWS region/,
  },
  {
    name: '--region bad, --json',
    args: () => ['doctor', '--cluster', 'demo', '--region', 'x', '--json'],
    message: /is not an AWS region/,
    code: 'INVALID_REGION',
  },
  // ---- snapshots ----
  {
    name: 'snapshot does not exist',
    args: () => ['doctor', '--snapshot', join(dir, 'absent.json')],
    message: /does not exist/,
  },
  {
    name: 'snapshot path with a newline',
    args: () => ['doctor', '--snapshot', join(dir, 'a\nb.json')],
    message: /a\\nb\.json/,
  },
  {
    name: 'snapshot not JSON',
    args: () => ['doctor', '--snapshot', file('{"schema": ')],
    message: /is not valid JSON/,
  },
  {
    name: 'snapshot not JSON, --json',
    args: () => ['doctor', '--snapshot', file('{"schema": '), '--json'],
    message: /is not valid JSON/,
    code: 'SNAPSHOT_CORRUPT',
  },
  { name: 'snapshot empty', args: () => ['doctor', '--snapshot', file('')], message: /is not valid JSON/ },
  {
    name: 'snapshot of something else',
    args: () => ['doctor', '--snapshot', file('{"apiVersion":"v1","kind":"List"}')],
    message: /karpctl snapshot/,
  },
  { name: 'snapshot null', args: () => ['doctor', '--snapshot', file('null')], message: /karpctl snapshot/ },
  {
    name: 'snapshot a JSON list',
    args: () => ['doctor', '--snapshot', file('[1,2]')],
    message: /karpctl snapshot/,
  },
  {
    name: 'snapshot of a newer schema',
    args: () => ['doctor', '--snapshot', file('{"schema":"karpctl.facts/v2"}')],
    message: /is an unsupported snapshot version v2 \(this karpctl reads v1\)/,
  },
  {
    name: 'snapshot of a newer schema, --json',
    args: () => ['doctor', '--snapshot', edited((f) => (f.schema = 'karpctl.facts/v7'))(), '--json'],
    message: /unsupported snapshot version v7 \(this karpctl reads v1\)/,
    code: 'SNAPSHOT_VERSION',
  },
  {
    name: 'snapshot incomplete',
    args: () => ['doctor', '--snapshot', file('{"schema":"karpctl.facts/v1","meta":{}}')],
    message: /does not match the karpctl\.facts\/v1 schema: \$(\.meta)? lacks "\w+"/,
  },
  {
    name: 'snapshot a directory',
    args: () => ['doctor', '--snapshot', emptyDir('snapdir')],
    message: /snapdir/,
  },
  {
    name: 'snapshot a FIFO with no writer',
    args: () => ['doctor', '--snapshot', fifo()],
    message: /is a FIFO: pass a regular file/,
  },
  {
    name: 'snapshot a device',
    args: () => ['doctor', '--snapshot', '/dev/zero'],
    message: /"\/dev\/zero" is a device/,
  },
  {
    name: 'snapshot with the right schema and wrong content',
    args: () => ['doctor', '--snapshot', wrongContent()],
    message: /does not match the karpctl\.facts\/v1 schema: \$\.kube lacks "release"/,
  },
  {
    name: 'wrong content, --json',
    args: () => ['doctor', '--snapshot', wrongContent(), '--json'],
    message: /\$\.kube lacks "release"/,
    code: 'SNAPSHOT_INVALID',
  },
  {
    name: 'snapshot: a failed read without its error',
    args: () => ['doctor', '--snapshot', edited((f) => (f.kube.pods = { ok: false }))()],
    message: /\$\.kube\.pods lacks "error"/,
  },
  {
    name: 'snapshot: notes a string',
    args: () => ['doctor', '--snapshot', edited((f) => ((f.meta as Record<string, unknown>).notes = 'x'))()],
    message: /\$\.meta\.notes is a string \("x"\), expected an array/,
  },
  {
    name: 'snapshot: a list where an object goes',
    args: () => ['doctor', '--snapshot', edited((f) => (f.kube.release = { ok: true, value: [] }))()],
    message: /\$\.kube\.release\.value is an array, expected an object or null/,
  },
  {
    name: 'snapshot: a read whose ok is a string',
    args: () => ['doctor', '--snapshot', edited((f) => (f.kube.nodes = { ok: 'yes', value: [] }))()],
    message: /\$\.kube\.nodes\.ok is a string \("yes"\), expected one of true, false/,
  },
  {
    name: 'snapshot: a key with an escape sequence in the wrong path',
    args: () => [
      'doctor',
      '--snapshot',
      edited((f) => ((f.iam as { roles: Record<string, unknown> }).roles['r\u001b[2J'] = { ok: 1 }))(),
    ],
    message: /\$\.iam\.roles\["r\\u001b\[2J"\]\.ok is a number/,
  },
  {
    name: 'snapshot over 64 MiB',
    args: () => ['doctor', '--snapshot', oversized()],
    message: /is 64 MiB, over the 64 MiB a snapshot may be/,
  },
  {
    name: 'snapshot over 64 MiB, --json',
    args: () => ['doctor', '--snapshot', oversized(), '--json'],
    message: /over the 64 MiB/,
    code: 'SNAPSHOT_TOO_LARGE',
  },
  {
    name: 'snapshot nested 100 000 deep',
    args: () => ['doctor', '--snapshot', deepSnapshot(100_000)()],
    message: /nests deeper than 64 levels at \$\.kube\.release\.value\.values\.deep\.a/,
  },
  {
    name: 'snapshot nested 65 deep, --json',
    args: () => ['doctor', '--snapshot', deepSnapshot(65)(), '--json'],
    message: /nests deeper than 64 levels/,
    code: 'SNAPSHOT_TOO_DEEP',
  },
  {
    name: '--save-snapshot into a missing directory: the report, then the line',
    args: () => [
      'doctor',
      '--snapshot',
      healthy(),
      '--save-snapshot',
      join(dir, 'no', 'such', 'dir', 's.json'),
    ],
    message: /^--save-snapshot ".*s\.json" could not be written: its directory does not exist$/,
    report: true,
  },
  {
    name: '--save-snapshot into a missing directory, --json',
    args: () => ['doctor', '--snapshot', healthy(), '--save-snapshot', join(dir, 'nope', 's.json'), '--json'],
    message: /could not be written: its directory does not exist/,
    code: 'SNAPSHOT_SAVE_FAILED',
    report: true,
  },
  {
    name: '--save-snapshot onto a directory',
    args: () => ['doctor', '--snapshot', healthy(), '--save-snapshot', emptyDir('save-onto-dir')],
    message: /^--save-snapshot ".*save-onto-dir" could not be written: it is a directory$/,
    report: true,
  },
  // ---- exit 0 means judged clean, never "could not tell" ----
  {
    name: 'every Kubernetes read denied: could not tell, after the report',
    args: () => ['doctor', '--snapshot', kubeDenied()],
    message: /^could not tell: \d+ of \d+ error checks are unknown \(.*forbidden by the test/,
    report: true,
  },
  {
    name: 'could not tell, --json',
    args: () => ['doctor', '--snapshot', kubeDenied(), '--json'],
    message: /^could not tell: \d+ of \d+ error checks are unknown/,
    code: 'COULD_NOT_TELL',
    report: true,
  },
  {
    name: 'one error check unknown, every other judged: still could not tell',
    args: () => [
      'doctor',
      '--snapshot',
      edited(
        (f) =>
          (f.kube.pods = {
            ok: false,
            error: { code: 'Forbidden', kind: 'denied', message: 'pods forbidden', read: 'kube:pods' },
          }),
      )(),
    ],
    message: /^could not tell: 1 of \d+ error checks are unknown \(controller-ready: .*pods forbidden/,
    report: true,
  },
  {
    name: '--only one check that could not tell',
    args: () => ['doctor', '--snapshot', kubeDenied(), '--only', 'controller-ready'],
    message: /^could not tell: 1 of 1 error checks are unknown/,
    report: true,
  },
  // ---- commands oclif does not know ----
  {
    name: 'a mistyped command',
    args: () => ['doctr'],
    message: /^karpctl has no command "doctr": did you mean `karpctl doctor`\? \(see `karpctl --help`\)$/,
  },
  {
    name: 'a mistyped command, --json',
    args: () => ['doctr', '--snapshot', 'x', '--json'],
    message: /did you mean `karpctl doctor`/,
    code: 'COMMAND_NOT_FOUND',
  },
  {
    name: 'a mistyped subcommand',
    args: () => ['tenant', 'ad', 'acme'],
    message:
      /^karpctl tenant has no command "ad": did you mean `karpctl tenant add`\? \(see `karpctl tenant --help`\)$/,
  },
  {
    name: 'an unknown subcommand of a topic',
    args: () => ['tenant', 'explode'],
    message: /^karpctl tenant has no command "explode" \(see `karpctl tenant --help`\)$/,
  },
  {
    name: 'an unknown command and topic',
    args: () => ['xyzzy', 'plugh'],
    message: /^karpctl has no command "xyzzy" \(see `karpctl --help`\)$/,
  },
  {
    name: 'an unknown flag before any command',
    args: () => ['--nope'],
    message: /^Nonexistent flag: --nope \(see `karpctl --help`\)$/,
  },
  {
    name: 'a --tag key with a space (keys are recorded space-separated on the role)',
    args: () => ['tenant', 'add', 'acme', '--tag', 'cost center=42', '--yes'],
    message: /^--tag key "cost center" has a space: use a key without spaces$/,
  },
  {
    name: "a --tag key of karpctl's own",
    args: () => ['tenant', 'add', 'acme', '--tag', 'karpctl.io/tenant=other', '--yes', '--json'],
    message:
      /^--tag key "karpctl.io\/tenant" is reserved \(karpctl.io\/ and aws: keys\): choose another key$/,
    code: 'INVALID_INPUT',
  },
  {
    name: 'a missing required argument',
    args: () => ['tenant', 'add'],
    message: /^Missing 1 required arg: <name> \(tenant name.*\) \(see `karpctl tenant add --help`\)$/,
  },
  {
    name: 'a missing required argument, --json',
    args: () => ['tenant', 'remove', '--json'],
    message: /^Missing 1 required arg: <name>/,
    code: 'USAGE',
  },
  // ---- values files ----
  {
    name: 'values file does not exist',
    args: () => ['doctor', '--values', join(dir, 'absent.yaml')],
    message: /values file ".*absent\.yaml" does not exist/,
  },
  {
    name: 'values file a YAML list',
    args: () => ['doctor', '--values', file('- a\n- b\n')],
    message: /is a YAML list, not a map of Helm values/,
  },
  {
    name: 'values file a YAML list, --json',
    args: () => ['doctor', '--values', file('- a\n'), '--json'],
    message: /is a YAML list/,
    code: 'VALUES_FILE_INVALID',
  },
  {
    name: 'values file a scalar',
    args: () => ['doctor', '--values', file('hello\n')],
    message: /is a string \("hello"\), not a map/,
  },
  { name: 'values file a number', args: () => ['doctor', '--values', file('3\n')], message: /is a number/ },
  {
    name: 'values file Latin-1',
    args: () => ['doctor', '--values', file(Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]))],
    message: /is not UTF-8 text/,
  },
  {
    name: 'values file UTF-16',
    args: () => [
      'doctor',
      '--values',
      file(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a: 1\n', 'utf16le')])),
    ],
    message: /is not UTF-8 text/,
  },
  {
    name: 'values file binary',
    args: () => ['doctor', '--values', file(Buffer.from([0, 1, 2, 0xff, 0xfe, 0xfd]))],
    message: /is not UTF-8 text/,
  },
  {
    name: 'values file an alias bomb',
    args: () => ['doctor', '--values', file(bomb)],
    message: /refused: its YAML aliases expand more than/,
  },
  {
    name: 'values file malformed YAML',
    args: () => ['doctor', '--values', file('a: [1, 2\n')],
    message: /:\d+: invalid YAML/,
  },
  {
    name: 'values file a directory',
    args: () => ['doctor', '--values', emptyDir('valuesdir')],
    message: /is a directory/,
  },
  { name: 'values file a FIFO', args: () => ['doctor', '--values', fifo()], message: /is a FIFO/ },
  {
    name: 'second values file bad',
    args: () => ['doctor', '--values', file('a: "x"\n'), '--values', file('- x\n')],
    message: /is a YAML list/,
  },
  {
    name: 'values path with a newline',
    args: () => ['doctor', '--values', join(dir, 'v\nw.yaml')],
    message: /v\\nw\.yaml/,
  },
  // ---- Terraform ----
  {
    name: '--terraform does not exist',
    args: () => ['doctor', '--terraform', join(dir, 'no-infra')],
    message: /is not a directory with Terraform files/,
  },
  {
    name: '--terraform a file',
    args: () => ['doctor', '--terraform', file('x')],
    message: /is not a directory/,
  },
  {
    name: '--terraform an empty directory',
    args: () => ['doctor', '--terraform', emptyDir('tf-empty')],
    message: /has no \.tf files/,
  },
  {
    name: '--terraform empty, --json',
    args: () => ['doctor', '--terraform', emptyDir('tf-empty-json'), '--json'],
    message: /has no \.tf files/,
    code: 'TERRAFORM_NO_FILES',
  },
  {
    name: '--terraform without a Karpenter helm_release',
    args: () => {
      const d = emptyDir('tf-other')
      writeFileSync(join(d, 'main.tf'), 'resource "aws_s3_bucket" "b" {\n  bucket = "b"\n}\n')
      return ['doctor', '--terraform', d]
    },
    message: /no helm_release of a Karpenter chart in its 1 \.tf file/,
  },
  {
    name: '--terraform invalid HCL',
    args: () => {
      const d = emptyDir('tf-broken')
      writeFileSync(join(d, 'main.tf'), 'resource "helm_release" "k" {\n  chart = "karpenter"\n')
      return ['doctor', '--terraform', d]
    },
    message: /main\.tf:\d+: invalid HCL/,
  },
  {
    name: '--terraform .tf not UTF-8',
    args: () => {
      const d = emptyDir('tf-latin1')
      writeFileSync(join(d, 'main.tf'), Buffer.from([0x23, 0x20, 0xe9, 0x0a]))
      return ['doctor', '--terraform', d]
    },
    message: /is not UTF-8 text/,
  },
  // ---- kubeconfig ----
  {
    name: 'no kubeconfig',
    args: () => ['doctor', ...live],
    env: () => ({ ...AWS_KEYS }),
    message: /no kubeconfig found at/,
  },
  {
    name: 'KUBECONFIG a directory',
    args: () => ['doctor', ...live],
    env: () => ({ ...AWS_KEYS, KUBECONFIG: emptyDir('kubedir') }),
    message: /^kubeconfig ".*kubedir" is a directory, not a regular file: fix KUBECONFIG$/,
  },
  {
    name: 'kubeconfig not YAML',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: file('clusters: [\n') }),
    message: /is not valid YAML/,
  },
  {
    name: 'kubeconfig an alias bomb',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: file(bomb) }),
    message: /is not valid YAML/,
  },
  {
    name: 'kubeconfig without a current context',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ current: null }) }),
    message: /has no current context: pass --kube-context \(one of: demo\)/,
  },
  {
    name: '--kube-context unknown',
    args: () => ['doctor', ...live, '--kube-context', 'prod'],
    env: () => ({ KUBECONFIG: kubeconfig() }),
    message: /kube context "prod" does not exist/,
  },
  {
    name: '--kube-context with a newline',
    args: () => ['doctor', ...live, '--kube-context', 'a\nb'],
    env: () => ({ KUBECONFIG: kubeconfig() }),
    message: /kube context "a\\nb" does not exist/,
  },
  {
    name: 'context naming a missing cluster',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ contextCluster: 'gone' }) }),
    message: /names cluster "gone", which the kubeconfig lacks/,
  },
  {
    name: 'server without a scheme',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ server: '127.0.0.1:6443', cluster: {} }) }),
    message: /has server "127\.0\.0\.1:6443", which is not an http\(s\) URL/,
  },
  {
    name: 'server host:port only',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ server: 'localhost:6443', cluster: {} }) }),
    message: /has server "localhost:6443", which is not an http\(s\) URL/,
  },
  {
    name: 'server without a scheme, --json',
    args: () => ['doctor', ...live, '--json'],
    env: () => ({ KUBECONFIG: kubeconfig({ server: 'kube.example', cluster: {} }) }),
    message: /not an http\(s\) URL/,
    code: 'BAD_KUBECONFIG',
  },
  {
    // Used as kubectl uses it (a `kubectl proxy`): the run reaches the server, which says 401.
    name: 'http:// server without insecure-skip-tls-verify, 401',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ cluster: {} })),
    message: /^the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ rejected/,
  },
  {
    name: 'exec plugin not installed',
    args: () => ['doctor', ...live],
    env: () => ({
      KUBECONFIG: kubeconfig({
        user: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'no-such-aws-cli' } },
      }),
    }),
    message: /credential plugin .* failed/,
  },
  {
    name: 'exec plugin fails',
    args: () => ['doctor', ...live],
    env: () => ({
      KUBECONFIG: kubeconfig({
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1beta1',
            command: executable('echo "token expired: secret-xyz" >&2; exit 1'),
          },
        },
      }),
    }),
    message: /credential plugin .* failed: it exited with code 1;/,
  },
  {
    name: 'exec plugin prints no JSON',
    args: () => ['doctor', ...live],
    env: () => ({
      KUBECONFIG: kubeconfig({
        user: {
          exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: executable('echo hello') },
        },
      }),
    }),
    message: /printed no ExecCredential JSON/,
  },
  {
    name: 'tokenFile missing',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig({ user: { tokenFile: join(dir, 'no-token') } }) }),
    message: /^the tokenFile ".*no-token" does not exist: fix the kubeconfig$/,
  },
  // ---- AWS ----
  {
    name: 'no AWS credentials',
    args: () => ['doctor', ...live],
    env: () => ({ KUBECONFIG: kubeconfig() }),
    message: /no AWS credentials found/,
  },
  {
    name: 'AWS profile that does not exist',
    args: () => ['doctor', ...live, '--profile', 'nope'],
    env: () => ({ KUBECONFIG: kubeconfig() }),
    message: /no AWS credentials found \(profile nope\)/,
  },
  {
    name: 'AWS profile with a newline',
    args: () => ['doctor', ...live, '--profile', 'a\nb'],
    env: () => ({ KUBECONFIG: kubeconfig() }),
    message: /profile a\\nb/,
  },
  {
    name: 'AWS endpoint accepts and never answers',
    args: () => ['doctor', ...live, '--timeout', '8'],
    env: kubeAnd(undefined, () => url.silent),
    message:
      /^AWS (STS|EKS|IAM|EC2|SQS|EventBridge) at http:\/\/127\.0\.0\.1:\d+ did not answer \w+ within 2 s/,
  },
  {
    name: 'AWS endpoint never answers, --json',
    args: () => ['doctor', ...live, '--timeout', '8', '--json'],
    env: kubeAnd(undefined, () => url.silent),
    message: /did not answer/,
    code: 'AWS_TIMEOUT',
  },
  {
    name: 'AWS endpoint refuses',
    args: () => ['doctor', ...live],
    env: kubeAnd(undefined, () => url.refused),
    message: /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED/,
  },
  {
    name: 'AWS endpoint answers 401 to everything',
    args: () => ['doctor', ...live],
    env: kubeAnd(undefined, () => url.aws401),
    message:
      /^AWS STS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 401 to GetCallerIdentity with an answer that is not an AWS error/,
  },
  {
    name: 'EKS cluster that does not exist',
    args: () => ['doctor', '--cluster', 'ghost', '--region', 'us-west-2'],
    env: kubeAnd(),
    message: /EKS cluster "ghost" not found in us-west-2/,
  },
  // ---- Kubernetes API ----
  {
    name: 'kube API accepts and never answers',
    args: () => ['doctor', ...live, '--timeout', '6'],
    env: kubeAnd(() => ({ server: `https://${url.silent}` })),
    message:
      /^the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ \(kube context "demo"\) did not answer within 2 s/,
  },
  {
    name: 'kube API never answers, --json',
    args: () => ['doctor', ...live, '--timeout', '6', '--json'],
    env: kubeAnd(() => ({ server: `https://${url.silent}` })),
    message: /did not answer/,
    code: 'KUBE_TIMEOUT',
  },
  {
    name: 'kube API refuses the connection',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ server: `https://${url.refused}` })),
    message:
      /^the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ \(kube context "demo"\) refused the connection: nothing listens there \(ECONNREFUSED\)/,
  },
  {
    name: 'kube API refuses, --json',
    args: () => ['doctor', ...live, '--json'],
    env: kubeAnd(() => ({ server: `https://${url.refused}` })),
    message: /refused the connection/,
    code: 'KUBE_UNREACHABLE',
  },
  {
    name: 'kube API answers 401 to everything',
    args: () => ['doctor', ...live],
    env: kubeAnd(),
    message:
      /rejected the credentials of kube context "demo" \(401 Unauthorized\): refresh them .*aws eks update-kubeconfig.*aws eks get-token/,
  },
  {
    name: 'kube 401, --json',
    args: () => ['doctor', ...live, '--json'],
    env: kubeAnd(),
    message: /401 Unauthorized/,
    code: 'KUBE_UNAUTHORIZED',
  },
  {
    name: 'kube 401 with an EKS ARN context',
    args: () => ['doctor', '--region', 'us-west-2'],
    env: () => ({
      ...kubeAnd()(),
      KUBECONFIG: file(
        readFileSync(kubeconfig(), 'utf8').replaceAll(
          'demo',
          'arn:aws:eks:us-west-2:123456789012:cluster/demo',
        ),
      ),
    }),
    message: /aws eks update-kubeconfig --name demo --region us-west-2/,
  },
  {
    name: 'kube 403 to every read',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ server: `http://${url.kube403}` })),
    message: /denied every read to kube context "demo" \(Forbidden/,
  },
  {
    name: 'kube 403 to system:anonymous',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ server: `http://${url.kubeAnonymous}` })),
    message: /403: it treats them as system:anonymous/,
  },
  {
    name: 'kube server URL with user:password, 401',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ server: `http://admin:hunter2@${url.kube401}` })),
    message: /^the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ rejected/,
  },
  {
    name: 'tenant list, kube 401',
    args: () => ['tenant', 'list', ...live],
    env: kubeAnd(),
    message: /401 Unauthorized/,
  },
  // ---- whose fault it is (issue 20.6): each answer named with its endpoint and what it was ----
  {
    name: 'AWS 5xx with a JSON body, install',
    args: () => ['install', ...live, '--dry-run'],
    env: kubeAnd(undefined, () => url.aws500),
    message:
      /^AWS EKS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 500 to DescribeCluster: We encountered an internal error \(InternalError\) — the endpoint's side; retry later$/,
  },
  {
    name: 'AWS 5xx with a JSON body, install --json',
    args: () => ['install', ...live, '--dry-run', '--json'],
    env: kubeAnd(undefined, () => url.aws500),
    message: /answered HTTP 500 to DescribeCluster/,
    code: 'AWS_SERVER_ERROR',
  },
  {
    name: "a proxy's HTML 502 for AWS, tenant remove",
    args: () => ['tenant', 'remove', 'acme', ...live, '--dry-run'],
    env: kubeAnd(
      () => ({ server: `http://${url.kube403}` }),
      () => url.awsHtml,
    ),
    message: /^AWS STS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 502 to GetCallerIdentity with an HTML page/,
  },
  {
    name: "a proxy's HTML 502 for AWS, doctor",
    args: () => ['doctor', ...live],
    env: kubeAnd(undefined, () => url.awsHtml),
    message:
      /^AWS STS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 502 to GetCallerIdentity with an HTML page \(a proxy, or an endpoint that is not AWS\?\): retry later, or check HTTPS_PROXY and AWS_ENDPOINT_URL$/,
  },
  {
    name: "a proxy's HTML 502 for AWS, teardown --json",
    args: () => ['teardown', ...live, '--dry-run', '--json'],
    env: kubeAnd(
      () => ({ server: `http://${url.kube403}` }),
      () => url.awsHtml,
    ),
    message: /answered HTTP 502 to \w+ with an HTML page/,
    code: 'AWS_BAD_ANSWER',
  },
  {
    name: 'an AWS endpoint in a redirect loop, install',
    args: () => ['install', ...live, '--dry-run'],
    env: kubeAnd(undefined, () => url.awsRedirect),
    message:
      /^AWS EKS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 301 to DescribeCluster with a redirect to http:\/\/127\.0\.0\.1:\d+\/clusters\/demo: AWS does not redirect API calls/,
  },
  {
    name: 'an AWS endpoint in a redirect loop, doctor',
    args: () => ['doctor', ...live],
    env: kubeAnd(undefined, () => url.awsRedirect),
    message: /^AWS STS at http:\/\/127\.0\.0\.1:\d+ answered HTTP 301 to GetCallerIdentity with a redirect/,
  },
  {
    name: 'a Kubernetes API answering an HTML page, teardown',
    args: () => ['teardown', ...live, '--dry-run'],
    env: kubeAnd(() => ({ server: `http://${url.kubeHtml}` })),
    message:
      /^the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ answered HTTP 200 to GET \/api\/v1\/secrets\S* with an HTML page, not an API object \(a proxy\?\)/,
  },
  {
    name: 'a Kubernetes API answering null, tenant list',
    args: () => ['tenant', 'list', ...live],
    env: kubeAnd(() => ({ server: `http://${url.kubeNull}` })),
    message:
      /^cannot read the Karpenter Helm release of cluster demo: the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ answered HTTP 200 to GET \S+ with JSON null, not an API object/,
  },
  {
    name: 'a Kubernetes API answering null, doctor: unknown with the reason, no TypeError',
    args: () => ['doctor', ...live],
    env: kubeAnd(() => ({ server: `http://${url.kubeNull}` })),
    message: /^could not tell: .*NotAnApiAnswer — the Kubernetes API at http/,
    report: true,
  },
  {
    name: 'a Kubernetes API answering an HTML page, doctor --json',
    args: () => ['doctor', ...live, '--json'],
    env: kubeAnd(() => ({ server: `http://${url.kubeHtml}` })),
    message: /^could not tell/,
    report: true,
  },
  {
    name: "a proxy's plain-text 503 for the Kubernetes API, teardown",
    args: () => ['teardown', ...live, '--dry-run'],
    env: kubeAnd(() => ({ server: `http://${url.kubeText500}` })),
    message:
      /^the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ answered HTTP 503 to GET \S+: upstream connect error\\u001b\[2J: retry later/,
  },
  // ---- the bound on the reads of the commands that apply (issue 20.2) ----
  ...(['install', 'teardown', 'tenant add acme', 'tenant remove acme'] as const).map((command): Case => ({
    name: `${command}: a credential_process that never exits, ended by --timeout`,
    args: () => [...command.split(' '), ...live, '--dry-run', '--timeout', '3'],
    env: () => ({
      AWS_PROFILE: 'hangs',
      AWS_CONFIG_FILE: file(`[profile hangs]\ncredential_process = ${executable('sleep 30')}\n`),
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL: `http://${url.aws}`,
      KUBECONFIG: kubeconfig({ server: `http://${url.kube403}` }),
    }),
    message: /^karpctl did not finish reading the cluster within 3 s \(--timeout\)/,
  })),
  {
    name: 'install: an exec plugin that hangs, ended by --timeout before its own 30 s',
    args: () => ['install', ...live, '--dry-run', '--timeout', '3'],
    env: () => ({
      KUBECONFIG: kubeconfig({
        user: {
          exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: executable('sleep 20') },
        },
      }),
    }),
    message: /^karpctl did not finish reading the cluster within 3 s \(--timeout\)/,
  },
  // ---- the overall bound ----
  {
    name: 'an exec plugin that hangs, ended by --timeout',
    args: () => ['doctor', ...live, '--timeout', '3'],
    env: () => ({
      KUBECONFIG: kubeconfig({
        user: {
          exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: executable('sleep 20') },
        },
      }),
    }),
    message: /^karpctl did not finish within 3 s \(--timeout\)/,
  },
]

const outcome = new Map<string, 'clear' | 'one-line'>()

test(
  `bad input: ${cases.length} cases, each exit 2 with one line (or one JSON error), no stack, no hang`,
  { concurrency: 4 },
  async (t) => {
    assert.ok(cases.length >= 60, `${cases.length} cases`)
    const runs = cases.map((c) =>
      t.test(c.name, async () => {
        const args = c.args()
        const r = await karpctl(args, c.env?.() ?? {})
        const shown = `exit ${r.code} after ${r.ms} ms\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
        assert.notEqual(r.code, null, `hung (killed after ${HANG_MS} ms)\n${shown}`)
        assert.equal(r.code, 2, shown)
        assert.doesNotMatch(r.stdout + r.stderr, /^\s+at .*:\d+:\d+\)?$/m, `a stack trace\n${shown}`)
        assert.doesNotMatch(
          r.stdout + r.stderr,
          CONTROL,
          `a control character reached the terminal\n${shown}`,
        )
        let message: string
        if (args.includes('--json')) {
          const doc = JSON.parse(r.stdout) as { error?: { code?: unknown; message?: unknown } }
          if (c.report) {
            // The report, with the error that ended the run.
            assert.equal((doc as { schema?: unknown }).schema, 'karpctl.report/v1', shown)
            assert.ok(Array.isArray((doc as { checks?: unknown }).checks), shown)
          } else assert.deepEqual(Object.keys(doc), ['error'], shown)
          assert.deepEqual(Object.keys(doc.error ?? {}).sort(), ['code', 'message'], shown)
          assert.equal(typeof doc.error?.code, 'string')
          assert.equal(typeof doc.error?.message, 'string')
          message = doc.error?.message as string
          if (c.code) assert.equal(doc.error?.code, c.code, shown)
          assert.deepEqual(cliLines(r.stderr), [], `nothing on stderr with --json\n${shown}`)
        } else {
          const lines = cliLines(r.stderr)
          assert.equal(lines.length, 1, `one line on stderr\n${shown}`)
          assert.match(lines[0] as string, /^Error: /, shown)
          if (c.report) assert.match(r.stdout, /\d+ checks: \d+ passed/, `the report on stdout\n${shown}`)
          else assert.equal(r.stdout, '', shown)
          message = (lines[0] as string).slice('Error: '.length)
        }
        assert.ok(!message.includes('\n'), 'one line')
        assert.match(message, c.message, shown)
        assert.doesNotMatch(message, /hunter2|secret-xyz/, 'no secret in the message')
        const clear = c.clear !== false && !/^karpctl could not run/.test(message)
        outcome.set(c.name, clear ? 'clear' : 'one-line')
      }),
    )
    await Promise.all(runs)
    const clear = [...outcome.values()].filter((v) => v === 'clear').length
    t.diagnostic(
      `${cases.length} bad inputs; ${outcome.size} end with exit 2 and one line (or one JSON error), ${clear} of them a clear one`,
    )
  },
)

test('--debug prints the one line and then the stack it promises', async () => {
  // (The unexpected-error path, "karpctl could not run: …", is test/unit/base-command.test.ts: no bad
  // input of this suite reaches it any more.)
  const r = await karpctl(['doctor', '--snapshot', wrongContent(), '--debug'])
  assert.equal(r.code, 2, r.stderr)
  const lines = cliLines(r.stderr)
  assert.match(lines[0] as string, /^Error: snapshot .* does not match the karpctl\.facts\/v1 schema/)
  assert.match(r.stderr, /^\s+at .+:\d+:\d+\)?$/m, 'the stack')
})

test('an unknown flag prints one line and a pointer to --help, never the whole help', async () => {
  const r = await karpctl(['doctor', '--snapshot', healthy(), '--verbos'])
  assert.equal(r.code, 2)
  assert.deepEqual(cliLines(r.stderr), ['Error: Nonexistent flag: --verbos (see `karpctl doctor --help`)'])
  assert.doesNotMatch(r.stderr, /USAGE|FLAGS|\$ karpctl/)
})

// ---- stdout that cannot take the output (issue 20.6) ----

/** The CLI with stdout's reading end closed before it writes: the reader of `| head` gone. */
function closedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'run.js'), ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    const kill = setTimeout(() => child.kill('SIGKILL'), HANG_MS)
    child.on('close', (code) => {
      clearTimeout(kill)
      resolve({ code, stderr })
    })
  })
}

test('a closed stdout (`| head`) ends the run quietly with 141, as a program SIGPIPE ends', async () => {
  for (const args of [
    ['doctor', '--snapshot', healthy(), '--verbose'],
    ['doctor', '--snapshot', healthy(), '--json'],
    ['doctor', '--list'],
  ]) {
    const r = await closedStdout(args)
    assert.equal(r.code, 141, `${args.join(' ')}: ${r.stderr}`)
    assert.deepEqual(cliLines(r.stderr), [], args.join(' '))
  }
})

test(
  'a full stdout (ENOSPC) is one line on stderr and exit 74, never a stack',
  { skip: !existsSync('/dev/full') },
  async () => {
    for (const args of [
      ['doctor', '--snapshot', healthy(), '--verbose'],
      ['doctor', '--snapshot', healthy(), '--json'],
    ]) {
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const full = openSync('/dev/full', 'w')
        const child = spawn(process.execPath, [join(repoRoot, 'bin', 'run.js'), ...args], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1' },
          stdio: ['ignore', full, 'pipe'],
        })
        closeSync(full)
        let stderr = ''
        child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
        child.on('close', (code) => resolve({ code, stderr }))
      })
      assert.equal(r.code, 74, r.stderr)
      assert.deepEqual(cliLines(r.stderr), [
        'Error: karpctl could not write its output to stdout (ENOSPC: no space left on the device): the output is incomplete; free space or redirect it elsewhere, and run again',
      ])
    }
  },
)
