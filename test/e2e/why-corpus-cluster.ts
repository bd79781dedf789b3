// The cluster the `why` corpus runs in, on top of the getting-started install (NodePool and
// EC2NodeClass `default`, Ready, subnets in us-west-2a/b/c): one NodePool per way a NodePool can be
// unable to take a pod, a DaemonSet every node runs (its requests are every NodePool's overhead),
// NodeClaims that hold part of two NodePools' limits and two that failed to launch, StorageClasses, a
// DaemonSet binding a host port, and nodes in three zones with pods placed on them (topology spread).
import {
  applyWithRetry,
  createNodegroupNodes,
  defaultEC2NodeClass,
  defaultNodePool,
  markNodeClassReady,
  markNodePoolReady,
  nodeClassStatusFromSeed,
  type KubeClient,
  type KubeObject,
  type SeedResult,
} from './bed/index.js'
import {
  ebsStorageClass,
  ensureNamespace,
  markNodeClassNotReady,
  podSpecOf,
  seedNodeClaim,
  seedOwner,
  seedPod,
  type PodSeed,
} from './bed/workload-seed.js'

type Requirement = { key: string; operator: string; values?: string[] }

/** A NodePool like the guide's `default`, with its own requirements, taints, labels, limits, weight. */
function nodePool(
  name: string,
  opts: {
    nodeClass?: string
    requirements?: Requirement[]
    taints?: { key: string; value?: string; effect: string }[]
    labels?: Record<string, string>
    limits?: Record<string, string>
    weight?: number
  },
): KubeObject {
  const np = defaultNodePool({ name, nodeClassName: opts.nodeClass ?? 'default' })
  const spec = np.spec.template.spec
  if (opts.requirements) spec.requirements = opts.requirements
  if (opts.taints) spec.taints = opts.taints
  if (opts.labels) np.spec.template.metadata = { labels: opts.labels }
  if (opts.limits) np.spec.limits = opts.limits
  if (opts.weight !== undefined) np.spec.weight = opts.weight
  return np
}

const req = (key: string, operator: string, ...values: string[]): Requirement => ({
  key,
  operator,
  ...(values.length ? { values } : {}),
})
const AMD64 = req('kubernetes.io/arch', 'In', 'amd64')
const ON_DEMAND = req('karpenter.sh/capacity-type', 'In', 'on-demand')

/** The NodePools besides `default`, in the order Karpenter tries them (`gpu` has weight 50). */
export const CORPUS_NODEPOOLS = {
  /** Tainted nvidia.com/gpu=true:NoSchedule; g-category types only. */
  gpu: nodePool('gpu', {
    weight: 50,
    requirements: [AMD64, ON_DEMAND, req('karpenter.k8s.aws/instance-category', 'In', 'g')],
    taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }],
  }),
  /** arm64 only, its nodes labelled team=payments. */
  arm: nodePool('arm', {
    requirements: [
      req('kubernetes.io/arch', 'In', 'arm64'),
      ON_DEMAND,
      req('karpenter.k8s.aws/instance-category', 'In', 'c', 'm'),
      req('topology.kubernetes.io/zone', 'In', 'us-west-2b'),
    ],
    labels: { team: 'payments' },
  }),
  /** Its EC2NodeClass `broken` is not Ready (its instance profile). */
  broken: nodePool('broken', { nodeClass: 'broken' }),
  /** Its EC2NodeClass `missing` does not exist. */
  orphan: nodePool('orphan', { nodeClass: 'missing' }),
  /** limits cpu 8, all held by its NodeClaim. */
  full: nodePool('full', { limits: { cpu: '8' } }),
  /** limits cpu 4, 2 held; every type it allows has 4 or 8 vCPU. */
  capped: nodePool('capped', {
    requirements: [AMD64, ON_DEMAND, req('karpenter.k8s.aws/instance-cpu', 'In', '4', '8')],
    limits: { cpu: '4' },
  }),
  /** m5.large and its kin only: 2 vCPU, 8 GiB. */
  small: nodePool('small', {
    requirements: [
      AMD64,
      ON_DEMAND,
      req('karpenter.k8s.aws/instance-family', 'In', 'm5'),
      req('karpenter.k8s.aws/instance-size', 'In', 'large'),
    ],
  }),
} as const

export type CorpusNodePool = keyof typeof CORPUS_NODEPOOLS | 'default'

/** The DaemonSet every node runs (it tolerates every taint): `why` counts it as each NodePool's overhead. */
export const NODE_AGENT: Required<Pick<PodSeed, 'owner' | 'requests' | 'spec'>> = {
  owner: { kind: 'DaemonSet', name: 'node-agent' },
  requests: { cpu: '100m', memory: '128Mi' },
  spec: { tolerations: [{ operator: 'Exists' }] },
}

