// `karpctl why --all-pending` at scale (issue 22 item 5): 1,000 pending pods, 20 NodePools and ~800
// instance types, against a nock-served Kubernetes API and EC2 (nothing leaves the process). Prints the
// CPU time of the whole run (collect + judge) and of the judgement alone, and the API calls made for
// one pod and for 1,000: the reads are memoized, so the counts must be equal. A measurement, not a test.
//
//   npm run bench:why
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nock from 'nock'
import { createRunContext } from '../src/context/run-context.js'
import type { NodePool } from '../src/facts/types.js'
import { judge } from '../src/why/judge.js'
import type { InstanceTypeInfo, WorkloadPod } from '../src/why/types.js'
import { why } from '../src/why/why.js'
import { healthyNodeClass, healthyNodePool } from '../test/helpers/facts.js'
import { ec2Answer, HOSTS, KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml } from '../test/helpers/mock-cluster.js'
import { describedType, pendingPod } from '../test/helpers/why.js'

const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c']
const ZONE = 'topology.kubernetes.io/zone'
const SIZES: [string, number][] = [
  ['medium', 1],
  ['large', 2],
  ['xlarge', 4],
  ['2xlarge', 8],
  ['4xlarge', 16],
  ['8xlarge', 32],
  ['12xlarge', 48],
  ['16xlarge', 64],
  ['24xlarge', 96],
  ['48xlarge', 192],
]
const CATEGORIES: [string, number][] = [
  ['c', 2048],
  ['m', 4096],
  ['r', 8192],
  ['t', 4096],
  ['x', 16384],
  ['i', 8192],
  ['z', 8192],
  ['d', 8192],
  ['g', 4096],
  ['h', 4096],
]
const VARIANTS = ['5', '5n', '6i', '6a', '6g', '7i', '7a', '7g']

/**
 * 800 types: 10 categories × 8 generation variants × 10 sizes; Graviton (`g`) ones arm64. Devices as
 * EC2 describes them: `g` types have NVIDIA GPUs, `z` Neuron devices, large `h` EFA, `i` and `d` an
 * instance store.
 */
function syntheticTypes(): InstanceTypeInfo[] {
  const out: InstanceTypeInfo[] = []
  for (const [cat, perCpu] of CATEGORIES)
    for (const v of VARIANTS)
      for (const [size, vcpus] of SIZES)
        out.push({
          name: `${cat}${v}.${size}`,
          vcpus,
          memoryMiB: vcpus * perCpu,
          architectures: v.endsWith('g') ? ['arm64'] : ['x86_64'],
          usageClasses: ['on-demand', 'spot'],
          maxEnis: Math.min(15, 2 + Math.floor(vcpus / 4)),
          ipv4PerEni: Math.min(50, 4 + vcpus),
          gpus: cat === 'g' ? [{ manufacturer: 'NVIDIA', name: 'A10G', count: Math.max(1, vcpus / 8) }] : [],
          neuronDevices: cat === 'z' ? [{ count: Math.max(1, vcpus / 16), coresPerDevice: 2 }] : [],
          efaInterfaces: cat === 'h' && vcpus >= 48 ? 1 : 0,
          instanceStorageGB: cat === 'i' || cat === 'd' ? vcpus * 118 : 0,
        })
  return out
}

/** 20 NodePools: weights, categories, arches, capacity types, size exclusions, a few taints. */
function nodePools(): NodePool[] {
  return Array.from({ length: 20 }, (_, i) => {
    const np = healthyNodePool()
    np.metadata = { name: `pool-${String(i).padStart(2, '0')}` }
    np.spec.weight = i % 4 === 0 ? 10 * i : undefined
    np.spec.template.spec.requirements = [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: i % 2 ? ['spot'] : ['on-demand', 'spot'] },
      {
        key: 'karpenter.k8s.aws/instance-category',
        operator: 'In',
        // The last two NodePools take the device categories (GPU, Neuron, EFA, instance store).
        values: i >= 18 ? ['g', 'h', 'z', 'i'] : CATEGORIES.slice(i % 5, (i % 5) + 3).map(([c]) => c),
      },
      { key: 'kubernetes.io/arch', operator: 'In', values: i % 3 ? ['amd64'] : ['arm64', 'amd64'] },
      { key: 'karpenter.k8s.aws/instance-size', operator: 'NotIn', values: ['metal', '48xlarge'] },
    ]
    if (i % 7 === 6)
      np.spec.template.spec.taints = [{ key: 'dedicated', value: `t${i}`, effect: 'NoSchedule' }]
    // Two NodePools' nodes use their instance store for pods' storage.
    if (i % 10 === 9)
      np.spec.template.spec.nodeClassRef = { ...np.spec.template.spec.nodeClassRef, name: 'raid0' }
    // Three launch in two zones only: the zone spread rules some out.
    if (i % 7 === 2)
      np.spec.template.spec.requirements.push({ key: ZONE, operator: 'In', values: ZONES.slice(0, 1) })
    return np
  })
}

