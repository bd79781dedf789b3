// How `tenant list` and `doctor` grow with the number of tenants on the real bed: AWS calls (counted by a
// proxy on 127.0.0.1 in front of moto), Kubernetes calls (doctor's snapshot records them) and wall time,
// for 1, 10 and 100 tenants (TENANTS=1,10,100). Each must grow no worse than linearly.
//   node --import tsx bench/tenants.ts
import { readFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import {
  CLUSTER_NAME,
  karpenterFixtures,
  playController,
  REGION,
  runKarpctl,
  seedBareCluster,
  startBed,
} from '../test/e2e/bed/index.js'

const counts = (process.env.TENANTS ?? '1,10,100').split(',').map(Number)
const bed = await startBed()
let awsCalls = 0
const to = new URL(bed.awsEndpoint)
const proxy = createServer((req, res) => {
  awsCalls++
  const up = request(
    { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.pipe(res)
    },
  )
  up.on('error', () => res.destroy())
  req.pipe(up)
})
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
const env = {
  NO_COLOR: '1',
  PATH: `${bed.binDir}:${process.env.PATH}`,
  AWS_ENDPOINT_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
}
const target = ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
const karpctl = (args: string[]) => runKarpctl(bed, [...args, ...target], { env, timeoutMs: 900_000 })
try {
  const seed = await seedBareCluster(bed)
  const stop = playController(bed, seed.net)
  const i = await karpctl([
    'install',
    '--chart-dir',
    join(karpenterFixtures(), 'v1.14.1', 'charts'),
    '--yes',
    '--timeout',
    '60',
  ])
  if (i.code !== 0) throw new Error(i.stderr)
  let have = 0
  console.log('tenants  tenant-list: wall  AWS calls   doctor: wall  AWS calls  kube calls')
  for (const n of counts) {
    for (; have < n; have++) {
      const r = await karpctl(['tenant', 'add', `t${have}`, '--yes', '--timeout', '30'])
      if (r.code !== 0) throw new Error(`tenant add t${have}: ${r.stderr}`)
    }
    awsCalls = 0
    const list = await karpctl(['tenant', 'list', '--json'])
    const listCalls = awsCalls
    awsCalls = 0
    const snap = join(bed.tmpDir, `snap-${n}.json`)
    const doc = await karpctl(['doctor', '--json', '--save-snapshot', snap])
    const kube =
      (JSON.parse(readFileSync(snap, 'utf8')) as { meta: { calls?: Record<string, number> } }).meta.calls
        ?.kube ?? 0
    console.log(
      `${String(n).padStart(7)}  ${(list.durationMs / 1000).toFixed(2).padStart(15)} s ${String(listCalls).padStart(10)}  ${(doc.durationMs / 1000).toFixed(2).padStart(10)} s ${String(awsCalls).padStart(10)} ${String(kube).padStart(11)}`,
    )
  }
  await stop()
} finally {
  proxy.close()
  await bed.stop()
}
