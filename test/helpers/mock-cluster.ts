// A nock-based mock of one healthy AWS account + EKS cluster `demo` (us-west-2, 123456789012) and its
// Kubernetes API: the same cluster test/helpers/facts.ts describes as facts, but on the wire, in the
// formats the real services use (STS/IAM query + XML with URL-encoded policy documents, EC2 query +
// XML, EKS REST JSON, SQS JSON 1.0, EventBridge JSON 1.1, CloudFormation query + XML, Kubernetes JSON with a real Helm release
// Secret). The SDK keeps its real hostnames; nock.disableNetConnect() keeps everything on this machine.
//
//   const mock = startMockCluster({ latencyMs: 50, faults: [...], mutate: (s) => { ... } })
//   await doctor({ live: mock.runOptions({ maxAttempts: 1 }) })
//   mock.count('iam:GetRole'); mock.duplicates(); mock.isDone(); mock.stop()
//
// Three layers of interceptors, matched in this order:
//  1. faults: `.times(n)` error answers for one operation (optionally one input) — throttling,
//     AccessDenied, 500, expired credentials;
//  2. expectations: one `.once()` interceptor per read a correct collector makes on this cluster, so
//     `isDone()` proves each was made and a repeat of it falls through to…
//  3. the fallback: persisted, serves any operation from the same state, and records the call as
//     unexpected (so a duplicate read is visible in `duplicates()` / `unexpected()`, never an error).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import nock from 'nock'
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import type { RunOptions } from '../../src/context/run-context.js'
import { RELEASE_SELECTOR } from '../../src/facts/collect-kube.js'
import { decodeReleaseData, encodeReleaseData } from '../../src/facts/helm-release.js'
import type { PolicyDocument } from '../../src/policy/types.js'
import { evaluateWithBoundary } from '../../src/policy/evaluate.js'
import { controllerPolicyDocuments, INTERRUPTION_RULES } from '../../src/desired/controller-policy.js'
import {
  ACCOUNT,
  CLUSTER,
  CLUSTER_SG,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  ISSUER,
  NODE_ROLE,
  NODE_ROLE_ARN,
  NODE_SG,
  OIDC_ARN,
  QUEUE_ARN,
  REGION,
  VPC,
  healthyNodeClass,
  queuePolicy as healthyQueuePolicy,
  healthyNodePool,
  irsaTrust,
} from './facts.js'
import { fixturePath } from './fixtures.js'

export type Service =
  'sts' | 'iam' | 'ec2' | 'eks' | 'sqs' | 'eventbridge' | 'kms' | 'cloudformation' | 'kube'
/** Every AWS service the mock serves (faults on `*` and the fallbacks cover each). */
const AWS_SERVICES: Exclude<Service, 'kube'>[] = [
  'sts',
  'iam',
  'ec2',
  'eks',
  'sqs',
  'eventbridge',
  'kms',
  'cloudformation',
]

export const HOSTS: Record<Exclude<Service, 'kube'>, string> = {
  sts: `https://sts.${REGION}.amazonaws.com`,
  iam: 'https://iam.amazonaws.com',
  ec2: `https://ec2.${REGION}.amazonaws.com`,
  eks: `https://eks.${REGION}.amazonaws.com`,
  sqs: `https://sqs.${REGION}.amazonaws.com`,
  eventbridge: `https://events.${REGION}.amazonaws.com`,
  kms: `https://kms.${REGION}.amazonaws.com`,
  cloudformation: `https://cloudformation.${REGION}.amazonaws.com`,
}
/** The EKS endpoint of `demo` (as in healthyFacts) is also the kubeconfig's server, so collect adds no note. */
export const KUBE_SERVER = 'https://example.gr7.us-west-2.eks.amazonaws.com'
export const KUBE_TOKEN = 'test-bearer-token'
export const CALLER_ARN = `arn:aws:iam::${ACCOUNT}:user/karpctl-test`

// ---------------------------------------------------------------------------------------------
// The state the mock serves: plain data a test mutates to break one thing.
// ---------------------------------------------------------------------------------------------

export interface MockRole {
  name: string
  path: string
  trust: PolicyDocument
  /** Managed policy ARNs (their documents live in `managedPolicies`). */
  attached: string[]
  inline: Record<string, PolicyDocument>
  tags?: Record<string, string>
  /** ARN of the managed policy set as the role's permissions boundary (its document in `managedPolicies`). */
  permissionsBoundary?: string
}

export interface MockManagedPolicy {
  name: string
  defaultVersionId: string
  document: PolicyDocument
}

export interface MockSubnet {
  id: string
  vpcId: string
  az: string
  cidr: string
  availableIps: number
  tags: Record<string, string>
  mapPublicIpOnLaunch?: boolean
}

/** A VPC route table (what `why node` judges a public-only endpoint's route by). */
export interface MockRouteTable {
  id: string
  vpcId: string
  main?: boolean
  subnetIds: string[]
  /** destination CIDR → gateway id (igw-, nat-, tgw-, local). */
  routes: Record<string, string>
}

export interface MockZone {
  /** Absent: a zone AWS answers without a name (as an SDK shape allows). */
  name?: string
  type: 'availability-zone' | 'local-zone' | 'wavelength-zone'
  optedIn: boolean
}

export interface MockSecurityGroup {
  id: string
  name: string
  vpcId: string
  tags: Record<string, string>
  ingress: {
    protocol: string
    fromPort?: number
    toPort?: number
    cidrs: string[]
    sourceGroupIds: string[]
  }[]
}

export interface MockRule {
  name: string
  state: 'ENABLED' | 'DISABLED'
  eventPattern: Record<string, unknown>
  targets: string[]
  /** Ids of `targets`, same order (default: KarpenterInterruptionQueueTarget, …Target1, …). */
  targetIds?: string[]
}

/** Whether a rule's pattern delivers one of the interruption events (the mock's own reading of a pattern). */
function interruptionPattern(p: Record<string, unknown>): boolean {
  const has = (field: string, v: string) => [p[field]].flat().includes(v)
  return INTERRUPTION_RULES.some(
    ({ source, detailType }) =>
      has('source', source) && (!('detail-type' in p) || has('detail-type', detailType)),
  )
}

/** A KMS key; DescribeKey finds it by id, ARN, alias name or alias ARN. */
export interface MockKmsKey {
  keyId: string
  aliases: string[]
  keyManager: 'AWS' | 'CUSTOMER'
  keyState: string
  policy: PolicyDocument
}

/** A CloudFormation stack and the physical ids of its resources (what DescribeStackResources lists). */
export interface MockStack {
  name: string
  resources: { logicalId: string; physicalId: string; type: string; status?: string }[]
}

export const stackId = (name: string) =>
  `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${name}/1c2fa620-c0e9-11ef-8f5e-0a1b2c3d4e5f`

export interface MockNodegroup {
  name: string
  nodeRole: string
  autoScalingGroups: string[]
}

export interface KubeObject {
  metadata: {
    name: string
    namespace?: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
  }
  [k: string]: unknown
}

export interface MockState {
  callerArn: string
  /** The EKS DescribeCluster `cluster` object, as EKS returns it; null → ResourceNotFoundException. */
  cluster: Record<string, unknown> | null
  /** What ListClusters answers. */
  clusters: string[]
  addons: string[]
  accessEntries: { principalArn: string; type: string; kubernetesGroups: string[]; username?: string }[]
  podIdentityAssociations: {
    associationId: string
    namespace: string
    serviceAccount: string
    roleArn: string
  }[]
  roles: Record<string, MockRole>
  managedPolicies: Record<string, MockManagedPolicy>
  oidcProviders: string[]
  instanceProfiles: Record<string, { roles: string[] }>
  subnets: MockSubnet[]
  /** The VPC's route tables; absent: DescribeRouteTables is not served. */
  routeTables?: MockRouteTable[]
  /** Console output by instance id (GetConsoleOutput); absent: not served. */
  consoleOutput?: Record<string, string>
  securityGroups: MockSecurityGroup[]
  /** EC2 instances (DescribeInstances), each with the groups on its network interfaces, one list per ENI. */
  instances?: { id: string; enis: string[][] }[]
  /** The region's zones (a Local Zone not opted in is listed only when all zones are asked for). */
  zones: MockZone[]
  /** Queue name → attributes as GetQueueAttributes returns them (all strings). */
  queues: Record<string, Record<string, string>>
  rules: MockRule[]
  kmsKeys: MockKmsKey[]
  nodegroups: MockNodegroup[]
  /** CloudFormation stacks (none by default: nothing in the healthy account was made by a stack). */
  stacks: MockStack[]
  kube: {
    token: string
    /** Helm release Secrets (any namespace), as the API returns them (data base64-encoded). */
    helmSecrets: KubeObject[]
    serviceAccounts: KubeObject[]
    deployments: KubeObject[]
    pods: KubeObject[]
    nodes: KubeObject[]
    nodePools: KubeObject[]
    nodeClasses: KubeObject[]
    /** `why node`'s reads; absent: not served. */
    nodeClaims?: KubeObject[]
    pdbs?: KubeObject[]
    events?: KubeObject[]
    crds: KubeObject[]
    awsAuth: KubeObject | null
    validatingWebhooks: KubeObject[]
    mutatingWebhooks: KubeObject[]
    version: Record<string, string>
  }
}

const arnRole = (name: string, path = '/') => `arn:aws:iam::${ACCOUNT}:role${path}${name}`
const awsManaged = (name: string) => `arn:aws:iam::aws:policy/${name}`
const customerPolicy = (name: string) => `arn:aws:iam::${ACCOUNT}:policy/${name}`

/** The chart's default values (the real values.yaml of karpenter 1.14.1). */
export function chartValues(): Record<string, unknown> {
  const text = readFileSync(fixturePath('v1.14.1/charts/karpenter/values.yaml'), 'utf8')
  return parseYaml(text) as Record<string, unknown>
}

export function chartMetadata(): Record<string, unknown> {
  return parseYaml(readFileSync(fixturePath('v1.14.1/charts/karpenter/Chart.yaml'), 'utf8')) as Record<
    string,
    unknown
  >
}

export interface ReleaseSpec {
  name?: string
  namespace?: string
  revision?: number
  status?: string
  chartVersion?: string
  /** User-supplied values (`helm get values`), types preserved. */
  values?: Record<string, unknown>
  /** Annotations of the ServiceAccount as the chart rendered them (a YAML fragment keeps their types). */
  renderedSaAnnotations?: Record<string, unknown>
}

/** A Helm 3 release Secret for the karpenter chart, encoded the way Helm stores it. */
export function helmReleaseSecret(spec: ReleaseSpec = {}): KubeObject {
  const name = spec.name ?? 'karpenter'
  const namespace = spec.namespace ?? 'kube-system'
  const revision = spec.revision ?? 1
  const status = spec.status ?? 'deployed'
  const values = spec.values ?? defaultReleaseValues()
  const saAnnotations =
    spec.renderedSaAnnotations ??
    (values.serviceAccount as { annotations?: Record<string, unknown> } | undefined)?.annotations ??
    {}
  const meta = { ...chartMetadata(), ...(spec.chartVersion ? { version: spec.chartVersion } : {}) }
  const manifest = [
    '---',
    '# Source: karpenter/templates/serviceaccount.yaml',
    toYaml({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/name': 'karpenter', 'app.kubernetes.io/instance': name },
        ...(Object.keys(saAnnotations).length ? { annotations: saAnnotations } : {}),
      },
    }).trimEnd(),
    '---',
    '# Source: karpenter/templates/deployment.yaml',
    toYaml({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace } }).trimEnd(),
    '',
  ].join('\n')
  const release = {
    name,
    namespace,
    version: revision,
    info: {
      first_deployed: '2026-11-01T10:00:00Z',
      last_deployed: '2026-11-01T10:00:00Z',
      deleted: '',
      description: 'Install complete',
      status,
    },
    chart: { metadata: meta, lock: null, templates: [], values: chartValues(), schema: null, files: [] },
    config: values,
    manifest,
    hooks: [],
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'helm.sh/release.v1',
    metadata: {
      name: `sh.helm.release.v1.${name}.v${revision}`,
      namespace,
      labels: { name, owner: 'helm', status, version: String(revision), modifiedAt: '1793527200' },
    },
    data: { release: encodeReleaseData(release) },
  }
}

