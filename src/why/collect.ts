// The reads of `karpctl why`, concurrent and through the run's memoized Kubernetes client: doctor's
// Kubernetes collectors (NodePools, EC2NodeClasses, the controller), then one read of each kind the
// workload side needs (pods, NodeClaims, DaemonSets, volumes, events) however many pods are judged.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Aws } from '../context/aws.js'
import type { RunContext } from '../context/run-context.js'
import { BadAnswer, shapeOf } from '../context/shape.js'
import { InputError } from '../errors.js'
import { describeCluster } from '../facts/collect-eks.js'
import { collectKube } from '../facts/collect-kube.js'
import { failureOf, okRead, read } from '../facts/read.js'
import type { Read } from '../facts/types.js'
import { redactText } from '../redact/redact.js'
import { controllerLog } from './collect-log.js'
import { selectorString } from './selector.js'
import { zoneSpreads } from './topology-spread.js'
import type {
  ContainerSpec,
  DaemonSet,
  InstanceTypeDetails,
  InstanceTypeInfo,
  InstanceTypeOffering,
  KubeEvent,
  LabelSelector,
  NodeClaim,
  PersistentVolume,
  PersistentVolumeClaim,
  PlacedPod,
  PodSpec,
  StorageClass,
  WhyFacts,
  WhySelector,
  VpcSubnet,
  WorkloadPod,
} from './types.js'

interface List<T> {
  items?: T[]
}

const enc = encodeURIComponent

/** Node affinity and the required pod (anti-)affinity terms (preferences never stop a launch). */
function affinity(a: PodSpec['affinity']): PodSpec['affinity'] | undefined {
  if (!a) return undefined
  const required = (k: 'podAffinity' | 'podAntiAffinity') => {
    const terms = a[k]?.requiredDuringSchedulingIgnoredDuringExecution
    return terms?.length ? { [k]: { requiredDuringSchedulingIgnoredDuringExecution: terms } } : {}
  }
  const out = {
    ...(a.nodeAffinity ? { nodeAffinity: a.nodeAffinity } : {}),
    ...required('podAffinity'),
    ...required('podAntiAffinity'),
  }
  return Object.keys(out).length ? out : undefined
}

/** Only what a judgement reads: no env, no command lines, no annotations (they may hold secrets). */
export function trimSpec(spec: PodSpec | undefined): PodSpec {
  const s = spec ?? ({ containers: [] } as PodSpec)
  const container = (c: ContainerSpec): ContainerSpec => ({
    name: c.name,
    ...(c.resources ? { resources: c.resources } : {}),
    ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
    ...(c.ports?.some((p) => p.hostPort)
      ? {
          ports: c.ports
            .filter((p) => p.hostPort)
            .map(({ containerPort, hostPort, protocol, hostIP }) => ({
              containerPort,
              hostPort,
              ...(protocol ? { protocol } : {}),
              ...(hostIP ? { hostIP } : {}),
            })),
        }
      : {}),
  })
  return {
    ...(s.nodeName ? { nodeName: s.nodeName } : {}),
    ...(s.schedulerName ? { schedulerName: s.schedulerName } : {}),
    ...(s.nodeSelector ? { nodeSelector: s.nodeSelector } : {}),
    ...(affinity(s.affinity) ? { affinity: affinity(s.affinity) } : {}),
    ...(s.tolerations ? { tolerations: s.tolerations } : {}),
    containers: (s.containers ?? []).map(container),
    ...(s.initContainers ? { initContainers: s.initContainers.map(container) } : {}),
    ...(s.overhead ? { overhead: s.overhead } : {}),
    ...(s.volumes
      ? {
          volumes: s.volumes
            .filter((v) => v.persistentVolumeClaim)
            .map((v) => ({
              name: v.name,
              persistentVolumeClaim: { claimName: v.persistentVolumeClaim?.claimName ?? '' },
            })),
        }
      : {}),
    ...(s.topologySpreadConstraints ? { topologySpreadConstraints: s.topologySpreadConstraints } : {}),
  }
}

