// What one cluster looks like, as collected by one run. Plain JSON-serializable data only:
// a snapshot is exactly this object, and every check is a pure function of it.

export type { ReadFailure } from '../context/read-failure.js'
import type { ReadFailure } from '../context/read-failure.js'
import type { PolicyDocument } from '../policy/types.js'

/** A read either succeeded (value may be `null` for "does not exist") or failed with a reason. */
export type Read<T> = { ok: true; value: T } | { ok: false; error: ReadFailure }

export type Tags = Record<string, string>

// ---------- IAM ----------

export interface AttachedPolicy {
  arn: string
  name: string
  /** Default version's document; null when it could not be read (see `documentError`). */
  document: PolicyDocument | null
  documentError?: ReadFailure
}

export interface InlinePolicy {
  name: string
  document: PolicyDocument
}

export interface IamRole {
  name: string
  arn: string
  path: string
  trust: PolicyDocument
  tags: Tags
  /** The managed policy set as the role's permissions boundary (GetRole's PermissionsBoundaryArn). */
  permissionsBoundaryArn?: string
}

/** A role plus the permission policies attached to it. */
export interface RoleFacts {
  role: IamRole
  attached: Read<AttachedPolicy[]>
  inline: Read<InlinePolicy[]>
  /**
   * The permissions boundary's policy, read when the role has one and its documents were asked for
   * (the controller role): an action is allowed only if the identity policies and the boundary allow it.
   */
  boundary?: AttachedPolicy
}

export interface OidcProvider {
  arn: string
  /** Issuer without scheme, e.g. `oidc.eks.us-west-2.amazonaws.com/id/ABC`. */
  url: string
  clientIds: string[]
}

export interface InstanceProfile {
  name: string
  arn: string
  roles: string[]
}

/** Answer of IAM's policy simulator or of karpctl's local evaluator for one action on one resource. */
export interface PermissionEvaluation {
  action: string
  resource: string
  context: Record<string, string>
  decision: 'allowed' | 'implicitDeny' | 'explicitDeny'
  /** Who decided: IAM's simulator (authoritative) or the local evaluator (best effort). */
  method: 'simulator' | 'local'
  /** Why the simulator was not used, when method is local. */
  simulatorUnavailable?: string
  matchedStatements: string[]
  /** What the local evaluator could not judge exactly (unsupported operators, policy variables). */
  notes?: string[]
  /**
   * The local evaluator's verdict on the role's permissions boundary alone (absent when the role has
   * none, or when the simulator decided: it applies the boundary itself). `decision` above is already
   * identity ∩ boundary; `unreadable` means the boundary's document could not be read (see `error`).
   */
  permissionsBoundary?: {
    arn: string
    decision: 'allowed' | 'implicitDeny' | 'explicitDeny' | 'unreadable'
    matchedStatements: string[]
    error?: ReadFailure
  }
  /** The identity policies' verdict alone, when a permissions boundary was evaluated with them. */
  identityDecision?: 'allowed' | 'implicitDeny' | 'explicitDeny'
}

// ---------- EKS ----------

export interface EksCluster {
  name: string
  arn: string
  version: string
  endpoint?: string
  status?: string
  oidcIssuer?: string
  vpcId?: string
  subnetIds: string[]
  securityGroupIds: string[]
  clusterSecurityGroupId?: string
  /** The API endpoint's reach (resourcesVpcConfig): nodes reach a private one inside the VPC, a public-only one by a route out. */
  endpointPublicAccess?: boolean
  endpointPrivateAccess?: boolean
  publicAccessCidrs?: string[]
  /** API, API_AND_CONFIG_MAP or CONFIG_MAP; undefined when the endpoint does not say (older clusters: CONFIG_MAP). */
  authenticationMode?: string
  tags: Tags
}

export interface AccessEntry {
  principalArn: string
  type?: string
  kubernetesGroups: string[]
  username?: string
}

/** A managed node group: the Auto Scaling groups EKS made for it (what cluster-autoscaler scales). */
export interface Nodegroup {
  name: string
  /** The node group's IAM role (its nodes already join the cluster with it). */
  nodeRole?: string
  /** scalingConfig.maxSize: EKS refuses a desired size above it. */
  maxSize?: number
  autoScalingGroups: string[]
}

export interface PodIdentityAssociation {
  associationId: string
  namespace: string
  serviceAccount: string
  roleArn?: string
}

// ---------- EC2 ----------

