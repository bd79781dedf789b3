// Puts "an EKS cluster where Karpenter was installed by the getting-started
// guide" into the bed's real kube-apiserver: the real chart through the real
// helm binary, aws-auth, a couple of managed-nodegroup Nodes, the default
// EC2NodeClass and NodePool.
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { stringify } from 'yaml'
import { ACCOUNT_ID, CLUSTER_NAME, DISCOVERY_TAG, REGION } from './constants.js'
import { KubeError, type KubeClient, type KubeObject } from './kube-client.js'
import { karpenterChartDir } from './paths.js'
import type { SeedResult } from './seed.js'

/** What kube-seed needs from a Bed. */
export interface KubeTarget {
  kube: KubeClient
  helmBin: string
  tmpDir: string
  childEnv(extra?: Record<string, string>): NodeJS.ProcessEnv
}

export type ChartVersion = '1.14.1' | '1.0.14'

export const KARPENTER_CRDS: Record<ChartVersion, string[]> = {
  '1.14.1': [
    'nodepools.karpenter.sh',
    'nodeclaims.karpenter.sh',
    'nodeoverlays.karpenter.sh',
    'ec2nodeclasses.karpenter.k8s.aws',
    'capacitybuffers.autoscaling.x-k8s.io',
  ],
  '1.0.14': ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws'],
}

export interface HelmResult {
  stdout: string
  stderr: string
}

/** Runs the real helm binary against the bed (KUBECONFIG and isolated HELM_* homes from the bed env). */
export function helm(target: KubeTarget, args: string[], timeoutMs = 180_000): Promise<HelmResult> {
  return new Promise((res, rej) => {
    execFile(
      target.helmBin,
      args,
      { env: target.childEnv(), timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) {
          rej(new Error(`helm ${args.join(' ')} failed: ${err.message}\n${stderr}\n${stdout}`.trim()))
        } else {
          res({ stdout, stderr })
        }
      },
    )
  })
}

/** Values the getting-started guide passes (as a values file, every value a string or map). */
export function gettingStartedValues(
  opts: { clusterName?: string; accountId?: string; queueName?: string; replicas?: number } = {},
): KubeObject {
  const cn = opts.clusterName ?? CLUSTER_NAME
  return {
    settings: { clusterName: cn, interruptionQueue: opts.queueName ?? cn },
    serviceAccount: {
      annotations: {
        'eks.amazonaws.com/role-arn': `arn:aws:iam::${opts.accountId ?? ACCOUNT_ID}:role/KarpenterControllerRole-${cn}`,
      },
    },
    controller: {
      resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
    },
    replicas: opts.replicas ?? 2,
  }
}

/**
 * The release moved off IRSA: the guide's values (`values` opts) without the role annotation, reset
 * (`--reuse-values --set …=null` leaves a reused annotation on the ServiceAccount). What a Pod Identity
 * install's chart renders.
 */
export async function withoutIrsaAnnotation(
  target: KubeTarget,
  values: Parameters<typeof gettingStartedValues>[0] = {},
): Promise<HelmResult> {
  const v = gettingStartedValues(values) as { serviceAccount: { annotations: Record<string, string> } }
  delete v.serviceAccount.annotations['eks.amazonaws.com/role-arn']
  const file = join(mkdtempSync(join(target.tmpDir, 'values-')), 'values.yaml')
  writeFileSync(file, stringify(v))
  return helm(target, [
    'upgrade',
    'karpenter',
    karpenterChartDir('1.14.1'),
    '--namespace',
    'kube-system',
    '--reset-values',
    '-f',
    file,
  ])
}

export interface InstallChartOptions {
  chartVersion?: ChartVersion
  release?: string
  namespace?: string
  /** replaces gettingStartedValues() entirely */
  values?: KubeObject
  extraArgs?: string[]
}

/**
 * `helm install karpenter <fixtures>/karpenter/v<ver>/charts/karpenter -n kube-system -f values.yaml`,
 * then waits for the chart's CRDs to be Established.
 */