export function trimPod(p: WorkloadPod): WorkloadPod {
  const m = p.metadata
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
      ...(m.ownerReferences
        ? {
            ownerReferences: m.ownerReferences.map((o) => ({
              kind: o.kind,
              name: o.name,
              ...(o.controller ? { controller: true } : {}),
            })),
          }
        : {}),
    },
    spec: trimSpec(p.spec),
    status: {
      ...(p.status?.phase ? { phase: p.status.phase } : {}),
      ...(p.status?.nominatedNodeName ? { nominatedNodeName: p.status.nominatedNodeName } : {}),
      ...(p.status?.conditions
        ? {
            conditions: p.status.conditions.map(({ type, status, reason, message }) => ({
              type,
              status,
              reason,
              message,
            })),
          }
        : {}),
    },
  }
}

const WORKLOAD_PATHS = {
  deployment: 'apps/v1/namespaces/%s/deployments',
  statefulset: 'apps/v1/namespaces/%s/statefulsets',
  job: 'batch/v1/namespaces/%s/jobs',
}

async function podsFor(ctx: RunContext, sel: WhySelector): Promise<WorkloadPod[]> {
  const kube = ctx.kube
  if (sel.kind === 'pod') {
    const pod = await kube.get<WorkloadPod>(`/api/v1/namespaces/${enc(sel.namespace)}/pods/${enc(sel.name)}`)
    if (!pod)
      throw new InputError(
        `pod ${sel.namespace}/${sel.name} does not exist: check the name and -n`,
        'NOT_FOUND',
      )
    return [trimPod(pod)]
  }
  if (sel.kind === 'all-pending') {
    const where = sel.namespace ? `/api/v1/namespaces/${enc(sel.namespace)}/pods` : '/api/v1/pods'
    const list = await kube.get<List<WorkloadPod>>(`${where}?fieldSelector=${enc('status.phase=Pending')}`)
    return (list?.items ?? []).map(trimPod)
  }
  const path = `/apis/${WORKLOAD_PATHS[sel.kind].replace('%s', enc(sel.namespace))}/${enc(sel.name)}`
  const w = await kube.get<{ spec?: { selector?: LabelSelector } }>(path)
  if (!w)
    throw new InputError(
      `${sel.kind} ${sel.namespace}/${sel.name} does not exist: check the name and -n`,
      'NOT_FOUND',
    )
  const labels = selectorString(w.spec?.selector)
  if (!labels) return []
  const list = await kube.get<List<WorkloadPod>>(
    `/api/v1/namespaces/${enc(sel.namespace)}/pods?labelSelector=${enc(labels)}&fieldSelector=${enc('status.phase=Pending')}`,
  )
  return (list?.items ?? []).map(trimPod)
}

const list = <T>(
  ctx: RunContext,
  label: string,
  path: string,
  map: (x: T) => T = (x) => x,
): Promise<Read<T[]>> =>
  read(`kubernetes: ${label}`, async () => ((await ctx.kube.get<List<T>>(path))?.items ?? []).map(map))

/**
 * Every instance type EC2 describes in the region (all pages), trimmed to what the judgement reads;
 * only `names` when given (at most 100, EC2's limit for one request).
 */
export async function instanceTypes(aws: Aws, names?: string[]): Promise<InstanceTypeInfo[]> {
  const all = await aws.all<ec2.DescribeInstanceTypesCommandOutput, ec2.InstanceTypeInfo>(
    'ec2',
    'DescribeInstanceTypes',
    names ? { InstanceTypes: names } : { MaxResults: 100 },
    'NextToken',
    (o) => ({ items: o.InstanceTypes, next: o.NextToken }),
  )
  return all
    .filter((t) => t.InstanceType)
    .map(finiteCounts)
    .map((t) => ({
      name: t.InstanceType as string,
      vcpus: t.VCpuInfo?.DefaultVCpus ?? 0,
      memoryMiB: t.MemoryInfo?.SizeInMiB ?? 0,
      architectures: t.ProcessorInfo?.SupportedArchitectures ?? [],
      usageClasses: t.SupportedUsageClasses ?? [],
      maxEnis: t.NetworkInfo?.MaximumNetworkInterfaces ?? 0,
      ipv4PerEni: t.NetworkInfo?.Ipv4AddressesPerInterface ?? 0,
      gpus: (t.GpuInfo?.Gpus ?? []).map((g) => ({
        manufacturer: g.Manufacturer ?? '',
        name: g.Name ?? '',
        count: g.Count ?? 0,
      })),
      neuronDevices: (t.NeuronInfo?.NeuronDevices ?? []).map((d) => ({
        count: d.Count ?? 0,
        coresPerDevice: d.CoreInfo?.Count ?? 0,
      })),
      efaInterfaces: t.NetworkInfo?.EfaInfo?.MaximumEfaInterfaces ?? 0,
      instanceStorageGB: t.InstanceStorageInfo?.TotalSizeInGB ?? 0,
      details: detailsOf(t),
    }))
}