export function defaultReleaseValues(): Record<string, unknown> {
  return {
    settings: { clusterName: CLUSTER, interruptionQueue: CLUSTER },
    serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN } },
  }
}

/** An unrelated chart's release, so the collector must pick Karpenter's out of several. */
function otherReleaseSecret(): KubeObject {
  const release = {
    name: 'metrics-server',
    namespace: 'kube-system',
    version: 3,
    info: { status: 'deployed' },
    chart: { metadata: { name: 'metrics-server', version: '3.12.2', appVersion: '0.7.2' }, values: {} },
    config: {},
    manifest: '',
  }
  return {
    metadata: {
      name: 'sh.helm.release.v1.metrics-server.v3',
      namespace: 'kube-system',
      labels: { name: 'metrics-server', owner: 'helm', status: 'deployed', version: '3' },
    },
    type: 'helm.sh/release.v1',
    data: { release: encodeReleaseData(release) },
  }
}

const karpenterLabels = { 'app.kubernetes.io/name': 'karpenter', 'app.kubernetes.io/instance': 'karpenter' }

function crd(name: string): KubeObject {
  const dot = name.indexOf('.')
  const plural = name.slice(0, dot)
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name,
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: {
        'meta.helm.sh/release-name': 'karpenter',
        'meta.helm.sh/release-namespace': 'kube-system',
        'controller-gen.kubebuilder.io/version': 'v0.20.0',
      },
    },
    spec: {
      group: name.slice(dot + 1),
      names: { plural },
      scope:
        plural === 'nodeclaims' || plural === 'nodepools' || plural === 'ec2nodeclasses'
          ? 'Cluster'
          : 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true }],
    },
  }
}

function node(name: string, zone: string): KubeObject {
  return {
    metadata: {
      name,
      labels: {
        'eks.amazonaws.com/nodegroup': 'system',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/zone': zone,
      },
    },
    spec: { providerID: `aws:///${zone}/i-0${name.replace(/\D/g, '')}` },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
      nodeInfo: { kubeletVersion: 'v1.34.1-eks-113cf36' },
    },
  }
}

function pod(name: string, nodeName: string): KubeObject {
  return {
    metadata: { name, namespace: 'kube-system', labels: karpenterLabels },
    spec: { nodeName, serviceAccountName: 'karpenter' },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'controller', ready: true, restartCount: 0, state: { running: {} } }],
    },
  }
}

