// The Kubernetes shapes `karpctl why node/NAME` reads, trimmed to the fields a disruption judgement
// uses, and the facts of one run. Plain JSON: a node snapshot is exactly `NodeFacts`.
import type { Facts, ObjectMeta, Read, Taint } from '../../facts/types.js'
import type { NodeLogLine } from './log-lines.js'
import type { UserDataShape } from './user-data.js'
import type {
  Condition,
  InstanceTypeInfo,
  KubeEvent,
  LabelSelector,
  ResourceList,
  WorkloadPod,
} from '../types.js'

/** A status condition as Karpenter writes it: the time it last changed is what timeouts count from. */
export type TimedCondition = Condition & { lastTransitionTime?: string }

/** Metadata plus the two lifecycle stamps the judgements count from. */
export type LifecycleMeta = ObjectMeta & { deletionTimestamp?: string }

export interface KarpenterNode {
  metadata: LifecycleMeta
  spec: { providerID?: string; taints?: Taint[]; unschedulable?: boolean }
  status: { allocatable?: ResourceList; conditions?: TimedCondition[] }
}

export interface FullNodeClaim {
  metadata: LifecycleMeta
  spec: {
    nodeClassRef?: { group?: string; kind?: string; name: string }
    expireAfter?: string
    terminationGracePeriod?: string
    resources?: { requests?: ResourceList }
  }
  status?: {
    nodeName?: string
    providerID?: string
    imageID?: string
    capacity?: ResourceList
    allocatable?: ResourceList
    lastPodEventTime?: string
    conditions?: TimedCondition[]
  }
}

export interface PodDisruptionBudget {
  /** `generation`: the status speaks for this spec only once its observedGeneration reaches it. */
  metadata: ObjectMeta & { generation?: number }
  spec: {
    selector?: LabelSelector
    minAvailable?: string | number
    maxUnavailable?: string | number
    /** `AlwaysAllow`: pods that are not Ready may be evicted whatever disruptionsAllowed says. */
    unhealthyPodEvictionPolicy?: string
  }
  status?: {
    disruptionsAllowed?: number
    observedGeneration?: number
    currentHealthy?: number
    desiredHealthy?: number
    expectedPods?: number
  }
}

/** Which nodes the user asked about. */
export type NodeSelector =
  { kind: 'node' | 'nodeclaim'; name: string } | { kind: 'nodes'; labelSelector?: string }

/** Lines of an instance's boot log that name a kubelet or nodeadm failure (never the whole log). */
export interface BootLog {
  instanceId: string
  lines: string[]
}

export interface NodeFacts {
  schema: 'karpctl.why-node-facts/v1'
  meta: {
    clusterName: string
    region: string
    collectedAt: string
    karpctlVersion: string
    selector: NodeSelector
    /** `--with FILE`: the manifests judged as if applied (the file's name; its objects are in `kube`). */
    with?: string
  }
  /** doctor's Kubernetes facts (NodePools, EC2NodeClasses, aws-auth), read by doctor's collectors. */
  kube: Facts['kube']
  nodes: Read<KarpenterNode[]>
  nodeClaims: Read<FullNodeClaim[]>
  /** Pods bound to a node (DaemonSet and mirror pods included: Karpenter counts them as blockers too). */
  pods: Read<WorkloadPod[]>
  pdbs: Read<PodDisruptionBudget[]>
  /** Events about Nodes, NodeClaims and NodePools (Karpenter's DisruptionBlocked, Unconsolidatable…). */
  events: Read<KubeEvent[]>
  /**
   * EC2's instance types, read only when a judged node has pods no other node takes: what a cheaper
   * replacement is judged with (replacement.ts).
   */
  instanceTypes?: Read<InstanceTypeInfo[]>
  /**
   * doctor's full facts, collected only when a NodeClaim launched but never joined (or failed to
   * launch): its checks say which of the node role, access, subnets and security groups is wrong.
   */
  doctor?: Facts
  /** Why doctor's facts could not be collected when they were wanted. */
  doctorUnread?: string
  /**
   * Karpenter's log lines that name a judged Node or NodeClaim, by that name (log-lines.ts); a failure
   * when the controller's pods or their logs could not be read (it never changes the exit code).
   */
  controllerLog?: Read<Record<string, NodeLogLine[]>>
  /**
   * The cluster VPC's route tables, read only when a NodeClaim launched and never joined and the API
   * endpoint is public only: how its subnets reach the endpoint (api-route.ts).
   */
  routeTables?: Read<RouteTable[]>
  /**
   * Each EC2NodeClass's userData by its shape (kind, calls bootstrap.sh), by name: what the AMI family
   * is judged against (user-data.ts). The text itself is free text a snapshot leaves out.
   */
  userData?: Record<string, UserDataShape | null>
  /** Boot-log lines of the instances that launched but never joined, by NodeClaim name. */
  bootLogs?: Record<string, Read<BootLog>>
}

/** A VPC route table, trimmed to what a route to the API endpoint is judged by. */
export interface RouteTable {
  id: string
  /** The VPC's main table: it serves every subnet with no explicit association. */
  main: boolean
  subnetIds: string[]
  /** `target` is the gateway's id (igw-, nat-, tgw-, vpce-, pcx-, eni-, i-, local). */
  routes: { destination: string; target: string; state?: string }[]
}
