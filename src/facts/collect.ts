// Collects every fact doctor's checks need about one cluster, concurrently, each distinct read once.
// Dependent reads start as soon as what they need is known, so the run takes about
// (longest chain of dependent calls) round trips, not the sum of them.
import { installOf } from './rendered-install.js'
import type * as sts from '@aws-sdk/client-sts'
import type { RunContext } from '../context/run-context.js'
import { withoutUserinfo } from '../context/aws.js'
import { answerOf, EnvironmentError, KarpctlError } from '../errors.js'
import { awsNodeIdentity } from './aws-node.js'
import * as eksReads from './collect-eks.js'
import * as iamReads from './collect-iam.js'
import {
  deliveredQueueNames,
  interruptionQueueOf,
  interruptionRules,
  queue,
  type RuleSearch,
} from './collect-interruption.js'
import { collectKube } from './collect-kube.js'
import { webhooksEnabled } from './helm-release.js'
import { kmsKey, kmsKeyIds } from './collect-kms.js'
import { OwnerLookups, oidcIds, queueIds, roleIds, ruleIds } from './collect-owners.js'
import { dockerRegistryConfig, helmRegistryConfig } from './collect-local.js'
import {
  controllerNodesOf,
  securityGroupById,
  securityGroupsFor,
  subnetsFor,
  vpcOfSubnet,
} from './collect-network.js'
import { failureOf, okRead, read } from './read.js'
import type { EC2NodeClass, Facts, HelmRelease, Read, RoleFacts, ServiceAccount } from './types.js'

const ROLE_ARN_ANNOTATION = 'eks.amazonaws.com/role-arn'

/** Who we are; it needs no permission, so any failure here means AWS cannot be used at all. */
async function identity(ctx: RunContext) {
  let out: sts.GetCallerIdentityCommandOutput
  try {
    out = await ctx.aws.call<sts.GetCallerIdentityCommandOutput>('sts', 'GetCallerIdentity')
  } catch (err) {
    if (err instanceof KarpctlError) throw err
    // It answered, but not as STS: the line says what came (not "cannot reach").
    const answer = answerOf(err)
    if (answer) throw new EnvironmentError(answer.line, answer.code)
    const f = failureOf(err, 'sts:GetCallerIdentity')
    const explicit = ctx.options.endpoint ?? process.env.AWS_ENDPOINT_URL
    const where = explicit ? withoutUserinfo(explicit) : `AWS STS in ${ctx.options.region}`
    throw new EnvironmentError(
      `cannot reach ${where} (${f.code}: ${f.message}): check the network, --region and AWS_ENDPOINT_URL`,
      'AWS_UNREACHABLE',
    )
  }
  const arn = out.Arn ?? ''
  return { accountId: out.Account ?? '', partition: arn.split(':')[1] || 'aws' }
}

async function requireCluster(ctx: RunContext) {
  const name = ctx.options.clusterName
  const cluster = await read(`eks:DescribeCluster ${name}`, () => eksReads.describeCluster(ctx.aws, name))
  if (cluster.ok && cluster.value === null) {
    const others = await eksReads.listClusters(ctx.aws).catch(() => [] as string[])
    throw new EnvironmentError(
      `EKS cluster "${name}" not found in ${ctx.options.region}: check --cluster and --region` +
        (others.length ? ` (clusters there: ${others.join(', ')})` : ' (no clusters there)'),
      'CLUSTER_NOT_FOUND',
    )
  }
  return cluster
}

function annotatedRoleArn(release: HelmRelease | null, sa: ServiceAccount | null): string | undefined {
  const live = sa?.metadata.annotations?.[ROLE_ARN_ANNOTATION]
  if (live) return live
  const values = (
    release?.computedValues.serviceAccount as { annotations?: Record<string, unknown> } | undefined
  )?.annotations
  const v = values?.[ROLE_ARN_ANNOTATION]
  return typeof v === 'string' && v ? v : undefined
}

