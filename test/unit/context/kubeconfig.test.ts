// The kubeconfig reader against real files in a temp dir: merge order, context selection, every
// credential kind (inline, files relative to the kubeconfig, exec plugins) and the one-line errors.
// Credentials are asserted as they reach a request: the options @kubernetes/client-node's KubeConfig
// gives KubeClient (Authorization header, CA, client certificate and key, rejectUnauthorized).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { after, afterEach, before, beforeEach, test } from 'node:test'
import { stringify } from 'yaml'
import {
  currentContextName,
  refreshHint,
  resolveKubeCredentials,
  type KubeCredentials,
} from '../../../src/context/kubeconfig.js'
import { EnvironmentError } from '../../../src/errors.js'

let root: string
let caseDir: string
let caseNo = 0
const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME }

before(() => {
  root = mkdtempSync(join(tmpdir(), 'karpctl-kubeconfig-'))
})
after(() => rmSync(root, { recursive: true, force: true }))

beforeEach(() => {
  caseDir = join(root, `case-${++caseNo}`)
  mkdirSync(caseDir)
})
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

interface Entry {
  name: string
  [k: string]: unknown
}
interface Doc {
  'current-context'?: string
  contexts?: Entry[]
  clusters?: Entry[]
  users?: Entry[]
}

/** Writes a kubeconfig at `rel` under this test's dir and returns its absolute path. */
function writeConfig(rel: string, doc: Doc | string): string {
  const path = join(caseDir, rel)
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, typeof doc === 'string' ? doc : stringify({ apiVersion: 'v1', kind: 'Config', ...doc }))
  return path
}

const useKubeconfig = (...paths: string[]) => {
  process.env.KUBECONFIG = paths.join(delimiter)
}

const context = (name: string, cluster: string, user: string, namespace?: string): Entry => ({
  name,
  context: { cluster, user, ...(namespace ? { namespace } : {}) },
})
const cluster = (name: string, server: string, extra: Record<string, unknown> = {}): Entry => ({
  name,
  cluster: { server, ...extra },
})
const user = (name: string, fields: Record<string, unknown>): Entry => ({ name, user: fields })

/** Runs `fn` and returns the EnvironmentError it rejects with, failing on anything else. */
async function envError(fn: () => Promise<unknown> | unknown): Promise<EnvironmentError> {
  try {
    await fn()
  } catch (err) {
    assert.ok(err instanceof EnvironmentError, `expected an EnvironmentError, got ${String(err)}`)
    return err
  }
  assert.fail('expected an EnvironmentError, but nothing was thrown')
}

const b64 = (s: string) => Buffer.from(s).toString('base64')

/** What the next request is sent with, from the context's credentials. */
async function wire(creds: KubeCredentials) {
  const o = await creds.requestOptions()
  const auth = o.headers.Authorization
  return {
    token: auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : auth,
    ca: o.ca?.toString(),
    cert: o.cert?.toString(),
    key: o.key?.toString(),
    insecure: !o.rejectUnauthorized,
    options: o,
  }
}

