// The Kubernetes shapes `karpctl why` reads, trimmed to the fields a scheduling judgement uses, and
// the data it collects: doctor's Kubernetes facts (NodePools, EC2NodeClasses, the controller) plus
// the workload side (pods, NodeClaims, DaemonSets, volumes, events). Plain JSON: a why snapshot is
// exactly `WhyFacts`.
import type {
  Condition,
  Facts,
  NodeSelectorRequirement,
  ObjectMeta,
  Read,
  Taint,
  Toleration,
} from '../facts/types.js'
import type { SchedulingLine } from './controller-log.js'

export type { Condition, NodeSelectorRequirement, Taint, Toleration }

export type ResourceList = Record<string, string>

export interface ContainerSpec {
  name: string
  resources?: { requests?: ResourceList; limits?: ResourceList }
  /** `Always` on an init container makes it a sidecar: it runs alongside the app containers. */
  restartPolicy?: string
  /** Only the ports that take a host port are kept (what the host-ports judgement reads). */
  ports?: ContainerPort[]
}

export interface ContainerPort {
  containerPort: number
  hostPort?: number
  /** TCP (the default), UDP or SCTP. */
  protocol?: string
  /** The host address the port binds; empty or 0.0.0.0 is every address. */
  hostIP?: string
}

export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: { key: string; operator: string; values?: string[] }[]
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[]
  matchFields?: NodeSelectorRequirement[]
}

export interface TopologySpreadConstraint {
  topologyKey: string
  whenUnsatisfiable: string
  maxSkew: number
  labelSelector?: LabelSelector
  minDomains?: number
  matchLabelKeys?: string[]
  nodeAffinityPolicy?: string
  nodeTaintsPolicy?: string
}

/** A required pod (anti-)affinity term: the pods it is about and the topology it is counted in. */
export interface PodAffinityTerm {
  labelSelector?: LabelSelector
  namespaces?: string[]
  namespaceSelector?: LabelSelector
  topologyKey: string
}

export interface PodSpec {
  nodeName?: string
  schedulerName?: string
  nodeSelector?: Record<string, string>
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] }
    }
    /** Kept so that `why` can say it does not judge them (Karpenter's scheduler does). */
    podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] }
    podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] }
  }
  tolerations?: Toleration[]
  containers: ContainerSpec[]
  initContainers?: ContainerSpec[]
  overhead?: ResourceList
  volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[]
  topologySpreadConstraints?: TopologySpreadConstraint[]
}

export interface OwnerReference {
  kind: string
  name: string
  controller?: boolean
}

export interface WorkloadPod {
  metadata: Omit<ObjectMeta, 'ownerReferences'> & { ownerReferences?: OwnerReference[] }
  spec: PodSpec
  status?: {
    phase?: string
    nominatedNodeName?: string
    conditions?: Condition[]
  }
}

export interface NodeClaim {
  metadata: ObjectMeta
  spec?: { resources?: { requests?: ResourceList }; nodeClassRef?: { name: string } }
  status?: {
    nodeName?: string
    capacity?: ResourceList
    conditions?: (Condition & { lastTransitionTime?: string })[]
  }
}

export interface DaemonSet {
  metadata: ObjectMeta
  spec: { template: { spec: PodSpec } }
}

export interface PersistentVolumeClaim {
  metadata: ObjectMeta
  spec: { storageClassName?: string; volumeName?: string }
  status?: { phase?: string }
}

export interface PersistentVolume {
  metadata: ObjectMeta
  spec: {
    nodeAffinity?: { required?: { nodeSelectorTerms: NodeSelectorTerm[] } }
  }
}

export interface StorageClass {
  metadata: ObjectMeta
  volumeBindingMode?: string
}

export interface KubeEvent {
  metadata: ObjectMeta
  involvedObject: { kind?: string; namespace?: string; name?: string; uid?: string }
  reason?: string
  message?: string
  type?: string
  source?: { component?: string }
  reportingComponent?: string
  count?: number
  lastTimestamp?: string
  eventTime?: string
}

/**
 * One EC2 instance type, trimmed from DescribeInstanceTypes to what Karpenter derives its labels and
 * capacity from (no prices, no AMI data: a snapshot of a whole region stays a few hundred KiB).
 */
export interface InstanceTypeInfo {
  /** `m5.large` */
  name: string
  vcpus: number
  memoryMiB: number
  /** ProcessorInfo.SupportedArchitectures: `x86_64`, `arm64`, `i386`, `x86_64_mac`… */
  architectures: string[]
  /** SupportedUsageClasses: `on-demand`, `spot`, `capacity-block`. */
  usageClasses: string[]
  /** NetworkInfo.MaximumNetworkInterfaces and Ipv4AddressesPerInterface: the ENI-limited maxPods. */
  maxEnis: number
  ipv4PerEni: number
  /**
   * The devices Karpenter counts as extended resources (absent in facts read by an older karpctl: the
   * devices are then unknown). GpuInfo.Gpus: `nvidia.com/gpu`, `amd.com/gpu`, `habana.ai/gaudi` by
   * manufacturer.
   */
  gpus?: { manufacturer: string; name: string; count: number }[]
  /** NeuronInfo.NeuronDevices: `aws.amazon.com/neuron` (devices) and `aws.amazon.com/neuroncore` (their cores). */
  neuronDevices?: { count: number; coresPerDevice: number }[]
  /** NetworkInfo.EfaInfo.MaximumEfaInterfaces: `vpc.amazonaws.com/efa` (0 without EFA). */
  efaInterfaces?: number
  /** InstanceStorageInfo.TotalSizeInGB (0 without instance store): ephemeral storage under `instanceStorePolicy: RAID0`. */
  instanceStorageGB?: number
  /** The rest of what Karpenter labels types by (absent in facts read by an older karpctl: not judged). */
  details?: InstanceTypeDetails
}

