// Workloads as they stand in a cluster where no scheduler, kubelet or Karpenter runs: namespaces,
// pods with their owner chain (Deployment → ReplicaSet, StatefulSet, Job, DaemonSet: real objects, so
// the garbage collector keeps the pods), the status kube-scheduler would give an unschedulable pod,
// volumes bound to a zonal PersistentVolume, and what Karpenter itself would leave behind: NodeClaims
// with their status, and its Events on a pod.
import { setTimeout as sleep } from 'node:timers/promises'
import type { KubeClient, KubeObject } from './kube-client.js'

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z')

/** A namespace ready for pods: the ServiceAccount admission plugin rejects pods until `default` exists. */
export async function ensureNamespace(kube: KubeClient, ns: string): Promise<void> {
  await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
  const deadline = Date.now() + 30_000
  while (!(await kube.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`))) {
    if (Date.now() > deadline) throw new Error(`serviceaccount ${ns}/default never appeared`)
    await sleep(200)
  }
}

export type OwnerKind = 'Deployment' | 'StatefulSet' | 'Job' | 'DaemonSet'

/** One pod to seed: its spec, who owns it, and what kube-scheduler and Karpenter said about it. */
export interface PodSeed {
  name: string
  namespace: string
  /** The pod's spec (containers default to one `app` container with these requests). */
  spec?: KubeObject
  requests?: Record<string, string>
  labels?: Record<string, string>
  owner?: { kind: OwnerKind; name: string }
  /** kube-scheduler's verdict: PodScheduled=False/Unschedulable (default true). */
  unschedulable?: boolean
  /** status.nominatedNodeName: kube-scheduler preempting for it. */
  nominatedNodeName?: string
  /** status.phase, as a kubelet would report it for a pod bound with spec.nodeName. */
  phase?: 'Running' | 'Succeeded' | 'Failed'
  /** Events about the pod from Karpenter (newest last). */
  karpenterEvents?: { reason: string; message: string; type?: string }[]
}

const template = (labels: Record<string, string>, spec: KubeObject) => ({ metadata: { labels }, spec })
const podSelector = (owner: string) => ({ 'corpus.karpctl.io/owner': owner })

/** The owner objects of a workload (created once per name), returning the pod's ownerReference. */
export async function seedOwner(
  kube: KubeClient,
  ns: string,
  owner: NonNullable<PodSeed['owner']>,
  spec: KubeObject,
) {
  const labels = podSelector(owner.name)
  const ref = (o: KubeObject) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    uid: o.metadata.uid,
    controller: true,
  })
  const upsert = async (o: KubeObject) => {
    const path =
      o.kind === 'Job'
        ? `/apis/batch/v1/namespaces/${ns}/jobs/${o.metadata.name}`
        : `/apis/apps/v1/namespaces/${ns}/${o.kind.toLowerCase()}s/${o.metadata.name}`
    return (await kube.get(path)) ?? (await kube.create(o))
  }
  const selector = { matchLabels: labels }
  if (owner.kind === 'Deployment') {
    const d = await upsert({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: owner.name, namespace: ns },
      spec: { replicas: 0, selector, template: template(labels, spec) },
    })
    // The ReplicaSet the Deployment controller would make, named as it names them.
    const rs = await upsert({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${owner.name}-6d4cf56db6`,
        namespace: ns,
        labels: { ...labels, 'pod-template-hash': '6d4cf56db6' },
        ownerReferences: [ref(d)],
      },
      spec: {
        replicas: 0,
        selector: { matchLabels: { ...labels, 'pod-template-hash': '6d4cf56db6' } },
        template: template({ ...labels, 'pod-template-hash': '6d4cf56db6' }, spec),
      },
    })
    return { ref: ref(rs), labels: { ...labels, 'pod-template-hash': '6d4cf56db6' } }
  }
  if (owner.kind === 'StatefulSet') {
    const s = await upsert({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: owner.name, namespace: ns },
      spec: { replicas: 0, serviceName: owner.name, selector, template: template(labels, spec) },
    })
    return { ref: ref(s), labels }
  }
  if (owner.kind === 'Job') {
    const j = await upsert({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: owner.name, namespace: ns },
      spec: {
        suspend: true,
        selector,
        manualSelector: true,
        template: template(labels, { ...spec, restartPolicy: 'Never' }),
      },
    })
    return { ref: ref(j), labels }
  }
  const ds = await upsert({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: owner.name, namespace: ns },
    spec: { selector, template: template(labels, spec) },
  })
  return { ref: ref(ds), labels }
}

export const podSpecOf = (p: Omit<PodSeed, 'name' | 'namespace'>): KubeObject => ({
  automountServiceAccountToken: false,
  containers: [
    { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: p.requests ?? {} } },
  ],
  ...p.spec,
})

