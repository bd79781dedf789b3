// AWS access for one run: clients are created lazily (the SDK is imported only by commands
// that talk to AWS), every call is memoized by operation + input and bounded by the limiter.
import http from 'node:http'
import https from 'node:https'
import { homedir } from 'node:os'
import { join } from 'node:path'
import {
  answerOf,
  clip,
  EnvironmentError,
  KarpctlError,
  markAnswer,
  outOfFiles,
  quote,
  type Answer,
} from '../errors.js'
import { checkRegularFileSync, FileRefused } from '../fs/read-regular.js'
import { redactText } from '../redact/redact.js'
import type { ReadFailure } from './read-failure.js'
import { Limiter, type CallLog, type Memo } from './limiter.js'
import { BadAnswer, listOf, shapeOf } from './shape.js'
import { HtmlAnswer, refuseHtml } from './aws-html.js'
import {
  boundCredentials,
  credentialsTimeoutError,
  credentialsTimeoutMs,
  stopCredentialProcess,
} from './credential-bound.js'
import { readCredentialSource } from './credential-source.js'

export type AwsService =
  'iam' | 'eks' | 'ec2' | 'sqs' | 'eventbridge' | 'sts' | 'kms' | 'cloudformation' | 'organizations'

export interface AwsOptions {
  region: string
  profile?: string
  /** Overrides every service endpoint (a local emulator); the SDK also honours AWS_ENDPOINT_URL. */
  endpoint?: string
  maxAttempts?: number
  /** 'adaptive' for commands that write: the SDK then also slows itself down when AWS throttles. */
  retryMode?: 'standard' | 'adaptive'
  /** How long one attempt may wait for an answer (default 10 s); the SDK retries up to maxAttempts. */
  requestTimeoutMs?: number
  /** How long one attempt may wait for the connection (default 5 s, at most requestTimeoutMs). */
  connectionTimeoutMs?: number
  /**
   * Credentials to use instead of the default chain (an assumed role of another account, in a fleet
   * run); the profile is then not read.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
}

export const DEFAULT_AWS_REQUEST_TIMEOUT_MS = 10_000
export const DEFAULT_AWS_CONNECTION_TIMEOUT_MS = 5_000
/** The most pages one list is read in: far above any real account's (1,000 roles a page, 100 stacks a page). */
export const MAX_PAGES = 1000

/**
 * What the run is waiting on right now (AWS and Kubernetes requests in flight), so an overall timeout
 * can say what never answered.
 */
export const inFlight = new Map<number, string>()
let inFlightSeq = 0
export async function tracked<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const id = ++inFlightSeq
  inFlight.set(id, what)
  try {
    return await fn()
  } finally {
    inFlight.delete(id)
  }
}

/** The service as a user knows it, for messages. */
export const SERVICE_LABEL: Record<AwsService, string> = {
  iam: 'IAM',
  eks: 'EKS',
  ec2: 'EC2',
  sqs: 'SQS',
  eventbridge: 'EventBridge',
  sts: 'STS',
  kms: 'KMS',
  cloudformation: 'CloudFormation',
  organizations: 'Organizations',
}

/** The service's endpoint prefix, which is also the prefix of its IAM actions (`events:ListRules`). */
export const ENDPOINT_PREFIX: Record<AwsService, string> = {
  iam: 'iam',
  eks: 'eks',
  ec2: 'ec2',
  sqs: 'sqs',
  eventbridge: 'events',
  sts: 'sts',
  kms: 'kms',
  cloudformation: 'cloudformation',
  organizations: 'organizations',
}

