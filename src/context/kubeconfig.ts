// The user's kubeconfig: KUBECONFIG (colon-separated, first wins per name, as kubectl merges) or
// ~/.kube/config, read into @kubernetes/client-node's KubeConfig, which supplies every credential kind:
// token, tokenFile, client certificates, exec plugins (e.g. `aws eks get-token`, re-run when their
// token expires), insecure-skip-tls-verify, tls-server-name and proxy-url.
// client-node is loaded only here, lazily: `karpctl --version` and `--help` never load it.
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node'
import { spawn } from 'node:child_process'
import type http from 'node:http'
import type https from 'node:https'
import { homedir } from 'node:os'
import { createSecureContext, type SecureContext } from 'node:tls'
import { delimiter, dirname, isAbsolute, join } from 'node:path'
import { parse } from 'yaml'
import { EnvironmentError, quote } from '../errors.js'
import { checkRegularFileSync, FileRefused, readRegularFileSync } from '../fs/read-regular.js'

export interface KubeCredentials {
  /** The API server URL, without any `user:password@` (that, if present, is sent as basic auth). */
  server: string
  contextName: string
  /** The EKS cluster this context is for, when the context name, exec plugin or server says so. */
  eks?: { cluster?: string; region?: string }
  namespace?: string
  /** The merged kubeconfig, its current context set to `contextName`. */
  config: KubeConfig
  /**
   * TLS and auth options for the next request, from `config`: CA, client certificate and key,
   * Authorization (static, token file or exec plugin), `rejectUnauthorized`, `servername`, and an
   * agent only when the cluster has a proxy-url (otherwise Node's default agent keeps connections alive).
   * Computed at most every few seconds; concurrent callers share one computation. A credential that
   * cannot be obtained rejects with an EnvironmentError (KUBE_CREDENTIALS, BAD_KUBECONFIG).
   */
  requestOptions(): Promise<KubeRequestOptions>
}

export interface KubeRequestOptions {
  headers: Record<string, string>
  ca?: string | Buffer
  cert?: string | Buffer
  key?: string | Buffer
  rejectUnauthorized: boolean
  servername?: string
  /** user:password, for a kubeconfig user with username/password */
  auth?: string
  agent?: http.Agent
  /**
   * The CA, certificate and key above, parsed once: without it Node parses them again for every new
   * connection, and a run opens up to its concurrency (16) at once.
   */
  secureContext?: SecureContext
}

export interface ResolveOptions {
  /** How long an exec credential plugin may run before it is killed (default 30 s). */
  execTimeoutMs?: number
}

/**
 * Request options are reused this long. client-node re-runs an exec plugin only once the token it
 * returned has expired (`aws eks get-token` says 14 minutes for a token valid 15); one that gives no
 * expiry would otherwise run for every request.
 */
const OPTIONS_REUSE_MS = 10_000

function configPaths(): string[] {
  const env = process.env.KUBECONFIG
  if (env) return env.split(delimiter).filter(Boolean)
  return [join(homedir(), '.kube', 'config')]
}

export interface RawDoc {
  'current-context'?: unknown
  users?: unknown
}

export interface RawFile {
  path: string
  doc: RawDoc
}

/** Reads every kubeconfig that exists, in order; one YAML parser for the sync and the async readers. */
function readFiles(): RawFile[] {
  const paths = configPaths()
  const files: RawFile[] = []
  for (const path of paths) {
    let text: string
    try {
      text = readRegularFileSync(path)
    } catch (err) {
      // A file that is absent or unreadable is skipped, as kubectl merges; one that is not a file is
      // refused (a FIFO would block the run before --timeout could end it).
      if (err instanceof FileRefused && err.errno !== undefined) continue
      throw refusedFile(err, `kubeconfig ${quote(path)}`, 'fix KUBECONFIG')
    }
    let doc: unknown
    try {
      doc = parse(text)
    } catch (err) {
      throw new EnvironmentError(
        `kubeconfig ${path} is not valid YAML (${(err as Error).message.split('\n')[0]}): fix or regenerate it with \`aws eks update-kubeconfig\``,
        'BAD_KUBECONFIG',
      )
    }
    files.push({ path, doc: checkShape(doc, path) })
  }
  if (files.length === 0) {
    throw new EnvironmentError(
      `no kubeconfig found at ${paths.join(', ')}: run \`aws eks update-kubeconfig --name <cluster> --region <region>\` or set KUBECONFIG`,
      'NO_KUBECONFIG',
    )
  }
  return files
}