/**
 * A read started now and awaited later, after other awaits. Reads capture failures as data except the
 * fatal ones (credentials); marking the promise handled keeps such an error from being an unhandled
 * rejection (which kills the process with a stack trace and exit 1) while the run awaits other reads:
 * it still rejects `collect` where the promise is awaited.
 */
function early<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {})
  return p
}

const roleName = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1)
const unique = (xs: string[]) => [...new Set(xs.filter(Boolean))]

type Aws = RunContext['aws']
type KubeFacts = Facts['kube']
type PodIdentityRead = Facts['eks']['podIdentityAssociations']
interface Who {
  accountId: string
  partition: string
}

export async function collect(ctx: RunContext): Promise<Facts> {
  const { aws } = ctx
  const clusterName = ctx.options.clusterName
  const kubeP = collectKube(ctx.kube)
  // The Kubernetes reads travel first: building the AWS clients below holds the event loop, and a
  // request still opening its connection would wait behind that instead of being answered meanwhile.
  await ctx.kube.onTheWire()
  // DescribeCluster first: the network reads wait for it (the AWS clients are built one at a time).
  const clusterP = requireCluster(ctx)
  const whoP = identity(ctx)
  const first = startFirstReads(aws, clusterName)
  const [who, cluster] = await Promise.all([whoP, clusterP])

  const kube = await kubeP
  const release = installOf(kube)
  const sa = kube.serviceAccount.ok ? kube.serviceAccount.value : null
  const nodeClasses: EC2NodeClass[] = kube.nodeClasses.ok ? kube.nodeClasses.value : []

  const nodeRoleNames = startNodeRoleNames(aws, nodeClasses)
  const controller = controllerIdentityOf(
    release,
    sa,
    release && !annotatedRoleArn(release, sa) ? await first.podIdP : undefined,
  )
  const controllerRoleName = controller.arn ? roleName(controller.arn) : null
  const controllerRoleP = controllerRoleName
    ? early(iamReads.roleFacts(aws, controllerRoleName, true))
    : Promise.resolve(okRead<RoleFacts | null>(null))
  const cniRoleP = early(cniRole(aws, kube, first.podIdP, who.accountId))

  // EBS volumes encrypted with a KMS key: DescribeKey resolves each identifier, GetKeyPolicy follows.
  const keyIds = kmsKeyIds(nodeClasses)
  const kmsP = Promise.all(
    keyIds.map(async (id) => [id, await read(`kms:DescribeKey ${id}`, () => kmsKey(aws, id))] as const),
  ).then((entries) => Object.fromEntries(entries))
  // A cluster-autoscaler that runs is judged by the node groups it scales, and a controller short of
  // replicas may need its node group scaled (its max size bounds the fix): only then are they read.
  const autoscalers = kube.clusterAutoscalers
  const short =
    kube.deployment.ok &&
    !!kube.deployment.value &&
    kube.deployment.value.availableReplicas < kube.deployment.value.replicas
  const nodegroupsP =
    (autoscalers?.ok && autoscalers.value.some((a) => a.replicas > 0)) || short
      ? read(`eks:ListNodegroups ${clusterName}`, () => eksReads.nodegroups(aws, clusterName))
      : Promise.resolve(undefined)

  const nodeRoles = startNodeRoles(aws, {
    names: await nodeRoleNames.namesP,
    withDocuments: keyIds.length > 0,
    arnOf: (name) => `arn:${who.partition}:iam::${who.accountId}:role/${name}`,
  })
  const passRoleP = controller.arn
    ? nodeRoles.arnsP.then((arns) =>
        iamReads.passRoleEvaluations(aws, controller.arn!, arns, () => controllerRoleP),
      )
    : Promise.resolve({})
  // EKS rejects every access-entry call on a CONFIG_MAP cluster (InvalidRequestException): none can exist.
  const configMapOnly = cluster.ok && cluster.value?.authenticationMode === 'CONFIG_MAP'
  const accessP = configMapOnly
    ? Promise.resolve(okRead([]))
    : read(`eks:ListAccessEntries ${clusterName}`, () =>
        eksReads.accessEntries(aws, clusterName, () => nodeRoles.arnsP),
      )

  const network = startNetworkReads(aws, nodeClasses, cluster)
  const controllerNodesP = startControllerNodes(aws, kube, network)
  const interruption = startInterruptionReads(ctx, kube, who)

  // Who owns what doctor --fix may change (a stack's resource is changed in the stack, never here):
  // each id is asked as soon as it is known, from the same memoized reads (ownedIds says which).
  const owners = new OwnerLookups(aws)
  const listed = (name: string, isController: boolean) =>
    iamReads
      .roleListing(aws, name)
      .then(({ role, attachedArns }) =>
        owners.ask(
          roleIds(name, role.ok && !!role.value, isController && attachedArns.ok ? attachedArns.value : null),
        ),
      )
  const { queueP, rulesP } = interruption
  const ownersAsked = early(
    Promise.all([
      controllerRoleName ? listed(controllerRoleName, true) : undefined,
      nodeRoleNames.namesP.then((names) => Promise.all(names.map((n) => listed(n, false)))),
      cniRoleP.then((cni) => (cni ? listed(cni[0], false) : undefined)),
      queueP.then((found) => owners.ask(queueIds(found))),
      Promise.all([queueP, rulesP]).then(([found, r]) => owners.ask(ruleIds(found, r.rules))),
      first.oidcP.then((p) => owners.ask(oidcIds(controller.identity, cluster, p))),
    ]),
  )
  const [
    controllerRole,
    nodeRoleReads,
    passRole,
    access,
    subnets,
    sgs,
    clusterSg,
    vpcId,
    q,
    rules,
    profiles,
    keys,
    groups,
  ] = await Promise.all([
    controllerRoleP,
    nodeRoles.rolesP,
    passRoleP,
    accessP,
    network.subnetsP,
    network.sgsP,
    network.clusterSgP,
    network.vpcP,
    queueP,
    rulesP,
    Promise.all(Object.entries(nodeRoleNames.profileReads).map(async ([n, p]) => [n, await p] as const)),
    Promise.all([kmsP, interruption.queueKeyP]).then(([ebs, sqs]) => ({
      ...ebs,
      ...Object.fromEntries(sqs),
    })),
    nodegroupsP,
  ])
  const controllerNodes = await controllerNodesP
  const roles = rolesOf(
    nodeRoleReads,
    controllerRoleName ? [controllerRoleName, controllerRole] : null,
    await cniRoleP,
  )
  await ownersAsked
  const cloudformation = await owners.facts()
  const clusterValue = cluster.ok ? cluster.value : null
  const delivered = await interruption.deliveredP

  return {
    schema: 'karpctl.facts/v1',
    meta: {
      clusterName,
      region: ctx.options.region,
      accountId: who.accountId,
      partition: who.partition,
      collectedAt: ctx.clock().toISOString(),
      kubeContext: ctx.kube.creds.contextName,
      kubeServer: ctx.kube.server,
      karpctlVersion: ctx.options.karpctlVersion,
      notes: runNotes(
        { server: ctx.kube.server, context: ctx.kube.creds.contextName, clusterName },
        kube.release,
        clusterValue?.endpoint,
      ),
      calls: ctx.log.byService(),
    },
    eks: {
      cluster: cluster.ok && cluster.value ? okRead({ ...cluster.value, vpcId }) : cluster,
      accessEntries: access,
      podIdentityAssociations: await first.podIdP,
      addons: await first.addonsP,
      ...(groups ? { nodegroups: groups } : {}),
    },
    iam: {
      oidcProviders: await first.oidcP,
      roles,
      controllerRoleName,
      controllerIdentity: controller.identity,
      instanceProfiles: Object.fromEntries(profiles),
      spotServiceLinkedRole: await first.spotP,
      passRole,
    },
    ec2: {
      subnetsByNodeClass: subnets,
      securityGroupsByNodeClass: sgs,
      clusterSecurityGroup: clusterSg,
      ...(controllerNodes ? { controllerNodes } : {}),
    },
    sqs: { queue: q, ...(delivered ? { deliveredTo: delivered } : {}) },
    kms: { keys },
    cloudformation,
    events: rules.partial ? { rules: rules.rules, partial: rules.partial } : { rules: rules.rules },
    kube,
    local: { helmRegistry: await first.helmRegistryP, dockerRegistry: await first.dockerRegistryP },
  }
}

