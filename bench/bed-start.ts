// Start-up cost of the e2e bed with and without the real Karpenter controller, interleaved round by
// round (load on this shared machine hits both alike). With `karpenter: true` the bed also starts
// kube-scheduler and moto through bed/moto_launcher.py; the controller itself starts when the chart's
// Deployment and CRDs exist, so its figure is from `helm install` of the chart to /readyz, and its
// resident memory once ready.
//   node --import tsx bench/bed-start.ts [rounds=3]
// Needs the bed built with the controller (test/e2e/bed/build.sh without KARPCTL_E2E_NO_KARPENTER).
import { readFileSync } from 'node:fs'
import { installKarpenterChart, startBed } from '../test/e2e/bed/index.js'
// @ts-expect-error: a plain .mjs helper shared with bench/startup.mjs
import { median } from './baseline.mjs'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const rounds = Number(process.argv[2] ?? 3)
const med = median as (xs: number[]) => number

/** Resident memory of a process group's leader's child (the leash runs the server as its child). */
function rssMiB(leashPid: number): number {
  const children = readFileSync(`/proc/${leashPid}/task/${leashPid}/children`, 'utf8').trim().split(/\s+/)
  let kib = 0
  for (const pid of children.filter(Boolean)) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    kib = Math.max(kib, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0))
  }
  return Math.round(kib / 1024)
}

const plain: number[] = []
const withKarpenter: number[] = []
const controllerReady: number[] = []
const rss: number[] = []
for (let i = 0; i < rounds; i++) {
  let t0 = Date.now()
  const a = await startBed()
  plain.push(Date.now() - t0)
  await a.stop()

  t0 = Date.now()
  const b = await startBed({ karpenter: true })
  withKarpenter.push(Date.now() - t0)
  try {
    t0 = Date.now()
    await installKarpenterChart(b)
    await b.karpenter!.controller.ready()
    controllerReady.push(Date.now() - t0)
    rss.push(rssMiB(b.procs.karpenter!.pid))
  } finally {
    await b.stop()
  }
  console.error(
    `round ${i + 1}: bed ${plain.at(-1)} ms, bed+karpenter ${withKarpenter.at(-1)} ms, chart → /readyz ${controllerReady.at(-1)} ms`,
  )
}
const fmt = (xs: number[]) => `median ${med(xs)} ms (${xs.join(', ')})`
console.log(`startBed()                       ${fmt(plain)}`)
console.log(`startBed({ karpenter: true })    ${fmt(withKarpenter)}`)
console.log(`helm install chart → /readyz     ${fmt(controllerReady)}`)
console.log(`controller RSS once ready        median ${med(rss)} MiB`)