/** The healthy `demo` cluster: a getting-started Karpenter 1.14.1 install with IRSA and aws-auth. */
export function healthyState(): MockState {
  const policies = controllerPolicyDocuments({
    partition: 'aws',
    region: REGION,
    accountId: ACCOUNT,
    clusterName: CLUSTER,
    nodeRoleArns: [NODE_ROLE_ARN],
    queueArn: QUEUE_ARN,
  })
  const managedPolicies: Record<string, MockManagedPolicy> = {}
  for (const p of policies)
    managedPolicies[customerPolicy(p.name)] = { name: p.name, defaultVersionId: 'v1', document: p.document }
  const nodePolicies = [
    'AmazonEKS_CNI_Policy',
    'AmazonEKSWorkerNodePolicy',
    'AmazonEC2ContainerRegistryPullOnly',
    'AmazonSSMManagedInstanceCore',
  ]
  const subnet = (id: string, az: string, cidr: string): MockSubnet => ({
    id,
    vpcId: VPC,
    az,
    cidr,
    availableIps: 8000,
    tags: { 'karpenter.sh/discovery': CLUSTER, Name: `demo-private-${az}` },
  })
  const queuePolicy = healthyQueuePolicy()
  return {
    callerArn: CALLER_ARN,
    cluster: {
      name: CLUSTER,
      arn: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${CLUSTER}`,
      createdAt: 1_761_991_200,
      version: '1.34',
      endpoint: 'https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com',
      roleArn: arnRole('eksClusterRole'),
      resourcesVpcConfig: {
        subnetIds: ['subnet-0a', 'subnet-0b', 'subnet-0c'],
        securityGroupIds: [],
        clusterSecurityGroupId: CLUSTER_SG,
        vpcId: VPC,
        endpointPublicAccess: true,
        endpointPrivateAccess: true,
        publicAccessCidrs: ['0.0.0.0/0'],
      },
      kubernetesNetworkConfig: { serviceIpv4Cidr: '172.20.0.0/16', ipFamily: 'ipv4' },
      identity: { oidc: { issuer: `https://${ISSUER}` } },
      status: 'ACTIVE',
      certificateAuthority: { data: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==' },
      platformVersion: 'eks.5',
      tags: {},
      accessConfig: { authenticationMode: 'CONFIG_MAP' },
    },
    clusters: [CLUSTER],
    addons: ['vpc-cni', 'coredns', 'kube-proxy'],
    accessEntries: [],
    podIdentityAssociations: [],
    roles: {
      [CONTROLLER_ROLE]: {
        name: CONTROLLER_ROLE,
        path: '/',
        trust: irsaTrust(),
        attached: policies.map((p) => customerPolicy(p.name)),
        inline: {},
      },
      [NODE_ROLE]: {
        name: NODE_ROLE,
        path: '/',
        trust: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
        attached: nodePolicies.map(awsManaged),
        inline: {},
      },
      AWSServiceRoleForEC2Spot: {
        name: 'AWSServiceRoleForEC2Spot',
        path: '/aws-service-role/spot.amazonaws.com/',
        trust: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'spot.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
        attached: [awsManaged('aws-service-role/AWSEC2SpotServiceRolePolicy')],
        inline: {},
      },
    },
    managedPolicies,
    oidcProviders: [OIDC_ARN, `arn:aws:iam::${ACCOUNT}:oidc-provider/token.actions.githubusercontent.com`],
    instanceProfiles: {},
    subnets: [
      subnet('subnet-0a', 'us-west-2a', '10.0.0.0/19'),
      subnet('subnet-0b', 'us-west-2b', '10.0.32.0/19'),
      subnet('subnet-0c', 'us-west-2c', '10.0.64.0/19'),
      // Public subnets of the same VPC, not tagged for discovery: selectors must not pick them.
      {
        id: 'subnet-0p',
        vpcId: VPC,
        az: 'us-west-2a',
        cidr: '10.0.96.0/19',
        availableIps: 8100,
        tags: { Name: 'demo-public' },
      },
    ],
    zones: [
      ...['a', 'b', 'c', 'd'].map((l) => ({
        name: `${REGION}${l}`,
        type: 'availability-zone' as const,
        optedIn: true,
      })),
      { name: `${REGION}-lax-1a`, type: 'local-zone', optedIn: false },
    ],
    securityGroups: [
      {
        id: NODE_SG,
        name: 'demo-node',
        vpcId: VPC,
        tags: { 'karpenter.sh/discovery': CLUSTER },
        ingress: [{ protocol: 'tcp', fromPort: 8443, toPort: 8443, cidrs: [], sourceGroupIds: [CLUSTER_SG] }],
      },
      { id: CLUSTER_SG, name: 'eks-cluster-sg-demo', vpcId: VPC, tags: {}, ingress: [] },
    ],
    // The instances of the node group's two Nodes (their providerIDs): the controller runs there.
    instances: ['i-010011', 'i-010021'].map((id) => ({ id, enis: [[NODE_SG]] })),
    queues: {
      [CLUSTER]: {
        QueueArn: QUEUE_ARN,
        MessageRetentionPeriod: '300',
        SqsManagedSseEnabled: 'true',
        VisibilityTimeout: '30',
        Policy: JSON.stringify(queuePolicy),
      },
    },
    rules: INTERRUPTION_RULES.map(({ key, source, detailType: detail }) => ({
      name: `Karpenter-${CLUSTER}-${key}`,
      state: 'ENABLED',
      eventPattern: { source: [source], 'detail-type': [detail] },
      targets: [QUEUE_ARN],
    })),
    kmsKeys: [],
    nodegroups: [],
    stacks: [],
    kube: {
      token: KUBE_TOKEN,
      helmSecrets: [helmReleaseSecret(), otherReleaseSecret()],
      serviceAccounts: [
        {
          metadata: {
            name: 'karpenter',
            namespace: 'kube-system',
            labels: karpenterLabels,
            annotations: { 'eks.amazonaws.com/role-arn': CONTROLLER_ROLE_ARN },
          },
        },
      ],
      deployments: [
        {
          metadata: { name: 'karpenter', namespace: 'kube-system', labels: karpenterLabels },
          spec: {
            replicas: 2,
            template: {
              spec: {
                serviceAccountName: 'karpenter',
                containers: [
                  {
                    name: 'controller',
                    image: 'public.ecr.aws/karpenter/controller:1.14.1',
                    env: [
                      { name: 'CLUSTER_NAME', value: CLUSTER },
                      { name: 'INTERRUPTION_QUEUE', value: CLUSTER },
                      {
                        name: 'SYSTEM_NAMESPACE',
                        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
                      },
                    ],
                  },
                ],
              },
            },
          },
          status: {
            replicas: 2,
            availableReplicas: 2,
            readyReplicas: 2,
            conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
          },
        },
      ],
      pods: [pod('karpenter-abc', 'ip-10-0-1-1'), pod('karpenter-def', 'ip-10-0-2-1')],
      nodes: [node('ip-10-0-1-1', 'us-west-2a'), node('ip-10-0-2-1', 'us-west-2b')],
      nodePools: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', ...healthyNodePool() }],
      nodeClasses: [{ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', ...healthyNodeClass() }],
      crds: ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws'].map(
        crd,
      ),
      awsAuth: {
        metadata: { name: 'aws-auth', namespace: 'kube-system' },
        data: {
          mapRoles: toYaml([
            {
              rolearn: NODE_ROLE_ARN,
              username: 'system:node:{{EC2PrivateDNSName}}',
              groups: ['system:bootstrappers', 'system:nodes'],
            },
          ]),
        },
      },
      validatingWebhooks: [],
      mutatingWebhooks: [
        {
          metadata: { name: 'pod-identity-webhook' },
          webhooks: [
            { name: 'iam-for-pods.amazonaws.com', clientConfig: { url: 'https://127.0.0.1:23443/mutate' } },
          ],
        },
      ],
      version: { major: '1', minor: '34', gitVersion: 'v1.34.1-eks-113cf36', platform: 'linux/amd64' },
    },
  }
}

/**
 * Mutation: the getting-started install. Stack `Karpenter-demo` (the v1.14.1 template) declares the
 * node role, the six controller managed policies, the queue and the five rules (CloudFormation names
 * them `<stack>-<LogicalId>-<suffix>`); eksctl's stack declares the controller role that carries the
 * policies. Nothing of it is tagged `aws:cloudformation:*`, as on AWS (IAM and EventBridge are not).
 */
export const GETTING_STARTED_STACK = `Karpenter-${CLUSTER}`
export const EKSCTL_STACK = `eksctl-${CLUSTER}-podidentityrole-kube-system-karpenter`
export function useGettingStartedStacks(s: MockState): void {
  const rules = INTERRUPTION_RULES.map(({ key, source, detailType }) => ({
    name: `${GETTING_STARTED_STACK}-${key}-${key.length.toString(36).toUpperCase()}X7Q2L`,
    state: 'ENABLED' as const,
    eventPattern: { source: [source], 'detail-type': [detailType] },
    targets: [QUEUE_ARN],
  }))
  s.rules = rules
  const role = s.roles[CONTROLLER_ROLE] as MockRole
  s.stacks = [
    {
      name: GETTING_STARTED_STACK,
      resources: [
        { logicalId: 'KarpenterNodeRole', physicalId: NODE_ROLE, type: 'AWS::IAM::Role' },
        ...role.attached.map((arn) => ({
          logicalId: arn.slice(arn.lastIndexOf('/') + 1).replace(/^KarpenterController|-demo$/g, ''),
          physicalId: arn,
          type: 'AWS::IAM::ManagedPolicy',
        })),
        {
          logicalId: 'KarpenterInterruptionQueue',
          physicalId: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${CLUSTER}`,
          type: 'AWS::SQS::Queue',
        },
        {
          logicalId: 'KarpenterInterruptionQueuePolicy',
          physicalId: `${GETTING_STARTED_STACK}-KarpenterInterruptionQueuePolicy-1A2B3C`,
          type: 'AWS::SQS::QueuePolicy',
        },
        ...INTERRUPTION_RULES.map(({ key }, i) => ({
          logicalId: key,
          physicalId: rules[i]!.name,
          type: 'AWS::Events::Rule',
        })),
      ],
    },
    {
      name: EKSCTL_STACK,
      resources: [{ logicalId: 'Role1', physicalId: CONTROLLER_ROLE, type: 'AWS::IAM::Role' }],
    },
  ]
}

/** Mutation: the controller uses EKS Pod Identity instead of IRSA (association, agent add-on, trust). */
export function usePodIdentity(s: MockState): void {
  const values = defaultReleaseValues()
  delete (values as { serviceAccount?: unknown }).serviceAccount
  s.kube.helmSecrets = [helmReleaseSecret({ values }), ...s.kube.helmSecrets.slice(1)]
  for (const sa of s.kube.serviceAccounts) delete sa.metadata.annotations
  s.addons.push('eks-pod-identity-agent')
  s.podIdentityAssociations = [
    {
      associationId: 'a-0123456789abcdef0',
      namespace: 'kube-system',
      serviceAccount: 'karpenter',
      roleArn: CONTROLLER_ROLE_ARN,
    },
  ]
  const role = s.roles[CONTROLLER_ROLE] as MockRole
  role.trust = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Service: 'pods.eks.amazonaws.com' },
        Action: ['sts:AssumeRole', 'sts:TagSession'],
      },
    ],
  }
}

// ---------------------------------------------------------------------------------------------
// Calls: how a request is named, and what the mock answers.
// ---------------------------------------------------------------------------------------------

export interface Call {
  service: Service
  /** `service:Operation`, as the CallLog names it (kube: `kube:GET`). */
  op: string
  /** Operation plus canonical input: two calls with the same key are the same read. */
  key: string
  params: Record<string, unknown>
  /** Kubernetes / EKS REST path (with query). */
  path?: string
}

export interface Answer {
  status: number
  body: string
  headers: Record<string, string>
}

export type FaultKind = 'throttle' | 'denied' | 'server' | 'expired' | 'notfound'

export interface Fault {
  /** `iam:GetRole`, `ec2:DescribeSubnets`, `kube:GET`, or `*` for every AWS operation. */
  op: string
  /** Only calls whose parsed input matches (query params, JSON body, or `{ path }` for REST/kube). */
  match?: (call: Call) => boolean
  error: FaultKind | { status: number; code: string; message?: string }
  /** How many calls get the error (default 1; Infinity = every matching call). */
  times?: number
}

export interface MockOptions {
  /** Latency added to every answer (nock `.delay`), default 0. */
  latencyMs?: number
  /** Per-operation latency, e.g. `{ 'iam:GetPolicyVersion': 200 }`. */
  latencyByOp?: Record<string, number>
  faults?: Fault[]
  /** Change the healthy state before the interceptors are built. */
  mutate?: (state: MockState) => void
  /** Register one-shot expectations for the reads of a correct collector (default true). */
  expectations?: boolean
  /**
   * Serve a namespace's Helm release Secrets (how a plan reads the release it repairs). Off by default:
   * install's tests on this cluster plan the release as a new one.
   */
  releasesByNamespace?: boolean
  /**
   * Whether the Kubernetes API accepts a request's Authorization header (default: `Bearer <state.kube.token>`):
   * a fleet run authenticates with EKS tokens it makes at run time.
   */
  kubeAuthorized?: (authorization: string | undefined) => boolean
}

export interface RecordedCall {
  op: string
  key: string
  status: number
  /** `expected` (a one-shot expectation), `fault` (an injected error), `fallback` (anything else). */
  via: 'expected' | 'fault' | 'fallback'
  /** When the request reached the mock (performance.now()); the answer leaves `latency` ms later. */
  at: number
}

const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
        )
      : v

function parseBody(body: unknown): Record<string, unknown> {
  if (body && typeof body === 'object') return body as Record<string, unknown>
  const text = typeof body === 'string' ? body : ''
  if (text.startsWith('{')) return JSON.parse(text) as Record<string, unknown>
  return Object.fromEntries(new URLSearchParams(text))
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? String(v[0]) : String(v)
  }
  return undefined
}

/** Names a query-protocol call (STS, IAM, EC2): `Action` plus the other parameters, sorted. */
function queryCall(service: Service, params: Record<string, unknown>): Call {
  const action = String(params.Action ?? '?')
  const rest = Object.entries(params)
    .filter(([k]) => k !== 'Action' && k !== 'Version')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join('&')
  return { service, op: `${service}:${action}`, key: `${service}:${action} ${rest}`, params }
}

function jsonCall(service: Service, target: string | undefined, params: Record<string, unknown>): Call {
  const action = (target ?? '?').slice((target ?? '?').indexOf('.') + 1)
  return {
    service,
    op: `${service}:${action}`,
    key: `${service}:${action} ${JSON.stringify(sortKeys(params))}`,
    params,
  }
}

/** EKS REST: method + path → operation. */
function eksCall(method: string, path: string): Call {
  const url = new URL(path, HOSTS.eks)
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent)
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams)
  let action = 'Unknown'
  if (parts[0] === 'clusters' && parts.length === 1) action = 'ListClusters'
  else if (parts[0] === 'clusters' && parts.length === 2) {
    action = 'DescribeCluster'
    params.name = parts[1]
  } else if (parts[0] === 'clusters') {
    params.clusterName = parts[1]
    const sub = parts[2]
    if (sub === 'addons') action = parts.length === 3 ? 'ListAddons' : 'DescribeAddon'
    if (sub === 'access-entries') {
      action = parts.length === 3 ? 'ListAccessEntries' : 'DescribeAccessEntry'
      if (parts[3]) params.principalArn = parts[3]
    }
    if (sub === 'node-groups') {
      action = parts.length === 3 ? 'ListNodegroups' : 'DescribeNodegroup'
      if (parts[3]) params.nodegroupName = parts[3]
    }
    if (sub === 'pod-identity-associations') {
      action = parts.length === 3 ? 'ListPodIdentityAssociations' : 'DescribePodIdentityAssociation'
      if (parts[3]) params.associationId = parts[3]
    }
  }
  return {
    service: 'eks',
    op: `eks:${action}`,
    key: `eks:${action} ${method} ${url.pathname}${url.search}`,
    params,
    path,
  }
}

function kubeCall(path: string): Call {
  return { service: 'kube', op: 'kube:GET', key: `kube:GET:${path}`, params: { path }, path }
}

const xmlEscape = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')

export type Xml = string | number | boolean | null | undefined | Xml[] | { [k: string]: Xml }

/** Serializes to query-protocol XML: arrays are `<member>` lists (EC2: `<item>`). */
function toXml(v: Xml, item = 'member'): string {
  if (v === null || v === undefined) return ''
  if (Array.isArray(v)) return v.map((x) => `<${item}>${toXml(x, item)}</${item}>`).join('')
  if (typeof v === 'object') {
    return Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `<${k}>${toXml(x, item)}</${k}>`)
      .join('')
  }
  return xmlEscape(String(v))
}

let requestCounter = 0
const requestId = () => `0000000${(++requestCounter).toString(16)}-aaaa-bbbb-cccc-000000000000`.slice(-36)

const XML = { 'content-type': 'text/xml' }
const IAM_NS = 'https://iam.amazonaws.com/doc/2010-05-08/'
const STS_NS = 'https://sts.amazonaws.com/doc/2011-06-15/'
const EC2_NS = 'http://ec2.amazonaws.com/doc/2016-11-15/'
const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/'

function queryAnswer(ns: string, action: string, result: Xml): Answer {
  return {
    status: 200,
    headers: { ...XML, 'x-amzn-requestid': requestId() },
    body: `<?xml version="1.0"?>\n<${action}Response xmlns="${ns}"><${action}Result>${toXml(result)}</${action}Result><ResponseMetadata><RequestId>${requestId()}</RequestId></ResponseMetadata></${action}Response>`,
  }
}

/** An EC2 (query protocol) answer: lists are `<item>` sets. */
export function ec2Answer(action: string, result: Xml): Answer {
  return {
    status: 200,
    headers: XML,
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_NS}"><requestId>${requestId()}</requestId>${toXml(result, 'item')}</${action}Response>`,
  }
}

const jsonAnswer = (body: unknown, contentType = 'application/json', status = 200): Answer => ({
  status,
  headers: { 'content-type': contentType, 'x-amzn-requestid': requestId() },
  body: JSON.stringify(body),
})

/** The error as the service's protocol writes it. */
function errorAnswer(service: Service, status: number, code: string, message: string): Answer {
  switch (service) {
    case 'sts':
    case 'iam':
    case 'cloudformation':
      return {
        status,
        headers: XML,
        body: `<ErrorResponse xmlns="${{ iam: IAM_NS, sts: STS_NS, cloudformation: CFN_NS }[service]}"><Error><Type>${status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${requestId()}</RequestId></ErrorResponse>`,
      }
    case 'ec2':
      return {
        status,
        headers: XML,
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error></Errors><RequestID>${requestId()}</RequestID></Response>`,
      }
    case 'eks':
      return {
        status,
        headers: {
          'content-type': 'application/json',
          'x-amzn-errortype': `${code}:http://internal.amazon.com/coral/com.amazonaws.eks/`,
        },
        body: JSON.stringify({ message }),
      }
    case 'sqs': {
      const queryCode: Record<string, string> = {
        QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
      }
      return {
        status,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-query-error': `${queryCode[code] ?? code};${status >= 500 ? 'Receiver' : 'Sender'}`,
        },
        body: JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message }),
      }
    }
    case 'eventbridge':
    case 'kms':
      return {
        status,
        headers: { 'content-type': 'application/x-amz-json-1.1' },
        body: JSON.stringify({ __type: code, message }),
      }
    case 'kube':
      return {
        status,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message,
          reason: code,
          code: status,
        }),
      }
  }
}

