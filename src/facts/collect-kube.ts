// Kubernetes facts: the Karpenter Helm release (from its Secret), the controller's ServiceAccount,
// Deployment and pods, nodes, NodePools, EC2NodeClasses, CRDs, aws-auth, webhooks.
import { AWS_NODE_NAMESPACE, AWS_NODE_SERVICE_ACCOUNT } from './aws-node.js'
import { parse } from 'yaml'
import type { KubeClient } from '../context/kube.js'
import { refreshHint } from '../context/kubeconfig.js'
import { EnvironmentError, quote } from '../errors.js'
import { findClusterAutoscalers } from './cluster-autoscalers.js'
import { decodeReleaseData, toHelmRelease } from './helm-release.js'
import { okRead, read } from './read.js'
import { renderedInstall } from './rendered-install.js'
import { redact, redactClip } from '../redact/redact.js'
import type {
  AwsAuthMapping,
  ContainerStatus,
  CrdConversionWebhook,
  CustomResourceDefinition,
  Deployment,
  EC2NodeClass,
  Facts,
  HelmRelease,
  KubeNode,
  ObjectMeta,
  NodePool,
  Pod,
  PodPlacement,
  Read,
  RenderedInstall,
  ServiceAccount,
  ServicePorts,
  Taint,
  Toleration,
  ValidatingWebhook,
} from './types.js'

interface List<T> {
  items: T[]
}
interface RawSecret {
  metadata: { name: string; namespace: string; labels?: Record<string, string> }
  data?: { release?: string }
}

const KARPENTER_CRDS = [
  'nodepools.karpenter.sh',
  'nodeclaims.karpenter.sh',
  'ec2nodeclasses.karpenter.k8s.aws',
]
const LEGACY_CRDS = [
  'provisioners.karpenter.sh',
  'awsnodetemplates.karpenter.k8s.aws',
  'machines.karpenter.sh',
]

export const RELEASE_SELECTOR = 'owner=helm,status notin (superseded,uninstalled)'

/** Finds the Karpenter release in any namespace: the newest revision of a release whose chart is `karpenter`. */
export async function findRelease(kube: KubeClient): Promise<HelmRelease | null> {
  // Superseded revisions are most of a busy cluster's Helm history (and each carries the whole chart):
  // ask the API server to leave them out.
  const list = await kube.get<List<RawSecret>>(
    `/api/v1/secrets?labelSelector=${encodeURIComponent(RELEASE_SELECTOR)}`,
  )
  const candidates: HelmRelease[] = []
  for (const s of list?.items ?? []) {
    const status = s.metadata.labels?.status
    if (status === 'superseded' || status === 'uninstalled' || !s.data?.release) continue
    try {
      const release = toHelmRelease(decodeReleaseData(s.data.release))
      if (release.chartName === 'karpenter') candidates.push(release)
    } catch {
      // Not a release we can decode (another Helm version or a corrupt secret): not Karpenter's.
    }
  }
  // The newest revision is the user's latest intent: a failed upgrade is what doctor must explain.
  candidates.sort((a, b) => b.revision - a.revision)
  return candidates[0] ?? null
}

const selectorFor = (r: HelmRelease) =>
  encodeURIComponent(`app.kubernetes.io/instance=${r.name},app.kubernetes.io/name=karpenter`)

