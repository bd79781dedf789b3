// The `why` corpus: pending pods, each with one known reason Karpenter gives it no node (the seven of
// issue 22: pods it ignores, the NodePool itself, taints, requirements, instance types, zones, its own
// word; and the judgements added since: devices, ephemeral storage, host ports, zone topology spread),
// and pods that fit — with the verdict `karpctl why` must give at every NodePool of the cluster
// (why-corpus-cluster.ts). Most pods pick one NodePool with `karpenter.sh/nodepool`: the others are
// then ruled out before or by that requirement, and the table says how.
import type { Rule } from '../../src/why/judge.js'
import type { PodSeed } from './bed/workload-seed.js'
import {
  LAUNCH_FAILURES,
  NODE_AGENT,
  NODE_EXPORTER,
  SPREAD_LABELS,
  SPREAD_NAMESPACE,
  type CorpusNodePool,
} from './why-corpus-cluster.js'

export type Category =
  | 'ignored'
  | 'nodepool'
  | 'taints'
  | 'requirements'
  | 'instance-types'
  | 'zones'
  | 'karpenter'
  | 'devices'
  | 'ephemeral-storage'
  | 'host-ports'
  | 'topology-spread'
  | 'fits'

export interface PoolExpect {
  status: 'fits' | 'ruled-out' | 'unknown'
  rule: Rule
  message: RegExp
  /** What the fix's summary or commands must say. */
  fix?: RegExp
}

export interface CorpusEntry {
  category: Category
  /** The reason, in words, for a reader of a failure. */
  why: string
  pod: PodSeed
  /** Claims made before the pod: bound to a zonal volume when `zone` is set. */
  claims?: { claim: string; storageClass: string; zone?: string }[]
  outcome: 'fits' | 'none' | 'ignored'
  ignored?: { reason: string; message: RegExp }
  nodePools?: Record<CorpusNodePool, PoolExpect>
}

const NODEPOOL = 'karpenter.sh/nodepool'
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** What every pod that tolerates nothing and picks no NodePool meets at the three unusable ones. */
const UNUSABLE = {
  broken: {
    status: 'ruled-out',
    rule: 'nodeclass',
    message:
      /^EC2NodeClass broken is not Ready: InstanceProfileReady=False \(InstanceProfileNotFound: role KarpenterNodeRole-gone not found\)$/,
    fix: /see also node-role and passrole-node-role/,
  },
  orphan: {
    status: 'ruled-out',
    rule: 'nodeclass',
    message: /^NodePool orphan references EC2NodeClass missing, which does not exist$/,
  },
  gpu: {
    status: 'ruled-out',
    rule: 'taints',
    message: /^did not tolerate taint nvidia\.com\/gpu=true:NoSchedule \(spec\.template\.spec\.taints\)$/,
    // A bare pod gets the toleration on itself, a workload's pod on its owner's template.
    fix: /"op":"add","path":"\/spec(\/template\/spec)?\/tolerations/,
  },
} as const satisfies Record<string, PoolExpect>

const ALL: CorpusNodePool[] = ['gpu', 'default', 'arm', 'broken', 'capped', 'full', 'orphan', 'small']

/**
 * The verdicts of a pod that picks `target` with the karpenter.sh/nodepool selector: `own` at the
 * target (and wherever it says otherwise), the unusable NodePools as always, every other NodePool
 * ruled out by the selector.
 */
function picking(
  target: CorpusNodePool,
  own: Partial<Record<CorpusNodePool, PoolExpect>>,
): Record<CorpusNodePool, PoolExpect> {
  const out = {} as Record<CorpusNodePool, PoolExpect>
  for (const np of ALL)
    out[np] = own[np] ??
      (np in UNUSABLE ? UNUSABLE[np as keyof typeof UNUSABLE] : undefined) ?? {
        status: 'ruled-out',
        rule: 'requirements',
        message: new RegExp(
          `^incompatible requirements, key ${esc(NODEPOOL)}, ${esc(NODEPOOL)} In \\[${target}\\] not in ${esc(NODEPOOL)} In \\[${np}\\]( \\(and none of the pod's other \\d+ node-affinity terms fits\\))?$`,
        ),
      }
  if (!own[target]) throw new Error(`corpus: no verdict for the target NodePool ${target}`)
  return out
}

