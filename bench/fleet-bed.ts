// `karpctl doctor --all-clusters --json` on the e2e bed with 1, 10 and 100 clusters: one moto holding
// every cluster (us-west-2, one account), one kube-apiserver shared by all of them (the getting-started
// install), each reached through a kubeconfig context named by its ARN (--kubeconfig-contexts; the bed's
// API server knows static tokens, not EKS tokens). Prints wall time and API calls per size: calls must
// grow linearly (a fixed part for discovery and the account's shared reads, plus the same per cluster),
// wall time sub-linearly up to the concurrency bound (--concurrency, default 8).
//   node --import tsx bench/fleet-bed.ts [sizes=1,10,100]
// Measured 2026-12-04 on the shared 2-core machine (other test suites running): 1 cluster 11.0 s / 76
// calls, 10 clusters 26.7 s / 283 calls, 100 clusters 90.8 s / 2353 calls = 2 (discovery) + 74 (the
// first cluster) + 23 per further cluster, exactly (reads of the account shared through the memo).
// Needs `npm run build` and the bed (KARPCTL_E2E_BIN / KARPCTL_E2E_VENV, or it runs test/e2e/bed/build.sh).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CreateClusterCommand } from '@aws-sdk/client-eks'
import { parse, stringify } from 'yaml'
import { awsClients, runKarpctl, seedAws, seedKubernetes, startBed } from '../test/e2e/bed/index.js'

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const sizes = (process.argv[2] ?? '1,10,100').split(',').map(Number)

const bed = await startBed()
try {
  const seed = await seedAws(bed)
  await seedKubernetes(bed, { aws: seed })
  const aws = awsClients(bed)
  const doc = parse(readFileSync(bed.kubeconfigPath, 'utf8'))
  const [cluster, user] = [doc.clusters[0], doc.users[0]]
  let made = 1
  const rows: string[] = []
  for (const n of sizes) {
    for (; made < n; made++)
      await aws.eks.send(
        new CreateClusterCommand({
          name: `c${String(made).padStart(3, '0')}`,
          version: '1.34',
          roleArn: seed.clusterRoleArn,
          resourcesVpcConfig: { subnetIds: seed.subnetIds },
        }),
      )
    const names = ['demo', ...Array.from({ length: n - 1 }, (_, i) => `c${String(i + 1).padStart(3, '0')}`)]
    const arn = (name: string) => `arn:aws:eks:us-west-2:123456789012:cluster/${name}`
    const kubeconfig = join(bed.tmpDir, `fleet-${n}`)
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: names.map((c) => ({ ...cluster, name: arn(c) })),
        users: names.map((c) => ({ ...user, name: arn(c) })),
        contexts: names.map((c) => ({ name: arn(c), context: { cluster: arn(c), user: arn(c) } })),
        'current-context': arn('demo'),
      }),
      { mode: 0o600 },
    )
    // Only the first n clusters exist in moto at this size (the bench makes them as it grows).
    const r = await runKarpctl(
      bed,
      [
        'doctor',
        '--all-clusters',
        '--regions',
        'us-west-2',
        '--kubeconfig-contexts',
        '--json',
        '--timeout',
        '600',
      ],
      { env: { KUBECONFIG: kubeconfig }, timeoutMs: 1_800_000 },
    )
    const out = JSON.parse(r.stdout) as {
      wallTimeMs: number
      apiCalls: number
      clusters: { apiCalls: number }[]
    }
    const perCluster = out.clusters.map((c) => c.apiCalls)
    rows.push(
      `${String(n).padStart(4)} clusters: ${String(out.wallTimeMs).padStart(6)} ms wall, ${String(out.apiCalls).padStart(5)} API calls (per cluster min ${Math.min(...perCluster)} max ${Math.max(...perCluster)}), ${out.clusters.length} judged`,
    )
    console.log(rows.at(-1))
  }
} finally {
  await bed.stop()
}