/** Creates the pod (and its owners) and gives it the status kube-scheduler and Karpenter would. */
export async function seedPod(kube: KubeClient, p: PodSeed): Promise<KubeObject> {
  const spec = podSpecOf(p)
  const owned = p.owner ? await seedOwner(kube, p.namespace, p.owner, spec) : undefined
  const pod = await kube.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: { ...owned?.labels, ...p.labels },
      ...(owned ? { ownerReferences: [owned.ref] } : {}),
    },
    spec: owned?.ref.kind === 'Job' ? { ...spec, restartPolicy: 'Never' } : spec,
  })
  const path = `/api/v1/namespaces/${p.namespace}/pods/${p.name}`
  if (p.unschedulable !== false || p.nominatedNodeName || p.phase)
    await kube.mergePatch(
      path,
      {
        status: {
          ...(p.phase ? { phase: p.phase } : {}),
          ...(p.nominatedNodeName ? { nominatedNodeName: p.nominatedNodeName } : {}),
          ...(p.unschedulable !== false
            ? {
                conditions: [
                  {
                    type: 'PodScheduled',
                    status: 'False',
                    reason: 'Unschedulable',
                    message: '0/2 nodes are available: 2 Insufficient cpu.',
                    lastTransitionTime: now(),
                  },
                ],
              }
            : {}),
        },
      },
      'status',
    )
  for (const [i, e] of (p.karpenterEvents ?? []).entries())
    await kube.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${p.name}.${i}`, namespace: p.namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: p.name,
        namespace: p.namespace,
        uid: pod.metadata.uid,
      },
      reason: e.reason,
      message: e.message,
      type: e.type ?? 'Normal',
      source: { component: 'karpenter' },
      reportingComponent: 'karpenter',
      count: 1,
      firstTimestamp: now(),
      // Later events sort first: one second apart.
      lastTimestamp: new Date(Date.now() + i * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
    })
  return pod
}

/** A StorageClass of the EBS CSI driver with the given binding mode. */
export const ebsStorageClass = (name: string, volumeBindingMode: 'Immediate' | 'WaitForFirstConsumer') => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: 'ebs.csi.aws.com',
  volumeBindingMode,
})

/** A PersistentVolumeClaim: bound to a new zonal EBS PersistentVolume in `zone`, or left unbound. */
export async function seedClaim(
  kube: KubeClient,
  ns: string,
  claim: string,
  opts: { storageClass: string; zone?: string },
): Promise<void> {
  const volumeName = opts.zone ? `pv-${ns}-${claim}` : undefined
  if (volumeName)
    await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: volumeName },
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: opts.storageClass,
        claimRef: { namespace: ns, name: claim },
        csi: { driver: 'ebs.csi.aws.com', volumeHandle: `vol-0${claim.length}${'0'.repeat(15)}` },
        // What the EBS CSI driver writes: the volume lives in one zone.
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.kubernetes.io/zone', operator: 'In', values: [opts.zone] },
                ],
              },
            ],
          },
        },
      },
    })
  await kube.create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: claim, namespace: ns },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: opts.storageClass,
      resources: { requests: { storage: '10Gi' } },
      ...(volumeName ? { volumeName } : {}),
    },
  })
  if (volumeName)
    await kube.mergePatch(
      `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}`,
      { status: { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] } },
      'status',
    )
}

/** A NodeClaim of a NodePool, with the status Karpenter gives it (capacity once launched, conditions). */
export async function seedNodeClaim(
  kube: KubeClient,
  opts: {
    name: string
    nodePool: string
    nodeClass?: string
    capacity?: Record<string, string>
    conditions?: { type: string; status: string; reason?: string; message?: string }[]
  },
): Promise<void> {
  await kube.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name: opts.name, labels: { 'karpenter.sh/nodepool': opts.nodePool } },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: opts.nodeClass ?? 'default' },
      requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: [opts.nodePool] }],
    },
  })
  await kube.mergePatch(
    `/apis/karpenter.sh/v1/nodeclaims/${opts.name}`,
    {
      status: {
        ...(opts.capacity ? { capacity: opts.capacity, allocatable: opts.capacity } : {}),
        conditions: (opts.conditions ?? []).map((c) => ({
          reason: c.type,
          message: '',
          ...c,
          lastTransitionTime: now(),
        })),
      },
    },
    'status',
  )
}

/** The status Karpenter gives an EC2NodeClass it cannot resolve, and the NodePools that use it. */
export async function markNodeClassNotReady(
  kube: KubeClient,
  name: string,
  failing: { type: string; reason: string; message: string },
  nodePools: string[],
): Promise<void> {
  const t = now()
  await kube.mergePatch(
    `/apis/karpenter.k8s.aws/v1/ec2nodeclasses/${name}`,
    {
      status: {
        conditions: [
          { ...failing, status: 'False', lastTransitionTime: t },
          {
            type: 'Ready',
            status: 'False',
            reason: 'UnhealthyDependents',
            message: `${failing.type}=False`,
            lastTransitionTime: t,
          },
        ],
      },
    },
    'status',
  )
  for (const np of nodePools)
    await kube.mergePatch(
      `/apis/karpenter.sh/v1/nodepools/${np}`,
      {
        status: {
          conditions: [
            {
              type: 'NodeClassReady',
              status: 'False',
              reason: 'NodeClassNotReady',
              message: 'NodeClass not ready',
              lastTransitionTime: t,
            },
            {
              type: 'Ready',
              status: 'False',
              reason: 'UnhealthyDependents',
              message: 'NodeClassReady=False',
              lastTransitionTime: t,
            },
          ],
        },
      },
      'status',
    )
}