export interface Subnet {
  id: string
  vpcId: string
  availabilityZone: string
  cidr?: string
  availableIps?: number
  /** Instances launched here get a public IPv4 address unless the launch says otherwise. */
  mapPublicIpOnLaunch?: boolean
  tags: Tags
}

export interface SgPermission {
  protocol: string
  fromPort?: number
  toPort?: number
  cidrs: string[]
  sourceGroupIds: string[]
}

export interface SecurityGroup {
  id: string
  name: string
  vpcId: string
  tags: Tags
  ingress: SgPermission[]
}

// ---------- SQS / EventBridge ----------

export interface QueueFacts {
  name: string
  url: string
  arn: string
  policy: PolicyDocument | null
  messageRetentionSeconds?: number
  sseEnabled?: boolean
  /**
   * The customer or AWS managed KMS key of SSE-KMS (the KmsMasterKeyId attribute as set: key id, key
   * ARN, alias name or alias ARN); absent with SSE-SQS or no encryption. Its key is in `kms.keys`.
   */
  kmsMasterKeyId?: string
}

export interface EventRule {
  name: string
  arn: string
  state: string
  eventPattern: Record<string, unknown> | null
  targetArns: string[]
  /** The targets with their ids (a fix replaces or removes a target by id); same order as targetArns. */
  targets?: { id: string; arn: string }[]
}

// ---------- KMS ----------

/** A KMS key an EC2NodeClass encrypts EBS volumes with, as DescribeKey resolved its identifier. */
export interface KmsKey {
  arn: string
  keyId: string
  accountId: string
  /** `AWS` for an AWS managed key (aws/ebs), `CUSTOMER` for a customer managed key. */
  keyManager: 'AWS' | 'CUSTOMER'
  /** Enabled, Disabled, PendingDeletion, PendingImport, Unavailable, … */
  keyState: string
  /** The key policy (GetKeyPolicy `default`), read for customer managed keys only. */
  policy?: Read<PolicyDocument>
}

// ---------- CloudFormation ----------

/**
 * The CloudFormation stack that declares a resource, as DescribeStackResources answers for the
 * resource's physical id. Asked of CloudFormation itself: AWS puts no `aws:cloudformation:*` tags on
 * IAM roles, managed policies or EventBridge rules, so tags cannot tell.
 */
export interface StackOwner {
  stackName: string
  stackId: string
  /** The resource's logical id in the stack's template, e.g. `KarpenterInterruptionQueue`. */
  logicalId: string
  /** `AWS::IAM::Role`, `AWS::IAM::ManagedPolicy`, `AWS::SQS::Queue`, `AWS::Events::Rule`, … */
  resourceType: string
  /** `CREATE_COMPLETE`, `UPDATE_COMPLETE`, `DELETE_FAILED`, … */
  resourceStatus: string
}

/** One resource of a stack, as the same DescribeStackResources answer lists it (its first 100). */
export interface StackResourceSummary {
  logicalId: string
  /** Absent while CloudFormation has not created it. */
  physicalId?: string
  resourceType: string
  resourceStatus: string
}

// ---------- Kubernetes ----------

export interface ObjectMeta {
  name: string
  namespace?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  creationTimestamp?: string
  uid?: string
  ownerReferences?: { kind: string; name: string }[]
}

export interface Condition {
  type: string
  status: string
  reason?: string
  message?: string
}

export interface Taint {
  key: string
  value?: string
  effect: string
}

export interface NodeSelectorRequirement {
  key: string
  operator: string
  values?: string[]
  minValues?: number
}

export interface NodePool {
  metadata: ObjectMeta
  spec: {
    template: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }
      spec: {
        nodeClassRef: { group: string; kind: string; name: string }
        taints?: Taint[]
        startupTaints?: Taint[]
        requirements?: NodeSelectorRequirement[]
        expireAfter?: string
      }
    }
    limits?: Record<string, string>
    disruption?: Record<string, unknown>
    weight?: number
  }
  status?: { conditions?: Condition[] }
}

export interface SelectorTerm {
  id?: string
  tags?: Record<string, string>
  name?: string
  alias?: string
  owner?: string
}

/** One entry of EC2NodeClass spec.blockDeviceMappings (the fields doctor reads). */
export interface BlockDeviceMapping {
  deviceName?: string
  rootVolume?: boolean
  ebs?: {
    encrypted?: boolean
    /** A key id, key ARN, alias name (`alias/…`) or alias ARN. */
    kmsKeyID?: string
    volumeSize?: string
    volumeType?: string
  }
}