function detailsOf(t: ec2.InstanceTypeInfo): InstanceTypeDetails {
  const ebs = t.EbsInfo
  return {
    ...(t.ProcessorInfo
      ? {
          processor: {
            manufacturer: t.ProcessorInfo.Manufacturer ?? '',
            sustainedClockGhz: t.ProcessorInfo.SustainedClockSpeedInGhz ?? 0,
          },
        }
      : {}),
    hypervisor: t.Hypervisor ?? '',
    encryptionInTransit: t.NetworkInfo?.EncryptionInTransitSupported ?? false,
    ...(t.InstanceStorageInfo ? { nvmeSupport: t.InstanceStorageInfo.NvmeSupport ?? '' } : {}),
    ...(ebs?.EbsOptimizedSupport === 'default' && ebs.EbsOptimizedInfo
      ? { ebsBandwidthMbps: ebs.EbsOptimizedInfo.MaximumBandwidthInMbps ?? 0 }
      : {}),
    gpuMemoryMiB: (t.GpuInfo?.Gpus ?? []).map((g) => g.MemoryInfo?.SizeInMiB ?? 0),
    accelerators: (t.InferenceAcceleratorInfo?.Accelerators ?? []).map((a) => ({
      name: a.Name ?? '',
      manufacturer: a.Manufacturer ?? '',
      count: a.Count ?? 0,
    })),
    neuronNames: (t.NeuronInfo?.NeuronDevices ?? []).map((d) => d.Name ?? ''),
  }
}

/**
 * A described type whose counts are numbers: a vCPU count or a memory size that is not a finite number
 * of at least 0 (a broken emulator, a proxy that rewrote the answer) makes the catalogue unreadable,
 * never `NaNm cpu` in a verdict.
 */
function finiteCounts(t: ec2.InstanceTypeInfo): ec2.InstanceTypeInfo {
  const counts: [string, unknown][] = [
    ['VCpuInfo.DefaultVCpus', t.VCpuInfo?.DefaultVCpus],
    ['MemoryInfo.SizeInMiB', t.MemoryInfo?.SizeInMiB],
    ['NetworkInfo.MaximumNetworkInterfaces', t.NetworkInfo?.MaximumNetworkInterfaces],
    ['NetworkInfo.Ipv4AddressesPerInterface', t.NetworkInfo?.Ipv4AddressesPerInterface],
  ]
  for (const [field, n] of counts)
    if (n !== undefined && (typeof n !== 'number' || !Number.isFinite(n) || n < 0))
      throw new BadAnswer(
        `EC2 answered DescribeInstanceTypes with ${field} of ${t.InstanceType} as ${shapeOf(n)}, not a count`,
      )
  return t
}

/** Where EC2 offers each type, in the given zones (every zone of the region when none is known). */
export async function offerings(aws: Aws, zones: string[]): Promise<InstanceTypeOffering[]> {
  const all = await aws.all<ec2.DescribeInstanceTypeOfferingsCommandOutput, ec2.InstanceTypeOffering>(
    'ec2',
    'DescribeInstanceTypeOfferings',
    {
      LocationType: 'availability-zone',
      MaxResults: 1000,
      ...(zones.length ? { Filters: [{ Name: 'location', Values: zones }] } : {}),
    },
    'NextToken',
    (o) => ({ items: o.InstanceTypeOfferings, next: o.NextToken }),
  )
  return all
    .filter((o) => o.InstanceType && o.Location)
    .map((o) => ({ instanceType: o.InstanceType as string, zone: o.Location as string }))
}

