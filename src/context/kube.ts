// A small Kubernetes REST client on node:https (so tests can mock it at the HTTP layer), with
// every GET memoized: the same object is never read twice in a run. Authentication and TLS come
// from @kubernetes/client-node's KubeConfig (see kubeconfig.ts), asked before each request.
// Default imports, looked up per request: an ESM named import of a builtin is bound once, so HTTP-layer
// mocks (nock) and proxy agents that patch `https.request` after load would never see this client.
import http from 'node:http'
import https from 'node:https'
import { clip, EnvironmentError, markAnswer, outOfFiles, quote } from '../errors.js'
import { redactText } from '../redact/redact.js'
import { notHttp, tracked } from './aws.js'
import { refreshHint, type KubeCredentials } from './kubeconfig.js'
import type { CallLog, Limiter, Memo } from './limiter.js'
import { kubeShapeProblem } from './shape.js'

export const DEFAULT_KUBE_TIMEOUT_MS = 15_000
/** The largest answer read (a list of every Secret with Helm's history is a few MiB; V8 strings stop near 512 MiB). */
export const MAX_KUBE_RESPONSE_BYTES = 64 << 20

/** Connection errors that say the server cannot be reached at all (not one read that went wrong). */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'refused the connection: nothing listens there',
  ENOTFOUND: 'cannot be found: its host name does not resolve',
  EAI_AGAIN: 'cannot be found: its host name does not resolve now',
  EHOSTUNREACH: 'cannot be reached: no route to its host',
  ENETUNREACH: 'cannot be reached: no route to its network',
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly path: string,
  ) {
    super(message)
  }
}

/**
 * A read the API server answers 429 is retried, with a bounded backoff: "storage is (re)initializing"
 * comes for a few seconds after a CRD changes (the upgrade's own CRD step), and reads of that resource
 * succeed once the server has settled. Writes are the executor's to retry.
 */
export const KUBE_READ_RETRY = { attempts: 6, baseMs: 250, maxMs: 2000 }

