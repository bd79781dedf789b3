// Which CloudFormation stack owns a resource, asked of CloudFormation (DescribeStackResources by
// physical id). AWS tags a stack's resources `aws:cloudformation:*` only where the service has tags
// CloudFormation sets (an SQS queue); IAM roles, managed policies and EventBridge rules never carry
// them, so the tags cannot prove a getting-started or eksctl stack made the controller role.
// Below both src/plan (teardown) and src/checks / src/fix: every layer asks the same memoized read.
import type * as cfn from '@aws-sdk/client-cloudformation'
import type { Aws } from '../context/aws.js'
import { patternMatchesEvent } from './collect-interruption.js'
import { INTERRUPTION_RULES } from '../desired/controller-policy.js'
import { read } from './read.js'
import type { EventRule, Facts, QueueFacts, Read, StackOwner, StackResourceSummary } from './types.js'

export type { StackOwner } from './types.js'

/** A stack's answer for one physical id: the resource that has it, and every resource of the stack. */
export interface StackLookup {
  owner: StackOwner
  resources: StackResourceSummary[]
}

interface SdkError {
  name?: string
  Code?: string
  message?: string
}

/**
 * CloudFormation's answer for an id no stack declares: ValidationError "Stack for <id> does not
 * exist". Only that message: other ValidationErrors (a malformed id) say nothing about ownership.
 */
export function isNoStack(err: unknown): boolean {
  const e = err as SdkError
  return (e?.name ?? e?.Code) === 'ValidationError' && /^Stack for .* does not exist/.test(e.message ?? '')
}

/**
 * Answers that mean the endpoint cannot look a resource up (an emulator, a proxy), not that no stack
 * owns it: CloudFormation's query API answers every operation at `POST /`, so an HTTP 404 is an endpoint
 * that does not serve it; "Stack with id None does not exist" is an endpoint that ignored
 * PhysicalResourceId and looked for a stack named by nothing (moto 5.2). Rethrown as NotImplemented,
 * which the run reports as unsupported (src/context/aws.ts toReadFailure).
 */
function unsupportedOrSelf(err: unknown): unknown {
  const e = err as SdkError & { $metadata?: { httpStatusCode?: number } }
  const ignoredId =
    (e?.name ?? e?.Code) === 'ValidationError' &&
    /^Stack with id (None|null|undefined)? ?does not exist/.test(e.message ?? '')
  if (!ignoredId && e?.$metadata?.httpStatusCode !== 404) return err
  return Object.assign(
    new Error(
      `the endpoint cannot tell which stack owns a resource (it answered ${ignoredId ? `"${e.message}"` : 'HTTP 404'} to DescribeStackResources by PhysicalResourceId)`,
    ),
    { name: 'NotImplemented', $metadata: { httpStatusCode: 501 } },
  )
}

/**
 * A resource a stack once declared and no longer manages: removed with DeletionPolicy Retain
 * (DELETE_SKIPPED), or deleted. CloudFormation still lists it for up to 90 days.
 */
const released = (status: string | undefined) => status === 'DELETE_COMPLETE' || status === 'DELETE_SKIPPED'

/**
 * The stack that owns the resource with this physical id (a role's name, a managed policy's or an
 * OIDC provider's ARN, a queue's URL, a rule's name), with the stack's resources; null when no stack
 * declares it. Throws what CloudFormation answered otherwise (AccessDenied, throttling, an endpoint
 * without CloudFormation): the caller reports that as unknown, never as "not owned".
 * One memoized read per id and run (src/context/aws.ts).
 */
export async function describeOwner(aws: Aws, physicalId: string): Promise<StackLookup | null> {
  let out: cfn.DescribeStackResourcesCommandOutput
  try {
    out = await aws.call<cfn.DescribeStackResourcesCommandOutput>(
      'cloudformation',
      'DescribeStackResources',
      {
        PhysicalResourceId: physicalId,
      },
    )
  } catch (err) {
    if (isNoStack(err)) return null
    const e = unsupportedOrSelf(err)
    // An endpoint that cannot look an id up may still list its stacks: the account's stacks and their
    // resources, listed once per run, answer for every id.
    if (e !== err) return listedOwner(aws, physicalId, e)
    throw e
  }
  const all = out.StackResources ?? []
  // The answer lists the whole stack: the owned resource is the one with this id (a stack may hold
  // a deleted and a live one with the same id after a replacement; the live one decides).
  const mine = all.filter((r) => r.PhysicalResourceId === physicalId)
  const live = mine.find((r) => !released(r.ResourceStatus))
  if (mine.length > 0 && !live) return null
  // Not among the listed ones: the answer holds only a stack's first 100 resources, but CloudFormation
  // found the stack by this id, so the stack owns it (which logical id is not said).
  const of = live ?? all[0]
  if (!of) return null
  return {
    owner: {
      stackName: of.StackName ?? stackNameOf(of.StackId),
      stackId: of.StackId ?? '',
      logicalId: live?.LogicalResourceId ?? '',
      resourceType: live?.ResourceType ?? '',
      resourceStatus: live?.ResourceStatus ?? '',
    },
    resources: all.map((r) => ({
      logicalId: r.LogicalResourceId ?? '',
      ...(r.PhysicalResourceId ? { physicalId: r.PhysicalResourceId } : {}),
      resourceType: r.ResourceType ?? '',
      resourceStatus: r.ResourceStatus ?? '',
    })),
  }
}