/** An executable shell script in this test's dir. */
function script(name: string, body: string): string {
  const path = join(caseDir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

test('KUBECONFIG with two files: first wins per name, later files add new names', async () => {
  const first = writeConfig('a/config', {
    'current-context': 'dev',
    contexts: [context('dev', 'dev-cluster', 'dev-user')],
    clusters: [cluster('dev-cluster', 'https://first.example')],
    users: [user('dev-user', { token: 'first-token' })],
  })
  const second = writeConfig('b/config', {
    'current-context': 'prod',
    contexts: [
      context('dev', 'other-cluster', 'other-user', 'shadowed'),
      context('prod', 'prod-cluster', 'prod-user', 'karpenter'),
    ],
    clusters: [
      cluster('dev-cluster', 'https://second.example'),
      cluster('prod-cluster', 'https://prod.example/'),
    ],
    users: [user('dev-user', { token: 'second-token' }), user('prod-user', { token: 'prod-token' })],
  })
  useKubeconfig(first, second)

  assert.equal(currentContextName(), 'dev')
  const dev = await resolveKubeCredentials()
  assert.deepEqual(
    {
      server: dev.server,
      token: (await wire(dev)).token,
      contextName: dev.contextName,
      namespace: dev.namespace,
    },
    { server: 'https://first.example', token: 'first-token', contextName: 'dev', namespace: undefined },
  )
  const prod = await resolveKubeCredentials('prod')
  assert.deepEqual(
    {
      server: prod.server,
      token: (await wire(prod)).token,
      contextName: prod.contextName,
      namespace: prod.namespace,
    },
    // the trailing slash of the server is dropped
    { server: 'https://prod.example', token: 'prod-token', contextName: 'prod', namespace: 'karpenter' },
  )
})

test('current-context comes from the first file that sets one', async () => {
  const first = writeConfig('a/config', { contexts: [context('one', 'c', 'u')] })
  const second = writeConfig('b/config', {
    'current-context': 'two',
    contexts: [context('two', 'c', 'u')],
    clusters: [cluster('c', 'https://c.example')],
    users: [user('u', { token: 't' })],
  })
  useKubeconfig(first, second)
  assert.equal(currentContextName(), 'two')
  assert.equal((await resolveKubeCredentials()).contextName, 'two')
})

test('a missing file in KUBECONFIG is skipped', async () => {
  const real = writeConfig('config', {
    'current-context': 'ctx',
    contexts: [context('ctx', 'c', 'u')],
    clusters: [cluster('c', 'https://c.example')],
    users: [user('u', { token: 't' })],
  })
  useKubeconfig(join(caseDir, 'absent'), real)
  const creds = await resolveKubeCredentials()
  assert.equal(creds.server, 'https://c.example')
  assert.equal((await wire(creds)).token, 't')
})

test('--kube-context picks a context other than the current one', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'a',
      contexts: [context('a', 'ca', 'ua'), context('b', 'cb', 'ub')],
      clusters: [cluster('ca', 'https://a.example'), cluster('cb', 'https://b.example')],
      users: [user('ua', { token: 'token-a' }), user('ub', { token: 'token-b' })],
    }),
  )
  const creds = await resolveKubeCredentials('b')
  assert.equal(creds.contextName, 'b')
  assert.equal(creds.server, 'https://b.example')
  assert.equal((await wire(creds)).token, 'token-b')
})

test('an unknown context is UNKNOWN_KUBE_CONTEXT and lists the available contexts', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'a',
      contexts: [context('a', 'c', 'u'), context('b', 'c', 'u')],
      clusters: [cluster('c', 'https://c.example')],
    }),
  )
  const err = await envError(() => resolveKubeCredentials('nope'))
  assert.equal(err.code, 'UNKNOWN_KUBE_CONTEXT')
  assert.equal(err.message, 'kube context "nope" does not exist: pass --kube-context with one of: a, b')
})

test('a current-context that names no context is UNKNOWN_KUBE_CONTEXT too', async () => {
  useKubeconfig(writeConfig('config', { 'current-context': 'gone', contexts: [context('a', 'c', 'u')] }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'UNKNOWN_KUBE_CONTEXT')
  assert.match(err.message, /"gone" does not exist.*one of: a$/)
})

test('no current context and no --kube-context is NO_KUBE_CONTEXT', async () => {
  useKubeconfig(writeConfig('config', { contexts: [context('a', 'c', 'u')] }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'NO_KUBE_CONTEXT')
  assert.match(err.message, /pass --kube-context \(one of: a\)/)
})

test('a context whose cluster is missing is BAD_KUBECONFIG', async () => {
  useKubeconfig(writeConfig('config', { 'current-context': 'a', contexts: [context('a', 'ghost', 'u')] }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'BAD_KUBECONFIG')
  assert.match(err.message, /names cluster "ghost", which the kubeconfig lacks/)
})

test('no kubeconfig at all is NO_KUBECONFIG naming the paths tried', async () => {
  const a = join(caseDir, 'nope-1')
  const b = join(caseDir, 'nope-2')
  useKubeconfig(a, b)
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'NO_KUBECONFIG')
  assert.ok(err.message.startsWith(`no kubeconfig found at ${a}, ${b}: `), err.message)
  assert.equal((await envError(() => currentContextName())).code, 'NO_KUBECONFIG')
})

test('without KUBECONFIG the default is ~/.kube/config', async () => {
  delete process.env.KUBECONFIG
  process.env.HOME = caseDir
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'NO_KUBECONFIG')
  assert.ok(err.message.startsWith(`no kubeconfig found at ${join(caseDir, '.kube', 'config')}: `))

  writeConfig('.kube/config', {
    'current-context': 'home',
    contexts: [context('home', 'c', 'u')],
    clusters: [cluster('c', 'https://home.example')],
    users: [user('u', { token: 'home-token' })],
  })
  assert.equal((await resolveKubeCredentials()).server, 'https://home.example')
})

test('malformed YAML is BAD_KUBECONFIG with a one-line message naming the file', async () => {
  const path = writeConfig('config', 'apiVersion: v1\nclusters: [unclosed\n  - name: x\nusers: {\n')
  useKubeconfig(path)
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'BAD_KUBECONFIG')
  assert.ok(!err.message.includes('\n'), `message is one line: ${JSON.stringify(err.message)}`)
  assert.ok(err.message.startsWith(`kubeconfig ${path} is not valid YAML (`), err.message)
  assert.match(err.message, /aws eks update-kubeconfig/)
})