const fits = (smallest?: string): PoolExpect => ({
  status: 'fits',
  rule: 'instance-types',
  message: new RegExp(
    `^\\d+ of \\d+ instance types have room, the smallest ${smallest ? esc(smallest) : '\\S+'} \\(`,
  ),
})
const ruledOut = (rule: PoolExpect['rule'], message: RegExp, fix?: RegExp): PoolExpect => ({
  status: 'ruled-out',
  rule,
  message,
  ...(fix ? { fix } : {}),
})
const select = (pool: CorpusNodePool, extra: Record<string, string> = {}) => ({
  nodeSelector: { [NODEPOOL]: pool, ...extra },
})
const affinity = (...terms: { key: string; operator: string; values?: string[] }[][]) => ({
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
      },
    },
  },
})
const claimVolume = (claim: string) => ({
  volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
})
const SMALL = { cpu: '500m', memory: '1Gi' }
/** One app container: extended resources need their limit set, host ports their container port. */
const container = (opts: { gpus?: number; hostPort?: number; protocol?: string }) => ({
  containers: [
    {
      name: 'app',
      image: 'registry.k8s.io/pause:3.10',
      resources: {
        requests: { ...SMALL, ...(opts.gpus ? { 'nvidia.com/gpu': String(opts.gpus) } : {}) },
        ...(opts.gpus ? { limits: { 'nvidia.com/gpu': String(opts.gpus) } } : {}),
      },
      ...(opts.hostPort
        ? {
            ports: [
              {
                containerPort: opts.hostPort,
                hostPort: opts.hostPort,
                ...(opts.protocol ? { protocol: opts.protocol } : {}),
              },
            ],
          }
        : {}),
    },
  ],
})
const TOLERATE_GPU = { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }
/** Required spread over zones, maxSkew 1, on the placed pods' label (why-corpus-cluster.ts PLACED). */
const SPREAD = {
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: SPREAD_LABELS },
    },
  ],
}
const NODE = 'ip-192-168-96-10.us-west-2.compute.internal'
const nominated = (nodeClaim: string) => [
  { reason: 'Nominated', message: `Pod should schedule on: nodeclaim/${nodeClaim}` },
]