/** The endpoint a service is reached at, as the SDK resolves it (explicit, AWS_ENDPOINT_URL[_SERVICE], or AWS's). */
export function endpointOf(service: AwsService, options: AwsOptions, env = process.env): string {
  const own = env[`AWS_ENDPOINT_URL_${(service === 'eventbridge' ? 'EVENTBRIDGE' : service).toUpperCase()}`]
  const explicit = options.endpoint ?? own ?? env.AWS_ENDPOINT_URL
  if (explicit) return withoutUserinfo(explicit)
  if (service === 'iam') return 'https://iam.amazonaws.com'
  // Organizations is a global service, served from us-east-1 in the aws partition.
  if (service === 'organizations') return 'https://organizations.us-east-1.amazonaws.com'
  return `https://${ENDPOINT_PREFIX[service]}.${options.region}.amazonaws.com`
}

/** A URL without its `user:password@` part (never printed, never stored). */
export function withoutUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1')
}

type SdkModule = Record<string, unknown>
interface SdkClient {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>
  destroy(): void
}

const loaders: Record<AwsService, () => Promise<SdkModule>> = {
  iam: () => import('@aws-sdk/client-iam'),
  eks: () => import('@aws-sdk/client-eks'),
  ec2: () => import('@aws-sdk/client-ec2'),
  sqs: () => import('@aws-sdk/client-sqs'),
  eventbridge: () => import('@aws-sdk/client-eventbridge'),
  sts: () => import('@aws-sdk/client-sts'),
  kms: () => import('@aws-sdk/client-kms'),
  cloudformation: () => import('@aws-sdk/client-cloudformation'),
  organizations: () => import('@aws-sdk/client-organizations'),
}

const clientClass: Record<AwsService, string> = {
  iam: 'IAMClient',
  eks: 'EKSClient',
  ec2: 'EC2Client',
  sqs: 'SQSClient',
  eventbridge: 'EventBridgeClient',
  sts: 'STSClient',
  kms: 'KMSClient',
  cloudformation: 'CloudFormationClient',
  organizations: 'OrganizationsClient',
}

/**
 * The files the SDK's credential and config providers read, as it finds them: a FIFO or a device
 * there would hang the run in the SDK's read (past --timeout's reach while a file read holds the
 * worker), so each is checked to be a regular file of bounded size before any client exists.
 */
export function checkAwsConfigFiles(env: NodeJS.ProcessEnv = process.env): void {
  const home = env.HOME || env.USERPROFILE || homedir()
  const files: [string, string, string][] = [
    ['AWS_CONFIG_FILE', env.AWS_CONFIG_FILE || join(home, '.aws', 'config'), 'the AWS config file'],
    [
      'AWS_SHARED_CREDENTIALS_FILE',
      env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials'),
      'the AWS credentials file',
    ],
  ]
  if (env.AWS_WEB_IDENTITY_TOKEN_FILE)
    files.push([
      'AWS_WEB_IDENTITY_TOKEN_FILE',
      env.AWS_WEB_IDENTITY_TOKEN_FILE,
      'the web identity token file',
    ])
  for (const [variable, path, what] of files) {
    try {
      checkRegularFileSync(path)
    } catch (err) {
      const why = err instanceof FileRefused ? err.reason : 'cannot be read'
      const fix = env[variable] ? `point ${variable} at ${what}, or unset it` : `replace it with ${what}`
      throw new EnvironmentError(`${what} ${quote(path)} ${why}: ${fix}`, 'BAD_AWS_CONFIG')
    }
  }
}

/**
 * Every endpoint the SDK would use in place of AWS's (--endpoint, AWS_ENDPOINT_URL[_SERVICE]) is an
 * http(s) URL without `user:password@`: the SDK fails on another scheme with an error that names
 * nothing, and AWS takes no credentials in a URL (they would only reach a log). One line naming it.
 */