test('a kubeconfig whose contexts, clusters or users is not a list says so, not "does not exist … one of: none"', async () => {
  for (const [text, said] of [
    [
      'contexts: {demo: {cluster: demo}}\ncurrent-context: demo\n',
      'contexts is not a list (it is a mapping)',
    ],
    ['clusters: "x"\n', 'clusters is not a list (it is a string)'],
    ['users: 3\n', 'users is not a list (it is a number)'],
  ] as const) {
    const path = writeConfig('config', text)
    useKubeconfig(path)
    const err = await envError(() => resolveKubeCredentials())
    assert.equal(err.code, 'BAD_KUBECONFIG')
    assert.equal(
      err.message,
      `kubeconfig "${path}": ${said}: fix it, or regenerate it with \`aws eks update-kubeconfig\``,
    )
  }
  const path = writeConfig('config', '- a\n- b\n')
  useKubeconfig(path)
  assert.match(
    (await envError(() => resolveKubeCredentials())).message,
    /is a list, not a mapping of clusters/,
  )
})

test('token, client certificate data and CA data are decoded; insecure-skip-tls-verify is honoured', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'x',
      contexts: [context('x', 'c', 'u')],
      clusters: [
        cluster('c', 'https://c.example', {
          'certificate-authority-data': b64('CA PEM'),
          'insecure-skip-tls-verify': true,
        }),
      ],
      users: [
        user('u', {
          token: 'inline-token',
          'client-certificate-data': b64('CERT PEM'),
          'client-key-data': b64('KEY PEM'),
        }),
      ],
    }),
  )
  const w = await wire(await resolveKubeCredentials())
  assert.equal(w.token, 'inline-token')
  assert.equal(w.ca, 'CA PEM')
  assert.equal(w.cert, 'CERT PEM')
  assert.equal(w.key, 'KEY PEM')
  assert.equal(w.insecure, true)
})

test('insecure is false unless set to true', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'x',
      contexts: [context('x', 'c', 'u')],
      clusters: [cluster('c', 'https://c.example')],
      users: [user('u', {})],
    }),
  )
  const w = await wire(await resolveKubeCredentials())
  assert.equal(w.insecure, false)
  assert.equal(w.token, undefined)
  assert.equal(w.ca, undefined)
  assert.equal(w.options.agent, undefined, 'no proxy: the default agent (keep-alive) is used')
})

test('file references resolve relative to the directory of the kubeconfig that defined them', async () => {
  // Two kubeconfigs in different dirs, neither the cwd: the cluster comes from the first, the user from the second.
  const first = writeConfig('first/config', {
    'current-context': 'x',
    contexts: [context('x', 'c', 'u')],
    clusters: [cluster('c', 'https://c.example', { 'certificate-authority': 'pki/ca.crt' })],
  })
  const second = writeConfig('second/config', {
    users: [
      user('u', { tokenFile: 'token.txt', 'client-certificate': 'client.crt', 'client-key': 'client.key' }),
    ],
  })
  mkdirSync(join(caseDir, 'first', 'pki'))
  writeFileSync(join(caseDir, 'first', 'pki', 'ca.crt'), 'CA FROM FILE')
  writeFileSync(join(caseDir, 'second', 'token.txt'), '  token-from-file\n')
  writeFileSync(join(caseDir, 'second', 'client.crt'), 'CERT FROM FILE')
  writeFileSync(join(caseDir, 'second', 'client.key'), 'KEY FROM FILE')
  useKubeconfig(first, second)

  const w = await wire(await resolveKubeCredentials())
  assert.equal(w.ca, 'CA FROM FILE')
  assert.equal(w.token, 'token-from-file')
  assert.equal(w.cert, 'CERT FROM FILE')
  assert.equal(w.key, 'KEY FROM FILE')
})