/**
 * The subnets of the cluster's VPC (EKS names it), with only the tags whose keys an EC2NodeClass selects
 * on: what a printed fix may tag so that a class selects one.
 */
export async function vpcSubnets(aws: Aws, clusterName: string, keys: Set<string>): Promise<VpcSubnet[]> {
  const cluster = await describeCluster(aws, clusterName)
  // EKS names the VPC; an answer without it (an emulator's) still names the cluster's subnets.
  const vpcId =
    cluster?.vpcId ??
    (cluster?.subnetIds.length
      ? (
          await aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', {
            SubnetIds: cluster.subnetIds.slice(0, 1),
          })
        ).Subnets?.[0]?.VpcId
      : undefined)
  if (!vpcId) throw new Error(`EKS describes no VPC of cluster ${clusterName}`)
  const all = await aws.all<ec2.DescribeSubnetsCommandOutput, ec2.Subnet>(
    'ec2',
    'DescribeSubnets',
    { Filters: [{ Name: 'vpc-id', Values: [vpcId] }], MaxResults: 1000 },
    'NextToken',
    (o) => ({ items: o.Subnets, next: o.NextToken }),
  )
  return all
    .filter((s) => s.SubnetId && s.AvailabilityZone)
    .map((s) => ({
      id: s.SubnetId as string,
      zone: s.AvailabilityZone as string,
      ...(s.AvailabilityZoneId ? { zoneId: s.AvailabilityZoneId } : {}),
      ...(s.VpcId ? { vpcId: s.VpcId } : {}),
      availableIps: s.AvailableIpAddressCount ?? 0,
      ...(s.MapPublicIpOnLaunch ? { public: true } : {}),
      tags: Object.fromEntries(
        (s.Tags ?? [])
          .filter((t) => t.Key && keys.has(t.Key))
          .map((t) => [t.Key as string, redactText(t.Value ?? '')]),
      ),
    }))
}

/**
 * An EC2 read whose every failure is data, missing credentials included: the Kubernetes judgements
 * stand without AWS, and instance types are then unknown (never a fit).
 */
const ec2Read = <T>(label: string, fn: () => Promise<T>): Promise<Read<T>> =>
  read(label, fn).catch((err: unknown) => ({ ok: false as const, error: failureOf(err, label) }))

/** Where each placed pod is and its labels: all topology spread counts. */
const placedOf = (r: Read<WorkloadPod[]>): Read<PlacedPod[]> =>
  r.ok
    ? {
        ok: true,
        value: r.value.map((p) => ({
          namespace: p.metadata.namespace ?? '',
          nodeName: p.spec.nodeName ?? '',
          labels: p.metadata.labels ?? {},
        })),
      }
    : r

/** Which cluster, when, by which karpctl, about what: the `meta` of every why snapshot. */
export const runMeta = <S>(ctx: RunContext, selector: S) => ({
  clusterName: ctx.options.clusterName,
  region: ctx.options.region,
  collectedAt: ctx.clock().toISOString(),
  karpctlVersion: ctx.options.karpctlVersion,
  selector,
})