/** Stacks whose resources are still theirs (a deleted stack lets go of what it held). */
const LIVE_STACKS = [
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
  'IMPORT_ROLLBACK_COMPLETE',
  'CREATE_IN_PROGRESS',
  'UPDATE_IN_PROGRESS',
  'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_ROLLBACK_IN_PROGRESS',
  'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS',
  'DELETE_FAILED',
]

/**
 * The owner of an id from the listing of every live stack's resources (ListStacks, then
 * ListStackResources per stack: memoized reads, so a run lists once whatever it asks). Used only where
 * the endpoint cannot look an id up; a listing that fails leaves the first failure standing.
 */
async function listedOwner(aws: Aws, physicalId: string, unsupported: unknown): Promise<StackLookup | null> {
  let stacks: cfn.StackSummary[]
  try {
    stacks = await aws.all<cfn.ListStacksCommandOutput, cfn.StackSummary>(
      'cloudformation',
      'ListStacks',
      { StackStatusFilter: LIVE_STACKS },
      'NextToken',
      (o) => ({ items: o.StackSummaries, next: o.NextToken }),
    )
  } catch {
    throw unsupported
  }
  const listed = await Promise.all(
    stacks.map(async (st) => ({
      st,
      resources: await aws.all<cfn.ListStackResourcesCommandOutput, cfn.StackResourceSummary>(
        'cloudformation',
        'ListStackResources',
        { StackName: st.StackId ?? st.StackName },
        'NextToken',
        (o) => ({ items: o.StackResourceSummaries, next: o.NextToken }),
      ),
    })),
  )
  for (const { st, resources } of listed) {
    const live = resources.find(
      (r) => sameId(r.PhysicalResourceId ?? '', physicalId) && !released(r.ResourceStatus),
    )
    if (!live) continue
    return {
      owner: {
        stackName: st.StackName ?? stackNameOf(st.StackId),
        stackId: st.StackId ?? '',
        logicalId: live.LogicalResourceId ?? '',
        resourceType: live.ResourceType ?? '',
        resourceStatus: live.ResourceStatus ?? '',
      },
      resources: resources.map((r) => ({
        logicalId: r.LogicalResourceId ?? '',
        ...(r.PhysicalResourceId ? { physicalId: r.PhysicalResourceId } : {}),
        resourceType: r.ResourceType ?? '',
        resourceStatus: r.ResourceStatus ?? '',
      })),
    }
  }
  return null
}

/**
 * A queue's physical id is its URL, whose host depends on the endpoint that answered (an emulator, a
 * legacy `queue.amazonaws.com` URL): two URLs are the same queue when their account and name are.
 */
function sameId(a: string, b: string): boolean {
  const url = /^https?:\/\//
  if (!url.test(a) || !url.test(b)) return a === b
  const tail = (u: string) => u.replace(/\/+$/, '').split('/').slice(-2).join('/')
  return tail(a) === tail(b)
}

/** `arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>` → `<name>`. */
const stackNameOf = (stackId: string | undefined) => stackId?.split('/')[1] ?? ''

/**
 * The finder: the CloudFormation stack that owns a physical id, or null when none does. Throws on
 * AccessDenied, throttling or an endpoint without CloudFormation (unknown is not "not owned").
 */
export async function stackOwner(aws: Aws, physicalId: string): Promise<StackOwner | null> {
  return (await describeOwner(aws, physicalId))?.owner ?? null
}

/** Where a resource came from and the command its stack removes it with (teardown's kept note). */
export function ownerCommand(owner: StackOwner): string {
  const eksctl = owner.stackName.startsWith('eksctl-') ? ", eksctl's: remove it with eksctl" : ''
  return `kept: made by CloudFormation stack ${owner.stackName}${eksctl} (\`aws cloudformation delete-stack --stack-name ${owner.stackName}\`)`
}

/** The kept note of a resource a stack owns; undefined when none does or CloudFormation cannot tell. */
export async function stackKeptNote(aws: Aws, physicalId: string): Promise<string | undefined> {
  try {
    const o = await stackOwner(aws, physicalId)
    return o ? ownerCommand(o) : undefined
  } catch {
    // Unknown owner: the plan says what the tags say (never that karpctl made it).
    return undefined
  }
}

// ---------- what doctor asks about ----------