export function checkEndpoints(options: AwsOptions, env: NodeJS.ProcessEnv = process.env): void {
  const given: [string, string | undefined][] = [
    ['--endpoint', options.endpoint],
    ...Object.entries(env).filter(([k]) => k === 'AWS_ENDPOINT_URL' || k.startsWith('AWS_ENDPOINT_URL_')),
  ]
  for (const [name, value] of given) {
    if (!value) continue
    let url: URL | undefined
    try {
      url = new URL(value)
    } catch {
      url = undefined
    }
    const shown = quote(clip(withoutUserinfo(value), 120))
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new EnvironmentError(
        `${name} ${shown} is not an http:// or https:// URL: fix ${name} (e.g. http://127.0.0.1:4566)`,
        'BAD_AWS_ENDPOINT',
      )
    if (url.username || url.password)
      throw new EnvironmentError(
        `${name} ${shown} carries a user name or password (user:password@): AWS takes none in the URL; remove it from ${name}`,
        'BAD_AWS_ENDPOINT',
      )
  }
}

export class Aws {
  private readonly clients = new Map<AwsService, Promise<{ mod: SdkModule; client: SdkClient }>>()
  /**
   * One connection pool for every client of the run: with one endpoint for all services (an emulator,
   * a VPC endpoint proxy) a client reuses the connections another opened; with AWS's per-service hosts
   * it is a pool per host, as each client had. Keep-alive, as the SDK's own agents.
   */
  private agents: { httpAgent: http.Agent; httpsAgent: https.Agent } | undefined
  /**
   * The first client's credential provider (the SDK memoizes what it resolves), given to every other
   * client: the default chain (environment, profile, SSO, web identity, IMDS) is walked once per run,
   * not once per service.
   */
  private credentials: unknown
  /** How long the chain may take to resolve credentials (KARPCTL_CREDENTIALS_TIMEOUT). */
  private readonly credentialsMs: number
  /**
   * Building a client (its module, its endpoint rules) is CPU that the run's first requests would
   * queue behind: each client is built once the one before it has its first request on the way (or
   * failed), so DescribeCluster travels while STS's and IAM's clients are still being built.
   */
  private previousSent: Promise<void> = Promise.resolve()
  private readonly sent = new Map<AwsService, () => void>()

  constructor(
    readonly options: AwsOptions,
    private readonly limiter: Limiter,
    private readonly memo: Memo,
    private readonly log: CallLog,
  ) {
    // Before any client: each would read these files on its first request.
    checkAwsConfigFiles()
    checkEndpoints(options)
    this.credentialsMs = credentialsTimeoutMs()
  }

  /**
   * The first client's provider, bounded (credential-bound.ts) and named while it runs, so an overall
   * --timeout that fires first says it was waiting for credentials. Named by the source only when the
   * bound fires: the files are read then, not on every run.
   */
  private boundProvider(own: (...args: never[]) => Promise<unknown>): unknown {
    const profile = this.options.profile ?? process.env.AWS_PROFILE
    const label = `AWS credentials${profile ? ` of profile ${quote(profile)}` : ''}`
    let source: ReturnType<typeof readCredentialSource> | undefined
    const sourceOf = () => (source ??= readCredentialSource(profile))
    return boundCredentials(
      (...args: never[]) => tracked(label, () => own(...args)),
      this.credentialsMs,
      () => credentialsTimeoutError(profile, sourceOf(), this.credentialsMs),
      () => {
        const command = sourceOf().command
        if (!command) return
        stopCredentialProcess(command)
        // The chain then tries its next provider, which runs the same command again (the ini
        // provider and the process provider both do): the run is ending, so stop that one at exit.
        process.once('exit', () => stopCredentialProcess(command))
      },
    )
  }

