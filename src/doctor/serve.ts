// `doctor --serve`: doctor on a schedule inside the cluster it checks. Each run is a fresh doctor run
// (a new context: nothing memoized from the last one); its results become /metrics and Events on the
// objects they are about. Runs never overlap: the next starts `interval` after the last one ended.
// The first SIGTERM (a pod being stopped) ends the wait, lets a running run finish, closes the server.
import http from 'node:http'
import { hostname } from 'node:os'
import { performance } from 'node:perf_hooks'
import { createRunContext, type RunOptions } from '../context/run-context.js'
import { interrupt, StoppedError } from '../context/interrupt.js'
import { redactText } from '../redact/redact.js'
import { doctor } from './doctor.js'
import { findingEvents, postEvents } from './events.js'
import { METRICS_CONTENT_TYPE, readFailuresIn, renderMetrics, type ServeState } from './metrics.js'

export interface ServeRequest {
  live: RunOptions
  only?: string[]
  skip?: string[]
  intervalMs: number
  listen: { host: string; port: number }
  /** Post Events (false: metrics only, for a ServiceAccount without the events grant). */
  events: boolean
  /** The bound of one run; a run past it counts as an error and the next is scheduled. */
  runTimeoutMs: number
  log: (line: string) => void
  /** Resolved once the server listens, with its address (a port of 0 is chosen by the system). */
  onListening?: (address: { host: string; port: number }) => void
}

/** A run that never ended is a stuck loop: /healthz fails once the last run is this many intervals old. */
const STALE_INTERVALS = 3

export async function serve(req: ServeRequest): Promise<void> {
  const state: ServeState = { runs: { ok: 0, error: 0 }, events: { posted: 0, failed: 0 } }
  const started = Date.now()
  const server = http.createServer((rq, rs) => {
    const path = (rq.url ?? '/').split('?')[0]
    if (rq.method !== 'GET' && rq.method !== 'HEAD') return answer(rs, 405, 'GET only\n')
    if (path === '/metrics') return answer(rs, 200, renderMetrics(state), METRICS_CONTENT_TYPE)
    if (path === '/healthz') {
      const since = state.lastRunEndedS === undefined ? started : state.lastRunEndedS * 1000
      const limit = STALE_INTERVALS * req.intervalMs + req.runTimeoutMs
      return Date.now() - since > limit
        ? answer(rs, 503, `no doctor run ended in the last ${Math.round(limit / 1000)} s\n`)
        : answer(rs, 200, 'ok\n')
    }
    answer(rs, 404, 'not found: /metrics, /healthz\n')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(req.listen.port, req.listen.host, () => resolve())
  })
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : req.listen.port
  req.log(
    `serving /metrics and /healthz on http://${req.listen.host}:${port}, doctor every ${req.intervalMs / 1000} s`,
  )
  req.onListening?.({ host: req.listen.host, port })
  const instance = process.env.POD_NAME || hostname()
  // While the loop runs, a signal stops it here instead of exiting the process (interrupt.ts).
  await interrupt.whileApplying(async () => {
    while (!interrupt.stopping) {
      await runOnce(req, state, instance)
      try {
        await interrupt.sleep(req.intervalMs)
      } catch (err) {
        if (!(err instanceof StoppedError)) throw err
      }
    }
  })
  req.log(`stopping (${interrupt.signal ?? 'done'}): the server closes`)
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

function answer(rs: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8') {
  rs.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) })
  rs.end(body)
}

async function runOnce(req: ServeRequest, state: ServeState, instance: string): Promise<void> {
  const t0 = performance.now()
  let timer: NodeJS.Timeout | undefined
  try {
    const ctx = await createRunContext(req.live)
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the run did not finish within ${req.runTimeoutMs / 1000} s (--timeout)`)),
        req.runTimeoutMs,
      )
    })
    bound.catch(() => undefined)
    const outcome = await Promise.race([doctor({ context: ctx, only: req.only, skip: req.skip }), bound])
    state.last = {
      results: outcome.results,
      readFailures: readFailuresIn(outcome.facts),
      apiCalls: outcome.calls?.length ?? 0,
    }
    state.runs.ok++
    state.lastRunOk = true
    const failing = outcome.results.filter((r) => r.status === 'fail' || r.status === 'unknown').length
    req.log(
      `doctor: ${outcome.results.length} checks, ${failing} failing or unknown, ${state.last.apiCalls} calls`,
    )
    if (req.events) {
      const now = ctx.clock()
      const events = findingEvents(outcome.results, outcome.facts, now, instance)
      const n = await Promise.race([
        postEvents(ctx.kube, events, now, (e, err) =>
          req.log(
            `event ${e.metadata.namespace}/${e.metadata.name} on ${e.regarding.kind}/${e.regarding.name}: ${errorLine(err)}`,
          ),
        ),
        bound,
      ])
      state.events.posted += n.posted
      state.events.failed += n.failed
      req.log(`events: ${n.posted} written, ${n.failed} failed`)
    }
  } catch (err) {
    // A run that could not run (credentials, an unreachable API) is on /metrics and in the log; the
    // last report stays until a run replaces it, and the loop goes on.
    state.runs.error++
    state.lastRunOk = false
    req.log(`doctor could not run: ${errorLine(err)}`)
  } finally {
    clearTimeout(timer)
    state.lastRunEndedS = Math.round(Date.now() / 1000)
    state.lastRunDurationS = Math.round(performance.now() - t0) / 1000
  }
}

const errorLine = (err: unknown) =>
  redactText((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '')