export async function installKarpenterChart(
  target: KubeTarget,
  opts: InstallChartOptions = {},
): Promise<HelmResult> {
  const ver = opts.chartVersion ?? '1.14.1'
  const dir = mkdtempSync(join(target.tmpDir, 'values-'))
  const valuesFile = join(dir, 'values.yaml')
  writeFileSync(valuesFile, stringify(opts.values ?? gettingStartedValues()))
  const r = await helm(target, [
    'install',
    opts.release ?? 'karpenter',
    karpenterChartDir(ver),
    '--namespace',
    opts.namespace ?? 'kube-system',
    '--values',
    valuesFile,
    ...(opts.extraArgs ?? []),
  ])
  await waitForCrdsEstablished(target.kube, KARPENTER_CRDS[ver])
  return r
}

export async function waitForCrdsEstablished(
  kube: KubeClient,
  names: string[],
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (const name of names) {
    for (;;) {
      const crd = await kube.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
      const est = (crd?.status?.conditions ?? []).find(
        (c: KubeObject) => c.type === 'Established' && c.status === 'True',
      )
      if (est) break
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after ${timeoutMs}ms`)
      await sleep(100)
    }
  }
}

/** Creates (server-side apply) with retries while a fresh CRD's REST path is not served yet. */
export async function applyWithRetry(
  kube: KubeClient,
  obj: KubeObject,
  timeoutMs = 30_000,
): Promise<KubeObject> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await kube.apply(obj)
    } catch (e) {
      if (!(e instanceof KubeError) || e.status !== 404 || Date.now() > deadline) throw e
      await sleep(200)
    }
  }
}

export function defaultEC2NodeClass(
  opts: { clusterName?: string; name?: string; role?: string } = {},
): KubeObject {
  const cn = opts.clusterName ?? CLUSTER_NAME
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: opts.name ?? 'default' },
    spec: {
      role: opts.role ?? `KarpenterNodeRole-${cn}`,
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { [DISCOVERY_TAG]: cn } }],
      securityGroupSelectorTerms: [{ tags: { [DISCOVERY_TAG]: cn } }],
    },
  }
}

export function defaultNodePool(opts: { name?: string; nodeClassName?: string } = {}): KubeObject {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: opts.name ?? 'default' },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['2'] },
          ],
          nodeClassRef: {
            group: 'karpenter.k8s.aws',
            kind: 'EC2NodeClass',
            name: opts.nodeClassName ?? 'default',
          },
          expireAfter: '720h',
        },
      },
      limits: { cpu: '1000' },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
    },
  }
}

/** aws-auth mapping the node role(s) to system:bootstrappers + system:nodes, as the guide does. */
export function awsAuthConfigMap(nodeRoleArns: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'aws-auth', namespace: 'kube-system' },
    data: {
      mapRoles: stringify(
        nodeRoleArns.map((rolearn) => ({
          groups: ['system:bootstrappers', 'system:nodes'],
          rolearn,
          username: 'system:node:{{EC2PrivateDNSName}}',
        })),
      ),
    },
  }
}

/** What a kubelet posts once ready: the Ready condition and its node info. */
export function kubeletReadyStatus(
  now: string,
  architecture: string,
  osImage: string,
  kernelVersion: string,
) {
  return {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    nodeInfo: {
      kubeletVersion: 'v1.34.4-eks-0000000',
      kubeProxyVersion: 'v1.34.4-eks-0000000',
      containerRuntimeVersion: 'containerd://1.7.27',
      osImage,
      kernelVersion,
      operatingSystem: 'linux',
      architecture,
      machineID: '',
      systemUUID: '',
      bootID: '',
    },
  }
}

/**
 * Managed-nodegroup Nodes (not Karpenter's), Ready, with the labels EKS puts on
 * them. No kubelet exists: status is patched once and nothing changes it.
 */
export async function createNodegroupNodes(
  kube: KubeClient,
  opts: { count?: number; nodegroup?: string; region?: string } = {},
): Promise<string[]> {
  const region = opts.region ?? REGION
  const names: string[] = []
  for (let i = 0; i < (opts.count ?? 2); i++) {
    const zone = `${region}${'abc'[i % 3]}`
    const ip = `192.168.${96 + (i % 3) * 32}.${10 + i}`
    const name = `ip-${ip.replace(/\./g, '-')}.${region}.compute.internal`
    await kube.apply({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'eks.amazonaws.com/nodegroup': opts.nodegroup ?? 'demo-ng',
          'eks.amazonaws.com/capacityType': 'ON_DEMAND',
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
          'kubernetes.io/hostname': name,
          'node.kubernetes.io/instance-type': 'm5.large',
          'topology.kubernetes.io/region': region,
          'topology.kubernetes.io/zone': zone,
        },
      },
      spec: { providerID: `aws:///${zone}/i-0${(i + 1).toString(16).padStart(16, '0')}` },
    })
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
    await kube.mergePatch(
      `/api/v1/nodes/${name}`,
      {
        status: {
          capacity: { cpu: '2', memory: '7901960Ki', pods: '29' },
          allocatable: { cpu: '1930m', memory: '7253000Ki', pods: '29' },
          addresses: [
            { type: 'InternalIP', address: ip },
            { type: 'Hostname', address: name },
          ],
          ...kubeletReadyStatus(
            now,
            'amd64',
            'Amazon Linux 2023.7.20250512',
            '6.1.134-152.225.amzn2023.x86_64',
          ),
        },
      },
      'status',
    )
    // The TaintNodesByCondition admission plugin gave the new Node the
    // node.kubernetes.io/not-ready:NoSchedule taint; the node lifecycle
    // controller (not run here) would lift it once Ready. Do it ourselves.
    await kube.mergePatch(`/api/v1/nodes/${name}`, { spec: { taints: null } })
    names.push(name)
  }
  return names
}