  private load(service: AwsService) {
    let entry = this.clients.get(service)
    if (!entry) {
      // karpctl pins its SDK versions (package-lock.json): the SDK's notice about its own future
      // Node.js support is for karpctl's maintainers, not a warning for its users' terminals.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
      const before = this.previousSent
      this.previousSent = new Promise<void>((resolve) => this.sent.set(service, resolve))
      entry = before
        .then(() => loaders[service]())
        .then((mod) => {
          // The run ended (a fatal error) while this client waited its turn: build nothing more.
          if (this.destroyed) throw new Error(`the run ended before ${SERVICE_LABEL[service]} was needed`)
          const Client = mod[clientClass[service]] as new (config: object) => SdkClient
          const config: Record<string, unknown> = { region: this.options.region }
          if (this.options.profile) config.profile = this.options.profile
          if (this.options.endpoint) config.endpoint = this.options.endpoint
          if (this.options.maxAttempts) config.maxAttempts = this.options.maxAttempts
          if (this.options.retryMode) config.retryMode = this.options.retryMode
          // The SDK waits forever by default for an endpoint that accepts the connection and never answers.
          const requestTimeout = this.options.requestTimeoutMs ?? DEFAULT_AWS_REQUEST_TIMEOUT_MS
          this.agents ??= {
            httpAgent: new http.Agent({ keepAlive: true, maxSockets: 50 }),
            httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 50 }),
          }
          if (this.options.credentials) config.credentials = this.options.credentials
          else if (this.credentials) config.credentials = this.credentials
          config.requestHandler = {
            ...this.agents,
            requestTimeout,
            connectionTimeout: Math.min(
              requestTimeout,
              this.options.connectionTimeoutMs ?? DEFAULT_AWS_CONNECTION_TIMEOUT_MS,
            ),
            socketTimeout: requestTimeout,
            throwOnRequestTimeout: true,
          }
          const client = new Client(config)
          const resolved = (client as { config?: { credentials?: unknown } }).config
          if (!this.options.credentials && !this.credentials && typeof resolved?.credentials === 'function') {
            // The SDK reads config.credentials at every request: the bounded provider takes its place.
            this.credentials = this.boundProvider(resolved.credentials as () => Promise<unknown>)
            resolved.credentials = this.credentials
          } else this.credentials ??= resolved?.credentials
          recordEndpoint(client)
          refuseHtml(client)
          onSend(client, () => this.sent.get(service)?.())
          return { mod, client }
        })
      // A client that could not be built sends nothing: the next one must not wait for it.
      entry.catch(() => this.sent.get(service)?.())
      this.clients.set(service, entry)
    }
    return entry
  }

  /**
   * The same clients, bound and memo, recording the calls it makes in another log: one cluster of a fleet
   * run, whose reads of the account (OIDC providers, a shared role) other clusters there reuse.
   */
  withLog(log: CallLog): Aws {
    const view = Object.create(this) as Aws
    Object.defineProperty(view, 'log', { value: log })
    return view
  }

  /**
   * The credentials this run's requests are signed with, as the SDK resolved them (the default chain,
   * the profile or the ones given): what an EKS token is signed with.
   */
  async credentialIdentity(): Promise<{
    accessKeyId: string
    secretAccessKey: string
    sessionToken?: string
  }> {
    if (this.options.credentials) return this.options.credentials
    const { client } = await this.load('sts')
    const provider = (client as { config?: { credentials?: () => Promise<unknown> } }).config?.credentials
    // Nothing is sent on this client now: the next client must not wait for its first request.
    this.sent.get('sts')?.()
    if (typeof provider !== 'function') throw new Error('the STS client has no credential provider')
    return (await provider()) as { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  }

  /** One API call, made at most once per run for the same operation and input. */
  call<O>(service: AwsService, op: string, input: object = {}): Promise<O> {
    return this.memo.get(`${service}:${op}:${JSON.stringify(input)}`, () => this.send<O>(service, op, input))
  }

  /**
   * A call that changes something: never memoized (the same write may be needed twice, e.g. a retry
   * after AWS's eventual consistency), and logged as a write so a run can prove it made none.
   */
  write<O>(service: AwsService, op: string, input: object = {}): Promise<O> {
    return this.send<O>(service, op, input, true)
  }

  /** A read made again, bypassing the memo (to see the effect of a write in the same run). */
  fresh<O>(service: AwsService, op: string, input: object = {}): Promise<O> {
    return this.send<O>(service, op, input)
  }

  /**
   * CloudFormation's ownership lookups have a bound of their own: they answer a side question (who
   * owns a resource) for each of a dozen resources at once, CloudFormation throttles in its own bucket,
   * and sharing the run's bound let them hold back the reads they do not depend on (the interruption
   * rules' targets waited a round trip behind them).
   */
  private readonly sideLimiter = new Limiter(8)

  private send<O>(service: AwsService, op: string, input: object, write = false): Promise<O> {
    const limiter = service === 'cloudformation' ? this.sideLimiter : this.limiter
    return limiter.run(async () => {
      const { mod, client } = await this.load(service).catch((err: unknown) => {
        throw outOfFiles(err, `loading the AWS SDK for ${SERVICE_LABEL[service]}`) ?? err
      })
      const Command = mod[`${op}Command`] as (new (input: object) => unknown) | undefined
      // The build bundles the commands the source names (scripts/build.mjs) and fails on one it cannot see.
      if (typeof Command !== 'function')
        throw new Error(`karpctl was built without ${SERVICE_LABEL[service]} ${op}`)
      this.log.record(`${service}:${op}:${JSON.stringify(input)}`, write)
      const where = endpointOf(service, this.options)
      // The SDK's timeouts are per attempt and reset by every byte: an endpoint that sends headers and
      // then trickles the body would hold a read forever. A read gets a deadline for all its attempts;
      // a write does not (cut short, it may still have happened: its caller reads again instead).
      const requestTimeout = this.options.requestTimeoutMs ?? DEFAULT_AWS_REQUEST_TIMEOUT_MS
      const deadline = write ? undefined : AbortSignal.timeout(requestTimeout * 4)
      try {
        return (await tracked(`${SERVICE_LABEL[service]} ${op} at ${where}`, () =>
          client.send(new Command(input), deadline ? { abortSignal: deadline } : {}),
        )) as O
      } catch (err) {
        // Karpctl's own verdict (the credentials' bound): said as it is, whatever else timed out meanwhile.
        if (err instanceof KarpctlError) throw err
        // A write that timed out may still have happened: its caller decides (the executor reads again).
        if (!write && (isTimeout(err) || deadline?.aborted))
          throw timeoutError(service, op, err, this.options)
        if (err instanceof HtmlAnswer)
          throw new BadAnswer(
            `AWS ${SERVICE_LABEL[service]} at ${where} answered HTTP ${err.status} to ${op} with an HTML page, not AWS's answer (a proxy or a captive portal?): check HTTPS_PROXY and AWS_ENDPOINT_URL`,
          )
        const files = outOfFiles(err, `a request to AWS ${SERVICE_LABEL[service]} at ${where}`)
        if (files) throw files
        if (notHttp(err))
          throw new EnvironmentError(
            `AWS ${SERVICE_LABEL[service]} at ${where} answered ${op} with something that is not HTTP: check AWS_ENDPOINT_URL and any proxy`,
            'AWS_BAD_ANSWER',
          )
        const fatal = fatalOrSelf(err, this.options)
        if (fatal !== err) throw fatal
        const answer = describeAwsAnswer(err, service, op, this.options)
        throw answer ? markAnswer(err, answer) : err
      } finally {
        // Failed before its request went out (credentials, a bad parameter): the next client goes.
        this.sent.get(service)?.()
      }
    })
  }

  /**
   * Every page of a list operation (each page one memoized call); `page` names the items and the next
   * token. A server that hands back a token it gave before, or never stops (a broken proxy, an emulator
   * bug), would page forever: a repeated token or more than MAX_PAGES pages ends the list as a read
   * failure naming the API, and so does a page whose items are not a list or whose token is not text.
   */
  async all<O, T>(
    service: AwsService,
    op: string,
    input: object,
    tokenField: string,
    page: (out: O) => { items?: T[]; next?: string },
  ): Promise<T[]> {
    const items: T[] = []
    const seen = new Set<string>()
    let token: string | undefined
    const where = () => `AWS ${SERVICE_LABEL[service]} at ${endpointOf(service, this.options)} answered ${op}`
    for (let n = 1; ; n++) {
      const p = page(await this.call<O>(service, op, token ? { ...input, [tokenField]: token } : input))
      // Pushed one by one: a spread of a very long page (150,000 items) overflows the call stack.
      for (const item of listOf(p.items, () => `${where()} (page ${n}) with its items as`)) items.push(item)
      const next = p.next as unknown
      if (next === undefined || next === null || next === '') return items
      if (typeof next !== 'string')
        throw new BadAnswer(`${where()} (page ${n}) with ${tokenField} as ${shapeOf(next)}, not text`)
      if (seen.has(next))
        throw new BadAnswer(
          `${where()} (page ${n}) with a ${tokenField} it had given before: the list would never end (a proxy or an endpoint that is not AWS?)`,
        )
      if (n >= MAX_PAGES)
        throw new BadAnswer(`${where()} with more than ${MAX_PAGES} pages: the list was cut off there`)
      seen.add(next)
      token = next
    }
  }

  private destroyed = false

  destroy(): void {
    this.destroyed = true
    for (const entry of this.clients.values())
      void entry.then(({ client }) => client.destroy()).catch(() => {})
    // The SDK's destroy() ends the agents it was given too; these once more, for a client never made.
    this.agents?.httpAgent.destroy()
    this.agents?.httpsAgent.destroy()
  }
}