/** A DaemonSet on every node binding host port 9100/TCP (it requests nothing: the overhead stays NODE_AGENT's). */
export const NODE_EXPORTER = { name: 'node-exporter', hostPort: 9100 } as const

/** The label the topology-spread pods spread on, and where the pods that match it are placed. */
export const SPREAD_LABELS = { app: 'spread' } as const
export const SPREAD_NAMESPACE = 'batch'

/**
 * Pods bound to the nodes in us-west-2a/b/c (spec.nodeName, as kube-scheduler binds them), with the
 * phase a kubelet would report: Running ones count for the spread (2a 1, 2b 2, 2c 0); the Succeeded
 * and Failed ones in 2c must not (the field selector drops them), nor the one matching other labels.
 */
const PLACED: {
  zone: 0 | 1 | 2
  phase: 'Running' | 'Succeeded' | 'Failed'
  labels?: Record<string, string>
}[] = [
  { zone: 0, phase: 'Running' },
  { zone: 1, phase: 'Running' },
  { zone: 1, phase: 'Running' },
  { zone: 2, phase: 'Succeeded' },
  { zone: 2, phase: 'Succeeded' },
  { zone: 2, phase: 'Failed' },
  { zone: 2, phase: 'Running', labels: { app: 'other' } },
]

export const CORPUS_NAMESPACES = ['shop', 'batch', 'data'] as const

/** NodeClaims Karpenter launched for the pods the corpus says it nominated. */
export const LAUNCH_FAILURES = {
  ice: {
    name: 'default-ice7q',
    reason: 'InsufficientInstanceCapacity',
    message:
      'creating instance, insufficient capacity, InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity',
  },
  denied: {
    name: 'default-auth9x',
    reason: 'LaunchFailed',
    message: 'creating instance, UnauthorizedOperation: You are not authorized to perform this operation',
  },
} as const

export async function seedCorpusCluster(kube: KubeClient, seed: SeedResult): Promise<void> {
  for (const ns of CORPUS_NAMESPACES) await ensureNamespace(kube, ns)
  await applyWithRetry(kube, defaultEC2NodeClass({ name: 'broken', role: 'KarpenterNodeRole-gone' }))
  for (const np of Object.values(CORPUS_NODEPOOLS)) await applyWithRetry(kube, np)
  for (const np of Object.keys(CORPUS_NODEPOOLS)) if (np !== 'broken') await markNodePoolReady(kube, np)
  await markNodeClassReady(kube, 'broken', nodeClassStatusFromSeed(seed))
  await markNodeClassNotReady(
    kube,
    'broken',
    {
      type: 'InstanceProfileReady',
      reason: 'InstanceProfileNotFound',
      message: 'role KarpenterNodeRole-gone not found',
    },
    ['broken'],
  )
  // A DaemonSet on every node (no DaemonSet controller runs: it makes no pods).
  await seedOwner(kube, 'kube-system', NODE_AGENT.owner, podSpecOf(NODE_AGENT))
  await seedNodeClaim(kube, {
    name: 'full-8cpu',
    nodePool: 'full',
    capacity: { cpu: '8', memory: '32Gi', pods: '58' },
  })
  await seedNodeClaim(kube, {
    name: 'capped-2cpu',
    nodePool: 'capped',
    capacity: { cpu: '2', memory: '8Gi', pods: '29' },
  })
  for (const f of Object.values(LAUNCH_FAILURES))
    await seedNodeClaim(kube, {
      name: f.name,
      nodePool: 'default',
      conditions: [{ type: 'Launched', status: 'False', reason: f.reason, message: f.message }],
    })
  await seedOwner(
    kube,
    'kube-system',
    { kind: 'DaemonSet', name: NODE_EXPORTER.name },
    {
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: 'exporter',
          image: 'registry.k8s.io/pause:3.10',
          ports: [{ containerPort: NODE_EXPORTER.hostPort, hostPort: NODE_EXPORTER.hostPort }],
        },
      ],
    },
  )
  // Nodes in us-west-2a, 2b and 2c (no kubelet, no node or pod GC runs: they and their pods stay).
  const nodes = await createNodegroupNodes(kube, { count: 3 })
  for (const [i, p] of PLACED.entries())
    await seedPod(kube, {
      name: `placed-${i}`,
      namespace: SPREAD_NAMESPACE,
      labels: p.labels ?? SPREAD_LABELS,
      requests: { cpu: '100m', memory: '128Mi' },
      spec: { nodeName: nodes[p.zone] },
      unschedulable: false,
      phase: p.phase,
    })
  await kube.apply(ebsStorageClass('gp3', 'WaitForFirstConsumer'))
  await kube.apply(ebsStorageClass('io2-immediate', 'Immediate'))
}
