// The reads of `why node/…` and `why --nodes`, concurrent and through the run's memoized clients:
// doctor's Kubernetes collectors (NodePools, EC2NodeClasses), then one read of each kind — Nodes,
// NodeClaims, pods, PodDisruptionBudgets, the events of cluster-scoped objects — however many nodes
// are judged. Only when a NodeClaim launched and never joined (or failed to launch) does it read
// doctor's full facts and the instance's console output.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { RunContext } from '../../context/run-context.js'
import { collectKube } from '../../facts/collect-kube.js'
import { failureOf, read } from '../../facts/read.js'
import { redactText } from '../../redact/redact.js'
import type { Read } from '../../facts/types.js'
import { instanceTypes, redactConditionMessages, redactEventMessages, runMeta, trimPod } from '../collect.js'
import { controllerLogPath } from '../collect-log.js'
import { nodeLogLines } from './log-lines.js'
import { disruptionOf } from './consolidation.js'
import type { NodePool } from '../../facts/types.js'
import type { KubeEvent, WorkloadPod } from '../types.js'
import { pickBootErrors } from './join.js'
import { userDataShape } from './user-data.js'
import { stageOf } from './lifecycle.js'
import type { NodeLogLine } from './log-lines.js'
import type {
  BootLog,
  FullNodeClaim,
  KarpenterNode,
  NodeFacts,
  NodeSelector,
  PodDisruptionBudget,
  RouteTable,
} from './types.js'
import { matchesLabels } from './label-selector.js'
import { DO_NOT_DISRUPT, reschedulable } from './view.js'

interface List<T> {
  items?: T[]
}