/**
 * DescribeInstanceTypes fields the AWS provider turns into `karpenter.k8s.aws/instance-*` labels
 * (computeRequirements): CPU manufacturer and clock, hypervisor, encryption in transit, local NVMe,
 * EBS bandwidth, GPU memory, accelerators. Kept raw; labelsOf derives the labels as Karpenter does.
 */
export interface InstanceTypeDetails {
  /** ProcessorInfo.Manufacturer and SustainedClockSpeedInGhz (absent: EC2 describes no processor). */
  processor?: { manufacturer: string; sustainedClockGhz: number }
  /** Hypervisor: `nitro`, `xen`, or '' (bare metal). */
  hypervisor: string
  /** NetworkInfo.EncryptionInTransitSupported */
  encryptionInTransit: boolean
  /** InstanceStorageInfo.NvmeSupport (`required`, `supported`, `unsupported`; absent without instance store). */
  nvmeSupport?: string
  /** EbsInfo.EbsOptimizedInfo.MaximumBandwidthInMbps, where EBS optimisation is on by default. */
  ebsBandwidthMbps?: number
  /** GpuInfo.Gpus[].MemoryInfo.SizeInMiB, in the order of `gpus`. */
  gpuMemoryMiB: number[]
  /** InferenceAcceleratorInfo.Accelerators */
  accelerators: { name: string; manufacturer: string; count: number }[]
  /** NeuronInfo.NeuronDevices[].Name, in the order of `neuronDevices`. */
  neuronNames: string[]
}

/** Where EC2 offers each type: DescribeInstanceTypeOfferings by availability zone. */
export interface InstanceTypeOffering {
  instanceType: string
  zone: string
}

/** A pod already bound to a node, as topology spread counts it: where it is and what its labels are. */
export interface PlacedPod {
  namespace: string
  nodeName: string
  labels: Record<string, string>
}

/** Which pods the user asked about. */
export type WhySelector =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'deployment' | 'statefulset' | 'job'; namespace: string; name: string }
  | { kind: 'all-pending'; namespace?: string }

export interface WhyFacts {
  schema: 'karpctl.why-facts/v1'
  meta: {
    clusterName: string
    region: string
    collectedAt: string
    karpctlVersion: string
    selector: WhySelector
  }
  /** doctor's Kubernetes facts, read by doctor's collectors (NodePools, EC2NodeClasses, controller). */
  kube: Facts['kube']
  /** The pods asked about (for a workload: its pods, Pending or not). */
  pods: Read<WorkloadPod[]>
  nodeClaims: Read<NodeClaim[]>
  daemonSets: Read<DaemonSet[]>
  pvcs: Read<PersistentVolumeClaim[]>
  pvs: Read<PersistentVolume[]>
  storageClasses: Read<StorageClass[]>
  events: Read<KubeEvent[]>
  /**
   * EC2's instance types and their offerings in the EC2NodeClasses' subnet zones (absent in a snapshot
   * saved before karpctl judged instance types: not judged then, never ✔).
   */
  instanceTypes?: Read<InstanceTypeInfo[]>
  offerings?: Read<InstanceTypeOffering[]>
  /**
   * The controller's newest "could not schedule pod" line of each judged pod (absent when no pod was
   * judged, or in a snapshot saved before karpctl read the log).
   */
  controllerLog?: Read<SchedulingLine[]>
  /**
   * Pods already on nodes, read only when a pod asked about has a required zone topology spread
   * (absent otherwise, and in older snapshots: the spread is then not judged, never ✔).
   */
  placedPods?: Read<PlacedPod[]>
  /**
   * The subnets of the cluster's VPC, with the tags the EC2NodeClasses' subnetSelectorTerms name (no
   * other tag is kept): what a fix may tag so that a class selects a subnet. Absent in older snapshots
   * (the fix is then a diagnosis).
   */
  subnets?: Read<VpcSubnet[]>
}

/** A subnet as DescribeSubnets gives it, trimmed to what a fix that tags it needs. */
export interface VpcSubnet {
  id: string
  zone: string
  zoneId?: string
  vpcId?: string
  /** AvailableIpAddressCount: Karpenter launches in the subnet of a zone with the most. */
  availableIps: number
  /** MapPublicIpOnLaunch: a public subnet is the last a fix picks for nodes. */
  public?: boolean
  tags: Record<string, string>
}