/**
 * Reads that need neither the caller identity nor the cluster description start with them: with Pod
 * Identity, the association lookup (list → describe) is on the way to the controller role.
 */
function startFirstReads(aws: Aws, clusterName: string) {
  return {
    oidcP: early(read('iam:ListOpenIDConnectProviders', () => iamReads.oidcProviders(aws))),
    spotP: early(read('iam:ListRoles (spot service-linked role)', () => iamReads.spotServiceLinkedRole(aws))),
    addonsP: early(read(`eks:ListAddons ${clusterName}`, () => eksReads.addons(aws, clusterName))),
    podIdP: early(
      read(`eks:ListPodIdentityAssociations ${clusterName}`, () =>
        eksReads.podIdentityAssociations(aws, clusterName),
      ),
    ),
    helmRegistryP: early(read('local: Helm registry config', () => helmRegistryConfig())),
    dockerRegistryP: early(read('local: Docker config', () => dockerRegistryConfig())),
  }
}

/** Node roles: spec.role directly, spec.instanceProfile through the profile's roles. */
function startNodeRoleNames(aws: Aws, nodeClasses: EC2NodeClass[]) {
  const profileNames = unique(nodeClasses.map((nc) => nc.spec.instanceProfile ?? ''))
  const profileReads = Object.fromEntries(
    profileNames.map((n) => [
      n,
      early(read(`iam:GetInstanceProfile ${n}`, () => iamReads.instanceProfile(aws, n))),
    ]),
  )
  const namesP = early(
    Promise.all(Object.values(profileReads)).then((profiles) =>
      unique([
        ...nodeClasses.map((nc) => nc.spec.role ?? ''),
        ...profiles.flatMap((p) => (p.ok && p.value ? p.value.roles : [])),
      ]),
    ),
  )
  return { profileReads, namesP }
}