/** The canonical error of a fault kind, per service (what AWS really answers). */
function faultAnswer(call: Call, fault: Fault['error']): Answer {
  if (typeof fault === 'object')
    return errorAnswer(call.service, fault.status, fault.code, fault.message ?? fault.code)
  const s = call.service
  const action = call.op.slice(call.op.indexOf(':') + 1)
  switch (fault) {
    case 'throttle':
      if (s === 'ec2') return errorAnswer(s, 503, 'RequestLimitExceeded', 'Request limit exceeded.')
      if (s === 'eks' || s === 'kube') return errorAnswer(s, 429, 'TooManyRequestsException', 'Rate exceeded')
      if (s === 'sqs') return errorAnswer(s, 400, 'ThrottlingException', 'Rate exceeded')
      if (s === 'eventbridge' || s === 'kms')
        return errorAnswer(s, 400, 'ThrottlingException', 'Rate exceeded')
      return errorAnswer(s, 400, 'Throttling', 'Rate exceeded')
    case 'denied': {
      const message = `User: ${CALLER_ARN} is not authorized to perform: ${s === 'eventbridge' ? 'events' : s}:${action} because no identity-based policy allows the ${s}:${action} action`
      if (s === 'ec2')
        return errorAnswer(
          s,
          403,
          'UnauthorizedOperation',
          'You are not authorized to perform this operation.',
        )
      if (s === 'kube')
        return errorAnswer(
          s,
          403,
          'Forbidden',
          `forbidden: User "karpctl" cannot get resource at ${call.path}`,
        )
      if (s === 'iam' || s === 'sts' || s === 'cloudformation')
        return errorAnswer(s, 403, 'AccessDenied', message)
      return errorAnswer(s, 400, 'AccessDeniedException', message)
    }
    case 'server':
      if (s === 'iam' || s === 'sts')
        return errorAnswer(s, 500, 'ServiceFailure', 'Internal failure. Please retry your request.')
      if (s === 'ec2') return errorAnswer(s, 500, 'InternalError', 'An internal error has occurred')
      if (s === 'kube') return errorAnswer(s, 500, 'InternalError', 'etcdserver: request timed out')
      return errorAnswer(
        s,
        500,
        'InternalFailure',
        'The request processing has failed because of an unknown error.',
      )
    case 'expired':
      if (s === 'sts' || s === 'iam' || s === 'cloudformation')
        return errorAnswer(s, 403, 'ExpiredToken', 'The security token included in the request is expired')
      if (s === 'ec2') return errorAnswer(s, 400, 'RequestExpired', 'Request has expired.')
      if (s === 'kube') return errorAnswer(s, 401, 'Unauthorized', 'Unauthorized')
      return errorAnswer(
        s,
        403,
        'ExpiredTokenException',
        'The security token included in the request is expired',
      )
    case 'notfound':
      if (s === 'iam') return errorAnswer(s, 404, 'NoSuchEntity', `The ${action} target cannot be found.`)
      if (s === 'eks') return errorAnswer(s, 404, 'ResourceNotFoundException', 'No resource found.')
      if (s === 'sqs') return errorAnswer(s, 400, 'QueueDoesNotExist', 'The specified queue does not exist.')
      if (s === 'kube') return errorAnswer(s, 404, 'NotFound', `${call.path} not found`)
      if (s === 'cloudformation')
        return errorAnswer(
          s,
          400,
          'ValidationError',
          `Stack for ${String(call.params.PhysicalResourceId)} does not exist`,
        )
      return errorAnswer(s, 400, 'ResourceNotFoundException', 'not found')
  }
}

// ---------------------------------------------------------------------------------------------
// Serving state.
// ---------------------------------------------------------------------------------------------

/** IAM returns policy documents URL-encoded (RFC 3986: spaces are %20), as submitted (here: pretty-printed). */
export const iamEncode = (doc: unknown) => encodeURIComponent(JSON.stringify(doc, null, 2))

const iso = '2026-11-01T10:00:00Z'

function roleXml(r: MockRole): Xml {
  return {
    Path: r.path,
    RoleName: r.name,
    RoleId: `AROA${r.name
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, '')
      .slice(0, 17)
      .padEnd(17, 'X')}`,
    Arn: arnRole(r.name, r.path),
    CreateDate: iso,
    AssumeRolePolicyDocument: iamEncode(r.trust),
    MaxSessionDuration: 3600,
    PermissionsBoundary: r.permissionsBoundary
      ? {
          PermissionsBoundaryType: 'PermissionsBoundaryPolicy',
          PermissionsBoundaryArn: r.permissionsBoundary,
        }
      : undefined,
    Tags: r.tags ? Object.entries(r.tags).map(([Key, Value]) => ({ Key, Value })) : undefined,
  }
}

