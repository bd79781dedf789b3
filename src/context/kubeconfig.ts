// The user's kubeconfig: KUBECONFIG (colon-separated, first wins per name) or ~/.kube/config.
// Supports token, client certificate and exec (e.g. `aws eks get-token`) credentials.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, dirname, isAbsolute, join } from 'node:path'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { EnvironmentError } from '../errors.js'

export interface KubeCredentials {
  server: string
  ca?: Buffer
  insecure?: boolean
  token?: string
  cert?: Buffer
  key?: Buffer
  contextName: string
  namespace?: string
}

interface Named<T> {
  name: string
  [k: string]: unknown
  value?: T
}
interface RawConfig {
  'current-context'?: string
  contexts?: Named<unknown>[]
  clusters?: Named<unknown>[]
  users?: Named<unknown>[]
}
interface RawCluster {
  server: string
  'certificate-authority-data'?: string
  'certificate-authority'?: string
  'insecure-skip-tls-verify'?: boolean
}
interface RawExec {
  command: string
  args?: string[]
  env?: { name: string; value: string }[]
}
interface RawUser {
  token?: string
  tokenFile?: string
  'client-certificate-data'?: string
  'client-key-data'?: string
  'client-certificate'?: string
  'client-key'?: string
  exec?: RawExec
}

function configPaths(): string[] {
  const env = process.env.KUBECONFIG
  if (env) return env.split(delimiter).filter(Boolean)
  return [join(homedir(), '.kube', 'config')]
}

interface Loaded {
  config: RawConfig
  dirs: Map<string, string>
}

function load(): Loaded {
  const merged: RawConfig = { contexts: [], clusters: [], users: [] }
  const dirs = new Map<string, string>()
  const paths = configPaths()
  let readAny = false
  for (const path of paths) {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch {
      continue
    }
    readAny = true
    let doc: RawConfig
    try {
      doc = (parse(text) ?? {}) as RawConfig
    } catch (err) {
      throw new EnvironmentError(
        `kubeconfig ${path} is not valid YAML (${(err as Error).message.split('\n')[0]}): fix or regenerate it with \`aws eks update-kubeconfig\``,
        'BAD_KUBECONFIG',
      )
    }
    merged['current-context'] ??= doc['current-context']
    for (const kind of ['contexts', 'clusters', 'users'] as const) {
      for (const item of doc[kind] ?? []) {
        if (!merged[kind]!.some((x) => x.name === item.name)) {
          merged[kind]!.push(item)
          dirs.set(`${kind}/${item.name}`, dirname(path))
        }
      }
    }
  }
  if (!readAny) {
    throw new EnvironmentError(
      `no kubeconfig found at ${paths.join(', ')}: run \`aws eks update-kubeconfig --name <cluster> --region <region>\` or set KUBECONFIG`,
      'NO_KUBECONFIG',
    )
  }
  return { config: merged, dirs }
}

const b64 = (s: string) => Buffer.from(s, 'base64')

export function currentContextName(): string | undefined {
  return load().config['current-context']
}

export async function resolveKubeCredentials(contextName?: string): Promise<KubeCredentials> {
  const { config, dirs } = load()
  const name = contextName ?? config['current-context']
  const available = (config.contexts ?? []).map((c) => c.name)
  if (!name) {
    throw new EnvironmentError(
      `the kubeconfig has no current context: pass --kube-context (one of: ${available.join(', ') || 'none'})`,
      'NO_KUBE_CONTEXT',
    )
  }
  const ctx = config.contexts?.find((c) => c.name === name)?.context as
    { cluster: string; user: string; namespace?: string } | undefined
  if (!ctx) {
    throw new EnvironmentError(
      `kube context "${name}" does not exist: pass --kube-context with one of: ${available.join(', ') || 'none'}`,
      'UNKNOWN_KUBE_CONTEXT',
    )
  }
  const cluster = config.clusters?.find((c) => c.name === ctx.cluster)?.cluster as RawCluster | undefined
  if (!cluster?.server) {
    throw new EnvironmentError(
      `kube context "${name}" names cluster "${ctx.cluster}", which the kubeconfig lacks`,
      'BAD_KUBECONFIG',
    )
  }
  const user = (config.users?.find((u) => u.name === ctx.user)?.user ?? {}) as RawUser
  const rel = (kind: string, n: string, p: string) =>
    isAbsolute(p) ? p : join(dirs.get(`${kind}/${n}`) ?? '.', p)

  const creds: KubeCredentials = {
    server: cluster.server.replace(/\/$/, ''),
    contextName: name,
    namespace: ctx.namespace,
  }
  if (cluster['certificate-authority-data']) creds.ca = b64(cluster['certificate-authority-data'])
  else if (cluster['certificate-authority'])
    creds.ca = readFileSync(rel('clusters', ctx.cluster, cluster['certificate-authority']))
  creds.insecure = cluster['insecure-skip-tls-verify'] === true

  if (user.token) creds.token = user.token
  else if (user.tokenFile) creds.token = readFileSync(rel('users', ctx.user, user.tokenFile), 'utf8').trim()
  if (user['client-certificate-data']) creds.cert = b64(user['client-certificate-data'])
  else if (user['client-certificate'])
    creds.cert = readFileSync(rel('users', ctx.user, user['client-certificate']))
  if (user['client-key-data']) creds.key = b64(user['client-key-data'])
  else if (user['client-key']) creds.key = readFileSync(rel('users', ctx.user, user['client-key']))
  if (user.exec) creds.token = await execToken(user.exec, name)
  return creds
}

/** Runs the kubeconfig's exec credential plugin (e.g. `aws eks get-token`) and returns its bearer token. */
async function execToken(exec: RawExec, contextName: string): Promise<string> {
  const env = { ...process.env }
  for (const e of exec.env ?? []) env[e.name] = e.value
  try {
    const { stdout } = await promisify(execFile)(exec.command, exec.args ?? [], { env, timeout: 30_000 })
    const cred = JSON.parse(stdout) as { status?: { token?: string } }
    if (!cred.status?.token) throw new Error('the plugin returned no token')
    return cred.status.token
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0]
    throw new EnvironmentError(
      `the credential plugin of kube context "${contextName}" (${exec.command}) failed: ${msg}; check that it is installed and your AWS credentials are valid`,
      'KUBE_CREDENTIALS',
    )
  }
}