/**
 * The controller's identity: its IRSA annotation first, else the Pod Identity association of its
 * ServiceAccount (`associations`, read only when there is a release and no annotation).
 */
export function controllerIdentityOf(
  release: HelmRelease | null,
  sa: ServiceAccount | null,
  associations: PodIdentityRead | undefined,
): { identity: Facts['iam']['controllerIdentity']; arn?: string } {
  const irsaArn = annotatedRoleArn(release, sa)
  if (irsaArn) return { identity: 'irsa', arn: irsaArn }
  if (!release || !associations?.ok) return { identity: 'none' }
  const saName = sa?.metadata.name ?? release.renderedServiceAccount?.name ?? release.name
  const match = associations.value.find(
    (a) => a.namespace === release.namespace && a.serviceAccount === saName,
  )
  return match?.roleArn ? { identity: 'pod-identity', arn: match.roleArn } : { identity: 'none' }
}

/**
 * The VPC CNI's own role (IRSA, else Pod Identity): node-role judges its policies instead of asking
 * the node roles for the CNI policy. Another account's role cannot be read from here.
 */
async function cniRole(aws: Aws, kube: KubeFacts, podIdP: Promise<PodIdentityRead>, accountId: string) {
  const awsNodeSa = kube.awsNodeServiceAccount?.ok ? kube.awsNodeServiceAccount.value : null
  let id = awsNodeIdentity(awsNodeSa, [])
  if (!id) {
    const assoc = await podIdP
    id = awsNodeIdentity(null, assoc.ok ? assoc.value : [])
  }
  if (!id?.arn || id.arn.split(':')[4] !== accountId) return null
  const name = roleName(id.arn)
  return [name, await iamReads.roleFacts(aws, name, false)] as const
}