export const CORPUS: CorpusEntry[] = [
  // 1. Pods Karpenter ignores.
  {
    category: 'ignored',
    why: 'a DaemonSet pod',
    pod: { name: 'node-agent-x2k9d', namespace: 'kube-system', ...NODE_AGENT },
    outcome: 'ignored',
    ignored: { reason: 'daemonset', message: /^the pod belongs to DaemonSet node-agent: Karpenter counts/ },
  },
  {
    category: 'ignored',
    why: 'another scheduler',
    pod: { name: 'volcano-task', namespace: 'batch', requests: SMALL, spec: { schedulerName: 'volcano' } },
    outcome: 'ignored',
    ignored: {
      reason: 'other-scheduler',
      message: /^the pod is scheduled by volcano \(spec\.schedulerName\)/,
    },
  },
  {
    category: 'ignored',
    why: 'bound to a node already',
    pod: { name: 'pinned', namespace: 'shop', requests: SMALL, spec: { nodeName: NODE } },
    outcome: 'ignored',
    ignored: {
      reason: 'scheduled',
      message: new RegExp(`^the pod is bound to node ${esc(NODE)} \\(spec\\.nodeName\\)`),
    },
  },
  {
    category: 'ignored',
    why: 'kube-scheduler is preempting for it',
    pod: { name: 'preemptor', namespace: 'shop', requests: SMALL, nominatedNodeName: NODE },
    outcome: 'ignored',
    ignored: { reason: 'preempting', message: new RegExp(`^kube-scheduler nominated node ${esc(NODE)}`) },
  },
  {
    category: 'ignored',
    why: 'an unbound claim whose StorageClass binds Immediate',
    claims: [{ claim: 'scratch', storageClass: 'io2-immediate' }],
    pod: { name: 'immediate-claim', namespace: 'data', requests: SMALL, spec: claimVolume('scratch') },
    outcome: 'ignored',
    ignored: {
      reason: 'immediate-pvc',
      message: /^its PersistentVolumeClaim scratch is unbound and StorageClass io2-immediate binds Immediate/,
    },
  },
  {
    category: 'ignored',
    why: 'a claim that does not exist',
    pod: { name: 'missing-claim', namespace: 'data', requests: SMALL, spec: claimVolume('nope') },
    outcome: 'ignored',
    ignored: { reason: 'missing-pvc', message: /^its PersistentVolumeClaim nope does not exist/ },
  },
  {
    category: 'ignored',
    why: 'not marked Unschedulable by kube-scheduler yet',
    pod: { name: 'fresh', namespace: 'shop', requests: SMALL, unschedulable: false },
    outcome: 'ignored',
    ignored: {
      reason: 'not-unschedulable',
      message: /^kube-scheduler has not marked the pod Unschedulable \(PodScheduled absent\)/,
    },
  },
  // 2. The NodePool itself.
  {
    category: 'nodepool',
    why: "its NodePool's EC2NodeClass is not Ready",
    pod: { name: 'to-broken', namespace: 'shop', requests: SMALL, spec: select('broken') },
    outcome: 'none',
    nodePools: picking('broken', { broken: UNUSABLE.broken }),
  },
  {
    category: 'nodepool',
    why: "its NodePool's EC2NodeClass does not exist",
    pod: { name: 'to-orphan', namespace: 'shop', requests: SMALL, spec: select('orphan') },
    outcome: 'none',
    nodePools: picking('orphan', { orphan: UNUSABLE.orphan }),
  },
  {
    category: 'nodepool',
    why: "its NodePool's cpu limit is reached",
    pod: { name: 'to-full', namespace: 'shop', requests: SMALL, spec: select('full') },
    outcome: 'none',
    nodePools: picking('full', {
      full: ruledOut(
        'limits',
        /^limit cpu 8 reached: its NodeClaims hold 8 cpu \(spec\.limits\.cpu\)$/,
        /"limits":\{"cpu":"9"\}/,
      ),
    }),
  },
  {
    category: 'nodepool',
    why: 'what is left of its NodePool cpu limit is smaller than every instance type it allows',
    pod: {
      name: 'to-capped',
      namespace: 'shop',
      requests: { cpu: '1900m', memory: '1Gi' },
      spec: select('capped'),
    },
    outcome: 'none',
    nodePools: picking('capped', {
      capped: ruledOut(
        'instance-types',
        /^no instance type fits what is left of limit cpu 4: its NodeClaims hold 2, leaving 2, and the smallest of the \d+ types left, \S+, has 4 cpu$/,
        /"limits":\{"cpu":"6"\}/,
      ),
    }),
  },
  // 3. Taints.
  {
    category: 'taints',
    why: 'no toleration of the gpu taint',
    pod: { name: 'gpu-untolerated', namespace: 'batch', requests: SMALL, spec: select('gpu') },
    outcome: 'none',
    nodePools: picking('gpu', { gpu: UNUSABLE.gpu }),
  },
  {
    category: 'taints',
    why: 'a toleration of the wrong effect',
    pod: {
      name: 'gpu-wrong-effect',
      namespace: 'batch',
      requests: SMALL,
      spec: {
        ...select('gpu'),
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }],
      },
    },
    outcome: 'none',
    nodePools: picking('gpu', { gpu: UNUSABLE.gpu }),
  },
  {
    category: 'taints',
    why: 'a toleration of the wrong value',
    pod: {
      name: 'gpu-wrong-value',
      namespace: 'batch',
      requests: SMALL,
      spec: {
        ...select('gpu'),
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'false', effect: 'NoSchedule' }],
      },
    },
    outcome: 'none',
    nodePools: picking('gpu', { gpu: UNUSABLE.gpu }),
  },
  // 4. Requirements.
  {
    category: 'requirements',
    why: 'a custom label the NodePool neither requires nor labels',
    pod: {
      name: 'team-label',
      namespace: 'shop',
      requests: SMALL,
      spec: select('default', { team: 'payments' }),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'requirements',
        /^label "team" does not have known values$/,
        /"labels":\{"team":"payments"\}/,
      ),
    }),
  },
  {
    category: 'requirements',
    why: 'an arch the NodePool does not allow',
    pod: {
      name: 'wants-arm',
      namespace: 'shop',
      requests: SMALL,
      spec: select('default', { 'kubernetes.io/arch': 'arm64' }),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'requirements',
        /^incompatible requirements, key kubernetes\.io\/arch, kubernetes\.io\/arch In \[arm64\] not in kubernetes\.io\/arch In \[amd64\]$/,
      ),
    }),
  },
  {
    category: 'requirements',
    why: 'two node-affinity terms, neither compatible',
    pod: {
      name: 'affinity-or',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        ...affinity(
          [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
          [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['t'] }],
        ),
      },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'requirements',
        /^incompatible requirements, key karpenter\.sh\/capacity-type, .* \(and none of the pod's other 1 node-affinity terms fits\)$/,
      ),
    }),
  },
  {
    category: 'requirements',
    why: 'NotIn every instance category the NodePool allows',
    pod: {
      name: 'notin-category',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        ...affinity([
          { key: 'karpenter.k8s.aws/instance-category', operator: 'NotIn', values: ['c', 'm', 'r'] },
        ]),
      },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'requirements',
        /^incompatible requirements, key karpenter\.k8s\.aws\/instance-category, /,
      ),
    }),
  },
  {
    category: 'requirements',
    why: 'Exists on a label the NodePool does not have',
    pod: {
      name: 'exists-dedicated',
      namespace: 'shop',
      requests: SMALL,
      spec: { ...select('default'), ...affinity([{ key: 'dedicated', operator: 'Exists' }]) },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut('requirements', /^label "dedicated" does not have known values$/),
    }),
  },
  {
    category: 'requirements',
    why: 'DoesNotExist on a label the NodePool puts on its nodes',
    pod: {
      name: 'no-team',
      namespace: 'shop',
      requests: SMALL,
      spec: { ...select('arm'), ...affinity([{ key: 'team', operator: 'DoesNotExist' }]) },
    },
    outcome: 'none',
    nodePools: picking('arm', { arm: ruledOut('requirements', /^incompatible requirements, key team, /) }),
  },
  {
    category: 'requirements',
    why: 'the workload canary asks for arm64 on the amd64 NodePool',
    pod: {
      name: 'web-6d4cf56db6-ddddd',
      namespace: 'shop',
      requests: SMALL,
      owner: { kind: 'Deployment', name: 'web' },
      spec: select('default', { 'kubernetes.io/arch': 'arm64' }),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut('requirements', /^incompatible requirements, key kubernetes\.io\/arch, /),
    }),
  },
  // 5. Instance types.
  {
    category: 'instance-types',
    why: 'Gt a generation no type has',
    pod: {
      name: 'gen-99',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        ...affinity([{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['99'] }]),
      },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'instance-types',
        /^no instance type matches karpenter\.k8s\.aws\/instance-generation Exists >99: the \d+ types offered in \[us-west-2a us-west-2b us-west-2c\] have karpenter\.k8s\.aws\/instance-generation /,
      ),
    }),
  },
  {
    category: 'instance-types',
    why: 'more cpu than the largest type has',
    pod: {
      name: 'too-much-cpu',
      namespace: 'shop',
      requests: { cpu: '500', memory: '1Gi' },
      spec: select('default'),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'instance-types',
        /^no instance type has room: the largest left of \d+, \S+, has \S+ cpu \/ \S+ memory \/ \d+ pods allocatable, a node for the pod needs \S+ cpu \(the pod 500, DaemonSets the rest\)$/,
        // EC2 has u7i types of 896 vCPU: outside the NodePool's categories c, m, r.
        /^allow larger instance types, so that u7i\S+ \(.*\) is left: remove NodePool default's requirement on karpenter\.k8s\.aws\/instance-category \(spec\.template\.spec\.requirements\[3\]\)/,
      ),
    }),
  },
  {
    category: 'instance-types',
    why: 'more memory than the largest type has',
    pod: {
      name: 'too-much-memory',
      namespace: 'shop',
      requests: { cpu: '1', memory: '8Ti' },
      spec: select('default'),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'instance-types',
        /^no instance type has room: the largest left of \d+, .* a node for the pod needs \S+ memory/,
      ),
    }),
  },
  {
    category: 'instance-types',
    why: "more cpu than the NodePool's only size has",
    pod: {
      name: 'small-3cpu',
      namespace: 'shop',
      requests: { cpu: '3', memory: '1Gi' },
      spec: select('small'),
    },
    outcome: 'none',
    nodePools: picking('small', {
      small: ruledOut(
        'instance-types',
        /^no instance type has room: the largest left of 1, m5\.large, has 1930m cpu \/ 6\.7Gi memory \/ 29 pods allocatable, a node for the pod needs 3100m cpu \(the pod 3, DaemonSets the rest\)$/,
        /^allow larger instance types, so that \S+ \(.*\) is left: remove NodePool small's requirement on karpenter\.k8s\.aws\/instance-size \(spec\.template\.spec\.requirements\[\d+\]\)/,
      ),
    }),
  },
  // 6. Zones.
  {
    category: 'zones',
    why: 'a volume bound in a zone without a subnet',
    claims: [{ claim: 'data-2d', storageClass: 'gp3', zone: 'us-west-2d' }],
    pod: {
      name: 'volume-in-2d',
      namespace: 'data',
      requests: SMALL,
      spec: { ...select('default'), ...claimVolume('data-2d') },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'zones',
        /^no subnet in the zone: the pod needs topology\.kubernetes\.io\/zone In \[us-west-2d\] \(volume data-2d \(PersistentVolume pv-data-data-2d\)\), EC2NodeClass default has subnets in \[us-west-2a us-west-2b us-west-2c\] only$/,
      ),
    }),
  },
  {
    category: 'zones',
    why: 'a zone selector without a subnet',
    pod: {
      name: 'zone-2d',
      namespace: 'shop',
      requests: SMALL,
      spec: select('default', { 'topology.kubernetes.io/zone': 'us-west-2d' }),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'zones',
        /^no subnet in the zone: the pod needs topology\.kubernetes\.io\/zone In \[us-west-2d\]/,
      ),
    }),
  },
  {
    category: 'zones',
    why: "a volume in us-west-2a, the NodePool's zone us-west-2b",
    claims: [{ claim: 'data-2a-arm', storageClass: 'gp3', zone: 'us-west-2a' }],
    pod: {
      name: 'volume-2a-on-arm',
      namespace: 'data',
      requests: SMALL,
      spec: { ...select('arm', { team: 'payments' }), ...claimVolume('data-2a-arm') },
    },
    outcome: 'none',
    nodePools: picking('arm', {
      arm: ruledOut(
        'requirements',
        /^incompatible requirements, key topology\.kubernetes\.io\/zone, topology\.kubernetes\.io\/zone In \[us-west-2a\] not in topology\.kubernetes\.io\/zone In \[us-west-2b\]$/,
      ),
    }),
  },
  // 7. Karpenter's own word: it nominated a NodeClaim that did not launch.
  {
    category: 'karpenter',
    why: 'its NodeClaim failed to launch: no capacity',
    pod: {
      name: 'nominated-ice',
      namespace: 'shop',
      requests: SMALL,
      karpenterEvents: nominated(LAUNCH_FAILURES.ice.name),
    },
    outcome: 'ignored',
    ignored: {
      reason: 'nominated',
      message: new RegExp(
        `^Karpenter nominated nodeclaim ${LAUNCH_FAILURES.ice.name} for the pod: Launched=False \\(InsufficientInstanceCapacity: .*\\) \\(see no capacity for the chosen types`,
      ),
    },
  },
  {
    category: 'karpenter',
    why: 'its NodeClaim failed to launch: the controller may not launch',
    pod: {
      name: 'nominated-denied',
      namespace: 'shop',
      requests: SMALL,
      karpenterEvents: nominated(LAUNCH_FAILURES.denied.name),
    },
    outcome: 'ignored',
    ignored: {
      reason: 'nominated',
      message: new RegExp(
        `^Karpenter nominated nodeclaim ${LAUNCH_FAILURES.denied.name} for the pod: Launched=False \\(LaunchFailed: .*UnauthorizedOperation.*\\) \\(see doctor check controller-policy\\)$`,
      ),
    },
  },
  {
    category: 'karpenter',
    why: 'its NodeClaim no longer exists',
    pod: {
      name: 'nominated-gone',
      namespace: 'shop',
      requests: SMALL,
      karpenterEvents: nominated('default-vanished'),
    },
    outcome: 'ignored',
    ignored: {
      reason: 'nominated',
      message: /^Karpenter nominated nodeclaim default-vanished for the pod: no longer exists$/,
    },
  },
  // 8. Devices: GPUs only some instance categories have (moto's EC2 data counts them: g, gr, p).
  {
    category: 'devices',
    why: 'an nvidia.com/gpu at a NodePool of categories c, m, r',
    pod: {
      name: 'gpu-on-default',
      namespace: 'batch',
      spec: { ...select('default'), ...container({ gpus: 1 }) },
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'devices',
        /^no instance type NodePool default allows has nvidia\.com\/gpu 1: karpenter\.k8s\.aws\/instance-category In \[c m r\] leaves \d+ types in \[us-west-2a us-west-2b us-west-2c\], none with it; the types that have it are instance-category g, gr, p \(families /,
        /^add g, gr, p to NodePool default's requirement on karpenter\.k8s\.aws\/instance-category \(spec\.template\.spec\.requirements\[3\]\)[^]*"op":"replace","path":"\/spec\/template\/spec\/requirements\/3\/values","value":\["c","m","r","g","gr","p"\]/,
      ),
    }),
  },
  // 9. Ephemeral storage: the node's root volume is the AL2023 default, 20Gi.
  {
    category: 'ephemeral-storage',
    why: 'more ephemeral-storage than the default root volume leaves',
    pod: {
      name: 'scratch-50gi',
      namespace: 'batch',
      requests: { ...SMALL, 'ephemeral-storage': '50Gi' },
      spec: select('default'),
    },
    outcome: 'none',
    nodePools: picking('default', {
      default: ruledOut(
        'ephemeral-storage',
        /^no instance type has room for ephemeral-storage 50Gi: EC2NodeClass default's node disk is the AL2023 default \/dev\/xvda, 20Gi, 17Gi allocatable after kube-reserved and the nodefs eviction threshold$/,
        /kubectl patch ec2nodeclass default --type json -p '\[\{"op":"add","path":"\/spec\/blockDeviceMappings","value":\[\{"deviceName":"\/dev\/xvda","rootVolume":true,"ebs":\{"volumeSize":"57Gi"/,
      ),
    }),
  },
  // 10. Host ports: DaemonSet node-exporter binds 9100/TCP on every node.
  {
    category: 'host-ports',
    why: "a hostPort a DaemonSet's pod binds on every node",
    pod: {
      name: 'hostport-9100',
      namespace: 'shop',
      spec: { ...select('default'), ...container({ hostPort: NODE_EXPORTER.hostPort }) },
    },
    outcome: 'none',
    // The port is judged before the requirements: it rules out every NodePool the DaemonSet runs on.
    nodePools: picking(
      'default',
      Object.fromEntries(
        (['default', 'arm', 'capped', 'full', 'small'] as const).map((np) => [
          np,
          ruledOut(
            'host-ports',
            new RegExp(
              `^hostPort 9100/TCP \\(container app\\) is taken by DaemonSet kube-system/node-exporter \\(container exporter, hostPort 9100/TCP\\), which runs on every node of NodePool ${np}: no node it launches can take the pod$`,
            ),
            /^give pod\/hostport-9100 another hostPort than 9100\/TCP/,
          ),
        ]),
      ),
    ),
  },
  // 11. Topology spread: a required zone spread over the pods placed in 2a (1), 2b (2), 2c (0).
  {
    category: 'topology-spread',
    why: 'a zone spread whose NodePool launches only in the fullest zone',
    pod: {
      name: 'spread-on-arm',
      namespace: SPREAD_NAMESPACE,
      requests: SMALL,
      labels: SPREAD_LABELS,
      // nodeAffinityPolicy Ignore: the placed pods' nodes are the node group's (amd64, no team label),
      // which the default Honor leaves out of the skew, as Karpenter's scheduler does (the oracle, issue 34).
      spec: {
        ...select('arm', { team: 'payments', 'kubernetes.io/arch': 'arm64' }),
        topologySpreadConstraints: [
          { ...SPREAD.topologySpreadConstraints[0]!, nodeAffinityPolicy: 'Ignore' },
        ],
      },
    },
    outcome: 'none',
    nodePools: picking('arm', {
      arm: ruledOut(
        'topology-spread',
        /^topology spread on topology\.kubernetes\.io\/zone \(maxSkew 1, DoNotSchedule\): the zones NodePool arm can launch in hold us-west-2b 2 pods matching app=spread, the emptiest zone \(us-west-2c\) holds 0: one more would make the skew 3 > 1$/,
        /^let NodePool arm launch in us-west-2c \(spec\.template\.spec\.requirements\[3\]\)[^]*"value":\["us-west-2b","us-west-2c"\]/,
      ),
    }),
  },
  // Pods that fit.
  {
    category: 'fits',
    why: 'picks no NodePool: judged at every one',
    pod: { name: 'plain', namespace: 'shop', requests: { cpu: '250m', memory: '256Mi' } },
    outcome: 'fits',
    nodePools: {
      ...UNUSABLE,
      default: fits(),
      arm: fits(),
      small: fits('m5.large'),
      full: ruledOut('limits', /^limit cpu 8 reached/),
      capped: ruledOut(
        'instance-types',
        /^no instance type fits what is left of limit cpu 4: its NodeClaims hold 2, leaving 2/,
      ),
    },
  },
  ...['aaaaa', 'bbbbb', 'ccccc'].map((suffix): CorpusEntry => ({
    category: 'fits',
    why: 'a Deployment replica',
    pod: {
      name: `web-6d4cf56db6-${suffix}`,
      namespace: 'shop',
      requests: SMALL,
      owner: { kind: 'Deployment', name: 'web' },
      spec: select('default'),
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  })),
  {
    category: 'fits',
    why: 'a Job tolerating the gpu taint',
    pod: {
      name: 'train-7xk2p',
      namespace: 'batch',
      requests: { cpu: '2', memory: '8Gi' },
      owner: { kind: 'Job', name: 'train' },
      spec: { ...select('gpu'), tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] },
    },
    outcome: 'fits',
    nodePools: picking('gpu', { gpu: fits() }),
  },
  {
    category: 'fits',
    why: "arm64 with the NodePool's team label",
    pod: {
      name: 'arm-payments',
      namespace: 'shop',
      requests: SMALL,
      spec: select('arm', { team: 'payments', 'kubernetes.io/arch': 'arm64' }),
    },
    outcome: 'fits',
    nodePools: picking('arm', { arm: fits() }),
  },
  {
    category: 'fits',
    why: 'two node-affinity terms, the second compatible',
    pod: {
      name: 'affinity-second-term',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        ...affinity(
          [{ key: 'kubernetes.io/arch', operator: 'In', values: ['s390x'] }],
          [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        ),
      },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: 'a StatefulSet pod with a volume bound in a subnet zone',
    claims: [{ claim: 'data-db-0', storageClass: 'gp3', zone: 'us-west-2a' }],
    pod: {
      name: 'db-0',
      namespace: 'data',
      requests: { cpu: '1', memory: '4Gi' },
      owner: { kind: 'StatefulSet', name: 'db' },
      spec: { ...select('default'), ...claimVolume('data-db-0') },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: 'zones In [us-west-2b us-west-2d]: one has a subnet',
    pod: {
      name: 'zone-b-or-d',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        ...affinity([
          { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2b', 'us-west-2d'] },
        ]),
      },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: "within the small NodePool's m5.large with the DaemonSet",
    pod: {
      name: 'small-fits',
      namespace: 'shop',
      requests: { cpu: '1700m', memory: '4Gi' },
      spec: select('small'),
    },
    outcome: 'fits',
    nodePools: picking('small', { small: fits('m5.large') }),
  },
  {
    category: 'fits',
    why: 'a sidecar init container counted with the app',
    pod: {
      name: 'with-sidecar',
      namespace: 'shop',
      requests: SMALL,
      spec: {
        ...select('default'),
        initContainers: [
          {
            name: 'proxy',
            image: 'registry.k8s.io/pause:3.10',
            restartPolicy: 'Always',
            resources: { requests: { cpu: '250m', memory: '256Mi' } },
          },
        ],
      },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: 'fits now, with an older Karpenter event',
    pod: {
      name: 'with-events',
      namespace: 'shop',
      requests: SMALL,
      spec: select('default'),
      karpenterEvents: [
        {
          reason: 'FailedScheduling',
          type: 'Warning',
          message:
            'Failed to schedule pod, incompatible with nodepool "default", no instance type satisfied resources',
        },
      ],
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: 'an nvidia.com/gpu at the NodePool of category g, tolerating its taint',
    pod: {
      name: 'gpu-on-gpu',
      namespace: 'batch',
      spec: { ...select('gpu'), ...TOLERATE_GPU, ...container({ gpus: 1 }) },
    },
    outcome: 'fits',
    nodePools: picking('gpu', { gpu: fits() }),
  },
  {
    category: 'fits',
    why: 'ephemeral-storage within the default root volume',
    pod: {
      name: 'scratch-10gi',
      namespace: 'batch',
      requests: { ...SMALL, 'ephemeral-storage': '10Gi' },
      spec: select('default'),
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: "the DaemonSet's host port number on UDP: no clash",
    pod: {
      name: 'hostport-9100-udp',
      namespace: 'shop',
      spec: { ...select('default'), ...container({ hostPort: NODE_EXPORTER.hostPort, protocol: 'UDP' }) },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
  {
    category: 'fits',
    why: 'a zone spread where the NodePool can launch in the emptiest zone',
    pod: {
      name: 'spread-on-default',
      namespace: SPREAD_NAMESPACE,
      requests: SMALL,
      labels: SPREAD_LABELS,
      spec: { ...select('default'), ...SPREAD },
    },
    outcome: 'fits',
    nodePools: picking('default', { default: fits() }),
  },
]
