// What the scenarios on the real controller read back from Karpenter's own objects: conditions on
// NodeClaims, EC2NodeClasses and NodePools, the pods they launch for, and the events Karpenter records.
import { readFileSync } from 'node:fs'
import { DescribeInstancesCommand, type Instance } from '@aws-sdk/client-ec2'
import { PutEventsCommand } from '@aws-sdk/client-eventbridge'
import type { Bed } from './bed.js'
import type { KubeObject } from './kube-client.js'
import { waitFor } from './proc.js'
import { awsClients } from './seed.js'

export const NODECLAIMS = '/apis/karpenter.sh/v1/nodeclaims'
export const NODEPOOLS = '/apis/karpenter.sh/v1/nodepools'
export const EC2NODECLASSES = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses'

export const conditionOf = (o: KubeObject | undefined, type: string) =>
  (o?.status?.conditions ?? []).find((c: KubeObject) => c.type === type) as KubeObject | undefined
export const isTrue = (o: KubeObject | undefined, type: string) => conditionOf(o, type)?.status === 'True'

/** Instances Karpenter launched (its tags), not terminated. */
export async function karpenterInstances(bed: Bed): Promise<Instance[]> {
  const r = await awsClients(bed).ec2.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: 'tag-key', Values: ['karpenter.sh/nodeclaim'] },
        { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
      ],
    }),
  )
  return (r.Reservations ?? []).flatMap((x) => x.Instances ?? [])
}
/**
 * One instance by id, in any state: Karpenter may already have consolidated it away (moto launches the
 * first override, often far larger than the pod needs), and a terminated instance keeps its tags.
 */
export async function instanceById(bed: Bed, id: string | undefined): Promise<Instance | undefined> {
  if (!id) return undefined
  const r = await awsClients(bed).ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }))
  return (r.Reservations ?? []).flatMap((x) => x.Instances ?? [])[0]
}
export const tagOf = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value
/** The EC2 instance id of a NodeClaim (the tail of its providerID), once Karpenter launched it. */
export const instanceIdOf = (claim: KubeObject) =>
  String(claim.status?.providerID ?? '')
    .split('/')
    .pop()

/** The NodeClaims Karpenter made for NodePool `nodePool`. */
export async function claimsOf(bed: Bed, nodePool: string): Promise<KubeObject[]> {
  return bed.kube.list(NODECLAIMS, `karpenter.sh/nodepool=${nodePool}`)
}

/** Waits for a NodeClaim of `nodePool` that `ready` accepts (`what` names it in the failure). */
export async function waitForClaim(
  bed: Bed,
  what: string,
  nodePool: string,
  ready: (c: KubeObject) => boolean,
): Promise<KubeObject> {
  const found: { claim?: KubeObject } = {}
  await waitFor(
    what,
    async () => {
      found.claim = (await claimsOf(bed, nodePool)).find(ready)
      return !!found.claim
    },
    { timeoutMs: 120_000, proc: bed.procs.karpenter, intervalMs: 500 },
  )
  return found.claim!
}

/** A pod only `nodeSelector`'s nodes can take (its selector and, for a tenant, the toleration). */
export interface PodOptions {
  toleration?: KubeObject
  /**
   * Karpenter's default disruption (WhenEmptyOrUnderutilized, consolidateAfter 0s) replaces the node
   * moto launched — the first override, often a 32xlarge — with a cheaper one ~25 s after the pod
   * lands, terminating the instance a scenario is still inspecting (CI, stop 40). A scenario that
   * reads the instance asks Karpenter to leave the node alone; one that wants the node gone must
   * not (a do-not-disrupt pod blocks the drain of a deleted claim in v1).
   */
  keepNode?: boolean
}

export function pendingPod(
  name: string,
  nodeSelector: Record<string, string>,
  opts: PodOptions = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: name },
      annotations: opts.keepNode ? { 'karpenter.sh/do-not-disrupt': 'true' } : undefined,
    },
    spec: {
      nodeSelector,
      tolerations: opts.toleration ? [opts.toleration] : undefined,
      terminationGracePeriodSeconds: 0,
      containers: [
        { name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } },
      ],
    },
  }
}

/**
 * Waits until Karpenter sets condition `type` of the object at `path` to `status` (and `reason`, when
 * given); the object as it then was. The failure names the condition last seen.
 */
export async function waitForCondition(
  bed: Bed,
  path: string,
  type: string,
  want: { status: 'True' | 'False' | 'Unknown'; reason?: string },
  timeoutMs = 120_000,
): Promise<KubeObject> {
  let o: KubeObject | undefined
  await waitFor(
    `${path}: ${type}=${want.status}${want.reason ? ` (${want.reason})` : ''} by Karpenter`,
    async () => {
      const c = conditionOf((o = await bed.kube.get(path)), type)
      return c?.status === want.status && (!want.reason || c?.reason === want.reason)
    },
    { timeoutMs, intervalMs: 500, proc: bed.procs.karpenter },
  ).catch((e: Error) => {
    throw new Error(`${e.message}\nlast seen: ${JSON.stringify(o?.status?.conditions)}`)
  })
  return o!
}