test('absolute file references are used as they are', async () => {
  const ca = join(caseDir, 'elsewhere-ca.crt')
  writeFileSync(ca, 'ABSOLUTE CA')
  useKubeconfig(
    writeConfig('nested/dir/config', {
      'current-context': 'x',
      contexts: [context('x', 'c', 'u')],
      clusters: [cluster('c', 'https://c.example', { 'certificate-authority': ca })],
      users: [user('u', { token: 't' })],
    }),
  )
  assert.equal((await wire(await resolveKubeCredentials())).ca, 'ABSOLUTE CA')
})

const execCredential = (token: string) =>
  JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    kind: 'ExecCredential',
    status: { token },
  })

const execConfig = (exec: Record<string, unknown>, extraUser: Record<string, unknown> = {}) =>
  writeConfig('config', {
    'current-context': 'eks',
    contexts: [context('eks', 'c', 'u')],
    clusters: [cluster('c', 'https://eks.example')],
    users: [
      user('u', { ...extraUser, exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', ...exec } }),
    ],
  })

test('an exec plugin supplies the token (and overrides a static one)', async () => {
  const plugin = script('get-token', `echo '${execCredential('abc')}'`)
  useKubeconfig(execConfig({ command: plugin }, { token: 'static' }))
  const creds = await resolveKubeCredentials()
  assert.equal((await wire(creds)).token, 'abc')
  assert.equal(creds.server, 'https://eks.example')
})

test('an exec plugin gets its args and env', async () => {
  const plugin = script(
    'get-token',
    `printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s-%s"}}' "$1" "$KARPCTL_TEST_SUFFIX"`,
  )
  useKubeconfig(
    execConfig({
      command: plugin,
      args: ['from-arg'],
      env: [{ name: 'KARPCTL_TEST_SUFFIX', value: 'from-env' }],
    }),
  )
  assert.equal((await wire(await resolveKubeCredentials())).token, 'from-arg-from-env')
})

test('a failing exec plugin is KUBE_CREDENTIALS, one line, and leaks no token', async () => {
  const secret = 'sk-super-secret-token-123'
  const plugin = script(
    'get-token',
    `echo '${execCredential(secret)}'\necho 'error: token ${secret} expired' >&2\nexit 1`,
  )
  useKubeconfig(execConfig({ command: plugin }, { token: 'static-secret-456' }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.ok(!err.message.includes('\n'), `message is one line: ${JSON.stringify(err.message)}`)
  assert.ok(
    err.message.startsWith(`the credential plugin of kube context "eks" (${plugin}) failed: `),
    err.message,
  )
  assert.ok(!err.message.includes(secret), `no plugin token in: ${err.message}`)
  assert.ok(!err.message.includes('static-secret-456'), `no static token in: ${err.message}`)
})

test('an exec plugin that prints no token, or no JSON, is KUBE_CREDENTIALS', async () => {
  const noToken = script(
    'no-token',
    `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{}}'`,
  )
  useKubeconfig(execConfig({ command: noToken }))
  const a = await envError(() => resolveKubeCredentials())
  assert.equal(a.code, 'KUBE_CREDENTIALS')
  // It exited 0: not "failed", not "exited with an error" (issue 20.6).
  assert.match(
    a.message,
    /\) exited 0 but gave no token \(no status\.token, no client certificate\): run it by hand/,
  )
  assert.doesNotMatch(a.message, /failed|exited with an error|installed/)

  const notJson = script('not-json', `echo 'hello'`)
  useKubeconfig(execConfig({ command: notJson }))
  const b = await envError(() => resolveKubeCredentials())
  assert.equal(b.code, 'KUBE_CREDENTIALS')
  assert.match(b.message, /\) exited 0 but printed no ExecCredential JSON: /)

  const crashed = script('crashed', 'kill -SEGV $$')
  useKubeconfig(execConfig({ command: crashed }))
  assert.match((await envError(() => resolveKubeCredentials())).message, /failed: it was killed by SIGSEGV;/)
})

test('an exec plugin that is not installed is KUBE_CREDENTIALS', async () => {
  const missing = join(caseDir, 'no-such-plugin')
  useKubeconfig(execConfig({ command: missing }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.match(err.message, /ENOENT/)
})

test('a context without a user still gets its cluster CA and insecure-skip-tls-verify', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'x',
      contexts: [{ name: 'x', context: { cluster: 'c' } }, context('y', 'c', 'ghost-user')],
      clusters: [
        cluster('c', 'https://c.example', {
          'certificate-authority-data': b64('CA PEM'),
          'insecure-skip-tls-verify': true,
        }),
      ],
    }),
  )
  for (const name of ['x', 'y']) {
    const w = await wire(await resolveKubeCredentials(name))
    assert.deepEqual([w.ca, w.insecure, w.token], ['CA PEM', true, undefined], name)
  }
})