const yamlKind = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`

/**
 * A kubeconfig is a mapping whose `clusters`, `contexts` and `users` are lists: one of another shape
 * would otherwise read as empty ("context does not exist … one of: none"), hiding what is wrong.
 */
function checkShape(doc: unknown, path: string): RawDoc {
  const fix = 'fix it, or regenerate it with `aws eks update-kubeconfig`'
  // An empty file is an empty kubeconfig, as kubectl reads it.
  if (doc === null || doc === undefined) return {}
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new EnvironmentError(
      `kubeconfig ${quote(path)} is ${yamlKind(doc)}, not a mapping of clusters, contexts and users: ${fix}`,
      'BAD_KUBECONFIG',
    )
  for (const key of ['clusters', 'contexts', 'users']) {
    const v = (doc as Record<string, unknown>)[key]
    if (v !== undefined && v !== null && !Array.isArray(v))
      throw new EnvironmentError(
        `kubeconfig ${quote(path)}: ${key} is not a list (it is ${yamlKind(v)}): ${fix}`,
        'BAD_KUBECONFIG',
      )
  }
  return doc as RawDoc
}

const currentOf = (files: RawFile[]): string | undefined => {
  for (const f of files) {
    const c = f.doc['current-context']
    if (typeof c === 'string' && c) return c
  }
  return undefined
}

/** The kubeconfig's current context (first file that sets one); sync, without loading client-node. */
export function currentContextName(): string | undefined {
  return currentOf(readFiles())
}

/** Reads a user's `tokenFile` (see adjustUser), trimmed, each time the request options are computed. */
const TOKEN_FILE = 'karpctl-token-file'
const tokenFileAuth: Parameters<KubeConfig['addAuthenticator']>[0] = {
  isAuthProvider: (user) => (user.authProvider as { name?: string } | undefined)?.name === TOKEN_FILE,
  async applyAuthentication(user, opts) {
    const path = (user.authProvider as { config: { path: string } }).config.path
    let token: string
    try {
      token = readRegularFileSync(path).trim()
    } catch (err) {
      throw refusedFile(err, `the tokenFile ${quote(path)}`, 'fix the kubeconfig')
    }
    opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` }
  },
}

export async function resolveKubeCredentials(
  contextName?: string,
  options: ResolveOptions = {},
): Promise<KubeCredentials> {
  const files = readFiles()
  const { KubeConfig } = await import('@kubernetes/client-node')
  const merged = mergeFiles(files, () => new KubeConfig())
  const name = contextName ?? currentOf(files)
  const { ctx, cluster } = pickContext(merged, name)
  const server = checkServer(cluster.server, ctx.name, cluster.name)
  // kubectl speaks plain HTTP to an http:// server (a `kubectl proxy` on 127.0.0.1:8001); client-node
  // refuses one unless TLS verification is off — over plain HTTP there is no TLS to verify, so saying
  // so changes nothing else.
  if (server.url.startsWith('http:'))
    merged.clusters[merged.clusters.indexOf(cluster)] = { ...cluster, skipTLSVerify: true }
  const user = userOf(merged, ctx)
  checkNamedFiles(ctx.name, cluster, user)

  const config = new KubeConfig()
  config.loadFromOptions({ ...merged, currentContext: ctx.name })
  config.addAuthenticator(tokenFileAuth)
  const compute = credentialSource(config, {
    context: ctx.name,
    user,
    server,
    proxied: Boolean(cluster.proxyUrl),
    execTimeoutMs: options.execTimeoutMs ?? 30_000,
  })
  const requestOptions = reusedFor(OPTIONS_REUSE_MS, compute)

  // Obtain the credential now (runs an exec plugin once), so a broken one fails before any request.
  await requestOptions()
  return {
    server: server.url,
    contextName: ctx.name,
    eks: eksOf(ctx.name, user, server.url),
    namespace: ctx.namespace,
    config,
    requestOptions,
  }
}