export async function serviceAccountOf(kube: KubeClient, namespace: string, name: string) {
  const sa = await kube.get<ServiceAccount>(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}`)
  return sa ? { metadata: pickMeta(sa.metadata) } : null
}

export async function deploymentOf(kube: KubeClient, r: HelmRelease): Promise<Deployment | null> {
  const list = await kube.get<List<RawDeployment>>(
    `/apis/apps/v1/namespaces/${r.namespace}/deployments?labelSelector=${selectorFor(r)}`,
  )
  const d = list?.items[0]
  return d ? toDeployment(d) : null
}

function toDeployment(d: RawDeployment): Deployment {
  const controller =
    d.spec?.template?.spec?.containers?.find((c) => c.name === 'controller') ??
    d.spec?.template?.spec?.containers?.[0]
  const env: Record<string, string> = {}
  for (const e of controller?.env ?? []) if (typeof e.value === 'string') env[e.name] = e.value
  return {
    metadata: pickMeta(d.metadata),
    replicas: d.spec?.replicas ?? 1,
    availableReplicas: d.status?.availableReplicas ?? 0,
    readyReplicas: d.status?.readyReplicas ?? 0,
    conditions: d.status?.conditions ?? [],
    serviceAccountName: d.spec?.template?.spec?.serviceAccountName,
    env,
    image: controller?.image,
    placement: placementOf(d.spec?.template?.spec),
  }
}

type PodSpecPlacement = NonNullable<NonNullable<RawDeployment['spec']>['template']>['spec']

function placementOf(spec: PodSpecPlacement): PodPlacement {
  const anti = spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []
  return {
    tolerations: spec?.tolerations ?? [],
    nodeSelector: spec?.nodeSelector ?? {},
    requiredAntiAffinityTopologyKeys: anti.map((t) => t.topologyKey).filter((k): k is string => !!k),
  }
}

export async function anyKarpenterDeployment(kube: KubeClient): Promise<Deployment | null> {
  const list = await kube.get<List<RawDeployment>>(
    `/apis/apps/v1/deployments?labelSelector=${encodeURIComponent('app.kubernetes.io/name=karpenter')}`,
  )
  return list?.items[0] ? toDeployment(list.items[0]) : null
}

interface RawDeployment {
  metadata: ObjectMeta
  spec?: {
    replicas?: number
    template?: {
      spec?: {
        serviceAccountName?: string
        containers?: { name: string; image?: string; env?: { name: string; value?: string }[] }[]
        tolerations?: Toleration[]
        nodeSelector?: Record<string, string>
        affinity?: {
          podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { topologyKey?: string }[] }
        }
      }
    }
  }
  status?: { availableReplicas?: number; readyReplicas?: number; conditions?: Deployment['conditions'] }
}

interface RawPod {
  metadata: ObjectMeta
  spec?: { nodeName?: string; containers?: { name: string; resources?: { limits?: { memory?: string } } }[] }
  status?: {
    phase?: string
    containerStatuses?: {
      name: string
      restartCount?: number
      ready?: boolean
      state?: { waiting?: { reason?: string } }
      lastState?: { terminated?: { reason?: string; exitCode?: number } }
    }[]
  }
}

export async function podsOf(kube: KubeClient, r: HelmRelease): Promise<Pod[]> {
  const list = await kube.get<List<RawPod>>(
    `/api/v1/namespaces/${r.namespace}/pods?labelSelector=${selectorFor(r)}`,
  )
  return (list?.items ?? []).map((p) => ({
    metadata: pickMeta(p.metadata),
    nodeName: p.spec?.nodeName,
    phase: p.status?.phase,
    containerStatuses: (p.status?.containerStatuses ?? []).map((c): ContainerStatus => {
      const last = c.lastState?.terminated
      const memoryLimit = p.spec?.containers?.find((x) => x.name === c.name)?.resources?.limits?.memory
      return {
        name: c.name,
        restartCount: c.restartCount ?? 0,
        ready: c.ready ?? false,
        waitingReason: c.state?.waiting?.reason,
        ...(last ? { lastTerminated: { reason: last.reason, exitCode: last.exitCode } } : {}),
        ...(memoryLimit ? { memoryLimit } : {}),
      }
    }),
  }))
}

interface RawNode {
  metadata: { name: string; labels?: Record<string, string> }
  spec?: { taints?: Taint[]; providerID?: string }
  status?: { conditions?: { type: string; status: string }[]; nodeInfo?: { kubeletVersion?: string } }
}

export async function nodes(kube: KubeClient): Promise<KubeNode[]> {
  const list = await kube.get<List<RawNode>>('/api/v1/nodes')
  return (list?.items ?? []).map((n) => ({
    name: n.metadata.name,
    labels: n.metadata.labels ?? {},
    taints: n.spec?.taints ?? [],
    ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    karpenter: Boolean(
      n.metadata.labels?.['karpenter.sh/nodepool'] ?? n.metadata.labels?.['karpenter.sh/provisioner-name'],
    ),
    kubeletVersion: n.status?.nodeInfo?.kubeletVersion,
    ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
  }))
}

/** Only the metadata checks read: no managedFields, no last-applied blobs. */
function pickMeta(meta: ObjectMeta): ObjectMeta {
  return {
    name: meta.name,
    namespace: meta.namespace,
    labels: meta.labels,
    annotations: meta.annotations,
    // doctor --serve's Events name their object by uid too: `kubectl describe` selects Events by it.
    ...(meta.uid ? { uid: meta.uid } : {}),
  }
}

export async function nodePools(kube: KubeClient): Promise<NodePool[]> {
  const list = await kube.get<List<NodePool>>('/apis/karpenter.sh/v1/nodepools')
  return (list?.items ?? []).map((np) => ({
    metadata: pickMeta(np.metadata),
    spec: np.spec,
    status: np.status,
  }))
}

export async function nodeClasses(kube: KubeClient): Promise<EC2NodeClass[]> {
  const list = await kube.get<List<EC2NodeClass>>('/apis/karpenter.k8s.aws/v1/ec2nodeclasses')
  return (list?.items ?? []).map((nc) => ({
    metadata: pickMeta(nc.metadata),
    spec: nc.spec,
    status: nc.status,
  }))
}

interface RawCrd {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  spec: {
    group: string
    versions: { name: string; served: boolean; storage: boolean }[]
    conversion?: {
      strategy?: string
      webhook?: {
        clientConfig?: { url?: string; service?: { namespace: string; name: string; port?: number } }
      }
    }
  }
}

/** spec.conversion when it is a webhook; the service port defaults to 443, as the API server's does. */
function conversionOf(c: RawCrd): CrdConversionWebhook | undefined {
  const conv = c.spec.conversion
  if (conv?.strategy !== 'Webhook') return undefined
  const cc = conv.webhook?.clientConfig
  const svc = cc?.service
  return {
    strategy: 'Webhook',
    ...(svc ? { service: { namespace: svc.namespace, name: svc.name, port: svc.port ?? 443 } } : {}),
    ...(cc?.url ? { url: cc.url } : {}),
  }
}

/** The Services the CRDs' conversion webhooks name, each read once. */
export async function conversionServices(
  kube: KubeClient,
  crdList: CustomResourceDefinition[],
): Promise<Record<string, ServicePorts | null>> {
  const named = [
    ...new Set(
      crdList.flatMap((c) =>
        c.conversion?.service ? [`${c.conversion.service.namespace}/${c.conversion.service.name}`] : [],
      ),
    ),
  ]
  const found = await Promise.all(
    named.map(async (key) => {
      const [namespace, name] = key.split('/') as [string, string]
      const svc = await kube.get<{ spec?: { ports?: { name?: string; port: number }[] } }>(
        `/api/v1/namespaces/${namespace}/services/${name}`,
      )
      return [
        key,
        svc
          ? {
              namespace,
              name,
              ports: (svc.spec?.ports ?? []).map((p) => ({
                ...(p.name ? { name: p.name } : {}),
                port: p.port,
              })),
            }
          : null,
      ] as const
    }),
  )
  return Object.fromEntries(found)
}

export async function crds(kube: KubeClient): Promise<CustomResourceDefinition[]> {
  const found = await Promise.all(
    [...KARPENTER_CRDS, ...LEGACY_CRDS].map((name) =>
      kube.get<RawCrd>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`),
    ),
  )
  return found
    .filter((c): c is RawCrd => c !== null)
    .map((c) => ({
      ...(conversionOf(c) ? { conversion: conversionOf(c) } : {}),
      name: c.metadata.name,
      group: c.spec.group,
      servedVersions: c.spec.versions.filter((v) => v.served).map((v) => v.name),
      storageVersion: c.spec.versions.find((v) => v.storage)?.name,
      labels: c.metadata.labels ?? {},
      annotations: Object.fromEntries(
        Object.entries(c.metadata.annotations ?? {}).filter(
          ([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration',
        ),
      ),
    }))
}

export async function legacyObjects(kube: KubeClient, crdList: CustomResourceDefinition[]) {
  const names = async (crd: string, path: string) => {
    if (!crdList.some((c) => c.name === crd)) return []
    const list = await kube.get<List<{ metadata: { name: string } }>>(path)
    return (list?.items ?? []).map((i) => i.metadata.name)
  }
  const [provisioners, awsNodeTemplates] = await Promise.all([
    names('provisioners.karpenter.sh', '/apis/karpenter.sh/v1alpha5/provisioners'),
    names('awsnodetemplates.karpenter.k8s.aws', '/apis/karpenter.k8s.aws/v1alpha1/awsnodetemplates'),
  ])
  return { provisioners, awsNodeTemplates }
}

export async function awsAuth(kube: KubeClient): Promise<AwsAuthMapping[] | null> {
  const cm = await kube.get<{ data?: { mapRoles?: string } }>(
    '/api/v1/namespaces/kube-system/configmaps/aws-auth',
  )
  if (!cm) return null
  const roles = (parse(cm.data?.mapRoles ?? '') ?? []) as {
    rolearn?: string
    username?: string
    groups?: string[]
  }[]
  return roles
    .filter((r) => typeof r.rolearn === 'string')
    .map((r) => ({ rolearn: r.rolearn as string, username: r.username, groups: r.groups ?? [] }))
}

export async function webhooks(kube: KubeClient): Promise<ValidatingWebhook[]> {
  type Raw = {
    webhooks?: {
      name: string
      clientConfig?: { service?: { namespace?: string; name?: string; port?: number } }
    }[]
  }
  const [validating, mutating] = await Promise.all([
    kube.get<List<Raw>>('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations'),
    kube.get<List<Raw>>('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations'),
  ])
  return [...(validating?.items ?? []), ...(mutating?.items ?? [])]
    .flatMap((c) => c.webhooks ?? [])
    .filter((w) => /karpenter/.test(w.name))
    .map((w) => ({
      name: w.name,
      serviceNamespace: w.clientConfig?.service?.namespace,
      serviceName: w.clientConfig?.service?.name,
      port: w.clientConfig?.service?.port,
    }))
}

export async function serverVersion(kube: KubeClient): Promise<string | null> {
  const v = await kube.get<{ gitVersion?: string }>('/version')
  return v?.gitVersion ?? null
}

/**
 * Every Kubernetes read doctor makes, concurrently; reads that depend on the release wait for it.
 * The promise is marked handled at once: the caller awaits it after other reads, and a fatal error
 * (credentials the API rejects) must reach that await, not end the process as an unhandled rejection.
 */
export function collectKube(kube: KubeClient): Promise<Facts['kube']> {
  const p = collectAll(kube).then((facts) => {
    forbiddenEverywhere(kube, facts)
    return redactKubeFacts(facts)
  })
  p.catch(() => {})
  return p
}

/**
 * Kubernetes facts are redacted as they are read (release values, env, annotations, userData can hold
 * anything), so no report prints a secret; the selectors install and tenant copy from the
 * EC2NodeClasses are data karpctl writes back, kept exactly.
 */
export function redactKubeFacts(facts: Facts['kube']): Facts['kube'] {
  const out = redact(facts)
  if (facts.nodeClasses.ok && out.nodeClasses.ok) {
    out.nodeClasses.value.forEach((nc, i) => {
      const spec = (facts.nodeClasses as { value: EC2NodeClass[] }).value[i]?.spec
      if (!spec) return
      for (const k of ['subnetSelectorTerms', 'securityGroupSelectorTerms', 'amiSelectorTerms'] as const)
        if (spec[k] !== undefined) (nc.spec as Record<string, unknown>)[k] = spec[k]
    })
  }
  return out
}

/**
 * A 403 on every read (the server's version, which anyone may read, aside) is not a per-check
 * permission gap: the identity has no access to the cluster at all, and every check would be unknown.
 */
function forbiddenEverywhere(kube: KubeClient, facts: Facts['kube']): void {
  const reads: Read<unknown>[] = [
    facts.release,
    facts.nodes,
    facts.nodePools,
    facts.nodeClasses,
    facts.crds,
    facts.awsAuth,
    facts.webhooks,
  ]
  if (!reads.every((r) => !r.ok && r.error.kind === 'denied')) return
  const first = reads[0] as Read<unknown> & { ok: false }
  throw new EnvironmentError(
    `the Kubernetes API at ${kube.server} denied every read to kube context ${quote(kube.creds.contextName)} (${first.error.code}: ${redactClip(first.error.message, 160)}): the credentials work but map to no access; give your AWS identity an access entry or an aws-auth mapping, or ${refreshHint(kube.creds)}`,
    'KUBE_FORBIDDEN',
  )
}

async function collectAll(kube: KubeClient): Promise<Facts['kube']> {
  const releaseP = read('kubernetes: Helm release secrets', () => findRelease(kube))
  const crdsP = read('kubernetes: Karpenter CRDs', () => crds(kube))
  // Without a release (Argo CD, Flux, manifests, or half removed) the controller may still run: find it by label.
  const deploymentP = releaseP.then((r) =>
    r.ok
      ? read('kubernetes: controller Deployment', () =>
          r.value ? deploymentOf(kube, r.value) : anyKarpenterDeployment(kube),
        )
      : r,
  )
  const saLabel = 'kubernetes: controller ServiceAccount'
  const serviceAccountP = releaseP.then(async (r): Promise<Read<ServiceAccount | null>> => {
    if (!r.ok) return r
    if (r.value) {
      const rel = r.value
      const configured = (rel.computedValues.serviceAccount as { name?: string } | undefined)?.name
      const name = rel.renderedServiceAccount?.name ?? (configured || rel.name)
      return read(saLabel, () => serviceAccountOf(kube, rel.namespace, name))
    }
    const d = await deploymentP
    if (!d.ok) return d
    const dep = d.value
    return read(saLabel, async () =>
      dep
        ? serviceAccountOf(kube, dep.metadata.namespace ?? 'default', dep.serviceAccountName ?? 'default')
        : null,
    )
  })
  // No release: the install as the Deployment and its ServiceAccount show it (rendered-install.ts).
  const renderedP = releaseP.then(async (r): Promise<Read<RenderedInstall | null>> => {
    if (!r.ok) return r
    if (r.value) return okRead(null)
    const [d, sa] = await Promise.all([deploymentP, serviceAccountP])
    if (!d.ok) return d
    if (!sa.ok) return sa
    return okRead(d.value ? renderedInstall(d.value, sa.value) : null)
  })
  const podsP = Promise.all([releaseP, renderedP]).then(([r, x]) => {
    const install = r.ok && r.value ? r : x
    if (!install.ok) return install
    const i = install.value
    return read('kubernetes: controller pods', async () => (i ? podsOf(kube, i) : []))
  })
  const [
    release,
    rendered,
    serviceAccount,
    deployment,
    pods,
    nodeList,
    pools,
    classes,
    crdList,
    auth,
    hooks,
    legacy,
    convServices,
    version,
    autoscalers,
    awsNode,
  ] = await Promise.all([
    releaseP,
    renderedP,
    serviceAccountP,
    deploymentP,
    podsP,
    read('kubernetes: nodes', () => nodes(kube)),
    read('kubernetes: NodePools', () => nodePools(kube)),
    read('kubernetes: EC2NodeClasses', () => nodeClasses(kube)),
    crdsP,
    read('kubernetes: kube-system/aws-auth', () => awsAuth(kube)),
    read('kubernetes: webhook configurations', () => webhooks(kube)),
    crdsP.then((c) =>
      c.ok ? read('kubernetes: legacy Provisioners', () => legacyObjects(kube, c.value)) : c,
    ),
    crdsP.then((c) =>
      c.ok ? read('kubernetes: CRD conversion webhook Services', () => conversionServices(kube, c.value)) : c,
    ),
    read('kubernetes: server version', () => serverVersion(kube)),
    // The same listing install reads to scale one down: here to see whether one still scales node groups.
    read('kubernetes: cluster-autoscaler Deployments', () => findClusterAutoscalers(kube)),
    // The VPC CNI's own identity decides whether node roles need AmazonEKS_CNI_Policy (node-role).
    read(`kubernetes: ${AWS_NODE_NAMESPACE}/${AWS_NODE_SERVICE_ACCOUNT} ServiceAccount`, () =>
      serviceAccountOf(kube, AWS_NODE_NAMESPACE, AWS_NODE_SERVICE_ACCOUNT),
    ),
  ])
  return {
    release,
    rendered,
    serviceAccount,
    deployment,
    pods,
    nodes: nodeList,
    nodePools: pools,
    nodeClasses: classes,
    crds: crdList,
    awsAuth: auth,
    webhooks: hooks,
    legacy,
    serverVersion: version,
    clusterAutoscalers: autoscalers,
    awsNodeServiceAccount: awsNode,
    conversionServices: convServices,
  }
}

/** The newest live revision of the Helm release `name` in `namespace` (any chart), with its Secret's labels. */
export async function releaseNamed(
  kube: KubeClient,
  namespace: string,
  name: string,
  /** Read again past the memo (after waiting for a helm that was changing it). */
  fresh = false,
): Promise<{ release: HelmRelease; labels: Record<string, string>; lastDeployed?: number } | null> {
  const selector = encodeURIComponent(`${RELEASE_SELECTOR},name=${name}`)
  const path = `/api/v1/namespaces/${namespace}/secrets?labelSelector=${selector}`
  const list = await (fresh ? kube.fresh<List<RawSecret>>(path) : kube.get<List<RawSecret>>(path))
  const found = (list?.items ?? [])
    .filter((s) => s.data?.release)
    .map((s) => ({
      release: toHelmRelease(decodeReleaseData(s.data?.release ?? '')),
      labels: s.metadata.labels ?? {},
    }))
    .sort((a, b) => b.release.revision - a.release.revision)
  const newest = found[0]
  if (!newest) return null
  // The revision a stuck (pending) release goes back to: the newest one below it that was once live.
  const lastDeployed = found.find(
    (f) =>
      f.release.revision < newest.release.revision &&
      (f.labels.status === 'deployed' || f.labels.status === 'superseded'),
  )?.release.revision
  return lastDeployed === undefined ? newest : { ...newest, lastDeployed }
}
