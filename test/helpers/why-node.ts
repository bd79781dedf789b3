// Builders for `why node/…` facts: Nodes, NodeClaims and pods shaped as Karpenter and the kubelet
// write them (labels, hash annotations, conditions with their transition times).
import { healthyNodeClass, healthyNodePool } from './facts.js'
import type { Facts } from '../../src/facts/types.js'
import type { KubeEvent, WorkloadPod } from '../../src/why/types.js'
import type {
  FullNodeClaim,
  KarpenterNode,
  NodeFacts,
  NodeSelector,
  PodDisruptionBudget,
} from '../../src/why/node/types.js'

export const NOW = new Date('2026-12-04T12:00:00Z')
export const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString()

const LABELS = (pool: string, zone = 'us-west-2a') => ({
  'karpenter.sh/nodepool': pool,
  'karpenter.sh/capacity-type': 'on-demand',
  'node.kubernetes.io/instance-type': 'm5.large',
  'topology.kubernetes.io/zone': zone,
  'kubernetes.io/arch': 'amd64',
})

/** A NodePool `default` with a hash, consolidation after 1m and the CRD's default budget. */
export function pool(over: { name?: string; disruption?: Record<string, unknown>; hash?: string } = {}) {
  const np = healthyNodePool()
  np.metadata = {
    name: over.name ?? 'default',
    annotations: {
      'karpenter.sh/nodepool-hash': over.hash ?? '111',
      'karpenter.sh/nodepool-hash-version': 'v3',
    },
  }
  np.spec.disruption = over.disruption ?? {
    consolidationPolicy: 'WhenEmptyOrUnderutilized',
    consolidateAfter: '1m',
    budgets: [{ nodes: '10%' }],
  }
  return np
}

export function nodeClass() {
  const nc = healthyNodeClass()
  nc.metadata = {
    name: 'default',
    annotations: {
      'karpenter.k8s.aws/ec2nodeclass-hash': '222',
      'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v4',
    },
  }
  nc.status = { ...nc.status, amis: [{ id: 'ami-new' }] } as typeof nc.status
  return nc
}