/** The clusters, users and contexts of every kubeconfig file, merged as kubectl merges them. */
export interface MergedConfig {
  clusters: Cluster[]
  users: User[]
  contexts: Context[]
}

/** Every file's clusters, users and contexts, in order: the first file to name one wins it. */
export function mergeFiles(files: RawFile[], newConfig: () => KubeConfig): MergedConfig {
  const merged: MergedConfig = { clusters: [], users: [], contexts: [] }
  const add = <T extends { name: string }>(into: T[], items: T[]) => {
    for (const item of items) if (!into.some((x) => x.name === item.name)) into.push(item)
  }
  for (const { path, doc } of files) {
    const one = newConfig()
    // The document as JSON (a subset of YAML): client-node turns it into clusters, users and contexts,
    // dropping malformed entries (a cluster without a server is then simply absent), and makes
    // certificate paths absolute against this file's directory.
    one.loadFromString(JSON.stringify(doc), { onInvalidEntry: 'filter' })
    one.makePathsAbsolute(dirname(path))
    add(merged.clusters, one.getClusters())
    add(merged.contexts, one.getContexts())
    add(
      merged.users,
      one.getUsers().map((u) => adjustUser(u, doc, dirname(path))),
    )
  }
  return merged
}

/** The context asked for (or the current one) and the cluster it names; each missing one is one line. */
export function pickContext(
  merged: Pick<MergedConfig, 'clusters' | 'contexts'>,
  name: string | undefined,
): { ctx: Context; cluster: Cluster } {
  const available = merged.contexts.map((c) => c.name)
  if (!name) {
    throw new EnvironmentError(
      `the kubeconfig has no current context: pass --kube-context (one of: ${available.join(', ') || 'none'})`,
      'NO_KUBE_CONTEXT',
    )
  }
  const ctx = merged.contexts.find((c) => c.name === name)
  if (!ctx) {
    throw new EnvironmentError(
      `kube context "${name}" does not exist: pass --kube-context with one of: ${available.join(', ') || 'none'}`,
      'UNKNOWN_KUBE_CONTEXT',
    )
  }
  const cluster = merged.clusters.find((c) => c.name === ctx.cluster)
  if (!cluster) {
    throw new EnvironmentError(
      `kube context "${name}" names cluster "${ctx.cluster}", which the kubeconfig lacks`,
      'BAD_KUBECONFIG',
    )
  }
  return { ctx, cluster }
}

/**
 * The context's user. client-node applies no TLS options (CA, insecure) to a context whose user is
 * absent: such a context is given an empty one (in `merged`, which the KubeConfig is built from).
 */
export function userOf(merged: MergedConfig, ctx: Context): User {
  const userName = ctx.user ?? `${ctx.name} (no user)`
  if (!merged.users.some((u) => u.name === userName)) merged.users.push({ name: userName })
  if (ctx.user === undefined) merged.contexts[merged.contexts.indexOf(ctx)] = { ...ctx, user: userName }
  return merged.users.find((u) => u.name === userName)!
}

/** client-node reads these with readFileSync: each must be a regular file before it may. */
function checkNamedFiles(context: string, cluster: Cluster, user: User): void {
  for (const [field, path] of [
    ['certificate-authority', cluster.caFile],
    ['client-certificate', user.certFile],
    ['client-key', user.keyFile],
  ] as const) {
    if (!path) continue
    try {
      checkRegularFileSync(path)
    } catch (err) {
      throw refusedFile(
        err,
        `the ${field} ${quote(path)} of kube context ${quote(context)}`,
        'fix the kubeconfig',
      )
    }
  }
}

/** What credentialSource needs to know of the context beyond the KubeConfig. */
interface SourceOf {
  context: string
  user: User
  server: { url: string; auth?: string }
  /** The cluster has a proxy-url: the request needs client-node's agent. */
  proxied: boolean
  execTimeoutMs: number
}

