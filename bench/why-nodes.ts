// `karpctl why --nodes` at scale (issue 37 item 5): 1,000 Karpenter nodes in 10 NodePools (scheduled
// budgets among them), 30 pods each, PDBs and Karpenter's events, against a nock-served Kubernetes API
// (nothing leaves the process). Prints the wall and CPU time of the whole run (collect + judge) and of
// the judgement alone, and the API calls for 1 node and for 1,000: one read per kind, so the counts
// must be equal. A measurement, not a test.
//
//   npm run bench:why-nodes
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nock from 'nock'
import { createRunContext } from '../src/context/run-context.js'
import { judgeNodes } from '../src/why/node/judge.js'
import type { NodeSelector } from '../src/why/node/types.js'
import { whyNodes } from '../src/why/node/why-node.js'
import { KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml } from '../test/helpers/mock-cluster.js'
import { event, machine, nodeClass, pdb, pod, pool } from '../test/helpers/why-node.js'

const NODES = 1000
const POOLS = 10
const PODS_PER_NODE = 30

const pools = Array.from({ length: POOLS }, (_, i) =>
  pool({
    name: `pool-${i}`,
    disruption: {
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      // Half the pools hold drift back in business hours: every budget's schedule is evaluated.
      budgets:
        i % 2
          ? [
              { nodes: '10%' },
              { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h', reasons: ['Drifted'] },
            ]
          : [{ nodes: '10%' }],
    },
  }),
)
const machines = Array.from({ length: NODES }, (_, i) =>
  machine(`ip-10-${Math.floor(i / 250)}-${i % 250}-1`, {
    pool: `pool-${i % POOLS}`,
    allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
    ...(i % 7 === 0 ? { claimAnnotations: { 'karpenter.sh/nodepool-hash': 'old' } } : {}),
  }),
)
const pods = machines.flatMap((m, i) =>
  Array.from({ length: PODS_PER_NODE }, (_, j) =>
    // Every fourth node runs one pod a PDB allows no eviction of.
    pod(`app-${i}-${j}`, m.node.metadata.name, {
      cpu: '100m',
      labels: { app: i % 4 === 0 && j === 0 ? 'guarded' : `app-${j}` },
    }),
  ),
)
const pdbs = [
  ...Array.from({ length: 50 }, (_, j) => pdb(`app-${j}`, 1, { app: `app-${j}` })),
  pdb('guarded', 0, { app: 'guarded' }),
]
const events = machines
  .slice(0, 200)
  .map((m) => event('Node', m.node.metadata.name, 'DisruptionBlocked', 'Cannot disrupt Node'))

function answer(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list(pools)
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses':
      return list([nodeClass()])
    case '/api/v1/nodes':
      return list(machines.map((m) => m.node))
    case '/apis/karpenter.sh/v1/nodeclaims':
      return list(machines.map((m) => m.claim))
    case '/api/v1/pods':
      return list(pods)
    case '/apis/policy/v1/poddisruptionbudgets':
      return list(pdbs)
    case '/api/v1/namespaces/default/events':
      return list(events)
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  return url.pathname.split('/').length % 2 === 0 ? list([]) : [404, { kind: 'Status', reason: 'NotFound' }]
}

async function run(selector: NodeSelector) {
  const calls: string[] = []
  nock.cleanAll()
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
    nock(KUBE_SERVER)
      .persist()
      .intercept(/.*/, method)
      .reply(function (uri) {
        calls.push(`${this.req.method} ${uri}`)
        return answer(uri)
      })
  const ctx = await createRunContext({
    clusterName: 'demo',
    region: 'us-west-2',
    karpctlVersion: 'bench',
    maxAttempts: 1,
  })
  const wall = performance.now()
  const cpu = process.cpuUsage()
  const out = await whyNodes({ context: ctx, selector })
  const total = process.cpuUsage(cpu)
  const ms = performance.now() - wall
  return { out, calls: calls.sort(), ms, cpuMs: (total.user + total.system) / 1000 }
}

const dir = mkdtempSync(join(tmpdir(), 'karpctl-bench-why-nodes-'))
writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml(KUBE_SERVER, KUBE_TOKEN))
process.env.KUBECONFIG = join(dir, 'kubeconfig')
process.env.AWS_ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE'
process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
nock.disableNetConnect()
try {
  await run({ kind: 'nodes' }) // warm: module loading is not what is measured
  const many = await run({ kind: 'nodes' })
  const one = await run({ kind: 'node', name: machines[1]?.node.metadata.name ?? '' })
  const judged = process.cpuUsage()
  const t = performance.now()
  const report = judgeNodes(many.out.facts, 'live')
  const judgeMs = performance.now() - t
  const judgeCpu = process.cpuUsage(judged)
  console.log(
    `${NODES} nodes × ${PODS_PER_NODE} pods, ${POOLS} NodePools, ${pdbs.length} PDBs, ${events.length} events`,
  )
  console.log(`why --nodes: ${many.ms.toFixed(0)} ms wall, ${many.cpuMs.toFixed(0)} ms CPU (collect + judge)`)
  console.log(
    `judgement alone: ${judgeMs.toFixed(0)} ms wall, ${((judgeCpu.user + judgeCpu.system) / 1000).toFixed(0)} ms CPU`,
  )
  console.log(`why node/NAME: ${one.ms.toFixed(0)} ms wall`)
  console.log(`verdicts: ${JSON.stringify(report.summary)}`)
  console.log(`API calls for 1,000 nodes: ${many.calls.length}; for 1 node: ${one.calls.length}`)
  console.log(
    many.calls.join(',') === one.calls.join(',')
      ? 'same API calls for 1 node and 1,000'
      : 'API calls differ between 1 node and 1,000',
  )
} finally {
  nock.cleanAll()
  nock.enableNetConnect()
  rmSync(dir, { recursive: true, force: true })
}