export interface EC2NodeClass {
  metadata: ObjectMeta
  spec: {
    role?: string
    blockDeviceMappings?: BlockDeviceMapping[]
    instanceProfile?: string
    subnetSelectorTerms: SelectorTerm[]
    securityGroupSelectorTerms: SelectorTerm[]
    amiSelectorTerms?: SelectorTerm[]
    /** On-demand capacity reservations the NodeClass may launch into (Karpenter 1.3+). */
    capacityReservationSelectorTerms?: SelectorTerm[]
    /** The placement group nodes launch into (Karpenter 1.12+), by name or id. */
    placementGroupSelector?: { name?: string; id?: string }
    amiFamily?: string
    /** Karpenter merges it into the instance's user data by AMI family (what `why node` judges it by). */
    userData?: string
    /** Unset: the subnet's MapPublicIpOnLaunch decides (what a route to a public API endpoint needs). */
    associatePublicIPAddress?: boolean
    /** `RAID0`: the instance store is the node's ephemeral storage (what `why` sizes it by). */
    instanceStorePolicy?: string
    tags?: Record<string, string>
    /** The kubelet settings Karpenter sizes nodes with (what `why` reads to compute allocatable). */
    kubelet?: {
      maxPods?: number
      /** Caps the pods at podsPerCore × vCPUs (not on Bottlerocket). */
      podsPerCore?: number
      kubeReserved?: Record<string, string>
      systemReserved?: Record<string, string>
      evictionHard?: Record<string, string>
    }
  }
  status?: {
    conditions?: Condition[]
    subnets?: { id: string; zone: string }[]
    securityGroups?: { id: string; name?: string }[]
    instanceProfile?: string
    /** The AMIs the selector resolved (their names say their family). */
    amis?: { id: string; name?: string }[]
  }
}

export interface Toleration {
  key?: string
  operator?: string
  value?: unknown
  effect?: string
}

export interface ServiceAccount {
  metadata: ObjectMeta
}

export interface ContainerStatus {
  name: string
  restartCount: number
  ready: boolean
  waitingReason?: string
  /** How the previous run of the container ended (why it restarts): `OOMKilled`, `Error` … and its exit code. */
  lastTerminated?: { reason?: string; exitCode?: number }
  /** The container's memory limit as the pod spec sets it (`1Gi`), to say what an OOMKilled ran into. */
  memoryLimit?: string
}

export interface Pod {
  metadata: ObjectMeta
  nodeName?: string
  phase?: string
  containerStatuses: ContainerStatus[]
}

export interface Deployment {
  metadata: ObjectMeta
  replicas: number
  availableReplicas: number
  readyReplicas: number
  conditions: Condition[]
  serviceAccountName?: string
  /** Environment of the controller container (values only for plain `value`, never secrets). */
  env: Record<string, string>
  image?: string
  /**
   * Where its pods may run, as the live pod template says (whatever rendered it: Helm, Argo CD,
   * kustomize). Absent in snapshots saved before karpctl read it.
   */
  placement?: PodPlacement
}

/** The scheduling constraints of a pod template that decide which nodes a replica may use. */
export interface PodPlacement {
  tolerations: Toleration[]
  nodeSelector: Record<string, string>
  /** topologyKeys of required pod anti-affinity terms (the chart's: kubernetes.io/hostname). */
  requiredAntiAffinityTopologyKeys: string[]
}

export interface KubeNode {
  name: string
  labels: Record<string, string>
  taints: Taint[]
  ready: boolean
  /** Managed by Karpenter (has karpenter.sh/nodepool label). */
  karpenter: boolean
  kubeletVersion?: string
  /** spec.providerID: `aws:///<zone>/<instance id>` for an EC2 instance (absent in older snapshots). */
  providerID?: string
}

/**
 * A node a controller pod runs on. The webhook Service's endpoints are the pods' IPs, which the VPC CNI
 * puts on that node's network interfaces: their security groups are what the API server's call meets.
 */
export interface ControllerNode {
  /** The Node's name (the pods' spec.nodeName). */
  name: string
  /** The EC2 instance its spec.providerID names; absent on Fargate or with no EC2 providerID. */
  instanceId?: string
  /** EKS Fargate: the pod's own network interface carries the cluster security group. */
  fargate: boolean
  /** The security groups on the instance's network interfaces, with their rules; absent when not known. */
  securityGroups?: SecurityGroup[]
  /** Why the groups are not known (no EC2 providerID, the instance not found). */
  unresolved?: string
}