interface MiddlewareClient {
  middlewareStack?: {
    add(
      mw: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
      options: { step: string; name: string; priority?: string },
    ): void
  }
}

/**
 * Calls `sent` once each request has left: signed, then handed to the HTTP handler, which opens or
 * takes its connection in the promise callbacks that follow (hence the next turn of the event loop).
 */
function onSend(client: unknown, sent: () => void): void {
  const stack = (client as MiddlewareClient).middlewareStack
  if (!stack) return sent()
  stack.add(
    (next) => (args) => {
      setImmediate(sent)
      return next(args)
    },
    { step: 'finalizeRequest', name: 'karpctlSent', priority: 'low' },
  )
}

/** Marks each failed attempt's error with the endpoint it went to (the SDK's errors do not say). */
function recordEndpoint(client: unknown): void {
  const stack = (client as MiddlewareClient).middlewareStack
  if (!stack) return
  stack.add(
    (next) => async (args) => {
      try {
        return await next(args)
      } catch (err) {
        const req = (args as { request?: { protocol?: string; hostname?: string; port?: number } }).request
        if (err && typeof err === 'object' && req?.hostname) {
          const port = req.port ? `:${req.port}` : ''
          Object.assign(err, { $endpoint: `${req.protocol ?? 'https:'}//${req.hostname}${port}` })
        }
        throw err
      }
    },
    { step: 'deserialize', name: 'karpctlEndpoint', priority: 'low' },
  )
}