/**
 * With a KMS key in play, the node roles' managed policies are read too: a key policy that defers to
 * IAM lets those policies decide whether the nodes may use the key.
 */
function startNodeRoles(
  aws: Aws,
  w: { names: string[]; withDocuments: boolean; arnOf: (name: string) => string },
) {
  const rolesP = Promise.all(
    w.names.map(async (n) => [n, await iamReads.roleFacts(aws, n, w.withDocuments)] as const),
  )
  // Roles with a path have ARNs the name alone does not give: use the ARN IAM returned.
  const arnsP = rolesP.then((entries) =>
    entries.map(([n, r]) => (r.ok && r.value ? r.value.role.arn : w.arnOf(n))),
  )
  return { rolesP, arnsP }
}

/** Each EC2NodeClass's subnets and security groups, the cluster's security group and its VPC. */
function startNetworkReads(aws: Aws, nodeClasses: EC2NodeClass[], cluster: Facts['eks']['cluster']) {
  const perNodeClass = <T>(fn: (nc: EC2NodeClass) => Promise<T>, label: string) =>
    Promise.all(
      nodeClasses.map(
        async (nc) =>
          [
            nc.metadata.name,
            await read(`${label} for EC2NodeClass ${nc.metadata.name}`, () => fn(nc)),
          ] as const,
      ),
    ).then((entries) => Object.fromEntries(entries))
  const subnetsP = perNodeClass(
    (nc) => subnetsFor(aws, nc.spec.subnetSelectorTerms ?? []),
    'ec2:DescribeSubnets',
  )
  const sgsP = perNodeClass(
    (nc) => securityGroupsFor(aws, nc.spec.securityGroupSelectorTerms ?? []),
    'ec2:DescribeSecurityGroups',
  )
  const clusterValue = cluster.ok ? cluster.value : null
  const clusterSgId = clusterValue?.clusterSecurityGroupId ?? clusterValue?.securityGroupIds[0]
  const clusterSgP = clusterSgId
    ? read(`ec2:DescribeSecurityGroups ${clusterSgId}`, () => securityGroupById(aws, clusterSgId))
    : Promise.resolve(cluster.ok ? okRead(null) : (cluster as Read<null>))
  const vpcP =
    clusterValue && !clusterValue.vpcId && clusterValue.subnetIds[0]
      ? vpcOfSubnet(aws, clusterValue.subnetIds[0]).catch(() => undefined)
      : Promise.resolve(clusterValue?.vpcId)
  return { subnetsP, sgsP, clusterSgP, vpcP }
}

/**
 * The nodes the controller's pods run on and their instances' security groups (where a 1.0.x webhook is
 * served), for installs with webhooks only; groups the network reads return are not asked again. A
 * failed pods or nodes listing is carried as it is: sg-webhook-8443 then judges the EC2NodeClasses'.
 */
function startControllerNodes(
  aws: Aws,
  kube: KubeFacts,
  network: ReturnType<typeof startNetworkReads>,
): Promise<Facts['ec2']['controllerNodes']> {
  if (!webhooksEnabled(installOf(kube))) return Promise.resolve(undefined)
  if (!kube.pods.ok) return Promise.resolve(kube.pods)
  if (!kube.nodes.ok) return Promise.resolve(kube.nodes)
  const known = async () => {
    const [byNodeClass, clusterSg] = await Promise.all([network.sgsP, network.clusterSgP])
    const groups = Object.values(byNodeClass).flatMap((r) => (r.ok ? r.value : []))
    return clusterSg.ok && clusterSg.value ? [...groups, clusterSg.value] : groups
  }
  const w = { pods: kube.pods.value, nodes: kube.nodes.value, known }
  return early(read("ec2:DescribeInstances (the controller's nodes)", () => controllerNodesOf(aws, w)))
}