export interface CustomResourceDefinition {
  name: string
  group: string
  servedVersions: string[]
  storageVersion?: string
  labels: Record<string, string>
  annotations: Record<string, string>
  /** spec.conversion when it is a webhook (the 1.0.x charts'): where the API server sends conversions. */
  conversion?: CrdConversionWebhook
}

export interface CrdConversionWebhook {
  strategy: 'Webhook'
  /** clientConfig.service; absent when the webhook is given by URL. */
  service?: { namespace: string; name: string; port: number }
  url?: string
}

/** A Service as a CRD conversion webhook needs it: its ports. */
export interface ServicePorts {
  namespace: string
  name: string
  ports: { name?: string; port: number }[]
}

export interface AwsAuthMapping {
  rolearn: string
  username?: string
  groups: string[]
}

export interface ValidatingWebhook {
  name: string
  serviceNamespace?: string
  serviceName?: string
  port?: number
}

/** A cluster-autoscaler Deployment (found by name or by its chart's label, in any namespace). */
export interface ClusterAutoscalerDeployment {
  namespace: string
  name: string
  replicas: number
  annotations: Record<string, string>
  /** The cluster-autoscaler container's command and args, as written (`--nodes=1:10:my-asg`, …). */
  args: string[]
}

/** The Karpenter Helm release, decoded from its release Secret (no helm binary needed). */
export interface HelmRelease {
  name: string
  namespace: string
  revision: number
  status: string
  chartName: string
  chartVersion: string
  appVersion?: string
  /** The user-supplied values (`helm get values`), as Helm stored them: types are preserved. */
  values: Record<string, unknown>
  /** Chart defaults merged under user values (what the chart rendered with). */
  computedValues: Record<string, unknown>
  /** The ServiceAccount manifest the release rendered, when present (for its annotations as rendered). */
  renderedServiceAccount?: { name: string; annotations: Record<string, unknown> }
}

/** The tool that applied a Karpenter install that has no Helm release. */
export interface RenderedBy {
  /** argocd: Argo CD's tracking mark; flux: kustomize-controller's labels; manifests: neither. */
  tool: 'argocd' | 'flux' | 'manifests'
  /** The Argo CD Application, or the Flux Kustomization as `namespace/name`. */
  name?: string
}

/**
 * An install with no Helm release (Argo CD, Flux, `helm template | kubectl apply`), read back from the
 * live controller Deployment and ServiceAccount in a release's shape: `values` is empty, `computedValues`
 * holds what the chart rendered into them.
 */
export interface RenderedInstall extends HelmRelease {
  renderedBy: RenderedBy
}

/** Legacy (v0.x) objects, found to explain an upgrade path instead of failing obscurely. */
export interface LegacyObjects {
  provisioners: string[]
  awsNodeTemplates: string[]
}

// ---------- Local machine ----------

export interface HelmRegistryConfig {
  path: string
  /** Registries with stored credentials (never the credentials themselves). */
  registries: string[]
}

// ---------- The whole snapshot ----------