/** One computation of the request options from `config`, its exec plugin bounded; failures are one line. */
function credentialSource(config: KubeConfig, s: SourceOf): () => Promise<KubeRequestOptions> {
  const exec = s.user.exec as { command?: string } | undefined
  const limit = limitExec(config, s.execTimeoutMs)
  const fail = (err: unknown) =>
    credentialError(
      err,
      s.context,
      exec,
      limit.timedOut()
        ? `it did not finish within ${s.execTimeoutMs / 1000} s`
        : limit.tooLarge()
          ? `it printed more than ${MAX_EXEC_OUTPUT_BYTES} bytes`
          : undefined,
      secretsOf(s.user),
      limit.exit(),
    )
  return async () => {
    const opts: https.RequestOptions = {}
    try {
      await limit.race(config.applyToHTTPSOptions(opts))
    } catch (err) {
      throw fail(err)
    }
    const out = toRequestOptions(opts, s.server.auth, s.proxied)
    if (exec && !out.headers.Authorization && !out.cert) throw fail(new NoToken())
    return out
  }
}

/** client-node's HTTPS options as karpctl's request options: headers as strings, TLS parsed once. */
export function toRequestOptions(
  opts: https.RequestOptions,
  serverAuth: string | undefined,
  proxied: boolean,
): KubeRequestOptions {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v)
  const ca = opts.ca as string | Buffer | undefined
  const cert = opts.cert as string | Buffer | undefined
  const key = opts.key as string | Buffer | undefined
  let secureContext: SecureContext | undefined
  try {
    if (ca || cert || key) secureContext = createSecureContext({ ca, cert, key })
  } catch {
    // A CA or key Node cannot parse: left to each request, which reports it as it always did.
  }
  return {
    headers,
    ca,
    cert,
    key,
    ...(secureContext ? { secureContext } : {}),
    rejectUnauthorized: opts.rejectUnauthorized !== false,
    servername: opts.servername,
    auth: opts.auth ?? serverAuth,
    agent: proxied ? (opts.agent as http.Agent) : undefined,
  }
}

/**
 * `compute`'s answer, reused for `ms`: concurrent callers share one computation, a failed one is not
 * kept, and each caller gets its own copy of the headers (a request may add to them).
 */
export function reusedFor(
  ms: number,
  compute: () => Promise<KubeRequestOptions>,
  now: () => number = Date.now,
): () => Promise<KubeRequestOptions> {
  let cached: { at: number; options: Promise<KubeRequestOptions> } | undefined
  return async () => {
    if (!cached || now() - cached.at > ms) {
      const entry = { at: now(), options: compute() }
      cached = entry
      entry.options.catch(() => {
        if (cached === entry) cached = undefined
      })
    }
    const o = await cached.options
    return { ...o, headers: { ...o.headers } }
  }
}

/**
 * The cluster's `server:` as a URL karpctl can request: http(s), with a host. Its userinfo, if any,
 * is taken out of the URL (the URL is shown in messages and stored in snapshots) and sent as basic auth.
 */