/** Node's HTTP parser refused what came back (an SSH banner, a TLS port spoken to in clear): `HPE_…`. */
export function notHttp(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null
  return /^HPE_/.test(String(e?.code ?? e?.cause?.code ?? ''))
}

/** An answer that never came: the SDK's request, connection or socket timeout (after its retries). */
export function isTimeout(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false
  const e = err as SdkError
  // An answer, even an error answer, is not a timeout.
  if (e.$metadata?.httpStatusCode) return false
  return (
    e.name === 'TimeoutError' ||
    e.code === 'ETIMEDOUT' ||
    /requestTimeout|without establishing a connection|socket timed out/i.test(e.message ?? '')
  )
}

function timeoutError(service: AwsService, op: string, err: unknown, options: AwsOptions): EnvironmentError {
  const seen = (err as { $endpoint?: string }).$endpoint
  const where = seen ? withoutUserinfo(seen) : endpointOf(service, options)
  const seconds = Number(((options.requestTimeoutMs ?? DEFAULT_AWS_REQUEST_TIMEOUT_MS) / 1000).toFixed(1))
  return new EnvironmentError(
    `AWS ${SERVICE_LABEL[service]} at ${where} did not answer ${op} within ${seconds} s: check the network, --region and AWS_ENDPOINT_URL`,
    'AWS_TIMEOUT',
  )
}

