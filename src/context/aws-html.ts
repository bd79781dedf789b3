// A 200 that is not AWS's: a captive portal or a proxy answers an API call with its HTML page, and the
// SDK's XML parser reads that as an answer with nothing in it — DescribeInstanceTypes "offers 0 types",
// judged as a fact. Each successful answer's body is looked at before the SDK parses it; an HTML page
// fails the call (Aws.send names the service, the endpoint and the operation), so the read is unknown.
import type { Readable } from 'node:stream'

/** The error the middleware throws; Aws.send turns it into a BadAnswer naming the call. */
export class HtmlAnswer extends Error {
  override name = 'HtmlAnswer'
  constructor(readonly status: number) {
    super(`HTTP ${status} with an HTML page`)
  }
}

const HTML = /^\s*<(!doctype\s+html|html|head|body)\b/i

/** Whether a body is an HTML page (by its first bytes: emulators label XML `text/html` too). */
export const isHtml = (body: Uint8Array) => HTML.test(Buffer.from(body.subarray(0, 512)).toString('latin1'))

interface RawResponse {
  statusCode?: number
  body?: unknown
}
interface Stack {
  add(
    mw: (next: (args: unknown) => Promise<{ response?: unknown }>) => (args: unknown) => Promise<unknown>,
    options: { step: string; name: string; priority?: string },
  ): void
}

/** Buffers each 2xx body (the SDK's own collector takes a Uint8Array as is) and refuses an HTML page. */
export function refuseHtml(client: unknown): void {
  const stack = (client as { middlewareStack?: Stack }).middlewareStack
  if (!stack) return
  stack.add(
    (next) => async (args) => {
      const result = await next(args)
      const response = result.response as RawResponse | undefined
      const status = response?.statusCode ?? 0
      if (!response || status < 200 || status >= 300 || !response.body) return result
      const body = response.body
      if (body instanceof Uint8Array) {
        if (isHtml(body)) throw new HtmlAnswer(status)
        return result
      }
      const chunks: Buffer[] = []
      for await (const c of body as Readable) chunks.push(Buffer.from(c as Uint8Array))
      const bytes = Buffer.concat(chunks)
      if (isHtml(bytes)) throw new HtmlAnswer(status)
      response.body = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      return result
    },
    // Deserialize step, low priority: inside the SDK's deserializer, so it sees the raw response first.
    { step: 'deserialize', name: 'karpctlRefuseHtml', priority: 'low' },
  )
}