/** AWS managed policies (`arn:aws:iam::aws:policy/…`) belong to AWS: no stack declares them. */
const customerManaged = (arn: string) => arn.split(':')[4] !== 'aws'

/** The parts of the facts ownedIds reads (the collector has them before the snapshot is whole). */
export interface OwnedInputs {
  iam: Pick<Facts['iam'], 'roles' | 'controllerRoleName' | 'controllerIdentity' | 'oidcProviders'>
  sqs: Facts['sqs']
  events: Pick<Facts['events'], 'rules'>
  eks: Pick<Facts['eks'], 'cluster'>
}

/** A role's own id, and with it (the controller's) its customer managed policies' ARNs, once it exists. */
export function roleIds(name: string, exists: boolean, attachedArns: string[] | null): string[] {
  if (!exists) return []
  return [name, ...(attachedArns ?? []).filter(customerManaged)]
}

/** The queue's URL (CloudFormation's physical id of AWS::SQS::Queue). */
export const queueIds = (queue: Read<QueueFacts | null>): string[] =>
  queue.ok && queue.value ? [queue.value.url] : []

/**
 * The rules that deliver to the queue, and for each event no rule delivers to it, the rules that match
 * it (those interruption-rules would repair).
 */
export function ruleIds(queue: Read<QueueFacts | null>, found: Read<EventRule[]>): string[] {
  const q = queue.ok ? queue.value : null
  const rules = found.ok ? found.value : []
  const toQueue = q ? rules.filter((r) => r.targetArns.includes(q.arn)) : []
  const ids = toQueue.map((r) => r.name)
  for (const spec of INTERRUPTION_RULES) {
    const delivers = (r: EventRule) => patternMatchesEvent(r.eventPattern, spec.source, spec.detailType)
    if (!toQueue.some(delivers)) ids.push(...rules.filter(delivers).map((r) => r.name))
  }
  return ids
}

/** With IRSA, the OIDC provider of the cluster's issuer. */
export function oidcIds(
  identity: Facts['iam']['controllerIdentity'],
  cluster: Facts['eks']['cluster'],
  providers: Facts['iam']['oidcProviders'],
): string[] {
  const issuer = (cluster.ok ? cluster.value : null)?.oidcIssuer?.replace(/^https:\/\//, '')
  if (identity !== 'irsa' || !issuer || !providers.ok) return []
  return providers.value.filter((p) => p.url === issuer).map((p) => p.arn)
}

/**
 * The physical ids of the resources doctor --fix may change: the controller role and its customer
 * managed policies, the node roles, the queue, the rules that deliver to it or that would be repaired
 * (those matching an event no rule delivers to the queue) and, with IRSA, the issuer's OIDC provider.
 * The collector asks the same ids piece by piece, as each becomes known (OwnerLookups).
 */
export function ownedIds(facts: OwnedInputs): string[] {
  const ids: string[] = []
  for (const [name, r] of Object.entries(facts.iam.roles)) {
    const role = r.ok ? r.value : null
    const attached = name === facts.iam.controllerRoleName && role?.attached.ok ? role.attached.value : []
    ids.push(
      ...roleIds(
        name,
        !!role,
        attached.map((p) => p.arn),
      ),
    )
  }
  ids.push(...queueIds(facts.sqs.queue), ...ruleIds(facts.sqs.queue, facts.events.rules))
  ids.push(...oidcIds(facts.iam.controllerIdentity, facts.eks.cluster, facts.iam.oidcProviders))
  return [...new Set(ids.filter(Boolean))]
}

/**
 * The run's ownership lookups: each id asked once, as soon as a collector knows it (so asking adds no
 * round trip to the longest chain of reads), the answers gathered into the snapshot at the end.
 */
export class OwnerLookups {
  private readonly started = new Map<string, Promise<Read<StackLookup | null>>>()

  constructor(private readonly aws: Aws) {}

  ask(ids: string[]): void {
    for (const id of ids)
      if (id && !this.started.has(id))
        this.started.set(
          id,
          read(`cloudformation:DescribeStackResources ${id}`, () => describeOwner(this.aws, id)),
        )
  }

  /** Every answer, once every ask was made. */
  async facts(): Promise<NonNullable<Facts['cloudformation']>> {
    const owners: Record<string, Read<StackOwner | null>> = {}
    const stacks: Record<string, StackResourceSummary[]> = {}
    for (const [id, p] of this.started) {
      const answer = await p
      owners[id] = answer.ok ? { ok: true, value: answer.value?.owner ?? null } : answer
      if (answer.ok && answer.value) stacks[answer.value.owner.stackName] = answer.value.resources
    }
    return { owners, stacks }
  }
}

/** The owners of `ids`, each one read (concurrently), with the resources of every owning stack. */
export async function collectOwners(aws: Aws, ids: string[]): Promise<NonNullable<Facts['cloudformation']>> {
  const lookups = new OwnerLookups(aws)
  lookups.ask(ids)
  return lookups.facts()
}