/** `Prefix.member.N[.Sub]` query parameters → an array. */
function members(params: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(params)
    .filter(([k]) => new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.\\d+$`).test(k))
    .sort(([a], [b]) => Number(a.slice(a.lastIndexOf('.') + 1)) - Number(b.slice(b.lastIndexOf('.') + 1)))
    .map(([, v]) => String(v))
}

function ec2Filters(params: Record<string, unknown>): { name: string; values: string[] }[] {
  const out: { name: string; values: string[] }[] = []
  for (let i = 1; params[`Filter.${i}.Name`] !== undefined; i++) {
    out.push({ name: String(params[`Filter.${i}.Name`]), values: members(params, `Filter.${i}.Value`) })
  }
  return out
}

function filterMatches(
  f: { name: string; values: string[] },
  tags: Record<string, string>,
  extra: Record<string, string>,
) {
  if (f.name === 'tag-key') return f.values.some((v) => v in tags)
  if (f.name.startsWith('tag:')) {
    const v = tags[f.name.slice(4)]
    return v !== undefined && f.values.some((want) => want === v || want === '*')
  }
  if (f.name in extra) return f.values.includes(extra[f.name] as string)
  return false
}

export class MockCluster {
  readonly state: MockState
  readonly dir: string
  readonly kubeconfig: string
  private readonly recorded: RecordedCall[] = []
  private readonly expectScopes: nock.Scope[] = []
  private readonly expectedKeys: string[] = []
  private readonly savedEnv = new Map<string, string | undefined>()
  private readonly latencyMs: number
  private readonly latencyByOp: Record<string, number>

  constructor(private readonly options: MockOptions = {}) {
    this.state = healthyState()
    options.mutate?.(this.state)
    this.latencyMs = options.latencyMs ?? 0
    this.latencyByOp = options.latencyByOp ?? {}
    this.dir = mkdtempSync(join(tmpdir(), 'karpctl-mock-'))
    this.kubeconfig = join(this.dir, 'kubeconfig')
    writeFileSync(this.kubeconfig, kubeconfigYaml(KUBE_SERVER, this.state.kube.token))
    writeFileSync(join(this.dir, 'aws-config'), '')
    writeFileSync(join(this.dir, 'aws-credentials'), '')
  }

  /** Installs the interceptors and a hermetic environment (static test credentials, temp kubeconfig). */
  start(): this {
    this.isolateEnv({
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      AWS_CONFIG_FILE: join(this.dir, 'aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(this.dir, 'aws-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      KUBECONFIG: this.kubeconfig,
      HELM_REGISTRY_CONFIG: join(this.dir, 'helm-registry-config.json'),
      // Helm's fallback for registry credentials: a developer's own `docker login` stays out.
      DOCKER_CONFIG: join(this.dir, 'docker'),
    })
    nock.disableNetConnect()
    for (const fault of this.options.faults ?? []) this.addFault(fault)
    if (this.options.expectations !== false) for (const call of this.expectedCalls()) this.expect(call)
    this.addLeases()
    this.addFallbacks()
    return this
  }

  /** The Leases of the cluster's lock (src/plan/lock.ts): created, renewed and deleted as the API does. */
  readonly leases = new Map<string, Record<string, unknown>>()

  private addLeases(): void {
    const LEASES = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/
    let version = 0
    const scope = nock(KUBE_SERVER).persist()
    const key = (uri: string) => {
      const m = LEASES.exec(uri)
      return m ? `${m[1]}/${m[2] ?? ''}` : ''
    }
    const stored = (body: unknown) => {
      const l = (typeof body === 'string' ? JSON.parse(body) : body) as { metadata: { name?: string } }
      return { ...l, metadata: { ...l.metadata, resourceVersion: String(++version) } }
    }
    const notFound = [404, { kind: 'Status', code: 404, reason: 'NotFound' }] as const
    scope
      .get((uri) => LEASES.test(uri) && !!LEASES.exec(uri)?.[2])
      .reply((uri) => {
        const l = this.leases.get(key(uri))
        return l ? [200, l] : [...notFound]
      })
    scope
      .post((uri) => LEASES.test(uri))
      .reply((uri, body) => {
        const l = stored(body)
        const k = `${key(uri)}${String(l.metadata.name)}`
        if (this.leases.has(k)) return [409, { kind: 'Status', code: 409, reason: 'AlreadyExists' }]
        this.leases.set(k, l)
        return [201, l]
      })
    scope
      .put((uri) => LEASES.test(uri))
      .reply((uri, body) => {
        if (!this.leases.has(key(uri))) return [...notFound]
        const l = stored(body)
        this.leases.set(key(uri), l)
        return [200, l]
      })
    scope
      .delete((uri) => LEASES.test(uri))
      .reply((uri) => {
        this.leases.delete(key(uri))
        return [200, { kind: 'Status', status: 'Success' }]
      })
  }

  /** Removes every interceptor, restores the environment, deletes the temp dir. */
  stop(): void {
    nock.cleanAll()
    nock.enableNetConnect()
    for (const [k, v] of this.savedEnv) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    this.savedEnv.clear()
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** The RunOptions doctor needs for this cluster. */
  runOptions(extra: Partial<RunOptions> = {}): RunOptions {
    return { clusterName: CLUSTER, region: REGION, karpctlVersion: '0.0.0-test', ...extra }
  }

  /** Sets env vars for the run, clearing every other AWS_* variable so the host's setup cannot leak in. */
  isolateEnv(vars: Record<string, string | undefined>): void {
    const keys = new Set([
      ...Object.keys(process.env).filter((k) => k.startsWith('AWS_')),
      ...Object.keys(vars),
    ])
    for (const k of keys) {
      if (!this.savedEnv.has(k)) this.savedEnv.set(k, process.env[k])
      const v = vars[k]
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }

  // ---- what happened ----

  calls(): RecordedCall[] {
    return [...this.recorded]
  }

  count(op: string): number {
    return this.recorded.filter((c) => c.op === op).length
  }

  countsByOp(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const c of this.recorded) out[c.op] = (out[c.op] ?? 0) + 1
    return out
  }

  countsByService(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const c of this.recorded) {
      const s = c.op.slice(0, c.op.indexOf(':'))
      out[s] = (out[s] ?? 0) + 1
    }
    return out
  }

  /** Keys (operation + input) that reached the mock more than once. */
  duplicates(): string[] {
    const seen = new Map<string, number>()
    for (const c of this.recorded) seen.set(c.key, (seen.get(c.key) ?? 0) + 1)
    return [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`)
  }

  /** Calls the expectations did not foresee (served by the fallback). */
  unexpected(): string[] {
    return this.recorded.filter((c) => c.via === 'fallback').map((c) => c.key)
  }

  /** True when every expected read was made (nock: every one-shot expectation interceptor was used). */
  isDone(): boolean {
    return this.expectScopes.every((s) => s.isDone())
  }

  /** Expected reads that were never made. */
  pending(): string[] {
    return this.expectScopes.flatMap((s) => s.pendingMocks())
  }

  /** The keys the expectations were built from (what a correct collector reads on this state). */
  expectedKeys_(): string[] {
    return [...this.expectedKeys]
  }

  // ---- interceptors ----

  private latencyFor(op: string): number {
    return this.latencyByOp[op] ?? this.latencyMs
  }

  /** A nock interceptor for calls of `service` that `accept` picks, on method + path + body. */
  private intercept(
    service: Service,
    accept: (call: Call) => boolean,
    persist: boolean,
  ): { scope: nock.Scope; interceptor: nock.Interceptor } {
    const origin = service === 'kube' ? KUBE_SERVER : HOSTS[service]
    const scope = nock(origin)
    if (persist) scope.persist()
    const anyPath = () => true
    if (service === 'eks' || service === 'kube') {
      const toCall = (path: string) => (service === 'eks' ? eksCall('GET', path) : kubeCall(path))
      return { scope, interceptor: scope.get((path) => accept(toCall(path))) }
    }
    const interceptor = scope.post(anyPath, function (this: { headers?: unknown }, body: unknown) {
      const params = parseBody(body)
      const call =
        service === 'sqs' || service === 'eventbridge' || service === 'kms'
          ? jsonCall(service, header(this.headers, 'x-amz-target'), params)
          : queryCall(service, params)
      return accept(call)
    })
    return { scope, interceptor }
  }

  private callOf(service: Service, method: string, uri: string, body: unknown, headers: unknown): Call {
    if (service === 'eks') return eksCall(method, uri)
    if (service === 'kube') return kubeCall(uri)
    const params = parseBody(body)
    if (service === 'sqs' || service === 'eventbridge' || service === 'kms')
      return jsonCall(service, header(headers, 'x-amz-target'), params)
    return queryCall(service, params)
  }

  private expect(call: Call): void {
    const { interceptor } = this.intercept(call.service, (c) => c.key === call.key, false)
    const scope = interceptor
      .delay(this.latencyFor(call.op))
      .reply(this.replyFn(call.service, (c) => this.serve(c), 'expected'))
    this.expectScopes.push(scope)
    this.expectedKeys.push(call.key)
  }

  private addFault(fault: Fault): void {
    const services: Service[] =
      fault.op === '*' ? AWS_SERVICES : [fault.op.slice(0, fault.op.indexOf(':')) as Service]
    for (const service of services) {
      const accept = (c: Call) => (fault.op === '*' || c.op === fault.op) && (!fault.match || fault.match(c))
      const times = fault.times ?? 1
      const { interceptor } = this.intercept(service, accept, times === Infinity)
      const delayed = interceptor.delay(this.latencyFor(fault.op))
      ;(times === Infinity ? delayed : delayed.times(times)).reply(
        this.replyFn(service, (c) => faultAnswer(c, fault.error), 'fault'),
      )
    }
  }

  private addFallbacks(): void {
    for (const service of [...AWS_SERVICES, 'kube'] as Service[]) {
      const { interceptor } = this.intercept(service, () => true, true)
      interceptor.delay(this.latencyMs).reply(this.replyFn(service, (c) => this.serve(c), 'fallback'))
    }
  }

  private replyFn(service: Service, answer: (call: Call) => Answer, via: RecordedCall['via']) {
    // nock passes the request as `this` of a plain function; the mock is reached through these closures.
    const callOf = this.callOf.bind(this)
    const authorized =
      this.options.kubeAuthorized ?? ((a: string | undefined) => a === `Bearer ${this.state.kube.token}`)
    const record = (call: Call, status: number) =>
      this.recorded.push({ op: call.op, key: call.key, status, via, at: performance.now() })
    return function (this: nock.ReplyFnContext, uri: string, body: nock.Body): nock.ReplyFnResult {
      const call = callOf(service, this.req.method, uri, body, this.req.headers)
      const unauthorized = service === 'kube' && !authorized(header(this.req.headers, 'authorization'))
      const a = unauthorized ? errorAnswer('kube', 401, 'Unauthorized', 'Unauthorized') : answer(call)
      record(call, a.status)
      return [a.status, a.body, a.headers]
    }
  }

  // ---- answers from state ----

  serve(call: Call): Answer {
    switch (call.service) {
      case 'sts':
        return this.sts(call)
      case 'iam':
        return this.iam(call)
      case 'ec2':
        return this.ec2(call)
      case 'eks':
        return this.eks(call)
      case 'sqs':
        return this.sqs(call)
      case 'eventbridge':
        return this.events(call)
      case 'kms':
        return this.kms(call)
      case 'cloudformation':
        return this.cloudformation(call)
      case 'kube':
        return this.kube(call)
    }
  }

  /** DescribeStackResources by physical id (the owning stack's every resource) or by stack name. */
  private cloudformation(call: Call): Answer {
    if (call.op !== 'cloudformation:DescribeStackResources') return this.unknownOp(call)
    const p = call.params as { PhysicalResourceId?: string; StackName?: string }
    const stack = p.PhysicalResourceId
      ? this.state.stacks.find((st) => st.resources.some((r) => r.physicalId === p.PhysicalResourceId))
      : this.state.stacks.find((st) => st.name === p.StackName)
    if (!stack)
      return errorAnswer(
        'cloudformation',
        400,
        'ValidationError',
        p.PhysicalResourceId
          ? `Stack for ${p.PhysicalResourceId} does not exist`
          : `Stack with id ${p.StackName} does not exist`,
      )
    // As AWS: only the stack's first 100 resources, whichever id found the stack.
    return queryAnswer(CFN_NS, 'DescribeStackResources', {
      StackResources: stack.resources.slice(0, 100).map((r) => ({
        StackName: stack.name,
        StackId: stackId(stack.name),
        LogicalResourceId: r.logicalId,
        PhysicalResourceId: r.physicalId,
        ResourceType: r.type,
        Timestamp: iso,
        ResourceStatus: r.status ?? 'CREATE_COMPLETE',
        DriftInformation: { StackResourceDriftStatus: 'NOT_CHECKED' },
      })),
    })
  }

  private unknownOp(call: Call): Answer {
    return errorAnswer(call.service, 400, 'InvalidAction', `mock-cluster does not implement ${call.op}`)
  }

  private sts(call: Call): Answer {
    if (call.op !== 'sts:GetCallerIdentity') return this.unknownOp(call)
    return queryAnswer(STS_NS, 'GetCallerIdentity', {
      Arn: this.state.callerArn,
      UserId: 'AIDAEXAMPLEUSERID0001',
      Account: ACCOUNT,
    })
  }

  private iam(call: Call): Answer {
    const p = call.params as Record<string, string>
    const action = call.op.slice(4)
    const s = this.state
    const noRole = (name: string) =>
      errorAnswer('iam', 404, 'NoSuchEntity', `The role with name ${name} cannot be found.`)
    switch (action) {
      case 'GetRole': {
        const r = s.roles[p.RoleName as string]
        return r ? queryAnswer(IAM_NS, action, { Role: roleXml(r) }) : noRole(p.RoleName as string)
      }
      case 'ListAttachedRolePolicies': {
        const r = s.roles[p.RoleName as string]
        if (!r) return noRole(p.RoleName as string)
        return queryAnswer(IAM_NS, action, {
          AttachedPolicies: r.attached.map((arn) => ({
            PolicyName: arn.slice(arn.lastIndexOf('/') + 1),
            PolicyArn: arn,
          })),
          IsTruncated: false,
        })
      }
      case 'ListRolePolicies': {
        const r = s.roles[p.RoleName as string]
        if (!r) return noRole(p.RoleName as string)
        return queryAnswer(IAM_NS, action, { PolicyNames: Object.keys(r.inline), IsTruncated: false })
      }
      case 'GetRolePolicy': {
        const doc = s.roles[p.RoleName as string]?.inline[p.PolicyName as string]
        if (!doc)
          return errorAnswer(
            'iam',
            404,
            'NoSuchEntity',
            `The role policy with name ${p.PolicyName} cannot be found.`,
          )
        return queryAnswer(IAM_NS, action, {
          RoleName: p.RoleName,
          PolicyName: p.PolicyName,
          PolicyDocument: iamEncode(doc),
        })
      }
      case 'GetPolicy': {
        const pol = this.managedPolicy(p.PolicyArn as string)
        if (!pol)
          return errorAnswer(
            'iam',
            404,
            'NoSuchEntity',
            `Policy ${p.PolicyArn} does not exist or is not attachable.`,
          )
        return queryAnswer(IAM_NS, action, {
          Policy: {
            PolicyName: pol.name,
            DefaultVersionId: pol.defaultVersionId,
            PolicyId: 'ANPAEXAMPLEPOLICYID01',
            Path: '/',
            Arn: p.PolicyArn,
            AttachmentCount: 1,
            PermissionsBoundaryUsageCount: 0,
            IsAttachable: true,
            CreateDate: iso,
            UpdateDate: iso,
          },
        })
      }
      case 'GetPolicyVersion': {
        const pol = this.managedPolicy(p.PolicyArn as string)
        if (!pol || p.VersionId !== pol.defaultVersionId) {
          return errorAnswer(
            'iam',
            404,
            'NoSuchEntity',
            `Policy ${p.PolicyArn} version ${p.VersionId} does not exist.`,
          )
        }
        return queryAnswer(IAM_NS, action, {
          PolicyVersion: {
            Document: iamEncode(pol.document),
            VersionId: pol.defaultVersionId,
            IsDefaultVersion: true,
            CreateDate: iso,
          },
        })
      }
      case 'ListOpenIDConnectProviders':
        return queryAnswer(IAM_NS, action, {
          OpenIDConnectProviderList: s.oidcProviders.map((Arn) => ({ Arn })),
        })
      case 'ListRoles': {
        const prefix = p.PathPrefix ?? '/'
        const roles = Object.values(s.roles).filter((r) => r.path.startsWith(prefix))
        return queryAnswer(IAM_NS, action, { Roles: roles.map(roleXml), IsTruncated: false })
      }
      case 'GetInstanceProfile': {
        const name = p.InstanceProfileName as string
        const prof = s.instanceProfiles[name]
        if (!prof) return errorAnswer('iam', 404, 'NoSuchEntity', `Instance Profile ${name} cannot be found.`)
        return queryAnswer(IAM_NS, action, {
          InstanceProfile: {
            Path: '/',
            InstanceProfileName: name,
            InstanceProfileId: 'AIPAEXAMPLEPROFILE01',
            Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/${name}`,
            CreateDate: iso,
            Roles: prof.roles.filter((r) => s.roles[r]).map((r) => roleXml(s.roles[r] as MockRole)),
          },
        })
      }
      case 'SimulatePrincipalPolicy':
        return this.simulate(p)
      default:
        return this.unknownOp(call)
    }
  }

  private managedPolicy(arn: string): MockManagedPolicy | undefined {
    const known = this.state.managedPolicies[arn]
    if (known) return known
    // AWS-managed policies exist without being listed: serve an empty document for them.
    if (arn.startsWith('arn:aws:iam::aws:policy/')) {
      return {
        name: arn.slice(arn.lastIndexOf('/') + 1),
        defaultVersionId: 'v1',
        document: { Version: '2012-10-17', Statement: [] },
      }
    }
    return undefined
  }

  /** IAM's policy simulator, answered by evaluating the principal's identity policies. */
  private simulate(p: Record<string, string>): Answer {
    const source = p.PolicySourceArn ?? ''
    const role = this.state.roles[source.slice(source.lastIndexOf('/') + 1)]
    if (!role) return errorAnswer('iam', 404, 'NoSuchEntity', `The role ${source} cannot be found.`)
    const docs = [
      ...role.attached
        .map((a) => this.managedPolicy(a)?.document)
        .filter((d): d is PolicyDocument => Boolean(d)),
      ...Object.values(role.inline),
    ]
    const context: Record<string, string> = {}
    for (let i = 1; p[`ContextEntries.member.${i}.ContextKeyName`] !== undefined; i++) {
      const values = members(p, `ContextEntries.member.${i}.ContextKeyValues.member`)
      context[p[`ContextEntries.member.${i}.ContextKeyName`] as string] = values[0] ?? ''
    }
    const results: Xml[] = []
    for (const action of members(p, 'ActionNames.member')) {
      for (const resource of members(p, 'ResourceArns.member')) {
        // IAM's simulator applies the principal's permissions boundary.
        const boundary = role.permissionsBoundary
          ? (this.managedPolicy(role.permissionsBoundary)?.document ?? null)
          : undefined
        const r = evaluateWithBoundary({ identity: docs, boundary }, { action, resource, context })
        results.push({
          EvalActionName: action,
          EvalResourceName: resource,
          EvalDecision: r.decision,
          MatchedStatements: r.matchedStatements.map((m) => ({
            SourcePolicyId: m,
            SourcePolicyType: 'IAM Policy',
          })),
          MissingContextValues: [],
        })
      }
    }
    return queryAnswer(IAM_NS, 'SimulatePrincipalPolicy', { EvaluationResults: results, IsTruncated: false })
  }

  private ec2(call: Call): Answer {
    const p = call.params as Record<string, string>
    const action = call.op.slice(4)
    const tagSet = (tags: Record<string, string>) =>
      Object.entries(tags).map(([key, value]) => ({ key, value }))
    if (action === 'DescribeSubnets') {
      const ids = members(p, 'SubnetId')
      const filters = ec2Filters(p)
      const missing = ids.filter((id) => !this.state.subnets.some((s) => s.id === id))
      if (missing.length)
        return errorAnswer(
          'ec2',
          400,
          'InvalidSubnetID.NotFound',
          `The subnet ID '${missing[0]}' does not exist`,
        )
      const found = this.state.subnets.filter(
        (s) =>
          (ids.length === 0 || ids.includes(s.id)) &&
          filters.every((f) => filterMatches(f, s.tags, { 'vpc-id': s.vpcId, 'subnet-id': s.id })),
      )
      return ec2Answer(action, {
        subnetSet: found.map((s) => ({
          subnetId: s.id,
          subnetArn: `arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/${s.id}`,
          state: 'available',
          vpcId: s.vpcId,
          cidrBlock: s.cidr,
          availableIpAddressCount: s.availableIps,
          availabilityZone: s.az,
          availabilityZoneId: `usw2-az${s.az.slice(-1).charCodeAt(0) - 96}`,
          mapPublicIpOnLaunch: s.mapPublicIpOnLaunch,
          ownerId: ACCOUNT,
          tagSet: tagSet(s.tags),
        })),
      })
    }
    if (action === 'DescribeSecurityGroups') {
      const ids = members(p, 'GroupId')
      const filters = ec2Filters(p)
      const missing = ids.filter((id) => !this.state.securityGroups.some((g) => g.id === id))
      if (missing.length)
        return errorAnswer(
          'ec2',
          400,
          'InvalidGroup.NotFound',
          `The security group '${missing[0]}' does not exist`,
        )
      const found = this.state.securityGroups.filter(
        (g) =>
          (ids.length === 0 || ids.includes(g.id)) &&
          filters.every((f) =>
            filterMatches(f, g.tags, { 'group-name': g.name, 'vpc-id': g.vpcId, 'group-id': g.id }),
          ),
      )
      return ec2Answer(action, {
        securityGroupInfo: found.map((g) => ({
          ownerId: ACCOUNT,
          groupId: g.id,
          groupName: g.name,
          groupDescription: `${g.name} security group`,
          vpcId: g.vpcId,
          ipPermissions: g.ingress.map((r) => ({
            ipProtocol: r.protocol,
            fromPort: r.fromPort,
            toPort: r.toPort,
            groups: r.sourceGroupIds.map((groupId) => ({ userId: ACCOUNT, groupId })),
            ipRanges: r.cidrs.map((cidrIp) => ({ cidrIp })),
          })),
          ipPermissionsEgress: [{ ipProtocol: '-1', ipRanges: [{ cidrIp: '0.0.0.0/0' }] }],
          tagSet: tagSet(g.tags),
        })),
      })
    }
    if (action === 'DescribeInstances') {
      const wanted = ec2Filters(p).find((f) => f.name === 'instance-id')?.values
      const found = (this.state.instances ?? []).filter((i) => !wanted || wanted.includes(i.id))
      return ec2Answer(action, {
        reservationSet: found.map((i) => ({
          reservationId: `r-${i.id.slice(2)}`,
          ownerId: ACCOUNT,
          instancesSet: [
            {
              instanceId: i.id,
              networkInterfaceSet: i.enis.map((groups, n) => ({
                networkInterfaceId: `eni-${i.id.slice(2)}${n}`,
                groupSet: groups.map((groupId) => ({ groupId, groupName: groupId })),
              })),
            },
          ],
        })),
      })
    }
    if (action === 'DescribeAvailabilityZones') {
      const all = p.AllAvailabilityZones === 'true'
      return ec2Answer(action, {
        availabilityZoneInfo: this.state.zones
          .filter((z) => all || z.optedIn)
          .map((z) => ({
            zoneName: z.name,
            zoneType: z.type,
            optInStatus:
              z.type === 'availability-zone'
                ? 'opt-in-not-required'
                : z.optedIn
                  ? 'opted-in'
                  : 'not-opted-in',
            regionName: REGION,
          })),
      })
    }
    if (action === 'DescribeRouteTables' && this.state.routeTables) {
      const filters = ec2Filters(p)
      return ec2Answer(action, {
        routeTableSet: this.state.routeTables
          .filter((t) => filters.every((f) => filterMatches(f, {}, { 'vpc-id': t.vpcId })))
          .map((t) => ({
            routeTableId: t.id,
            vpcId: t.vpcId,
            associationSet: [
              ...(t.main ? [{ main: true, routeTableId: t.id }] : []),
              ...t.subnetIds.map((subnetId) => ({ main: false, routeTableId: t.id, subnetId })),
            ],
            routeSet: Object.entries(t.routes).map(([cidr, target]) => ({
              destinationCidrBlock: cidr,
              ...(target.startsWith('nat-') ? { natGatewayId: target } : { gatewayId: target }),
              state: 'active',
            })),
          })),
      })
    }
    if (action === 'GetConsoleOutput' && this.state.consoleOutput) {
      const id = p.InstanceId ?? ''
      return ec2Answer(action, {
        instanceId: id,
        output: Buffer.from(this.state.consoleOutput[id] ?? '').toString('base64'),
      })
    }
    // The one write served (doctor --fix's discovery tags): later reads see the tags, as on AWS.
    if (action === 'CreateTags') {
      const ids = members(p, 'ResourceId')
      const tags: Record<string, string> = {}
      for (let i = 1; p[`Tag.${i}.Key`] !== undefined; i++)
        tags[p[`Tag.${i}.Key`] as string] = p[`Tag.${i}.Value`] ?? ''
      for (const x of [...this.state.subnets, ...this.state.securityGroups])
        if (ids.includes(x.id)) Object.assign(x.tags, tags)
      return ec2Answer(action, { return: true })
    }
    return this.unknownOp(call)
  }

  private eks(call: Call): Answer {
    const s = this.state
    const p = call.params as Record<string, string>
    const action = call.op.slice(4)
    const clusterName = p.clusterName ?? p.name
    const cluster = s.cluster && (s.cluster.name === clusterName ? s.cluster : null)
    if (action === 'ListClusters') return jsonAnswer({ clusters: s.clusters })
    if (!cluster)
      return errorAnswer(
        'eks',
        404,
        'ResourceNotFoundException',
        `No cluster found for name: ${clusterName}.`,
      )
    const mode =
      (cluster.accessConfig as { authenticationMode?: string } | undefined)?.authenticationMode ??
      'CONFIG_MAP'
    switch (action) {
      case 'DescribeCluster':
        return jsonAnswer({ cluster })
      case 'ListAddons':
        return jsonAnswer({ addons: s.addons })
      case 'ListAccessEntries':
      case 'DescribeAccessEntry': {
        if (mode === 'CONFIG_MAP') {
          // What EKS answers for access entries of a CONFIG_MAP cluster.
          return errorAnswer(
            'eks',
            400,
            'InvalidRequestException',
            "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation.",
          )
        }
        if (action === 'ListAccessEntries')
          return jsonAnswer({ accessEntries: s.accessEntries.map((e) => e.principalArn) })
        const e = s.accessEntries.find((x) => x.principalArn === p.principalArn)
        if (!e)
          return errorAnswer(
            'eks',
            404,
            'ResourceNotFoundException',
            `The specified principalArn could not be found.`,
          )
        return jsonAnswer({
          accessEntry: {
            clusterName,
            principalArn: e.principalArn,
            kubernetesGroups: e.kubernetesGroups,
            username: e.username ?? 'system:node:{{EC2PrivateDNSName}}',
            type: e.type,
            accessEntryArn: `arn:aws:eks:${REGION}:${ACCOUNT}:access-entry/${clusterName}/role/${ACCOUNT}/x`,
            createdAt: 1_761_991_200,
          },
        })
      }
      case 'ListPodIdentityAssociations':
        return jsonAnswer({
          associations: s.podIdentityAssociations.map((a) => ({
            clusterName,
            namespace: a.namespace,
            serviceAccount: a.serviceAccount,
            associationId: a.associationId,
            associationArn: `arn:aws:eks:${REGION}:${ACCOUNT}:podidentityassociation/${clusterName}/${a.associationId}`,
          })),
        })
      case 'ListNodegroups':
        return jsonAnswer({ nodegroups: s.nodegroups.map((g) => g.name) })
      case 'DescribeNodegroup': {
        const g = s.nodegroups.find((x) => x.name === p.nodegroupName)
        if (!g)
          return errorAnswer(
            'eks',
            404,
            'ResourceNotFoundException',
            `No node group found for name: ${p.nodegroupName}.`,
          )
        return jsonAnswer({
          nodegroup: {
            nodegroupName: g.name,
            clusterName,
            nodeRole: g.nodeRole,
            status: 'ACTIVE',
            scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 },
            resources: { autoScalingGroups: g.autoScalingGroups.map((name) => ({ name })) },
          },
        })
      }
      case 'DescribePodIdentityAssociation': {
        const a = s.podIdentityAssociations.find((x) => x.associationId === p.associationId)
        if (!a) return errorAnswer('eks', 404, 'ResourceNotFoundException', 'association not found')
        return jsonAnswer({ association: { clusterName, ...a, createdAt: 1_761_991_200 } })
      }
      default:
        return this.unknownOp(call)
    }
  }

  private sqs(call: Call): Answer {
    const p = call.params as Record<string, string>
    const JSON10 = 'application/x-amz-json-1.0'
    if (call.op === 'sqs:GetQueueUrl') {
      if (!this.state.queues[p.QueueName as string]) {
        return errorAnswer('sqs', 400, 'QueueDoesNotExist', 'The specified queue does not exist.')
      }
      return jsonAnswer({ QueueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${p.QueueName}` }, JSON10)
    }
    if (call.op === 'sqs:GetQueueAttributes') {
      const name =
        String(p.QueueUrl ?? '')
          .split('/')
          .pop() ?? ''
      const attrs = this.state.queues[name]
      if (!attrs) return errorAnswer('sqs', 400, 'QueueDoesNotExist', 'The specified queue does not exist.')
      return jsonAnswer({ Attributes: attrs }, JSON10)
    }
    // install's plan reads a queue's tags (none here: the healthy queue was not made by karpctl).
    if (call.op === 'sqs:ListQueueTags') return jsonAnswer({ Tags: {} }, JSON10)
    return this.unknownOp(call)
  }

  private events(call: Call): Answer {
    const p = call.params as Record<string, string>
    const JSON11 = 'application/x-amz-json-1.1'
    const ruleArn = (name: string) => `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}`
    const notFound = (name: string) =>
      errorAnswer(
        'eventbridge',
        400,
        'ResourceNotFoundException',
        `Rule ${name} does not exist on EventBus default.`,
      )
    switch (call.op) {
      case 'eventbridge:ListRules':
        return jsonAnswer(
          {
            Rules: this.state.rules.map((r) => ({
              Name: r.name,
              Arn: ruleArn(r.name),
              EventPattern: JSON.stringify(r.eventPattern),
              State: r.state,
              EventBusName: 'default',
            })),
          },
          JSON11,
        )
      case 'eventbridge:ListRuleNamesByTarget':
        return jsonAnswer(
          {
            RuleNames: this.state.rules
              .filter((r) => r.targets.includes(p.TargetArn as string))
              .map((r) => r.name),
          },
          JSON11,
        )
      case 'eventbridge:DescribeRule': {
        const r = this.state.rules.find((x) => x.name === p.Name)
        if (!r) return notFound(p.Name as string)
        return jsonAnswer(
          {
            Name: r.name,
            Arn: ruleArn(r.name),
            EventPattern: JSON.stringify(r.eventPattern),
            State: r.state,
            EventBusName: 'default',
            CreatedBy: ACCOUNT,
          },
          JSON11,
        )
      }
      // install's plan reads a rule's tags (none here: the healthy rules were not made by karpctl).
      case 'eventbridge:ListTagsForResource':
        return jsonAnswer({ Tags: [] }, JSON11)
      case 'eventbridge:ListTargetsByRule': {
        const r = this.state.rules.find((x) => x.name === p.Rule)
        if (!r) return notFound(p.Rule as string)
        return jsonAnswer(
          {
            Targets: r.targets.map((Arn, i) => ({
              Id: r.targetIds?.[i] ?? `KarpenterInterruptionQueueTarget${i || ''}`,
              Arn,
            })),
          },
          JSON11,
        )
      }
      default:
        return this.unknownOp(call)
    }
  }

  /** The key an identifier names: key id, key ARN, alias name or alias ARN (as DescribeKey takes them). */
  kmsKey(id: string): MockKmsKey | undefined {
    const arn = (k: MockKmsKey) => `arn:aws:kms:${REGION}:${ACCOUNT}:key/${k.keyId}`
    return this.state.kmsKeys.find(
      (k) =>
        k.keyId === id ||
        arn(k) === id ||
        k.aliases.includes(id) ||
        k.aliases.some((a) => `arn:aws:kms:${REGION}:${ACCOUNT}:${a}` === id),
    )
  }

  private kms(call: Call): Answer {
    const p = call.params as Record<string, string>
    const JSON11 = 'application/x-amz-json-1.1'
    const key = this.kmsKey(p.KeyId ?? '')
    if (!key) return errorAnswer('kms', 400, 'NotFoundException', `Key '${p.KeyId}' does not exist`)
    const arn = `arn:aws:kms:${REGION}:${ACCOUNT}:key/${key.keyId}`
    switch (call.op) {
      case 'kms:DescribeKey':
        return jsonAnswer(
          {
            KeyMetadata: {
              AWSAccountId: ACCOUNT,
              KeyId: key.keyId,
              Arn: arn,
              CreationDate: 1_761_991_200,
              Enabled: key.keyState === 'Enabled',
              KeyUsage: 'ENCRYPT_DECRYPT',
              KeyState: key.keyState,
              Origin: 'AWS_KMS',
              KeyManager: key.keyManager,
              KeySpec: 'SYMMETRIC_DEFAULT',
            },
          },
          JSON11,
        )
      case 'kms:GetKeyPolicy':
        return jsonAnswer({ Policy: JSON.stringify(key.policy, null, 2), PolicyName: 'default' }, JSON11)
      default:
        return this.unknownOp(call)
    }
  }

  private kube(call: Call): Answer {
    const k = this.state.kube
    const url = new URL(call.path ?? '/', KUBE_SERVER)
    const path = url.pathname
    const selector = url.searchParams.get('labelSelector')
    const list = (kind: string, items: KubeObject[]) =>
      jsonAnswer({ kind: `${kind}List`, apiVersion: 'v1', metadata: {}, items })
    const notFound = () =>
      errorAnswer('kube', 404, 'NotFound', `the server could not find the requested resource (get ${path})`)
    const bySelector = (items: KubeObject[]) =>
      items.filter((o) =>
        (selector ?? '')
          .split(',')
          .filter(Boolean)
          .every((term) => {
            const [key, value] = term.split('=') as [string, string]
            return o.metadata.labels?.[key] === value
          }),
      )
    const inNs = (items: KubeObject[], ns: string) => items.filter((o) => o.metadata.namespace === ns)
    let m: RegExpExecArray | null
    if (path === '/version') return jsonAnswer(k.version)
    if (path === '/api/v1/secrets') return list('Secret', bySelector(k.helmSecrets))
    if (this.options.releasesByNamespace && (m = /^\/api\/v1\/namespaces\/([^/]+)\/secrets$/.exec(path)))
      return list('Secret', bySelector(inNs(k.helmSecrets, m[1] as string)))
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)$/.exec(path))) {
      const sa = k.serviceAccounts.find((o) => o.metadata.namespace === m![1] && o.metadata.name === m![2])
      return sa ? jsonAnswer(sa) : notFound()
    }
    if (path === '/apis/apps/v1/deployments') return list('Deployment', bySelector(k.deployments))
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments$/.exec(path))) {
      return list('Deployment', bySelector(inNs(k.deployments, m[1] as string)))
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(path)))
      return list('Pod', bySelector(inNs(k.pods, m[1] as string)))
    if (path === '/api/v1/nodes') return list('Node', k.nodes)
    if (path === '/apis/karpenter.sh/v1/nodeclaims' && k.nodeClaims) return list('NodeClaim', k.nodeClaims)
    if (path === '/api/v1/pods' && k.nodeClaims) return list('Pod', k.pods)
    if (path === '/apis/policy/v1/poddisruptionbudgets' && k.pdbs) return list('PodDisruptionBudget', k.pdbs)
    if (path === '/api/v1/namespaces/default/events' && k.events) return list('Event', k.events)
    if (path === '/apis/karpenter.sh/v1/nodepools') return list('NodePool', k.nodePools)
    if (path === '/apis/karpenter.k8s.aws/v1/ec2nodeclasses') return list('EC2NodeClass', k.nodeClasses)
    if ((m = /^\/apis\/karpenter\.k8s\.aws\/v1\/ec2nodeclasses\/([^/]+)$/.exec(path))) {
      const nc = k.nodeClasses.find((o) => o.metadata.name === m![1])
      return nc ? jsonAnswer(nc) : notFound()
    }
    if ((m = /^\/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions\/([^/]+)$/.exec(path))) {
      const c = k.crds.find((o) => o.metadata.name === m![1])
      return c ? jsonAnswer(c) : notFound()
    }
    if (path === '/api/v1/namespaces/kube-system/configmaps/aws-auth')
      return k.awsAuth ? jsonAnswer(k.awsAuth) : notFound()
    if (path === '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations') {
      return list('ValidatingWebhookConfiguration', k.validatingWebhooks)
    }
    if (path === '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations') {
      return list('MutatingWebhookConfiguration', k.mutatingWebhooks)
    }
    return notFound()
  }

  // ---- the reads a correct collector makes on this state ----

  /**
   * One entry per distinct read the collector should make on the current state (the healthy shape:
   * IRSA or Pod Identity, roles named by EC2NodeClass spec.role or instance profiles, tag selectors).
   */
  /** The groups the EC2NodeClasses' selector terms select (read already when the collector gets there). */
  private selectedGroupIds(): Set<string> {
    const terms = this.state.kube.nodeClasses.flatMap(
      (nc) =>
        (
          nc.spec as {
            securityGroupSelectorTerms?: { id?: string; name?: string; tags?: Record<string, string> }[]
          }
        ).securityGroupSelectorTerms ?? [],
    )
    const selects = (g: MockSecurityGroup, t: (typeof terms)[number]) =>
      t.id
        ? g.id === t.id
        : Object.entries(t.tags ?? {}).every(([k, v]) =>
            filterMatches(
              v === '*' ? { name: 'tag-key', values: [k] } : { name: `tag:${k}`, values: [v] },
              g.tags,
              {},
            ),
          ) &&
          (!t.name || g.name === t.name)
    return new Set(this.state.securityGroups.filter((g) => terms.some((t) => selects(g, t))).map((g) => g.id))
  }

  expectedCalls(): Call[] {
    const s = this.state
    const out: Call[] = []
    const q = (service: 'sts' | 'iam' | 'ec2' | 'cloudformation', params: Record<string, string>) =>
      queryCall(service, params)
    const j = (service: 'sqs' | 'eventbridge' | 'kms', target: string, params: Record<string, unknown>) =>
      jsonCall(service, target, params)
    const kube = (path: string) => out.push(kubeCall(path))

    out.push(q('sts', { Action: 'GetCallerIdentity' }))
    out.push(eksCall('GET', `/clusters/${CLUSTER}`))
    if (!s.cluster) return out
    out.push(eksCall('GET', `/clusters/${CLUSTER}/addons`))
    const mode = (s.cluster.accessConfig as { authenticationMode?: string } | undefined)?.authenticationMode
    // A CONFIG_MAP cluster cannot have access entries (EKS rejects the calls): nothing to read.
    if (mode !== 'CONFIG_MAP') out.push(eksCall('GET', `/clusters/${CLUSTER}/access-entries`))
    out.push(eksCall('GET', `/clusters/${CLUSTER}/pod-identity-associations`))
    for (const a of s.podIdentityAssociations) {
      out.push(eksCall('GET', `/clusters/${CLUSTER}/pod-identity-associations/${a.associationId}`))
    }
    out.push(q('iam', { Action: 'ListOpenIDConnectProviders' }))
    out.push(q('iam', { Action: 'ListRoles', PathPrefix: '/aws-service-role/spot.amazonaws.com/' }))

    // Kubernetes
    kube(`/api/v1/secrets?labelSelector=${encodeURIComponent(RELEASE_SELECTOR)}`)
    for (const name of [
      'nodepools.karpenter.sh',
      'nodeclaims.karpenter.sh',
      'ec2nodeclasses.karpenter.k8s.aws',
      'provisioners.karpenter.sh',
      'awsnodetemplates.karpenter.k8s.aws',
      'machines.karpenter.sh',
    ]) {
      kube(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
    }
    kube('/api/v1/nodes')
    kube('/apis/karpenter.sh/v1/nodepools')
    kube('/apis/karpenter.k8s.aws/v1/ec2nodeclasses')
    kube('/api/v1/namespaces/kube-system/configmaps/aws-auth')
    kube('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations')
    kube('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations')
    kube('/version')
    kube('/apis/apps/v1/deployments')
    kube('/api/v1/namespaces/kube-system/serviceaccounts/aws-node')
    // A cluster-autoscaler that runs: the managed node groups are read to name what it scales.
    const autoscalerRuns = s.kube.deployments.some(
      (d) =>
        (/cluster-autoscaler/.test(d.metadata.name) ||
          /cluster-autoscaler/.test(d.metadata.labels?.['app.kubernetes.io/name'] ?? '')) &&
        ((d.spec as { replicas?: number } | undefined)?.replicas ?? 1) > 0,
    )
    if (autoscalerRuns) {
      out.push(eksCall('GET', `/clusters/${CLUSTER}/node-groups`))
      for (const g of s.nodegroups) out.push(eksCall('GET', `/clusters/${CLUSTER}/node-groups/${g.name}`))
    }
    // KMS: each kmsKeyID as written, then the key policy of each customer managed key (by ARN, once).
    const keyIds = [
      ...new Set(
        s.kube.nodeClasses.flatMap((nc) =>
          (
            (nc.spec as { blockDeviceMappings?: { ebs?: { kmsKeyID?: string } }[] }).blockDeviceMappings ?? []
          ).flatMap((b) => (b.ebs?.kmsKeyID ? [b.ebs.kmsKeyID] : [])),
        ),
      ),
    ]
    // …and the interruption queue's SSE-KMS key (KmsMasterKeyId), the same way.
    const queueKeyId = (() => {
      const r = s.kube.helmSecrets.find((x) => x.metadata.labels?.name === 'karpenter')
      const v = r
        ? (decodeReleaseData((r.data as { release: string }).release).config as {
            settings?: { interruptionQueue?: string }
          })
        : undefined
      const q = v?.settings?.interruptionQueue?.split(/[/:]/).pop()
      return q ? s.queues[q]?.KmsMasterKeyId : undefined
    })()
    const policyReads = new Set<string>()
    for (const id of new Set([...keyIds, ...(queueKeyId ? [queueKeyId] : [])])) {
      out.push(j('kms', 'TrentService.DescribeKey', { KeyId: id }))
      const key = this.kmsKey(id)
      if (key?.keyManager === 'CUSTOMER') policyReads.add(`arn:aws:kms:${REGION}:${ACCOUNT}:key/${key.keyId}`)
    }
    for (const arn of policyReads)
      out.push(j('kms', 'TrentService.GetKeyPolicy', { KeyId: arn, PolicyName: 'default' }))
    // The newest revision of the karpenter release that is neither superseded nor uninstalled.
    const release = s.kube.helmSecrets
      .filter(
        (x) =>
          x.metadata.labels?.name === 'karpenter' &&
          !['superseded', 'uninstalled'].includes(x.metadata.labels?.status ?? ''),
      )
      .sort((a, b) => Number(b.metadata.labels?.version) - Number(a.metadata.labels?.version))[0]
    const ns = release?.metadata.namespace ?? 'kube-system'
    const releaseName = release?.metadata.labels?.name ?? 'karpenter'
    let controllerArn: string | undefined
    let irsa = false
    if (release) {
      const sel = encodeURIComponent(
        `app.kubernetes.io/instance=${releaseName},app.kubernetes.io/name=karpenter`,
      )
      const sa = s.kube.serviceAccounts.find((x) => x.metadata.namespace === ns) ?? {
        metadata: { name: releaseName },
      }
      kube(`/api/v1/namespaces/${ns}/serviceaccounts/${sa.metadata.name}`)
      kube(`/apis/apps/v1/namespaces/${ns}/deployments?labelSelector=${sel}`)
      kube(`/api/v1/namespaces/${ns}/pods?labelSelector=${sel}`)
      controllerArn = sa.metadata.annotations?.['eks.amazonaws.com/role-arn']
      irsa = controllerArn !== undefined
      if (!controllerArn) {
        controllerArn = s.podIdentityAssociations.find(
          (a) => a.namespace === ns && a.serviceAccount === sa.metadata.name,
        )?.roleArn
      }
    }

    // IAM: roles with their policies
    const roleReads = (name: string, withDocuments: boolean) => {
      out.push(q('iam', { Action: 'GetRole', RoleName: name }))
      out.push(q('iam', { Action: 'ListAttachedRolePolicies', RoleName: name }))
      out.push(q('iam', { Action: 'ListRolePolicies', RoleName: name }))
      const r = s.roles[name]
      if (!r) return
      for (const policy of Object.keys(r.inline))
        out.push(q('iam', { Action: 'GetRolePolicy', RoleName: name, PolicyName: policy }))
      if (!withDocuments) return
      // The permissions boundary is read like an attached policy (once, if it is attached too).
      const boundary =
        r.permissionsBoundary && !r.attached.includes(r.permissionsBoundary) ? [r.permissionsBoundary] : []
      for (const arn of [...r.attached, ...boundary]) {
        out.push(q('iam', { Action: 'GetPolicy', PolicyArn: arn }))
        const v = this.managedPolicy(arn)?.defaultVersionId
        if (v) out.push(q('iam', { Action: 'GetPolicyVersion', PolicyArn: arn, VersionId: v }))
      }
    }
    const controllerRole = controllerArn ? controllerArn.slice(controllerArn.lastIndexOf('/') + 1) : undefined
    if (controllerRole) roleReads(controllerRole, true)
    const nodeRoles = new Set<string>()
    const profiles = new Set<string>()
    for (const nc of s.kube.nodeClasses) {
      const spec = nc.spec as { role?: string; instanceProfile?: string }
      if (spec.role) nodeRoles.add(spec.role)
      if (spec.instanceProfile) profiles.add(spec.instanceProfile)
    }
    for (const p of profiles) {
      out.push(q('iam', { Action: 'GetInstanceProfile', InstanceProfileName: p }))
      for (const r of s.instanceProfiles[p]?.roles ?? []) nodeRoles.add(r)
    }
    // With a KMS key in play the node roles' managed policies are read too (IAM may decide key use).
    for (const r of nodeRoles) if (r !== controllerRole) roleReads(r, keyIds.length > 0)
    // The VPC CNI's own role (IRSA on kube-system/aws-node, else Pod Identity), in this account.
    const awsNode = s.kube.serviceAccounts.find(
      (x) => x.metadata.namespace === 'kube-system' && x.metadata.name === 'aws-node',
    )
    const cniArn =
      awsNode?.metadata.annotations?.['eks.amazonaws.com/role-arn'] ??
      s.podIdentityAssociations.find((a) => a.namespace === 'kube-system' && a.serviceAccount === 'aws-node')
        ?.roleArn
    const cniRole =
      cniArn && cniArn.split(':')[4] === ACCOUNT ? cniArn.slice(cniArn.lastIndexOf('/') + 1) : undefined
    if (cniRole && cniRole !== controllerRole && !nodeRoles.has(cniRole)) roleReads(cniRole, false)
    if (controllerArn && nodeRoles.size > 0) {
      const params: Record<string, string> = {
        Action: 'SimulatePrincipalPolicy',
        PolicySourceArn: controllerArn,
        'ActionNames.member.1': 'iam:PassRole',
        'ContextEntries.member.1.ContextKeyName': 'iam:PassedToService',
        'ContextEntries.member.1.ContextKeyType': 'string',
        'ContextEntries.member.1.ContextKeyValues.member.1': 'ec2.amazonaws.com',
      }
      ;[...nodeRoles].forEach(
        (r, i) => (params[`ResourceArns.member.${i + 1}`] = arnRole(r, s.roles[r]?.path)),
      )
      out.push(q('iam', params))
    }
    if (mode !== 'CONFIG_MAP') {
      const wanted = new Set([...nodeRoles].map((r) => arnRole(r, s.roles[r]?.path)))
      for (const e of s.accessEntries) {
        if (wanted.has(e.principalArn)) {
          out.push(
            eksCall('GET', `/clusters/${CLUSTER}/access-entries/${encodeURIComponent(e.principalArn)}`),
          )
        }
      }
    }

    // EC2: one Describe per selector term (+ the cluster security group by id)
    const ec2Params = (action: string, idKey: string, nameFilter: string, term: Record<string, unknown>) => {
      const params: Record<string, string> = { Action: action }
      if (term.id) params[`${idKey}.1`] = String(term.id)
      else {
        let i = 1
        for (const [k, v] of Object.entries((term.tags as Record<string, string>) ?? {})) {
          params[`Filter.${i}.Name`] = v === '*' ? 'tag-key' : `tag:${k}`
          params[`Filter.${i}.Value.1`] = v === '*' ? k : v
          i++
        }
        if (term.name) {
          params[`Filter.${i}.Name`] = nameFilter
          params[`Filter.${i}.Value.1`] = String(term.name)
        }
      }
      return q('ec2', params)
    }
    const seen = new Set<string>()
    const add = (c: Call) => {
      if (!seen.has(c.key)) out.push(c)
      seen.add(c.key)
    }
    for (const nc of s.kube.nodeClasses) {
      const spec = nc.spec as {
        subnetSelectorTerms?: Record<string, unknown>[]
        securityGroupSelectorTerms?: Record<string, unknown>[]
      }
      for (const t of spec.subnetSelectorTerms ?? [])
        add(ec2Params('DescribeSubnets', 'SubnetId', 'tag:Name', t))
      for (const t of spec.securityGroupSelectorTerms ?? [])
        add(ec2Params('DescribeSecurityGroups', 'GroupId', 'group-name', t))
    }
    const vpc = s.cluster.resourcesVpcConfig as {
      clusterSecurityGroupId?: string
      vpcId?: string
      subnetIds?: string[]
    }
    if (vpc.clusterSecurityGroupId)
      add(q('ec2', { Action: 'DescribeSecurityGroups', 'GroupId.1': vpc.clusterSecurityGroupId }))
    if (!vpc.vpcId && vpc.subnetIds?.[0])
      add(q('ec2', { Action: 'DescribeSubnets', 'SubnetId.1': vpc.subnetIds[0] }))
    // Karpenter before 1.1 (webhooks): the instances its pods run on, then their groups not read above.
    const chart = release ? decodeReleaseData((release.data as { release: string }).release).chart : undefined
    const version = (chart as { metadata?: { version?: string } } | undefined)?.metadata?.version ?? ''
    if (/^(0\.|1\.0\.)/.test(version)) {
      const onNodes = new Set(s.kube.pods.map((p) => (p.spec as { nodeName?: string }).nodeName ?? ''))
      const ids = s.kube.nodes
        .filter((n) => onNodes.has(n.metadata.name))
        .map((n) => /\/(i-[0-9a-f]+)$/.exec((n.spec as { providerID?: string }).providerID ?? '')?.[1] ?? '')
        .filter(Boolean)
        .sort()
      const filter = (action: string, name: string, values: string[]) =>
        q('ec2', {
          Action: action,
          'Filter.1.Name': name,
          ...Object.fromEntries(values.map((v, i) => [`Filter.1.Value.${i + 1}`, v])),
        })
      if (ids.length) add(filter('DescribeInstances', 'instance-id', [...new Set(ids)]))
      const selected = this.selectedGroupIds()
      const groups = (s.instances ?? []).filter((i) => ids.includes(i.id)).flatMap((i) => i.enis.flat())
      const missing = [...new Set(groups)].filter((g) => !selected.has(g) && g !== vpc.clusterSecurityGroupId)
      if (missing.length) add(filter('DescribeSecurityGroups', 'group-id', missing.sort()))
    }

    // Interruption: the queue the release names (an ARN or URL there still names a queue: its last
    // part), the rules targeting it, and the rules whose pattern is an interruption event (ListRules
    // carries their pattern and state: no DescribeRule).
    const values = release
      ? (decodeReleaseData((release.data as { release: string }).release).config as {
          settings?: { interruptionQueue?: string }
        })
      : undefined
    const setting = values?.settings?.interruptionQueue
    const queue = setting?.split(/[/:]/).pop()
    if (queue) {
      out.push(j('sqs', 'AmazonSQS.GetQueueUrl', { QueueName: queue }))
      if (s.queues[queue]) {
        out.push(
          j('sqs', 'AmazonSQS.GetQueueAttributes', {
            QueueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queue}`,
            AttributeNames: ['All'],
          }),
        )
      }
      const arn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${queue}`
      out.push(j('eventbridge', 'AWSEvents.ListRuleNamesByTarget', { TargetArn: arn }))
      out.push(j('eventbridge', 'AWSEvents.ListRules', {}))
      for (const r of s.rules.filter((x) => x.targets.includes(arn) || interruptionPattern(x.eventPattern))) {
        out.push(j('eventbridge', 'AWSEvents.ListTargetsByRule', { Rule: r.name }))
      }
    }

    // CloudFormation: who owns each resource doctor --fix may change (one DescribeStackResources each):
    // the roles that exist, the controller's customer managed policies, the queue, the rules that
    // deliver to it or would be repaired, and with IRSA the issuer's OIDC provider.
    const owned: string[] = []
    for (const name of new Set([
      ...(controllerRole ? [controllerRole] : []),
      ...nodeRoles,
      ...(cniRole ? [cniRole] : []),
    ])) {
      const r = s.roles[name]
      if (!r) continue
      owned.push(name)
      if (name === controllerRole) owned.push(...r.attached.filter((a) => a.split(':')[4] !== 'aws'))
    }
    if (queue && s.queues[queue]) {
      owned.push(`https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queue}`)
      const arn = s.queues[queue]?.QueueArn ?? `arn:aws:sqs:${REGION}:${ACCOUNT}:${queue}`
      const found = s.rules.filter((x) => x.targets.includes(arn) || interruptionPattern(x.eventPattern))
      const toQueue = found.filter((x) => x.targets.includes(arn))
      owned.push(...toQueue.map((x) => x.name))
      for (const { source, detailType } of INTERRUPTION_RULES) {
        const delivers = (x: MockRule) =>
          [x.eventPattern.source].flat().includes(source) &&
          (!('detail-type' in x.eventPattern) || [x.eventPattern['detail-type']].flat().includes(detailType))
        if (!toQueue.some(delivers)) owned.push(...found.filter(delivers).map((x) => x.name))
      }
    }
    const provider = s.oidcProviders.find((a) => a.endsWith(`:oidc-provider/${ISSUER}`))
    if (irsa && provider) owned.push(provider)
    for (const id of new Set(owned))
      out.push(q('cloudformation', { Action: 'DescribeStackResources', PhysicalResourceId: id }))
    return out
  }
}

export function kubeconfigYaml(server: string, token: string, context = 'demo'): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': context,
    clusters: [{ name: context, cluster: { server } }],
    contexts: [{ name: context, context: { cluster: context, user: context } }],
    users: [{ name: context, user: { token } }],
  })
}

/** Starts a mock of the healthy `demo` cluster (see MockOptions to break, slow or throttle it). */
export function startMockCluster(options: MockOptions = {}): MockCluster {
  return new MockCluster(options).start()
}