/**
 * Nothing runs pods here: make a Deployment look rolled out (status subresource),
 * so "is the controller ready" checks have something to see.
 */
export async function markDeploymentAvailable(
  kube: KubeClient,
  namespace: string,
  name: string,
): Promise<void> {
  const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`
  const d = await kube.get(path)
  if (!d) throw new Error(`deployment ${namespace}/${name} not found`)
  const replicas = d.spec?.replicas ?? 1
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  await kube.mergePatch(
    path,
    {
      status: {
        observedGeneration: d.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'NewReplicaSetAvailable',
            message: `ReplicaSet "${name}" has successfully progressed.`,
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
    'status',
  )
}

const condition = (type: string, generation: number | undefined, now: string) => ({
  type,
  status: 'True',
  reason: type,
  message: '',
  lastTransitionTime: now,
  ...(generation !== undefined ? { observedGeneration: generation } : {}),
})

export interface NodeClassStatusInput {
  subnets: { id: string; zone: string }[]
  securityGroups: { id: string; name?: string }[]
  /** default `<cluster>_<digits>`, the shape Karpenter v1 generates */
  instanceProfile?: string
  amis?: { id: string; name?: string; requirements: { key: string; operator: string; values?: string[] }[] }[]
}

/** What Karpenter would resolve for the default EC2NodeClass from a seeded account. */
export function nodeClassStatusFromSeed(seed: SeedResult): NodeClassStatusInput {
  return {
    subnets: seed.subnetIds.map((id, i) => ({ id, zone: seed.availabilityZones[i] ?? `${seed.region}a` })),
    securityGroups: [{ id: seed.nodeSecurityGroupId, name: `eksctl-${seed.clusterName}-nodegroup-sg` }],
    instanceProfile: `${seed.clusterName}_16072487391293873426`,
  }
}

/**
 * Nothing reconciles here: give an EC2NodeClass the status Karpenter would
 * (resolved subnets, security groups, AMIs, instance profile, Ready=True).
 */
export async function markNodeClassReady(
  kube: KubeClient,
  name: string,
  input: NodeClassStatusInput,
): Promise<void> {
  const path = `/apis/karpenter.k8s.aws/v1/ec2nodeclasses/${name}`
  const nc = await kube.get(path)
  if (!nc) throw new Error(`EC2NodeClass ${name} not found`)
  const gen = nc.metadata.generation as number | undefined
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  await kube.mergePatch(
    path,
    {
      status: {
        subnets: input.subnets,
        securityGroups: input.securityGroups,
        instanceProfile: input.instanceProfile ?? `${CLUSTER_NAME}_16072487391293873426`,
        amis: input.amis ?? [
          {
            id: 'ami-0a1b2c3d4e5f60718',
            name: 'amazon-eks-node-al2023-x86_64-standard-1.34-v20250920',
            requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
          },
        ],
        conditions: [
          'AMIsReady',
          'SubnetsReady',
          'SecurityGroupsReady',
          'InstanceProfileReady',
          'CapacityReservationsReady',
          'ValidationSucceeded',
          'Ready',
        ].map((t) => condition(t, gen, now)),
      },
    },
    'status',
  )
}

/** NodePool status as Karpenter would set it (Ready=True, nodes 0). */
export async function markNodePoolReady(kube: KubeClient, name: string): Promise<void> {
  const path = `/apis/karpenter.sh/v1/nodepools/${name}`
  const np = await kube.get(path)
  if (!np) throw new Error(`NodePool ${name} not found`)
  const gen = np.metadata.generation as number | undefined
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  await kube.mergePatch(
    path,
    {
      status: {
        nodes: 0,
        resources: { cpu: '0', memory: '0', nodes: '0', pods: '0', 'ephemeral-storage': '0' },
        conditions: ['ValidationSucceeded', 'NodeClassReady', 'NodeRegistrationHealthy', 'Ready'].map((t) =>
          condition(t, gen, now),
        ),
      },
    },
    'status',
  )
}

export interface KubeSeedOptions extends InstallChartOptions {
  /**
   * The seedAws() result: its node role goes into aws-auth, and the default
   * EC2NodeClass gets a Ready status resolved from its subnets/SGs.
   */
  aws?: SeedResult
  clusterName?: string
  nodeRoleArn?: string
  /** managed-nodegroup Nodes to create (default 2) */
  nodes?: number
  /** create EC2NodeClass + NodePool `default` (default true) */
  nodePool?: boolean
  /**
   * play the controller: Deployment status Available, and (with `aws`)
   * EC2NodeClass/NodePool status Ready. Default true.
   */
  markAvailable?: boolean
}

export interface KubeSeedResult {
  helm: HelmResult
  nodes: string[]
  nodeClass?: KubeObject
  nodePool?: KubeObject
}

/** Everything at once, in the order a human following the guide would go. */
export async function seedKubernetes(
  target: KubeTarget,
  opts: KubeSeedOptions = {},
): Promise<KubeSeedResult> {
  const cn = opts.clusterName ?? CLUSTER_NAME
  const kube = target.kube
  const nodeRoleArn =
    opts.nodeRoleArn ?? opts.aws?.nodeRoleArn ?? `arn:aws:iam::${ACCOUNT_ID}:role/KarpenterNodeRole-${cn}`
  await kube.apply(awsAuthConfigMap([nodeRoleArn]))
  const nodes = await createNodegroupNodes(kube, { count: opts.nodes ?? 2 })
  const h = await installKarpenterChart(target, opts)
  if (opts.markAvailable !== false) {
    await markDeploymentAvailable(kube, opts.namespace ?? 'kube-system', opts.release ?? 'karpenter')
  }
  let nodeClass: KubeObject | undefined
  let nodePool: KubeObject | undefined
  if (opts.nodePool !== false) {
    nodeClass = await applyWithRetry(kube, defaultEC2NodeClass({ clusterName: cn }))
    nodePool = await applyWithRetry(kube, defaultNodePool())
    if (opts.markAvailable !== false && opts.aws) {
      await markNodeClassReady(kube, 'default', nodeClassStatusFromSeed(opts.aws))
      await markNodePoolReady(kube, 'default')
    }
  }
  return { helm: h, nodes, nodeClass, nodePool }
}