/** The interruption queue (and its KMS key), the rules that feed it, and where they deliver instead. */
function startInterruptionReads(ctx: RunContext, kube: KubeFacts, who: Who) {
  const { aws } = ctx
  const release = installOf(kube)
  // The queue as the checks derive it (a URL or ARN in the setting still names the queue meant).
  const deployment = kube.deployment.ok ? kube.deployment.value : null
  const queueRef = interruptionQueueOf(release, deployment, {
    partition: who.partition,
    region: ctx.options.region,
    accountId: who.accountId,
  })
  const qName = queueRef && !queueRef.elsewhere ? queueRef.name : undefined
  const queueP = qName
    ? read(`sqs:GetQueueUrl ${qName}`, () => queue(aws, qName))
    : Promise.resolve(okRead(null))
  // An SSE-KMS queue: its key (and key policy) decides whether EventBridge may send and the
  // controller may receive. Read as the EBS keys are; an identifier both name is read once.
  const queueKeyP = queueP.then(async (found) => {
    const id = found.ok ? found.value?.kmsMasterKeyId : undefined
    return id ? [[id, await read(`kms:DescribeKey ${id}`, () => kmsKey(aws, id))] as const] : []
  })
  const rulesP: Promise<RuleSearch> = queueRef?.arn
    ? interruptionRules(aws, queueRef.arn)
    : Promise.resolve({ rules: okRead([]) })
  // The named queue does not exist: the queues the interruption rules deliver to may be the one meant.
  const deliveredP = Promise.all([queueP, rulesP]).then(async ([found, r]) => {
    if (!qName || !found.ok || found.value || !r.rules.ok || !who.accountId) return undefined
    const prefix = `arn:${who.partition}:sqs:${ctx.options.region}:${who.accountId}:`
    const names = deliveredQueueNames(r.rules.value, qName, prefix)
    if (names.length === 0) return undefined
    const reads = await Promise.all(
      names.map(async (n) => [n, await read(`sqs:GetQueueUrl ${n}`, () => queue(aws, n))] as const),
    )
    return Object.fromEntries(reads)
  })
  return { queueP, queueKeyP, rulesP, deliveredP }
}

/**
 * The roles read, by name: the node roles, then the controller role, then the VPC CNI's. A role read
 * with more (its documents, as the controller role and a node role with a KMS key are) is kept as read.
 */
export function rolesOf(
  nodeRoles: (readonly [string, Read<RoleFacts | null>])[],
  controller: readonly [string, Read<RoleFacts | null>] | null,
  cni: readonly [string, Read<RoleFacts | null>] | null,
): Record<string, Read<RoleFacts | null>> {
  const roles: Record<string, Read<RoleFacts | null>> = Object.fromEntries(nodeRoles)
  if (controller) roles[controller[0]] = controller[1]
  if (cni && !roles[cni[0]]) roles[cni[0]] = cni[1]
  return roles
}

/** What the run says of itself: an API server that did not answer, a kube context of another cluster. */
export function runNotes(
  kubeAt: { server: string; context: string; clusterName: string },
  release: KubeFacts['release'],
  endpoint: string | undefined,
): string[] {
  const notes: string[] = []
  if (!release.ok && release.error.kind === 'network') {
    notes.push(
      `the Kubernetes API at ${kubeAt.server} did not answer (${release.error.code}): every check that needs Kubernetes is unknown; check the kube context and your network`,
    )
  }
  const bare = (url: string) => url.replace(/\/$/, '').toLowerCase()
  if (endpoint && bare(kubeAt.server) !== bare(endpoint)) {
    notes.push(
      `kube context "${kubeAt.context}" points at ${kubeAt.server}, not at EKS cluster ${kubeAt.clusterName} (${endpoint}): Kubernetes facts may be of another cluster; pass --kube-context`,
    )
  }
  return notes
}