export class KubeClient {
  /** The pause between retried reads (a test makes it instant). */
  pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))

  constructor(
    readonly creds: KubeCredentials,
    private readonly limiter: Limiter,
    private readonly memo: Memo,
    private readonly log: CallLog,
    private readonly timeoutMs = DEFAULT_KUBE_TIMEOUT_MS,
    private readonly maxResponseBytes = MAX_KUBE_RESPONSE_BYTES,
  ) {}

  get server(): string {
    return this.creds.server
  }

  /** Requests made and not yet sent: their connection is still being opened (TCP, TLS). */
  private readonly connecting = new Set<Promise<void>>()

  /**
   * Resolves once every request made so far has its connection open and so is on its way, or after
   * `capMs`. What a run does next (building the AWS clients) holds the event loop for tens of
   * milliseconds, and a request still in its TLS handshake would wait behind it instead of travelling.
   * A server far away opens no connection within the first few milliseconds: then waiting gains
   * nothing (its handshake takes round trips either way), and it resolves then.
   */
  async onTheWire(capMs = 25, farMs = 5): Promise<void> {
    // Requests begun in this turn's promise callbacks are made by the next one.
    await new Promise((resolve) => setImmediate(resolve))
    const pending = [...this.connecting]
    if (pending.length === 0) return
    let opened = 0
    const timers: NodeJS.Timeout[] = []
    await new Promise<void>((resolve) => {
      for (const p of pending) void p.then(() => opened++)
      void Promise.all(pending).then(() => resolve())
      timers.push(setTimeout(resolve, capMs))
      timers.push(setTimeout(() => opened === 0 && resolve(), Math.min(farMs, capMs)))
    })
    for (const t of timers) clearTimeout(t)
  }

  get<T>(path: string): Promise<T | null> {
    return this.memo.get(`kube:GET:${path}`, () =>
      this.limiter.run(async () => {
        this.log.record(`kube:GET:${path}`)
        try {
          return (await this.read(path)) as T
        } catch (err) {
          if (err instanceof KubeApiError && err.status === 404) return null
          const code = (err as NodeJS.ErrnoException).code
          const where = `the Kubernetes API at ${this.server} (kube context ${quote(this.creds.contextName)})`
          const files = outOfFiles(err, `a request to ${where}`)
          if (files) throw files
          if (notHttp(err))
            throw new EnvironmentError(
              `${where} answered with something that is not HTTP: check the kube context's server (\`kubectl config view --minify\`) and any proxy`,
              'KUBE_BAD_ANSWER',
            )
          if (code === 'ETIMEDOUT') {
            throw new EnvironmentError(
              `${where} did not answer within ${seconds(this.timeoutMs)}: check the kube context, the network and any proxy`,
              'KUBE_TIMEOUT',
            )
          }
          // Nothing listens there, or the name or the network does not lead there: no read of the run
          // can succeed, so one line says so instead of every check `unknown`.
          const unreachable = code && UNREACHABLE[code]
          if (unreachable)
            throw new EnvironmentError(
              `${where} ${unreachable} (${code}): check the kube context (\`kubectl config current-context\`), the network and any proxy`,
              'KUBE_UNREACHABLE',
            )
          throw err
        }
      }),
    )
  }

  /**
   * A GET whose answer is text, not an API object (a container's log): memoized like `get`, null on 404.
   * Read errors are thrown as `get` throws them.
   */
  getText(path: string): Promise<string | null> {
    return this.memo.get(`kube:GET:${path}`, () =>
      this.limiter.run(async () => {
        this.log.record(`kube:GET:${path}`)
        try {
          return (await this.read(path, true)) as string
        } catch (err) {
          if (err instanceof KubeApiError && err.status === 404) return null
          throw err
        }
      }),
    )
  }

  /** GET again, bypassing the memo: to watch an object change (a wait) or see a write's effect. */
  async fresh<T>(path: string): Promise<T | null> {
    return this.limiter.run(async () => {
      this.log.record(`kube:GET:${path}`)
      try {
        return (await this.read(path)) as T
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 404) return null
        throw err
      }
    })
  }

  /** A GET, again while the server answers 429 (KUBE_READ_RETRY), then its last answer. */
  private async read(path: string, text = false): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.request('GET', path, undefined, undefined, text)
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 429) || attempt >= KUBE_READ_RETRY.attempts)
          throw err
        await this.pause(Math.min(KUBE_READ_RETRY.maxMs, KUBE_READ_RETRY.baseMs * 2 ** (attempt - 1)))
      }
    }
  }

  /**
   * A call that changes something: never memoized, logged as a write — except the cluster lock's own
   * (`bookkeeping`): it changes nothing of the user's, and the count of writes is what proves a run
   * changed nothing (a declined plan, an unchanged re-run).
   */
  write<T>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    contentType?: string,
    bookkeeping = false,
  ) {
    return this.limiter.run(async () => {
      this.log.record(`kube:${method}:${path}`, !bookkeeping)
      return (await this.request(method, path, body, contentType)) as T
    })
  }

  /** Server-side apply as field manager `karpctl`: creates or updates exactly the fields karpctl sets. */
  apply<T>(path: string, object: unknown): Promise<T> {
    const sep = path.includes('?') ? '&' : '?'
    return this.write<T>(
      'PATCH',
      `${path}${sep}fieldManager=karpctl&force=true`,
      object,
      'application/apply-patch+yaml',
    )
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    text = false,
  ): Promise<unknown> {
    const url = new URL(this.creds.server + path)
    // CA, client certificate, Authorization (refreshed when an exec plugin's token expires), insecure, proxy
    const { headers: authHeaders, ...tls } = await this.creds.requestOptions()
    const headers: Record<string, string> = {
      ...authHeaders,
      Accept: text ? 'text/plain, application/json' : 'application/json',
    }
    const payload = body === undefined ? undefined : JSON.stringify(body)
    if (payload) {
      headers['Content-Type'] = contentType
      // Node frames no body of a DELETE unless told its length: unframed, the API server reads the
      // DeleteOptions as the start of the next request on the kept-alive socket, and answers it 400.
      headers['Content-Length'] = String(Buffer.byteLength(payload))
    }
    const request = url.protocol === 'http:' ? http.request : https.request
    return tracked(`Kubernetes ${method} ${path} at ${this.server}`, () =>
      this.send(request, url, method, path, headers, tls, payload, text),
    )
  }

  private send(
    request: typeof https.request,
    url: URL,
    method: string,
    path: string,
    headers: Record<string, string>,
    tls: Omit<Awaited<ReturnType<KubeCredentials['requestOptions']>>, 'headers'>,
    payload: string | undefined,
    asText = false,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request(url, { ...tls, method, headers, timeout: this.timeoutMs }, (res) => {
        // Headers came: from here the socket's idle timeout, and the deadline for the whole body.
        clearTimeout(answer)
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (c: Buffer) => {
          size += c.length
          // Past the cap the answer is refused before it grows into a string V8 cannot make (a raw
          // RangeError with a stack): one line naming the request instead.
          if (size > this.maxResponseBytes) {
            req.destroy(
              new EnvironmentError(
                `the Kubernetes API at ${this.server} answered ${method} ${path} with more than ${this.maxResponseBytes} bytes: refused (a proxy or a server that is not the API?)`,
                'KUBE_TOO_LARGE',
              ),
            )
            return
          }
          chunks.push(c)
        })
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown = undefined
          let parsed = false
          try {
            json = text ? JSON.parse(text) : undefined
            parsed = text !== ''
          } catch {
            json = undefined
          }
          const status = res.statusCode ?? 0
          const who = `the Kubernetes API at ${this.server} answered HTTP ${status} to ${method} ${path}`
          const type = res.headers['content-type'] ?? ''
          // Every answer of the API is a JSON object (an empty one to some writes): anything else (a
          // proxy's or a login page, `null`, a bare string) is named here, not met as a TypeError later.
          const isObject = parsed && json !== null && typeof json === 'object' && !Array.isArray(json)
          if (status >= 200 && status < 300) {
            if (asText) return resolve(text)
            if (text === '') return resolve(json)
            // An object whose well-known fields have the wrong type (`items` an object, `storedVersions`
            // a string, `metadata` null): named here, with where it is and what came.
            const problem = isObject ? kubeShapeProblem(json) : undefined
            if (isObject && !problem) return resolve(json)
            if (problem) {
              const err = new KubeApiError(
                status,
                'BadAnswer',
                `${who} with ${problem} (a proxy or a server that is not the API?)`,
                path,
              )
              return reject(
                markAnswer(err, {
                  line: `${err.message}: check the kube context's server and any proxy`,
                  code: 'KUBE_BAD_ANSWER',
                }),
              )
            }
            // Redacted: a misdirected request may come back with whatever the other server holds.
            const what = answerShape(text, type, parsed, json) ?? `text "${clip(redactText(text), 80)}"`
            const err = new KubeApiError(
              status,
              'NotAnApiAnswer',
              `${who} with ${what}, not an API object (a proxy?)`,
              path,
            )
            return reject(
              markAnswer(err, {
                line: `${err.message}: check the kube context's server and any proxy`,
                code: 'KUBE_BAD_ANSWER',
              }),
            )
          }
          const st = (isObject ? json : undefined) as { reason?: unknown; message?: unknown } | undefined
          const reason = typeof st?.reason === 'string' ? clip(st.reason, 60) : undefined
          // The Status's message, or a proxy's plain text (`upstream connect error`); anything else in a
          // few words (an HTML page, other JSON, nothing).
          const shape =
            text === '' ? 'an empty answer' : isObject ? undefined : answerShape(text, type, parsed, json)
          const said =
            typeof st?.message === 'string'
              ? clip(st.message, 300)
              : !isObject && shape === undefined
                ? clip(redactText(text), 200)
                : undefined
          const err = new KubeApiError(
            status,
            reason ?? `HTTP${status}`,
            said ?? shape ?? `HTTP ${status}`,
            path,
          )
          const rejected = rejectedCredentials(err, this.creds)
          if (rejected) return reject(rejected)
          const later = status >= 500 ? ': retry later, or check the kube context and any proxy' : ''
          const line = said
            ? `${who}: ${said}${reason ? ` (${reason})` : ''}${later}`
            : `${who} with ${err.message}${later}`
          reject(markAnswer(err, { line, code: status >= 500 ? 'KUBE_SERVER_ERROR' : 'KUBE_ERROR' }))
        })
        res.on('error', reject)
      })
      const timedOut = () =>
        req.destroy(Object.assign(new Error(`timed out after ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' }))
      // Three bounds: the answer (Node's socket `timeout` alone fires late while a TLS handshake
      // hangs), the socket's idle time, and the whole exchange (a server that trickles bytes).
      const answer = setTimeout(timedOut, this.timeoutMs)
      const deadline = setTimeout(timedOut, this.timeoutMs * 4)
      answer.unref()
      deadline.unref()
      req.on('timeout', timedOut)
      req.on('close', () => {
        clearTimeout(answer)
        clearTimeout(deadline)
      })
      req.on('error', reject)
      trackConnection(this.connecting, req, url.protocol === 'https:' ? 'secureConnect' : 'connect')
      if (payload) req.write(payload)
      req.end()
    })
  }
}

/** What came instead of an API object, in a few words (an HTML page, `null`); undefined for plain text. */
export function answerShape(
  text: string,
  contentType: string,
  parsed: boolean,
  json: unknown,
): string | undefined {
  if (/html/i.test(contentType) || /^\s*<(!doctype|html|head|body)\b/i.test(text)) return 'an HTML page'
  if (parsed) return Array.isArray(json) ? 'a JSON array' : `JSON ${clip(String(JSON.stringify(json)), 40)}`
  return undefined
}

/** A request on a connection still opening is `connecting` until the connection is up (or it ends). */
function trackConnection(set: Set<Promise<void>>, req: http.ClientRequest, ready: string): void {
  const opened = new Promise<void>((resolve) => {
    req.once('socket', (socket) => (socket.connecting ? socket.once(ready, resolve) : resolve()))
    req.once('close', resolve)
  }).finally(() => set.delete(opened))
  set.add(opened)
}

/**
 * 401 (no credential accepted: an expired `aws eks get-token`, a wrong user) and a 403 to
 * `system:anonymous` (the credential was not even seen) mean no read of the run can succeed: one
 * EnvironmentError that says how to refresh them, instead of every check `unknown`.
 */
export function rejectedCredentials(err: KubeApiError, creds: KubeCredentials): EnvironmentError | undefined {
  const anonymous = err.status === 403 && /system:anonymous/.test(err.message)
  if (err.status !== 401 && !anonymous) return undefined
  const why = anonymous ? '403: it treats them as system:anonymous' : '401 Unauthorized'
  return new EnvironmentError(
    `the Kubernetes API at ${creds.server} rejected the credentials of kube context ${quote(creds.contextName)} (${why}): ${refreshHint(creds)}`,
    'KUBE_UNAUTHORIZED',
  )
}