/**
 * 1,000 pods, each its own scheduling spec (distinct requests), some with an arch or zone selector, a
 * few too big; and, for the rules on devices, storage, ports and spread: GPUs, Neuron cores or EFA
 * (one in 13), ephemeral storage some root volume holds and some only an instance store (one in 17),
 * a DaemonSet's host port or a free one (two in 19), a required zone spread (one in 7).
 */
function pods(n: number): WorkloadPod[] {
  return Array.from({ length: n }, (_, i) => {
    const nodeSelector: Record<string, string> = {}
    if (i % 5 === 1) nodeSelector['kubernetes.io/arch'] = 'arm64'
    if (i % 11 === 2) nodeSelector[ZONE] = ZONES[i % 3] as string
    const requests: Record<string, string> = {
      // One in 97 too big for any type (200 cores): the ruled-out path is measured too.
      cpu: i % 97 ? `${100 + i * 7}m` : '200',
      memory: `${256 + i * 13}Mi`,
    }
    if (i % 13 === 3)
      requests[['nvidia.com/gpu', 'aws.amazon.com/neuroncore', 'vpc.amazonaws.com/efa'][i % 3] as string] =
        String(1 + (i % 4))
    if (i % 17 === 4) requests['ephemeral-storage'] = i % 2 ? '10Gi' : '200Gi'
    const port = i % 19 === 5 ? 9100 : i % 19 === 6 ? 8080 : undefined
    const pod = pendingPod(
      {
        containers: [
          {
            name: 'app',
            resources: { requests },
            ...(port ? { ports: [{ containerPort: port, hostPort: port }] } : {}),
          },
        ],
        ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
        ...(i % 7 === 0
          ? {
              topologySpreadConstraints: [
                {
                  topologyKey: ZONE,
                  whenUnsatisfiable: 'DoNotSchedule',
                  maxSkew: 1 + (i % 2),
                  labelSelector: { matchLabels: { app: `spread-${i % 3}` } },
                },
              ],
            }
          : {}),
      },
      `bench-${i}`,
    )
    if (i % 7 === 0) pod.metadata.labels = { ...pod.metadata.labels, app: `spread-${i % 3}` }
    return pod
  })
}

/** 30 nodes, ten a zone, and 300 pods on them: the spread groups lean towards us-west-2a. */
const NODES = Array.from({ length: 30 }, (_, i) => ({
  metadata: { name: `node-${i}`, labels: { [ZONE]: ZONES[i % 3] as string } },
}))
const PLACED = Array.from({ length: 300 }, (_, i) => ({
  metadata: { name: `placed-${i}`, namespace: 'shop', labels: { app: `spread-${i % 3}` } },
  spec: { nodeName: `node-${i % 5 === 0 ? i % 30 : (i % 10) * 3}`, containers: [] },
  status: { phase: 'Running' },
}))

const TYPES = syntheticTypes()
let served: WorkloadPod[] = []
const calls: string[] = []

function kubeAnswer(path: string): [number, unknown] {
  const url = new URL(path, KUBE_SERVER)
  const list = (items: unknown[]) => [200, { items }] as [number, unknown]
  switch (url.pathname) {
    case '/apis/karpenter.sh/v1/nodepools':
      return list(nodePools())
    case '/apis/karpenter.k8s.aws/v1/ec2nodeclasses': {
      const nc = healthyNodeClass()
      nc.status = { ...nc.status, subnets: ZONES.map((zone, i) => ({ id: `subnet-${i}`, zone })) }
      const raid = healthyNodeClass()
      raid.metadata = { ...raid.metadata, name: 'raid0' }
      raid.spec = { ...raid.spec, instanceStorePolicy: 'RAID0' }
      raid.status = nc.status
      return list([nc, raid])
    }
    case '/api/v1/nodes':
      return list(NODES)
    case '/api/v1/pods':
    case '/api/v1/namespaces/shop/pods':
      return list(url.searchParams.get('fieldSelector')?.includes('spec.nodeName') ? PLACED : served)
    case '/apis/apps/v1/daemonsets':
      return list(
        ['aws-node', 'kube-proxy', 'ebs-csi-node', 'fluent-bit', 'node-exporter'].map((name) => ({
          metadata: { name, namespace: 'kube-system' },
          spec: {
            template: {
              spec: {
                containers: [
                  {
                    name,
                    resources: { requests: { cpu: '25m', memory: '64Mi' } },
                    ...(name === 'node-exporter' ? { ports: [{ containerPort: 9100, hostPort: 9100 }] } : {}),
                  },
                ],
                tolerations: [{ operator: 'Exists' }],
              },
            },
          },
        })),
      )
    case '/version':
      return [200, { gitVersion: 'v1.31.0' }]
  }
  return url.pathname.split('/').length % 2 === 0 && !/\/namespaces\/[^/]+\/[^/]+\/[^/]+$/.test(url.pathname)
    ? list([])
    : [404, { kind: 'Status', reason: 'NotFound', message: 'not found' }]
}