interface SdkError {
  name?: string
  Code?: string
  code?: string
  message?: string
  $metadata?: { httpStatusCode?: number }
  /** The raw HTTP response the SDK keeps (hidden) on the errors it makes of an answer; its body is read. */
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> }
  $endpoint?: string
}

/** The names and messages the SDK gives an answer it could not read as an AWS error. */
const NOT_AN_AWS_ERROR_NAME = /^(Unknown|UnknownError|Error|SyntaxError)$/
const NOT_AN_AWS_ERROR_MESSAGE =
  /^(Unknown|UnknownError)$|XML parse error|Unexpected token|not valid JSON|Deserialization error/i

/**
 * What an endpoint answered, when it answered: the service and endpoint, the HTTP status and a short
 * description (AWS's own message and code, or what else came: an HTML page, a redirect, nothing), and
 * whose side the fault is on. Undefined when nothing answered (a timeout, a refused connection).
 */
export function describeAwsAnswer(
  err: unknown,
  service: AwsService,
  op: string,
  options: AwsOptions,
  env = process.env,
): Answer | undefined {
  if (!err || typeof err !== 'object') return undefined
  const e = err as SdkError
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode
  if (!status) return undefined
  const headers = Object.fromEntries(
    Object.entries(e.$response?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v ?? '']),
  )
  const explicit = options.endpoint ?? env.AWS_ENDPOINT_URL
  const where = e.$endpoint ? withoutUserinfo(e.$endpoint) : endpointOf(service, options, env)
  const who = `AWS ${SERVICE_LABEL[service]} at ${where} answered HTTP ${status} to ${op}`
  // Redacted: AWS quotes credentials in some messages (`Credential=ASIA…` of a SignatureDoesNotMatch).
  const message = clip(redactText((e.message ?? '').split('\n')[0] ?? ''))
  const name = e.name ?? e.Code ?? ''
  if (status >= 300 && status < 400) {
    const location = headers.location ? ` to ${clip(withoutUserinfo(headers.location), 100)}` : ''
    return {
      line: `${who} with a redirect${location}: AWS does not redirect API calls; check AWS_ENDPOINT_URL and any proxy (HTTPS_PROXY)`,
      code: 'AWS_BAD_ANSWER',
    }
  }
  const side = explicit ? "the endpoint's side" : "AWS's side"
  if (message && !NOT_AN_AWS_ERROR_MESSAGE.test(message)) {
    const code = NOT_AN_AWS_ERROR_NAME.test(name) ? '' : ` (${clip(name, 80)})`
    return status >= 500
      ? { line: `${who}: ${message}${code} — ${side}; retry later`, code: 'AWS_SERVER_ERROR' }
      : { line: `${who}: ${message}${code}`, code: 'AWS_ERROR' }
  }
  const type = clip((headers['content-type'] ?? '').split(';')[0] ?? '', 60)
  const what = /html/i.test(type)
    ? 'an HTML page'
    : headers['content-length'] === '0'
      ? 'an empty answer'
      : `an answer${type ? ` of type ${type}` : ''} that is not an AWS error`
  const check = `check HTTPS_PROXY${explicit ? ' and AWS_ENDPOINT_URL' : ''}`
  return {
    line: `${who} with ${what} (a proxy${explicit ? ', or an endpoint that is not AWS' : ''}?): ${status >= 500 ? `retry later, or ${check}` : check}`,
    code: 'AWS_BAD_ANSWER',
  }
}

const credentialCodes = new Set([
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'InvalidSignatureException',
  'AuthFailure',
])