test('a static token wins over a tokenFile, as in kubectl; a tokenFile is re-read', async () => {
  writeFileSync(join(caseDir, 'token.txt'), 'from-file\n')
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'both',
      contexts: [context('both', 'c', 'both'), context('file', 'c', 'file')],
      clusters: [cluster('c', 'https://c.example')],
      users: [
        user('both', { token: 'static', tokenFile: 'token.txt' }),
        user('file', { tokenFile: 'token.txt' }),
      ],
    }),
  )
  assert.equal((await wire(await resolveKubeCredentials())).token, 'static')
  assert.equal((await wire(await resolveKubeCredentials('file'))).token, 'from-file')
})

test('a CA, certificate or token file that cannot be read is BAD_KUBECONFIG, one line, naming it, no secret', async () => {
  const secret = 'static-secret-789'
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'ca',
      contexts: [context('ca', 'c', 'u'), context('tok', 'ok', 'tok')],
      clusters: [
        cluster('c', 'https://c.example', { 'certificate-authority': 'missing-ca.crt' }),
        cluster('ok', 'https://ok.example'),
      ],
      users: [user('u', { token: secret }), user('tok', { tokenFile: 'missing-token' })],
    }),
  )
  const ca = await envError(() => resolveKubeCredentials())
  assert.equal(ca.code, 'BAD_KUBECONFIG')
  assert.ok(ca.message.startsWith('kube context "ca" cannot be used: ENOENT'), ca.message)
  assert.ok(ca.message.includes(join(caseDir, 'missing-ca.crt')), ca.message)
  assert.ok(!ca.message.includes('\n') && !ca.message.includes(secret), ca.message)
  const tok = await envError(() => resolveKubeCredentials('tok'))
  assert.equal(tok.code, 'BAD_KUBECONFIG')
  assert.ok(tok.message.includes(join(caseDir, 'missing-token')), tok.message)
})

test('tls-server-name and proxy-url reach the request (a proxy brings its agent; no proxy, no agent)', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'p',
      contexts: [context('p', 'c', 'u')],
      clusters: [
        cluster('c', 'https://10.0.0.1', {
          'tls-server-name': 'kubernetes.default',
          'proxy-url': 'http://proxy.example:3128',
        }),
      ],
      users: [user('u', { token: 't' })],
    }),
  )
  const { options } = await wire(await resolveKubeCredentials())
  assert.equal(options.servername, 'kubernetes.default')
  assert.ok(options.agent, 'a proxy agent')
  assert.equal((options.agent as unknown as { proxy?: URL }).proxy?.host, 'proxy.example:3128')
})

test('a user with username and password is sent as basic auth', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'x',
      contexts: [context('x', 'c', 'u')],
      clusters: [cluster('c', 'https://c.example')],
      users: [user('u', { username: 'admin', password: 'pw' })],
    }),
  )
  assert.equal((await wire(await resolveKubeCredentials())).options.auth, 'admin:pw')
})

test('an http:// server (a `kubectl proxy`) is used as kubectl uses it, with or without insecure-skip-tls-verify', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'plain',
      contexts: [context('plain', 'plain', 'u'), context('insecure', 'insecure', 'u')],
      clusters: [
        cluster('plain', 'http://127.0.0.1:8001'),
        cluster('insecure', 'http://127.0.0.1:8001', { 'insecure-skip-tls-verify': true }),
      ],
      users: [user('u', { token: 't' })],
    }),
  )
  for (const name of ['plain', 'insecure']) {
    const creds = await resolveKubeCredentials(name)
    assert.equal(creds.server, 'http://127.0.0.1:8001')
    assert.equal((await wire(creds)).token, 't')
  }
})