export async function collectWhy(ctx: RunContext, selector: WhySelector): Promise<WhyFacts> {
  const kubeP = collectKube(ctx.kube)
  // EC2's catalogue: one read of the types, and one of the offerings in the zones of every
  // EC2NodeClass's subnets, however many pods and NodePools are judged.
  const typesP = ec2Read('ec2: DescribeInstanceTypes', () => instanceTypes(ctx.aws))
  const offeringsP = kubeP.then((kube) => {
    const zones = kube.nodeClasses.ok
      ? [
          ...new Set(kube.nodeClasses.value.flatMap((nc) => (nc.status?.subnets ?? []).map((s) => s.zone))),
        ].sort()
      : []
    return ec2Read('ec2: DescribeInstanceTypeOfferings', () => offerings(ctx.aws, zones))
  })
  // The VPC's subnets, for a fix that tags one for an EC2NodeClass (a cluster named: EKS says its VPC).
  const cluster = ctx.options.clusterName
  const subnetsP = cluster
    ? kubeP.then((kube) => {
        const keys = new Set(
          (kube.nodeClasses.ok ? kube.nodeClasses.value : []).flatMap((nc) =>
            (nc.spec.subnetSelectorTerms ?? []).flatMap((t) => Object.keys(t.tags ?? {})),
          ),
        )
        return ec2Read('ec2: DescribeSubnets', () => vpcSubnets(ctx.aws, cluster, keys))
      })
    : undefined
  // Awaited below, after the pods: a pod that does not exist must not leave them rejected unobserved.
  offeringsP.catch(() => {})
  subnetsP?.catch(() => {})
  // A pod or workload that does not exist ends the run (InputError); any other failure is data.
  const podsP = read('kubernetes: pods', () => podsFor(ctx, selector))
  const ns = selector.kind === 'all-pending' ? selector.namespace : selector.namespace
  const nsPath = (kind: string) => (ns ? `/api/v1/namespaces/${enc(ns)}/${kind}` : `/api/v1/${kind}`)
  const nodeClaimsP = list<NodeClaim>(ctx, 'NodeClaims', '/apis/karpenter.sh/v1/nodeclaims', (nc) => ({
    metadata: { name: nc.metadata.name, labels: nc.metadata.labels },
    ...(nc.spec ? { spec: { resources: nc.spec.resources } } : {}),
    ...(nc.status
      ? {
          status: {
            nodeName: nc.status.nodeName,
            capacity: nc.status.capacity,
            conditions: nc.status.conditions,
          },
        }
      : {}),
  }))
  const daemonSetsP = list<DaemonSet>(ctx, 'DaemonSets', '/apis/apps/v1/daemonsets', (d) => ({
    metadata: { name: d.metadata.name, namespace: d.metadata.namespace },
    spec: { template: { spec: trimSpec(d.spec?.template?.spec) } },
  }))
  const eventsP = list<KubeEvent>(
    ctx,
    'Events',
    `${nsPath('events')}?fieldSelector=${enc('involvedObject.kind=Pod')}`,
  )
  // An error that ends the run (an API that refuses the connection, credentials) rejects the reads
  // started beside the pods' too: the first one awaited ends the run, the others must not be left
  // rejected unobserved (Node would end the process with their stack instead of the one line).
  for (const p of [kubeP, typesP, nodeClaimsP, daemonSetsP, eventsP]) p.catch(() => {})
  const pods = await podsP
  const logP = kubeP.then((kube) => controllerLog(ctx.kube, kube.pods, pods))
  logP.catch(() => {})
  // Placed pods are read only when a pod asked about spreads over zones (one read, its namespace when all share one).
  const spreading = pods.ok ? pods.value.filter((p) => zoneSpreads(p).length) : []
  const spreadNs = [...new Set(spreading.map((p) => p.metadata.namespace ?? ''))]
  const placedP = spreading.length
    ? list<WorkloadPod>(
        ctx,
        'placed pods',
        `${spreadNs.length === 1 && spreadNs[0] ? `/api/v1/namespaces/${enc(spreadNs[0])}/pods` : '/api/v1/pods'}?fieldSelector=${enc('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed')}`,
      )
    : undefined
  placedP?.catch(() => {})
  // Volumes are read only when a pod mounts a claim.
  const claims = pods.ok && pods.value.some((p) => p.spec.volumes?.some((v) => v.persistentVolumeClaim))
  const none = <T>() => Promise.resolve(okRead<T[]>([]))
  const [kube, nodeClaims, daemonSets, events, pvcs, pvs, storageClasses, types, offered, log] =
    await Promise.all([
      kubeP,
      nodeClaimsP,
      daemonSetsP,
      eventsP,
      claims
        ? list<PersistentVolumeClaim>(ctx, 'PersistentVolumeClaims', nsPath('persistentvolumeclaims'))
        : none<PersistentVolumeClaim>(),
      claims
        ? list<PersistentVolume>(ctx, 'PersistentVolumes', '/api/v1/persistentvolumes')
        : none<PersistentVolume>(),
      claims
        ? list<StorageClass>(ctx, 'StorageClasses', '/apis/storage.k8s.io/v1/storageclasses')
        : none<StorageClass>(),
      typesP,
      offeringsP,
      logP,
    ])
  return redactWhyFacts({
    schema: 'karpctl.why-facts/v1',
    meta: runMeta(ctx, selector),
    kube,
    pods,
    nodeClaims,
    daemonSets,
    pvcs: pvcs.ok
      ? {
          ok: true,
          value: pvcs.value.map((c) => ({
            metadata: { name: c.metadata.name, namespace: c.metadata.namespace },
            spec: c.spec,
            status: c.status,
          })),
        }
      : pvcs,
    pvs: pvs.ok
      ? {
          ok: true,
          value: pvs.value.map((v) => ({
            metadata: { name: v.metadata.name },
            spec: { nodeAffinity: v.spec.nodeAffinity },
          })),
        }
      : pvs,
    storageClasses: storageClasses.ok
      ? {
          ok: true,
          value: storageClasses.value.map((s) => ({
            metadata: { name: s.metadata.name, annotations: s.metadata.annotations },
            volumeBindingMode: s.volumeBindingMode,
          })),
        }
      : storageClasses,
    events: events.ok
      ? {
          ok: true,
          value: events.value.map(
            ({
              metadata,
              involvedObject,
              reason,
              message,
              type,
              source,
              reportingComponent,
              count,
              lastTimestamp,
              eventTime,
            }) => ({
              metadata: {
                name: metadata.name,
                namespace: metadata.namespace,
                creationTimestamp: metadata.creationTimestamp,
              },
              involvedObject,
              reason,
              message,
              type,
              source,
              reportingComponent,
              count,
              lastTimestamp,
              eventTime,
            }),
          ),
        }
      : events,
    instanceTypes: types,
    offerings: offered,
    ...(log ? { controllerLog: log } : {}),
    ...(placedP ? { placedPods: placedOf(await placedP) } : {}),
    ...(subnetsP ? { subnets: await subnetsP } : {}),
  })
}