export interface Facts {
  schema: 'karpctl.facts/v1'
  meta: {
    clusterName: string
    region: string
    accountId?: string
    partition: string
    collectedAt: string
    kubeContext?: string
    kubeServer?: string
    karpctlVersion: string
    /** Things noticed while collecting that are not failures (e.g. kube context points elsewhere). */
    notes: string[]
    /** How many API calls the run made, per service; a snapshot proves no read was repeated. */
    calls?: Record<string, number>
  }
  eks: {
    cluster: Read<EksCluster | null>
    accessEntries: Read<AccessEntry[]>
    podIdentityAssociations: Read<PodIdentityAssociation[]>
    addons: Read<string[]>
    /**
     * The managed node groups and their Auto Scaling groups, read only when a cluster-autoscaler runs
     * (to name what it scales) or the controller is short of replicas (to scale its group within its
     * max size); absent otherwise and in snapshots saved before karpctl read them.
     */
    nodegroups?: Read<Nodegroup[]>
  }
  iam: {
    oidcProviders: Read<OidcProvider[]>
    /**
     * Keyed by role name: the controller role, every node role an EC2NodeClass uses and the VPC CNI's
     * own role (aws-node's IRSA or Pod Identity role, when it is in this account).
     */
    roles: Record<string, Read<RoleFacts | null>>
    /** The controller role's name, as discovered (IRSA annotation or Pod Identity association). */
    controllerRoleName: string | null
    /** How the controller identity was discovered. */
    controllerIdentity: 'irsa' | 'pod-identity' | 'none'
    instanceProfiles: Record<string, Read<InstanceProfile | null>>
    spotServiceLinkedRole: Read<IamRole | null>
    /** Keyed by node role ARN: may the controller pass it to EC2? */
    passRole: Record<string, Read<PermissionEvaluation>>
  }
  ec2: {
    /** Keyed by EC2NodeClass name. */
    subnetsByNodeClass: Record<string, Read<Subnet[]>>
    securityGroupsByNodeClass: Record<string, Read<SecurityGroup[]>>
    /** The cluster security group (with its rules), when known. */
    clusterSecurityGroup: Read<SecurityGroup | null>
    /**
     * The nodes the controller's pods run on and their instances' security groups (DescribeInstances),
     * where the 1.0.x webhook is served. Absent in snapshots taken before karpctl read them.
     */
    controllerNodes?: Read<ControllerNode[]>
  }
  sqs: {
    queue: Read<QueueFacts | null>
    /**
     * When the queue the setting names does not exist: the queues of this account and region that the
     * interruption rules deliver to, keyed by name (the queue meant by a misnamed setting, e.g. `demo`
     * where terraform-aws-eks made `Karpenter-demo`). Absent otherwise and in older snapshots.
     */
    deliveredTo?: Record<string, Read<QueueFacts | null>>
  }
  /** Absent in snapshots saved before karpctl read KMS keys. */
  kms?: {
    /**
     * Keyed by the identifier exactly as written: each `kmsKeyID` of the EC2NodeClasses'
     * blockDeviceMappings and the interruption queue's `kmsMasterKeyId`; null when DescribeKey says
     * the key does not exist.
     */
    keys: Record<string, Read<KmsKey | null>>
  }
  /**
   * Who owns the resources doctor may repair: the controller role and its customer managed
   * policies, the node roles, the interruption queue, the rules that deliver to it (or would be
   * repaired to) and, with IRSA, the cluster's OIDC provider. Absent in snapshots saved before
   * karpctl asked CloudFormation.
   */
  cloudformation?: {
    /**
     * Keyed by physical id, as CloudFormation names each kind: a role's name, a managed policy's or
     * OIDC provider's ARN, a queue's URL, a rule's name. null: no stack declares it.
     */
    owners: Record<string, Read<StackOwner | null>>
    /** The resources of each owning stack, keyed by stack name (from the same answers, no other read). */
    stacks: Record<string, StackResourceSummary[]>
  }
  events: {
    /**
     * The rules that target the interruption queue (ListRuleNamesByTarget) and the rules whose event
     * pattern matches an interruption event, whatever they target (ListRules): a rule that sends to
     * another queue is found and named, not mistaken for a missing one.
     */
    rules: Read<EventRule[]>
    /** A listing that failed while the other answered: `rules` holds what the other found. */
    partial?: ReadFailure[]
  }
  kube: {
    release: Read<HelmRelease | null>
    /**
     * When there is no Helm release but a controller Deployment runs: the install it shows. Absent in
     * snapshots saved before karpctl read it.
     */
    rendered?: Read<RenderedInstall | null>
    serviceAccount: Read<ServiceAccount | null>
    deployment: Read<Deployment | null>
    pods: Read<Pod[]>
    nodes: Read<KubeNode[]>
    nodePools: Read<NodePool[]>
    nodeClasses: Read<EC2NodeClass[]>
    crds: Read<CustomResourceDefinition[]>
    awsAuth: Read<AwsAuthMapping[] | null>
    webhooks: Read<ValidatingWebhook[]>
    legacy: Read<LegacyObjects>
    serverVersion: Read<string | null>
    /** Absent in snapshots saved before karpctl looked for a cluster-autoscaler. */
    clusterAutoscalers?: Read<ClusterAutoscalerDeployment[]>
    /**
     * The VPC CNI's ServiceAccount (kube-system/aws-node): its IRSA annotation names the role the CNI
     * uses instead of the node role. Absent in snapshots saved before karpctl read it.
     */
    awsNodeServiceAccount?: Read<ServiceAccount | null>
    /**
     * The Services CRD conversion webhooks name, by `namespace/name` (null: not found). Absent in
     * snapshots taken before it was collected.
     */
    conversionServices?: Read<Record<string, ServicePorts | null>>
  }
  local: {
    helmRegistry: Read<HelmRegistryConfig | null>
    /**
     * Docker's config, where Helm looks for a registry's credentials when its own config has none
     * (oras-go's NewStoreWithFallbacks in helm's pkg/registry/client.go). Absent in snapshots taken
     * before it was collected.
     */
    dockerRegistry?: Read<HelmRegistryConfig | null>
  }
}