test('a FIFO or a device as the kubeconfig, its tokenFile, CA, certificate or key is BAD_KUBECONFIG at once, naming it', async () => {
  const fifo = join(caseDir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const ok = writeConfig('ok', {
    'current-context': 'tok',
    contexts: [
      context('tok', 'c', 'tok'),
      context('ca', 'ca', 'u'),
      context('cert', 'c', 'cert'),
      context('key', 'c', 'key'),
    ],
    clusters: [
      cluster('c', 'https://c.example'),
      cluster('ca', 'https://c.example', { 'certificate-authority': fifo }),
    ],
    users: [
      user('u', { token: 't' }),
      user('tok', { tokenFile: fifo }),
      user('cert', { 'client-certificate': '/dev/zero', 'client-key-data': b64('k') }),
      user('key', { 'client-certificate-data': b64('c'), 'client-key': fifo }),
    ],
  })
  useKubeconfig(fifo, ok)
  const whole = await envError(() => resolveKubeCredentials())
  assert.equal(whole.code, 'BAD_KUBECONFIG')
  assert.equal(whole.message, `kubeconfig "${fifo}" is a FIFO, not a regular file: fix KUBECONFIG`)
  useKubeconfig(ok)
  const cases: [string | undefined, RegExp][] = [
    [undefined, /^the tokenFile ".*fifo" is a FIFO, not a regular file: fix the kubeconfig$/],
    ['ca', /^the certificate-authority ".*fifo" of kube context "ca" is a FIFO/],
    ['cert', /^the client-certificate "\/dev\/zero" of kube context "cert" is a device/],
    ['key', /^the client-key ".*fifo" of kube context "key" is a FIFO/],
  ]
  for (const [name, message] of cases) {
    const err = await envError(() => resolveKubeCredentials(name))
    assert.equal(err.code, 'BAD_KUBECONFIG')
    assert.match(err.message, message)
  }
})

test('an exec plugin may supply a client certificate and key instead of a token', async () => {
  const plugin = script(
    'get-cert',
    `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"clientCertificateData":"EXEC CERT","clientKeyData":"EXEC KEY"}}'`,
  )
  useKubeconfig(execConfig({ command: plugin }))
  const w = await wire(await resolveKubeCredentials())
  assert.deepEqual([w.cert, w.key, w.token], ['EXEC CERT', 'EXEC KEY', undefined])
})

test('an exec plugin runs once for concurrent requests, and its unexpired token is reused', async () => {
  const runs = join(caseDir, 'runs')
  const later = new Date(Date.now() + 3_600_000).toISOString()
  const plugin = script(
    'get-token',
    `echo run >> '${runs}'\necho '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"abc","expirationTimestamp":"${later}"}}'`,
  )
  useKubeconfig(execConfig({ command: plugin }))
  const creds = await resolveKubeCredentials()
  const all = await Promise.all(Array.from({ length: 20 }, () => wire(creds)))
  assert.ok(all.every((w) => w.token === 'abc'))
  assert.equal(readFileSync(runs, 'utf8'), 'run\n', 'the plugin ran once')
})

test('an exec plugin that hangs is killed after the timeout: KUBE_CREDENTIALS', async () => {
  const pidFile = join(caseDir, 'pid')
  const plugin = script('hang', `echo $$ > '${pidFile}'\nexec sleep 30`)
  useKubeconfig(execConfig({ command: plugin }))
  const started = Date.now()
  const err = await envError(() => resolveKubeCredentials(undefined, { execTimeoutMs: 300 }))
  assert.ok(Date.now() - started < 5_000)
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.match(err.message, /failed: it did not finish within 0\.3 s; check that it is installed/)
  const pid = Number(readFileSync(pidFile, 'utf8'))
  assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the plugin process is gone')
})

test('an exec plugin that prompts on stdin reads end-of-file and fails at once', async () => {
  const plugin = script(
    'prompt',
    `printf 'MFA code: ' >&2\nread code || exit 4\n echo '${execCredential('x')}'`,
  )
  useKubeconfig(execConfig({ command: plugin }))
  const err = await envError(() => resolveKubeCredentials(undefined, { execTimeoutMs: 10_000 }))
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.match(err.message, /failed: it exited with code 4;/)
})

// ---- issue 10: a server that is not a URL; userinfo never shown; how to refresh credentials ----

test('a server without a scheme (or without a host) is BAD_KUBECONFIG, one line, naming the context and the server', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'bare',
      contexts: [context('bare', 'bare', 'u'), context('host', 'host', 'u'), context('ftp', 'ftp', 'u')],
      clusters: [
        cluster('bare', '127.0.0.1:6443'),
        cluster('host', 'localhost:6443'),
        cluster('ftp', 'ftp://files.example'),
      ],
      users: [user('u', { token: 't' })],
    }),
  )
  for (const [name, server] of [
    ['bare', '127.0.0.1:6443'],
    ['host', 'localhost:6443'],
    ['ftp', 'ftp://files.example'],
  ] as const) {
    const err = await envError(() => resolveKubeCredentials(name === 'bare' ? undefined : name))
    assert.equal(err.code, 'BAD_KUBECONFIG')
    assert.equal(
      err.message,
      `kube context "${name}": cluster "${name}" has server "${server}", which is not an http(s) URL with a host (no https:// scheme?): write it as https://<host>[:port] or regenerate it with \`aws eks update-kubeconfig\``,
    )
  }
})