/** A read's items, each changed by `fn` (a failed read as it is). */
const each = <T>(r: Read<T[]>, fn: (x: T) => T): Read<T[]> =>
  r.ok ? { ok: true, value: r.value.map(fn) } : r

/** Events with their messages redacted (why and why node print them as Karpenter wrote them). */
export const redactEventMessages = <T extends { message?: string }>(r: Read<T[]>): Read<T[]> =>
  each(r, (e) => (e.message === undefined ? e : { ...e, message: redactText(e.message) }))

/** Objects (pods, NodeClaims) with their condition messages redacted. */
export const redactConditionMessages = <T extends { status?: { conditions?: { message?: string }[] } }>(
  r: Read<T[]>,
): Read<T[]> =>
  each(r, (o) =>
    o.status?.conditions
      ? {
          ...o,
          status: {
            ...o.status,
            conditions: o.status.conditions.map((c) =>
              c.message === undefined ? c : { ...c, message: redactText(c.message) },
            ),
          },
        }
      : o,
  )

/**
 * The free text why prints as it was written — the Events Karpenter wrote about a pod, the controller's
 * log line, pod and NodeClaim condition messages — redacted as read, as doctor's Kubernetes facts are
 * (collect-kube.ts): a token in a message must not reach the report. Only the text: names, labels and
 * uids stay exact, for the judgement matches on them.
 */
export function redactWhyFacts(f: WhyFacts): WhyFacts {
  return {
    ...f,
    pods: redactConditionMessages(f.pods),
    nodeClaims: redactConditionMessages(f.nodeClaims),
    events: redactEventMessages(f.events),
    ...(f.controllerLog
      ? {
          controllerLog: each(f.controllerLog, (l) => ({
            ...l,
            nodePools: Object.fromEntries(Object.entries(l.nodePools).map(([k, v]) => [k, redactText(v)])),
            ...(l.error === undefined ? {} : { error: redactText(l.error) }),
          })),
        }
      : {}),
  }
}