/** Credential problems end the whole run with a one-line fix; everything else is a per-read failure. */
function fatalOrSelf(err: unknown, options: AwsOptions): unknown {
  const e = err as SdkError
  const name = e.name ?? e.Code ?? ''
  const profile = options.profile ? ` (profile ${options.profile})` : ''
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(e.message ?? '')) {
    return new EnvironmentError(
      `no AWS credentials found${profile}: run \`aws configure\`, \`aws sso login\`, or set AWS_PROFILE / --profile`,
      'NO_CREDENTIALS',
    )
  }
  if (credentialCodes.has(name)) {
    const expired = /Expired/i.test(name)
    return new EnvironmentError(
      expired
        ? `AWS credentials${profile} have expired: refresh them (e.g. \`aws sso login\`) and run again`
        : `AWS rejected the credentials${profile} (${name}): check the access key, or refresh the session`,
      expired ? 'EXPIRED_CREDENTIALS' : 'INVALID_CREDENTIALS',
    )
  }
  return err
}

/** Classifies an AWS SDK (or network) error into the reason a check reports as `unknown`. */
export function toReadFailure(err: unknown, read: string): ReadFailure {
  const e = err as SdkError & { cause?: { code?: string } }
  // Node's network errors are named plain `Error`; their code (ECONNREFUSED…) says more.
  const code =
    (e.name && e.name !== 'Error' ? e.name : undefined) ?? e.Code ?? e.code ?? e.cause?.code ?? 'Error'
  const status = e.$metadata?.httpStatusCode
  // AWS quotes credentials in some errors (`Credential=ASIA…/…` of a SignatureDoesNotMatch): every
  // failure is redacted here, before any plan, progress line or error prints it.
  const message = redactText((e.message ?? String(err)).split('\n')[0] ?? '').slice(0, 300)
  // What came instead of an AWS error (an HTML page, a redirect, nothing), when Aws.send saw it.
  const answer = answerOf(err)
  // An answer that is not an AWS error document (an emulator's HTML 404/500 page) means the
  // endpoint does not offer the operation; say so rather than quote a parser error.
  if (/XML parse error|Unexpected token|not valid JSON|Deserialization error/i.test(message)) {
    return {
      code: status ? `HTTP${status}` : code,
      kind: 'unsupported',
      message:
        answer?.line ??
        `the endpoint answered${status ? ` HTTP ${status}` : ''} without an AWS error: this endpoint does not offer the operation`,
      read,
    }
  }
  // The SDK's `Unknown: Unknown` (a proxy's page, a redirect, an empty answer): the line says what came.
  if (answer?.code === 'AWS_BAD_ANSWER')
    return {
      code: `HTTP${status}`,
      kind: status === 501 ? 'unsupported' : 'error',
      message: answer.line,
      read,
    }
  let kind: ReadFailure['kind'] = 'error'
  if (/AccessDenied|Unauthorized|Forbidden/i.test(code) || status === 403) kind = 'denied'
  else if (/Throttl|TooManyRequests|RequestLimitExceeded|SlowDown/i.test(code) || status === 429)
    kind = 'throttled'
  else if (/NotImplemented|UnknownOperation|InvalidAction/i.test(code) || status === 501) kind = 'unsupported'
  else if (status === 404 && !/NotFound|NoSuchEntity/i.test(code)) kind = 'unsupported'
  // Case-sensitive: with /i, ENOTFOUND would match ResourceNotFoundException.
  else if (
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH|TimeoutError|EAI_AGAIN/.test(
      `${code} ${message}`,
    )
  )
    kind = 'network'
  return { code, kind, message, read }
}

export function isNotFound(err: unknown): boolean {
  const e = err as SdkError
  const code = e.name ?? e.Code ?? ''
  // InvalidPermission.NotFound: EC2's answer (in a non-default VPC) to revoking a rule that is not there.
  return /NoSuchEntity|ResourceNotFound|NonExistentQueue|QueueDoesNotExist|NotFoundException|InvalidPermission\.NotFound/.test(
    code,
  )
}