test('a server URL with user:password@ is used without it (sent as basic auth) and never shown', async () => {
  useKubeconfig(
    writeConfig('config', {
      'current-context': 'x',
      contexts: [context('x', 'c', 'u'), context('y', 'd', 'u')],
      clusters: [
        cluster('c', 'https://admin:s3cr3t-pw@kube.example:6443/'),
        cluster('d', 'not a url://admin:s3cr3t-pw@kube.example'),
      ],
      users: [user('u', {})],
    }),
  )
  const creds = await resolveKubeCredentials()
  assert.equal(creds.server, 'https://kube.example:6443')
  assert.equal((await wire(creds)).options.auth, 'admin:s3cr3t-pw')
  const err = await envError(() => resolveKubeCredentials('y'))
  assert.doesNotMatch(err.message, /s3cr3t/)
})

test('the EKS cluster and region of a context come from its ARN name, its exec plugin or its server', async () => {
  const arn = 'arn:aws:eks:eu-west-1:123456789012:cluster/prod'
  const plugin = script(
    'get-token',
    `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}}'`,
  )
  useKubeconfig(
    writeConfig('config', {
      'current-context': arn,
      contexts: [
        context(arn, 'c', 'u'),
        context('exec', 'c', 'e'),
        context('host', 'h', 'u'),
        context('none', 'n', 'u'),
      ],
      clusters: [
        cluster('c', 'https://ABC.gr7.eu-west-1.eks.amazonaws.com'),
        cluster('h', 'https://DEF.yl4.ap-south-1.eks.amazonaws.com'),
        cluster('n', 'https://kube.example'),
      ],
      users: [
        user('u', { token: 't' }),
        user('e', {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1beta1',
            command: plugin,
            args: ['eks', 'get-token', '--cluster-name', 'staging', '--region', 'us-east-2'],
          },
        }),
      ],
    }),
  )
  assert.deepEqual((await resolveKubeCredentials()).eks, { cluster: 'prod', region: 'eu-west-1' })
  assert.deepEqual((await resolveKubeCredentials('exec')).eks, { cluster: 'staging', region: 'us-east-2' })
  assert.deepEqual((await resolveKubeCredentials('host')).eks, { cluster: undefined, region: 'ap-south-1' })
  assert.equal((await resolveKubeCredentials('none')).eks, undefined)
  assert.equal(
    refreshHint({ eks: { cluster: 'prod', region: 'eu-west-1' } }),
    'refresh them with `aws eks update-kubeconfig --name prod --region eu-west-1` and check that `aws eks get-token --cluster-name prod --region eu-west-1` works for your AWS identity (it needs an access entry or an aws-auth mapping)',
  )
  assert.match(refreshHint({}), /aws eks update-kubeconfig --name <cluster> --region <region>/)
})

test('an exec plugin that prints without end is stopped past the output cap: one line, KUBE_CREDENTIALS', async () => {
  // `yes` prints forever and fast: only the cap can stop it before the 60 s timeout given here.
  const plugin = script('chatty', 'exec yes karpctl')
  useKubeconfig(execConfig({ command: plugin }))
  const started = Date.now()
  const err = await envError(() => resolveKubeCredentials(undefined, { execTimeoutMs: 60_000 }))
  assert.ok(Date.now() - started < 20_000, `stopped after ${Date.now() - started} ms`)
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.match(err.message, /failed: it printed more than 4194304 bytes; check that it is installed/)
})
