// The kubeconfig reader against real files in a temp dir: merge order, context selection, every
// credential kind (inline, files relative to the kubeconfig, exec plugins) and the one-line errors.
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { after, afterEach, before, beforeEach, test } from 'node:test'
import { stringify } from 'yaml'
import { currentContextName, resolveKubeCredentials } from '../../../src/context/kubeconfig.js'
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
    { server: dev.server, token: dev.token, contextName: dev.contextName, namespace: dev.namespace },
    { server: 'https://first.example', token: 'first-token', contextName: 'dev', namespace: undefined },
  )
  const prod = await resolveKubeCredentials('prod')
  assert.deepEqual(
    { server: prod.server, token: prod.token, contextName: prod.contextName, namespace: prod.namespace },
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
  assert.equal(creds.token, 't')
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
  assert.equal(creds.token, 'token-b')
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
  const creds = await resolveKubeCredentials()
  assert.equal(creds.token, 'inline-token')
  assert.equal(creds.ca?.toString(), 'CA PEM')
  assert.equal(creds.cert?.toString(), 'CERT PEM')
  assert.equal(creds.key?.toString(), 'KEY PEM')
  assert.equal(creds.insecure, true)
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
  const creds = await resolveKubeCredentials()
  assert.equal(creds.insecure, false)
  assert.equal(creds.token, undefined)
  assert.equal(creds.ca, undefined)
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

  const creds = await resolveKubeCredentials()
  assert.equal(creds.ca?.toString(), 'CA FROM FILE')
  assert.equal(creds.token, 'token-from-file')
  assert.equal(creds.cert?.toString(), 'CERT FROM FILE')
  assert.equal(creds.key?.toString(), 'KEY FROM FILE')
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
  assert.equal((await resolveKubeCredentials()).ca?.toString(), 'ABSOLUTE CA')
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
  assert.equal(creds.token, 'abc')
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
  assert.equal((await resolveKubeCredentials()).token, 'from-arg-from-env')
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
  assert.match(a.message, /failed: the plugin returned no token;/)

  const notJson = script('not-json', `echo 'hello'`)
  useKubeconfig(execConfig({ command: notJson }))
  assert.equal((await envError(() => resolveKubeCredentials())).code, 'KUBE_CREDENTIALS')
})

test('an exec plugin that is not installed is KUBE_CREDENTIALS', async () => {
  const missing = join(caseDir, 'no-such-plugin')
  useKubeconfig(execConfig({ command: missing }))
  const err = await envError(() => resolveKubeCredentials())
  assert.equal(err.code, 'KUBE_CREDENTIALS')
  assert.match(err.message, /ENOENT/)
})