/** Karpenter's own annotations (hashes, do-not-disrupt): others may hold anything and are not kept. */
const karpenterAnnotations = (a: Record<string, string> | undefined) => {
  const kept = Object.entries(a ?? {}).filter(([k]) => /^karpenter\.(sh|k8s\.aws)\//.test(k))
  return kept.length ? { annotations: Object.fromEntries(kept) } : {}
}

const meta = (m: KarpenterNode['metadata']) => ({
  name: m.name,
  ...(m.labels ? { labels: m.labels } : {}),
  ...karpenterAnnotations(m.annotations),
  ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
  ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
})

const trimNode = (n: KarpenterNode): KarpenterNode => ({
  metadata: meta(n.metadata),
  spec: {
    ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
    ...(n.spec?.taints ? { taints: n.spec.taints } : {}),
    ...(n.spec?.unschedulable ? { unschedulable: true } : {}),
  },
  status: {
    ...(n.status?.allocatable ? { allocatable: n.status.allocatable } : {}),
    conditions: (n.status?.conditions ?? [])
      .filter((c) => c.type === 'Ready')
      .map(({ type, status, reason, lastTransitionTime }) => ({ type, status, reason, lastTransitionTime })),
  },
})

const trimClaim = (nc: FullNodeClaim): FullNodeClaim => ({
  metadata: meta(nc.metadata),
  spec: {
    ...(nc.spec?.nodeClassRef ? { nodeClassRef: nc.spec.nodeClassRef } : {}),
    ...(nc.spec?.expireAfter ? { expireAfter: nc.spec.expireAfter } : {}),
    ...(nc.spec?.terminationGracePeriod ? { terminationGracePeriod: nc.spec.terminationGracePeriod } : {}),
  },
  ...(nc.status
    ? {
        status: {
          nodeName: nc.status.nodeName,
          providerID: nc.status.providerID,
          imageID: nc.status.imageID,
          lastPodEventTime: nc.status.lastPodEventTime,
          conditions: nc.status.conditions,
        },
      }
    : {}),
})

/** A pod as the disruption judgements read it: why's trim plus do-not-disrupt, the one annotation that matters. */
const trimBoundPod = (p: WorkloadPod): WorkloadPod => {
  const t = trimPod(p)
  const dnd = p.metadata.annotations?.[DO_NOT_DISRUPT]
  return dnd === undefined ? t : { ...t, metadata: { ...t.metadata, annotations: { [DO_NOT_DISRUPT]: dnd } } }
}

const trimPdb = (b: PodDisruptionBudget): PodDisruptionBudget => ({
  metadata: {
    name: b.metadata.name,
    namespace: b.metadata.namespace,
    ...(b.metadata.generation !== undefined ? { generation: b.metadata.generation } : {}),
  },
  spec: b.spec ?? {},
  ...(b.status ? { status: b.status } : {}),
})

/** Events about cluster-scoped objects live in `default`: Nodes, NodeClaims and NodePools among them. */
const ABOUT = new Set(['Node', 'NodeClaim', 'NodePool'])

const list = <T>(ctx: RunContext, label: string, path: string, map: (x: T) => T): Promise<Read<T[]>> =>
  read(`kubernetes: ${label}`, async () => ((await ctx.kube.get<List<T>>(path))?.items ?? []).map(map))

/** `aws:///us-west-2a/i-0abc…` → `i-0abc…` */
export const instanceIdOf = (providerID: string | undefined) => /\/(i-[0-9a-f]+)$/.exec(providerID ?? '')?.[1]

async function bootLog(ctx: RunContext, instanceId: string): Promise<Read<BootLog>> {
  const label = `ec2:GetConsoleOutput ${instanceId}`
  return read(label, async () => {
    const out = await ctx.aws.call<ec2.GetConsoleOutputCommandOutput>('ec2', 'GetConsoleOutput', {
      InstanceId: instanceId,
      Latest: true,
    })
    const text = Buffer.from(out.Output ?? '', 'base64').toString('utf8')
    return { instanceId, lines: pickBootErrors(text).map((l) => redactText(l)) }
  }).catch((err: unknown) => ({ ok: false as const, error: failureOf(err, label) }))
}

/** The VPC's route tables (DescribeRouteTables, every page), trimmed to their routes and subnets. */
function routeTables(ctx: RunContext, vpcId: string): Promise<Read<RouteTable[]>> {
  const label = `ec2:DescribeRouteTables ${vpcId}`
  return read(label, async () =>
    (
      await ctx.aws.all<ec2.DescribeRouteTablesCommandOutput, ec2.RouteTable>(
        'ec2',
        'DescribeRouteTables',
        { Filters: [{ Name: 'vpc-id', Values: [vpcId] }] },
        'NextToken',
        (out) => ({ items: out.RouteTables, next: out.NextToken }),
      )
    ).map(trimRouteTable),
  ).catch((err: unknown) => ({ ok: false as const, error: failureOf(err, label) }))
}

const trimRouteTable = (t: ec2.RouteTable): RouteTable => ({
  id: t.RouteTableId ?? '',
  main: (t.Associations ?? []).some((a) => a.Main),
  subnetIds: (t.Associations ?? []).flatMap((a) => (a.SubnetId ? [a.SubnetId] : [])),
  routes: (t.Routes ?? []).flatMap((r) =>
    r.DestinationCidrBlock
      ? [
          {
            destination: r.DestinationCidrBlock,
            target:
              r.NatGatewayId ??
              r.GatewayId ??
              r.TransitGatewayId ??
              r.VpcPeeringConnectionId ??
              r.NetworkInterfaceId ??
              r.InstanceId ??
              'unknown',
            ...(r.State ? { state: r.State } : {}),
          },
        ]
      : [],
  ),
})

/**
 * The route tables are wanted only when the API endpoint is public only (a private one is reached by
 * the VPC's local route): the VPC is EKS's, else the stuck NodeClaims' subnets'.
 */
function routeVpc(doctor: NodeFacts['doctor'], stuck: FullNodeClaim[]): string | undefined {
  const c = doctor?.eks.cluster
  if (!c?.ok || !c.value || c.value.endpointPrivateAccess !== false) return undefined
  if (c.value.vpcId) return c.value.vpcId
  for (const nc of stuck) {
    const subnets = doctor?.ec2.subnetsByNodeClass[nc.spec.nodeClassRef?.name ?? '']
    if (subnets?.ok && subnets.value[0]) return subnets.value[0].vpcId
  }
  return undefined
}

/**
 * Which instance types a cheaper replacement can be judged with, or undefined when none is needed: only
 * busy on-demand nodes of NodePools that consolidate underutilized nodes ask; when each of those
 * NodePools names its types (node.kubernetes.io/instance-type In), only those are described.
 */
export function typesToRead(claims: FullNodeClaim[], pools: NodePool[]): string[] | 'all' | undefined {
  const names = new Set<string>()
  let all = false
  let any = false
  for (const nc of claims) {
    if (nc.metadata.labels?.['karpenter.sh/capacity-type'] === 'spot') continue
    const np = pools.find((p) => p.metadata.name === nc.metadata.labels?.['karpenter.sh/nodepool'])
    const d = disruptionOf(np)
    if (!np || d.consolidationPolicy === 'WhenEmpty' || d.consolidateAfter === 'Never') continue
    any = true
    const listed = (np.spec.template.spec.requirements ?? []).find(
      (r) => r.key === 'node.kubernetes.io/instance-type' && r.operator === 'In',
    )
    if (listed?.values?.length) for (const v of listed.values) names.add(v)
    else all = true
  }
  if (!any) return undefined
  return all || names.size > 100 ? 'all' : [...names].sort()
}

/** The lines of every running controller replica's log that name a judged node (one read per replica). */
function nodeLog(
  ctx: RunContext,
  controllerPods: NodeFacts['kube']['pods'],
  names: Set<string>,
): Promise<Read<Record<string, NodeLogLine[]>>> {
  return read('kubernetes: controller log', async () => {
    if (!controllerPods.ok)
      throw new Error(`the controller's pods were not read: ${controllerPods.error.message}`)
    const running = controllerPods.value.filter((p) => p.phase === 'Running')
    if (running.length === 0) throw new Error('no controller pod is Running')
    const logs = await Promise.all(
      running.map(async (p) => (await ctx.kube.getText(controllerLogPath(p))) ?? ''),
    )
    return nodeLogLines(logs, names)
  }).catch((err: unknown) => ({ ok: false as const, error: failureOf(err, 'kubernetes: controller log') }))
}

export async function collectNodes(ctx: RunContext, selector: NodeSelector): Promise<NodeFacts> {
  const kubeP = collectKube(ctx.kube)
  const nodesP = list<KarpenterNode>(ctx, 'Nodes', '/api/v1/nodes', trimNode)
  const claimsP = list<FullNodeClaim>(ctx, 'NodeClaims', '/apis/karpenter.sh/v1/nodeclaims', trimClaim)
  const podsP = list<WorkloadPod>(ctx, 'pods', '/api/v1/pods', trimBoundPod)
  const pdbsP = list<PodDisruptionBudget>(
    ctx,
    'PodDisruptionBudgets',
    '/apis/policy/v1/poddisruptionbudgets',
    trimPdb,
  )
  const eventsP = read('kubernetes: Events', async () =>
    ((await ctx.kube.get<List<KubeEvent>>('/api/v1/namespaces/default/events'))?.items ?? [])
      .filter((e) => ABOUT.has(e.involvedObject?.kind ?? ''))
      .map(({ metadata, involvedObject, reason, message, type, count, lastTimestamp, eventTime }) => ({
        metadata: {
          name: metadata.name,
          namespace: metadata.namespace,
          creationTimestamp: metadata.creationTimestamp,
        },
        involvedObject: { kind: involvedObject.kind, name: involvedObject.name },
        reason,
        message,
        type,
        count,
        lastTimestamp,
        eventTime,
      })),
  )
  const [kube, nodes, nodeClaims, pods, pdbs, events] = await Promise.all([
    kubeP,
    nodesP,
    claimsP,
    podsP,
    pdbsP,
    eventsP,
  ])
  // `-l` narrows the nodes judged, never the nodes counted (budgets and room elsewhere count them all).
  const now = ctx.clock().getTime()
  const inScope = (nc: FullNodeClaim) =>
    selector.kind === 'nodes'
      ? matchesLabels(selector.labelSelector, nc.metadata.labels ?? {})
      : selector.kind === 'nodeclaim'
        ? nc.metadata.name === selector.name
        : nc.status?.nodeName === selector.name || nc.metadata.name === selector.name
  const stuck = nodeClaims.ok
    ? nodeClaims.value.filter((nc) => {
        if (!inScope(nc)) return false
        const s = stageOf(nc, now).stage
        return s === 'launch-failed' || (s === 'not-registered' && !nc.status?.nodeName)
      })
    : []
  // A cheaper replacement is judged only for a node with pods to move: then EC2's types are read, once.
  const busy = new Set(pods.ok ? reschedulable(pods.value).map((p) => p.spec.nodeName ?? '') : [])
  const pools = kube.nodePools.ok ? kube.nodePools.value : []
  const wanting = nodeClaims.ok
    ? nodeClaims.value.filter((nc) => inScope(nc) && busy.has(nc.status?.nodeName ?? ''))
    : []
  const narrowed = typesToRead(wanting, pools)
  const typesP = narrowed
    ? read('ec2:DescribeInstanceTypes', () =>
        instanceTypes(ctx.aws, narrowed === 'all' ? undefined : narrowed),
      ).catch((err: unknown) => ({
        ok: false as const,
        error: failureOf(err, 'ec2:DescribeInstanceTypes'),
      }))
    : undefined
  let doctor: NodeFacts['doctor']
  let bootLogs: NodeFacts['bootLogs']
  let doctorUnread: string | undefined
  let routes: Read<RouteTable[]> | undefined
  if (stuck.length) {
    const { collect } = await import('../../facts/collect.js')
    const unregistered = stuck.filter((nc) => stageOf(nc, now).stage === 'not-registered')
    const [d, logs] = await Promise.all([
      // doctor's collection ends the run on some inputs (no such cluster): here that is a reason, not an end.
      collect(ctx).catch((err: unknown) => {
        doctorUnread = err instanceof Error ? err.message : String(err)
        return undefined
      }),
      Promise.all(
        unregistered.map(async (nc) => {
          const id = instanceIdOf(nc.status?.providerID)
          return [nc.metadata.name, id ? await bootLog(ctx, id) : undefined] as const
        }),
      ),
    ])
    doctor = d
    const vpc = routeVpc(d, unregistered)
    if (vpc) routes = await routeTables(ctx, vpc)
    bootLogs = Object.fromEntries(logs.filter((l): l is readonly [string, Read<BootLog>] => Boolean(l[1])))
  }
  const names = new Set<string>()
  if (nodeClaims.ok)
    for (const nc of nodeClaims.value.filter(inScope)) {
      names.add(nc.metadata.name)
      if (nc.status?.nodeName) names.add(nc.status.nodeName)
    }
  if (selector.kind !== 'nodes') names.add(selector.name)
  else if (nodes.ok)
    for (const n of nodes.value)
      if (
        n.metadata.labels?.['karpenter.sh/nodepool'] &&
        matchesLabels(selector.labelSelector, n.metadata.labels)
      )
        names.add(n.metadata.name)
  const [types, controllerLog] = await Promise.all([typesP, nodeLog(ctx, kube.pods, names)])
  return {
    schema: 'karpctl.why-node-facts/v1',
    meta: runMeta(ctx, selector),
    kube,
    // Messages are printed as written (a token in one must not reach the report): redacted as read.
    nodes: redactConditionMessages(nodes),
    nodeClaims: redactConditionMessages(nodeClaims),
    pods: redactConditionMessages(pods),
    pdbs,
    events: redactEventMessages(events),
    ...(doctor ? { doctor } : {}),
    ...(doctorUnread ? { doctorUnread } : {}),
    ...(bootLogs ? { bootLogs } : {}),
    ...(routes ? { routeTables: routes } : {}),
    ...(kube.nodeClasses.ok
      ? {
          userData: Object.fromEntries(
            kube.nodeClasses.value.map((c) => [c.metadata.name, userDataShape(c.spec.userData)]),
          ),
        }
      : {}),
    ...(types ? { instanceTypes: types } : {}),
    controllerLog,
  }
}