function checkServer(raw: string, context: string, cluster: string): { url: string; auth?: string } {
  const fix = 'write it as https://<host>[:port] or regenerate it with `aws eks update-kubeconfig`'
  // Whatever it is, any `user:password@` in it is not shown.
  const shown = quote(raw.replace(/\/\/[^/?#@]*@/g, '//').replace(/^[^/?#@]*@/, ''))
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
    throw new EnvironmentError(
      `kube context ${quote(context)}: cluster ${quote(cluster)} has server ${shown}, which is not an http(s) URL with a host (no https:// scheme?): ${fix}`,
      'BAD_KUBECONFIG',
    )
  }
  const auth =
    url.username || url.password
      ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      : undefined
  url.username = ''
  url.password = ''
  // No trailing slash: request paths start with one.
  return { url: url.toString().replace(/\/$/, ''), auth }
}

const EKS_ARN = /^arn:aws[\w-]*:eks:([a-z0-9-]+):\d{12}:cluster\/([\w-]+)$/

/** Which EKS cluster and region a context is for: its name (an ARN), its exec plugin's arguments, its server. */
function eksOf(context: string, user: User, server: string): KubeCredentials['eks'] {
  const arn = EKS_ARN.exec(context)
  const args = (user.exec as { args?: unknown[] } | undefined)?.args?.map(String) ?? []
  const arg = (...names: string[]) => {
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string
      for (const n of names) {
        if (a === n && i + 1 < args.length) return args[i + 1]
        if (a.startsWith(`${n}=`)) return a.slice(n.length + 1)
      }
    }
    return undefined
  }
  const host = /\.([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d)\.eks\.amazonaws\.com(?:\.cn)?(?::\d+)?$/.exec(
    new URL(server).host,
  )
  const cluster = arn?.[2] ?? arg('--cluster-name', '--cluster-id', '-i')
  const region = arn?.[1] ?? arg('--region') ?? host?.[1]
  return cluster || region ? { cluster, region } : undefined
}

/** How to get working credentials for a context, as a command when the EKS cluster is known. */
export function refreshHint(creds: Pick<KubeCredentials, 'eks'>): string {
  const cluster = creds.eks?.cluster
  const region = creds.eks?.region ? ` --region ${creds.eks.region}` : ' --region <region>'
  if (!cluster)
    return 'refresh them (for EKS: `aws eks update-kubeconfig --name <cluster> --region <region>`) and check that `aws eks get-token --cluster-name <cluster>` works for your AWS identity'
  return `refresh them with \`aws eks update-kubeconfig --name ${cluster}${region}\` and check that \`aws eks get-token --cluster-name ${cluster}${region}\` works for your AWS identity (it needs an access entry or an aws-auth mapping)`
}

/**
 * Two kubeconfig user fields client-node reads differently from kubectl: `tokenFile` (client-node reads only
 * `token-file`, relative to the cwd, untrimmed) is resolved against the directory of the kubeconfig that
 * defines it and read by `tokenFileAuth`; and an exec plugin's token overrides a static `token` (client-node
 * lets the static one win). A static `token` still takes precedence over `tokenFile`, as in kubectl.
 */
function adjustUser(user: User, doc: RawDoc, dir: string): User {
  if (user.exec) return user.token ? { ...user, token: undefined } : user
  if (user.token || user.authProvider) return user
  const raw = Array.isArray(doc.users)
    ? (doc.users as ({ name?: unknown; user?: { tokenFile?: unknown } } | null)[]).find(
        (u) => u?.name === user.name,
      )
    : undefined
  const file = raw?.user?.tokenFile
  if (typeof file !== 'string' || !file) return user
  const path = isAbsolute(file) ? file : join(dir, file)
  return { ...user, authProvider: { name: TOKEN_FILE, config: { path } } }
}

const secretsOf = (user: User): string[] =>
  [user.token, user.password, user.keyData].filter((s): s is string => typeof s === 'string' && s.length > 3)

class NoToken extends Error {
  constructor() {
    super('the plugin returned no token')
  }
}

interface ExecLimit {
  race<T>(p: Promise<T>): Promise<T>
  timedOut(): boolean
  tooLarge(): boolean
  /** How the plugin's last run ended (client-node keeps only its stderr). */
  exit(): PluginExit | undefined
}

interface PluginExit {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * An ExecCredential is a few KiB. client-node gathers the plugin's whole output into one string: a
 * plugin that prints forever would end in a raw RangeError (a string V8 cannot make), so it is stopped.
 */
export const MAX_EXEC_OUTPUT_BYTES = 4 << 20

/**
 * client-node spawns exec plugins with no time limit and stdin left open (a plugin that prompts, like
 * `aws` asking for an MFA code, would hang the run). Its ExecAuth exposes no option for this, so its
 * spawn function is wrapped: stdin is /dev/null and the plugin is killed after `ms`. Should a later
 * client-node change that internal, the wait is still bounded by `race`.
 */
function limitExec(config: KubeConfig, ms: number): ExecLimit {
  let killed = false
  let large = false
  let ended: PluginExit | undefined
  type SpawnLike = (cmd: string, args?: readonly string[], opts?: object) => ReturnType<typeof spawn>
  const authenticators = (config as unknown as { authenticators?: { execFn?: SpawnLike }[] }).authenticators
  const execAuth = authenticators?.find((a) => typeof a.execFn === 'function')
  if (execAuth) {
    execAuth.execFn = (cmd, args, opts) => {
      killed = false
      const child = spawn(cmd, args ?? [], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] })
      large = false
      let printed = 0
      const count = (c: Buffer | string) => {
        printed += c.length
        if (printed > MAX_EXEC_OUTPUT_BYTES && !large) {
          large = true
          child.kill('SIGKILL')
        }
      }
      child.stdout?.on('data', count)
      child.stderr?.on('data', count)
      const kill = setTimeout(() => {
        killed = true
        child.kill('SIGKILL')
      }, ms)
      kill.unref()
      ended = undefined
      child.on('exit', (code, signal) => {
        ended = { code, signal }
        clearTimeout(kill)
      })
      child.on('error', () => clearTimeout(kill))
      return child
    }
  }
  return {
    timedOut: () => killed,
    tooLarge: () => large,
    exit: () => ended,
    race: <T>(p: Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        // A little later than the kill, so a killed plugin reports through client-node first.
        const timer = setTimeout(() => {
          killed = true
          reject(new Error('timed out'))
        }, ms + 1_000)
        timer.unref()
        p.then(resolve, reject).finally(() => clearTimeout(timer))
      }),
  }
}