function ec2(body: string): [number, string, Record<string, string>] {
  const q = new URLSearchParams(body)
  const action = q.get('Action') ?? ''
  const token = Number(q.get('NextToken') ?? '0')
  let a: ReturnType<typeof ec2Answer>
  if (action === 'DescribeInstanceTypes') {
    const page = TYPES.slice(token, token + 100)
    a = ec2Answer(action, {
      instanceTypeSet: page.map(describedType),
      ...(token + 100 < TYPES.length ? { nextToken: String(token + 100) } : {}),
    })
  } else {
    // Every type in every zone but one in nine missing from us-west-2c; pages of 1,000.
    const all = TYPES.flatMap((t, i) => ZONES.filter((z, j) => j < 2 || i % 9).map((z) => [t.name, z]))
    const page = all.slice(token, token + 1000)
    a = ec2Answer(action, {
      instanceTypeOfferingSet: page.map(([t, z]) => ({
        instanceType: t,
        locationType: 'availability-zone',
        location: z,
      })),
      ...(token + 1000 < all.length ? { nextToken: String(token + 1000) } : {}),
    })
  }
  return [a.status, a.body, a.headers]
}

async function run(n: number) {
  served = pods(n)
  calls.length = 0
  const ctx = await createRunContext({
    clusterName: 'demo',
    region: 'us-west-2',
    karpctlVersion: 'bench',
    maxAttempts: 1,
  })
  const cpu = process.cpuUsage()
  const { report, facts } = await why({ context: ctx, selector: { kind: 'all-pending' } })
  const total = process.cpuUsage(cpu)
  const judged = process.cpuUsage()
  judge(facts, 'live')
  const judgeOnly = process.cpuUsage(judged)
  const ms = (u: NodeJS.CpuUsage) => ((u.user + u.system) / 1000).toFixed(0)
  const count = (prefix: string) => calls.filter((c) => c.startsWith(prefix)).length
  // Which rule decided each pod × NodePool verdict: every rule must be exercised.
  const rules: Record<string, number> = {}
  for (const g of report.groups)
    for (const v of g.nodePools) {
      const k = `${v.status === 'fits' ? 'fits' : v.rule}${v.status === 'unknown' ? '?' : ''}`
      rules[k] = (rules[k] ?? 0) + 1
    }
  return {
    n,
    rules,
    pods: report.summary.pods,
    summary: report.summary,
    cpuMs: ms(total),
    judgeCpuMs: ms(judgeOnly),
    kubeCalls: count('kube '),
    ec2Calls: count('ec2 '),
    types: facts.instanceTypes?.ok ? facts.instanceTypes.value.length : 0,
  }
}

const dir = mkdtempSync(join(tmpdir(), 'karpctl-bench-why-'))
writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml(KUBE_SERVER, KUBE_TOKEN))
Object.assign(process.env, {
  KUBECONFIG: join(dir, 'kubeconfig'),
  AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  AWS_EC2_METADATA_DISABLED: 'true',
})
delete process.env.AWS_PROFILE
delete process.env.AWS_ENDPOINT_URL
nock.disableNetConnect()
nock(KUBE_SERVER)
  .persist()
  .get(/.*/)
  .reply((uri) => {
    calls.push(`kube ${uri}`)
    return kubeAnswer(uri)
  })
nock(HOSTS.ec2)
  .persist()
  .post('/')
  .reply((_uri, body) => {
    calls.push(`ec2 ${new URLSearchParams(String(body)).get('Action')}`)
    return ec2(String(body))
  })
try {
  const one = await run(1)
  const many = await run(1000)
  for (const r of [one, many])
    console.log(
      `${String(r.n).padStart(5)} pod(s), 20 NodePools, ${r.types} types: CPU ${r.cpuMs} ms (judge ${r.judgeCpuMs} ms); API calls: ${r.kubeCalls} Kubernetes, ${r.ec2Calls} EC2; ${JSON.stringify(r.summary)}`,
    )
  console.log(`verdicts by rule (1,000 pods × 20 NodePools): ${JSON.stringify(many.rules)}`)
  const same = one.kubeCalls === many.kubeCalls && one.ec2Calls === many.ec2Calls
  console.log(same ? 'same API calls for 1 pod and 1,000' : 'API calls differ between 1 pod and 1,000')
  process.exitCode = same ? 0 : 1
} finally {
  nock.cleanAll()
  rmSync(dir, { recursive: true, force: true })
}