/** The core/v1 events recorded about object `name` in `namespace` (Karpenter's and the scheduler's). */
export async function eventsAbout(bed: Bed, namespace: string, name: string): Promise<KubeObject[]> {
  const q = `fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`
  const body = await bed.kube.get<{ items?: KubeObject[] }>(`/api/v1/namespaces/${namespace}/events?${q}`)
  return body?.items ?? []
}

/** The controller's JSON log lines (zap), for Karpenter's own account of what it did. */
export function controllerLog(bed: Bed): KubeObject[] {
  const path = bed.karpenter?.controller.proc?.logPath
  if (!path) return []
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as KubeObject]
      } catch {
        return [] // the line being written as we read
      }
    })
}

/** The conditions Karpenter sets True once it resolved an EC2NodeClass (each asserted by name). */
export const RESOLVED = [
  'SubnetsReady',
  'SecurityGroupsReady',
  'AMIsReady',
  'InstanceProfileReady',
  'ValidationSucceeded',
]
/** Those of RESOLVED that are not True on `nc`, each with what it says. */
export const unresolved = (nc: KubeObject | undefined) =>
  RESOLVED.filter((type) => !isTrue(nc, type)).map(
    (type) => `${type}: ${JSON.stringify(conditionOf(nc, type))}`,
  )

/** A NodePool of EC2NodeClass `nodeClass` (any requirement the scenario gives). */
export const nodePoolOf = (name: string, nodeClass: string, requirements: KubeObject[] = []): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
        requirements,
      },
    },
  },
})

/**
 * EC2's spot interruption warning for an instance, put on the default event bus as EC2 puts it: the
 * interruption rules route it to the queue Karpenter reads. Returns how many entries EventBridge refused.
 */
export async function putSpotInterruption(
  bed: Bed,
  instanceId: string | undefined,
): Promise<number | undefined> {
  // a claim read before Karpenter wrote its providerID has no instance to interrupt: say so, not `instance/undefined`
  if (!instanceId)
    throw new Error('putSpotInterruption: the NodeClaim has no instance id (status.providerID) yet')
  const put = await awsClients(bed).events.send(
    new PutEventsCommand({
      Entries: [
        {
          Source: 'aws.ec2',
          DetailType: 'EC2 Spot Instance Interruption Warning',
          Detail: JSON.stringify({ 'instance-id': instanceId, 'instance-action': 'terminate' }),
          Resources: [`arn:aws:ec2:us-west-2:123456789012:instance/${instanceId}`],
        },
      ],
    }),
  )
  return put.FailedEntryCount
}

const deploymentPath = (namespace: string, name: string) =>
  `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`

/**
 * Waits until the real controller took the Deployment's current rollout: the bed reports a rollout
 * available (observedGeneration = generation) only once that rollout's controller answers /readyz.
 */
export async function controllerRolledOut(
  bed: Bed,
  namespace = 'kube-system',
  name = 'karpenter',
  timeoutMs = 180_000,
): Promise<void> {
  await waitFor(
    `Deployment ${namespace}/${name}: the current rollout's Karpenter controller ready`,
    async () => {
      const d = await bed.kube.get(deploymentPath(namespace, name))
      return !!d && d.status?.observedGeneration === d.metadata.generation
    },
    // no `proc`: the old rollout's controller exits on purpose while this waits
    { timeoutMs, intervalMs: 300 },
  )
  await bed.karpenter!.controller.ready(timeoutMs)
}

/**
 * `kubectl rollout restart deployment/karpenter`: a new controller, whose caches are empty, so it
 * reads AWS again at once (Karpenter re-reads subnets and security groups only once a minute, through
 * a one-minute cache: pkg/controllers/nodeclass/subnet.go, pkg/cache/cache.go DefaultTTL).
 */
export async function restartController(bed: Bed, namespace = 'kube-system', name = 'karpenter') {
  await bed.kube.mergePatch(deploymentPath(namespace, name), {
    spec: {
      template: {
        metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
      },
    },
  })
  await controllerRolledOut(bed, namespace, name)
}

/**
 * The real controller of a `karpenter: true` bed Ready, and EC2NodeClass `nodeClass` and NodePool
 * `nodePool` marked Ready by it (what a scenario seeded with `markAvailable: false` starts from).
 */
export async function readyByKarpenter(bed: Bed, nodeClass = 'default', nodePool = 'default'): Promise<void> {
  await bed.karpenter!.controller.ready()
  await waitForCondition(bed, `${EC2NODECLASSES}/${nodeClass}`, 'Ready', { status: 'True' })
  await waitForCondition(bed, `${NODEPOOLS}/${nodePool}`, 'Ready', { status: 'True' })
}

/** Waits for a line of the controller's log that `match` accepts (`what` names it in the failure). */
export async function waitForLog(
  bed: Bed,
  what: string,
  match: (line: KubeObject) => boolean,
  timeoutMs = 120_000,
): Promise<KubeObject> {
  let said: KubeObject | undefined
  await waitFor(what, async () => !!(said = controllerLog(bed).find(match)), {
    timeoutMs,
    intervalMs: 500,
    proc: bed.procs.karpenter,
  })
  return said!
}