/** One line, no secrets: an exec plugin's stderr and stdout may hold tokens, so neither is quoted. */
function credentialError(
  err: unknown,
  contextName: string,
  exec: { command?: string } | undefined,
  /** Why karpctl stopped the plugin (too slow, too much output), when it did. */
  stopped: string | undefined,
  secrets: string[],
  exit?: PluginExit,
): EnvironmentError {
  if (err instanceof EnvironmentError) return err
  const e = (err ?? {}) as NodeJS.ErrnoException
  const syscall = typeof e.syscall === 'string' ? e.syscall : undefined
  const fileError = syscall !== undefined && !syscall.startsWith('spawn')
  const firstLine = String(e.message ?? err).split('\n')[0] ?? ''
  if (exec && !fileError) {
    let why: string
    if (stopped !== undefined) why = stopped
    else if (!exec.command) why = 'the kubeconfig names no command'
    // a spawn error (ENOENT: not installed, EACCES) names only the command
    else if (syscall && e.code) why = firstLine
    else if (
      exit?.code === 0 &&
      (e instanceof SyntaxError || e instanceof NoToken || e instanceof TypeError)
    ) {
      // It succeeded by its own account: what it printed is the problem, not its installation.
      const printed =
        e instanceof SyntaxError
          ? 'printed no ExecCredential JSON'
          : 'gave no token (no status.token, no client certificate)'
      return new EnvironmentError(
        `the credential plugin of kube context ${quote(contextName)} (${exec.command}) exited 0 but ${printed}: run it by hand to see what it prints, or regenerate the kubeconfig (for EKS: \`aws eks update-kubeconfig\`)`,
        'KUBE_CREDENTIALS',
      )
    } else if (e instanceof SyntaxError) why = 'it printed no ExecCredential JSON'
    else if (e instanceof NoToken || e instanceof TypeError) why = 'the plugin returned no token'
    // client-node rejects with the plugin's stderr as the message (not quoted: it may hold a token)
    else if (exit?.signal) why = `it was killed by ${exit.signal}`
    else if (typeof exit?.code === 'number') why = `it exited with code ${exit.code}`
    else why = 'it exited with an error'
    return new EnvironmentError(
      `the credential plugin of kube context ${quote(contextName)} (${exec.command ?? 'no command'}) failed: ${why}; check that it is installed and your AWS credentials are valid`,
      'KUBE_CREDENTIALS',
    )
  }
  // A file the kubeconfig names (CA, certificate, key, token file), an auth provider, or a server
  // client-node refuses (http:// without insecure-skip-tls-verify).
  let detail = e instanceof SyntaxError ? 'the credential is not valid JSON' : firstLine
  for (const s of secrets) detail = detail.split(s).join('***')
  return new EnvironmentError(`kube context "${contextName}" cannot be used: ${detail}`, 'BAD_KUBECONFIG')
}

/** A file the kubeconfig names (or KUBECONFIG) refused by read-regular.ts, as one line with the fix. */
function refusedFile(err: unknown, what: string, fix: string): EnvironmentError {
  const why = err instanceof FileRefused ? err.reason : `cannot be read (${String(err)})`
  return new EnvironmentError(`${what} ${why}: ${fix}`, 'BAD_KUBECONFIG')
}