/** A NodeClaim and its Node, initialized, Ready, matching the pool's and class's hashes. */
export function machine(
  name: string,
  over: {
    pool?: string
    conditions?: FullNodeClaim['status'] extends infer S
      ? S extends { conditions?: infer C }
        ? C
        : never
      : never
    claimAnnotations?: Record<string, string>
    nodeAnnotations?: Record<string, string>
    expireAfter?: string
    createdMinutesAgo?: number
    imageID?: string
    lastPodEventMinutesAgo?: number
    allocatable?: Record<string, string>
    terminationGracePeriod?: string
    deleting?: boolean
    ready?: boolean
  } = {},
): { claim: FullNodeClaim; node: KarpenterNode } {
  const p = over.pool ?? 'default'
  const claim: FullNodeClaim = {
    metadata: {
      name: `${p}-${name}`,
      labels: LABELS(p),
      annotations: {
        'karpenter.sh/nodepool-hash': '111',
        'karpenter.sh/nodepool-hash-version': 'v3',
        'karpenter.k8s.aws/ec2nodeclass-hash': '222',
        'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v4',
        ...over.claimAnnotations,
      },
      creationTimestamp: ago(over.createdMinutesAgo ?? 600),
      ...(over.deleting ? { deletionTimestamp: ago(1) } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      expireAfter: over.expireAfter ?? '720h',
      ...(over.terminationGracePeriod ? { terminationGracePeriod: over.terminationGracePeriod } : {}),
    },
    status: {
      nodeName: name,
      providerID: `aws:///us-west-2a/i-0${name.replace(/[^0-9a-f]/g, '').padEnd(8, '0')}`,
      imageID: over.imageID ?? 'ami-new',
      ...(over.lastPodEventMinutesAgo !== undefined
        ? { lastPodEventTime: ago(over.lastPodEventMinutesAgo) }
        : {}),
      conditions: over.conditions ?? [
        { type: 'Launched', status: 'True', lastTransitionTime: ago(599) },
        { type: 'Registered', status: 'True', lastTransitionTime: ago(598) },
        { type: 'Initialized', status: 'True', lastTransitionTime: ago(597) },
        { type: 'Consolidatable', status: 'True', lastTransitionTime: ago(500) },
      ],
    },
  }
  const node: KarpenterNode = {
    metadata: {
      name,
      labels: LABELS(p),
      ...(over.nodeAnnotations ? { annotations: over.nodeAnnotations } : {}),
      creationTimestamp: ago(598),
    },
    spec: { providerID: claim.status?.providerID },
    status: {
      allocatable: over.allocatable ?? { cpu: '1930m', memory: '7Gi', pods: '29' },
      conditions: [{ type: 'Ready', status: over.ready === false ? 'False' : 'True' }],
    },
  }
  return { claim, node }
}

export function pod(
  name: string,
  node: string,
  over: {
    cpu?: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
    daemonSet?: boolean
  } = {},
): WorkloadPod {
  return {
    metadata: {
      name,
      namespace: 'shop',
      labels: over.labels ?? { app: 'web' },
      ...(over.annotations ? { annotations: over.annotations } : {}),
      ownerReferences: [
        over.daemonSet
          ? { kind: 'DaemonSet', name: 'agent', controller: true }
          : { kind: 'ReplicaSet', name: 'web-6d4cf56db6', controller: true },
      ],
    },
    spec: {
      nodeName: node,
      containers: [{ name: 'app', resources: { requests: { cpu: over.cpu ?? '500m', memory: '512Mi' } } }],
    },
    status: { phase: 'Running' },
  }
}

export function pdb(
  name: string,
  allowed: number,
  labels: Record<string, string> = { app: 'web' },
): PodDisruptionBudget {
  return {
    metadata: { name, namespace: 'shop', generation: 1 },
    spec: { selector: { matchLabels: labels }, minAvailable: 2 },
    status: {
      disruptionsAllowed: allowed,
      observedGeneration: 1,
      currentHealthy: 2,
      desiredHealthy: 2,
      expectedPods: 2,
    },
  }
}

export function event(
  kind: string,
  name: string,
  reason: string,
  message: string,
  minutesAgo = 5,
): KubeEvent {
  return {
    metadata: { name: `${name}.${reason}`, namespace: 'default' },
    involvedObject: { kind, name },
    reason,
    message,
    type: 'Normal',
    count: 1,
    lastTimestamp: ago(minutesAgo),
  }
}

const ok = <T>(value: T) => ({ ok: true as const, value })

export function nodeFacts(over: {
  selector?: NodeSelector
  machines?: { claim: FullNodeClaim; node?: KarpenterNode }[]
  pods?: WorkloadPod[]
  pdbs?: PodDisruptionBudget[]
  events?: KubeEvent[]
  pools?: ReturnType<typeof pool>[]
  doctor?: Facts
}): NodeFacts {
  const ms = over.machines ?? []
  return {
    schema: 'karpctl.why-node-facts/v1',
    meta: {
      clusterName: 'demo',
      region: 'us-west-2',
      collectedAt: NOW.toISOString(),
      karpctlVersion: 'test',
      selector: over.selector ?? { kind: 'nodes' },
    },
    kube: {
      nodePools: ok(over.pools ?? [pool()]),
      nodeClasses: ok([nodeClass()]),
    } as unknown as Facts['kube'],
    nodes: ok(ms.flatMap((m) => (m.node ? [m.node] : []))),
    nodeClaims: ok(ms.map((m) => m.claim)),
    pods: ok(over.pods ?? []),
    pdbs: ok(over.pdbs ?? []),
    events: ok(over.events ?? []),
    ...(over.doctor ? { doctor: over.doctor } : {}),
  }
}
