// Preloaded (`node -r`) into one `karpctl doctor` by bench/doctor-floor.ts: records every HTTP(S)
// request the run makes (method, URL, headers, body) with the time it started and the time its answer
// ended, and writes them to $KARPCTL_RECORD at exit. Benchmark tooling only: never loaded by karpctl.
const http = require('node:http')
const { writeFileSync } = require('node:fs')
const { performance } = require('node:perf_hooks')

const records = []
const { end, write } = http.ClientRequest.prototype
http.ClientRequest.prototype.write = function (chunk, ...rest) {
  if (chunk) (this.__body ??= []).push(Buffer.from(chunk).toString('utf8'))
  return write.call(this, chunk, ...rest)
}
http.ClientRequest.prototype.end = function (chunk, ...rest) {
  if (chunk && typeof chunk !== 'function') (this.__body ??= []).push(Buffer.from(chunk).toString('utf8'))
  const record = {
    start: performance.now(),
    end: 0,
    method: this.method,
    url: `${this.protocol}//${this.host}${this.path}`,
    host: this.host,
    port: undefined,
    path: this.path,
    headers: this.getHeaders(),
    body: '',
  }
  records.push(record)
  this.once('response', (res) => {
    record.port = res.socket?.remotePort ?? record.port
    res.once('end', () => (record.end = performance.now()))
  })
  const out = end.call(this, chunk, ...rest)
  record.body = (this.__body ?? []).join('')
  return out
}
process.on('exit', () => writeFileSync(process.env.KARPCTL_RECORD, JSON.stringify(records)))
