// A proxy on 127.0.0.1 in front of moto that holds each request `ms` before passing it on, and counts
// the calls and the sum of their durations: what a one-call-at-a-time run would wait.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Calls {
  count: number
  totalMs: number
  /** When each call was in flight ([start, end] in ms): their union is the time some AWS call was awaited. */
  spans: [number, number][]
}

/** How long at least one call was in flight: the AWS time on the run's critical path (overlaps count once). */
export function inFlightMs(spans: [number, number][]): number {
  let total = 0
  let end = -Infinity
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    if (b <= end) continue
    total += b - Math.max(a, end)
    end = b
  }
  return total
}

export function latencyProxy(target: string, ms: number) {
  const calls: Calls = { count: 0, totalMs: 0, spans: [] }
  const to = new URL(target)
  const server = createServer((req, res) => {
    const t0 = performance.now()
    calls.count++
    setTimeout(() => {
      const up = request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers)
          r.pipe(res)
          r.on('end', () => {
            const t1 = performance.now()
            calls.totalMs += t1 - t0
            calls.spans.push([t0, t1])
          })
        },
      )
      up.on('error', () => res.destroy())
      req.pipe(up)
    }, ms)
  })
  return new Promise<{ url: string; calls: Calls; close: () => void }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        calls,
        close: () => server.close(),
      }),
    ),
  )
}
