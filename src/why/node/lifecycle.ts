// A NodeClaim that has not become a node: Launched=False (the launch error, mapped to the doctor
// checks that find its cause) or Launched=True and Registered not True (the instance runs but its
// kubelet never joined). Karpenter's liveness controller deletes the NodeClaim 5 minutes after a failed
// launch and 15 minutes after launch without registration (sigs.k8s.io/karpenter
// pkg/controllers/nodeclaim/lifecycle/liveness.go: LaunchTimeout, registrationTimeout).
import { humanSpan, when } from './duration.js'
import { USER_DATA_ERROR } from './user-data.js'
import type { FullNodeClaim } from './types.js'
import { condition, isTrue } from './view.js'

export const REGISTRATION_TIMEOUT_MS = 15 * 60_000
export const LAUNCH_TIMEOUT_MS = 5 * 60_000

export type Stage =
  | { stage: 'launching' }
  | { stage: 'launch-failed'; reason: string; message: string; deadline?: string }
  | { stage: 'not-registered'; since?: string; deadline?: string; overdue: boolean }
  | { stage: 'not-initialized'; message: string }
  | { stage: 'joined' }

export function stageOf(nc: FullNodeClaim, now: number): Stage {
  const conditions = nc.status?.conditions
  const launched = condition(conditions, 'Launched')
  if (!launched) return { stage: 'launching' }
  const deadline = (c: { lastTransitionTime?: string } | undefined, ms: number) => {
    const t = Date.parse(c?.lastTransitionTime ?? '')
    return Number.isNaN(t) ? undefined : t + ms
  }
  if (!isTrue(launched)) {
    const at = deadline(launched, LAUNCH_TIMEOUT_MS)
    return {
      stage: 'launch-failed',
      reason: launched.reason ?? '',
      message: launched.message ?? '',
      ...(at !== undefined ? { deadline: when(at, now) } : {}),
    }
  }
  const registered = condition(conditions, 'Registered')
  if (!isTrue(registered)) {
    // The timeout runs from the Registered condition's last change, as liveness.go counts it.
    const at = deadline(registered ?? launched, REGISTRATION_TIMEOUT_MS)
    return {
      stage: 'not-registered',
      ...(launched.lastTransitionTime ? { since: launched.lastTransitionTime } : {}),
      ...(at !== undefined ? { deadline: when(at, now) } : {}),
      overdue: at !== undefined && at <= now,
    }
  }
  const init = condition(conditions, 'Initialized')
  if (!isTrue(init))
    return {
      stage: 'not-initialized',
      message: init?.message || init?.reason || 'no Initialized condition yet',
    }
  return { stage: 'joined' }
}

export function registrationLine(s: Extract<Stage, { stage: 'not-registered' }>, nc: string): string {
  const since = s.since ? ` at ${s.since}` : ''
  if (!s.deadline) return `NodeClaim ${nc} launched${since} but its node never registered`
  return s.overdue
    ? `NodeClaim ${nc} launched${since} but its node never registered; the ${humanSpan(REGISTRATION_TIMEOUT_MS)} registration timeout passed at ${s.deadline}: Karpenter deletes it and tries again`
    : `NodeClaim ${nc} launched${since} but its node has not registered; at ${s.deadline} (the ${humanSpan(REGISTRATION_TIMEOUT_MS)} registration timeout) Karpenter deletes it and launches another`
}

/** Which doctor checks find the cause of a launch error, by what the error says. */
const LAUNCH_ERRORS: { pattern: RegExp; what: string; checks: string[] }[] = [
  {
    pattern: /UnauthorizedOperation|AccessDenied|not authorized/i,
    what: 'the controller role may not make the call',
    checks: ['controller-policy', 'passrole-node-role'],
  },
  {
    pattern: USER_DATA_ERROR,
    what: "the EC2NodeClass's userData, which Karpenter could not merge for its AMI family",
    checks: ['nodeclass-ready'],
  },
  {
    pattern: /instance ?profile|iam:PassRole/i,
    what: 'the instance profile or the node role',
    checks: ['node-role', 'passrole-node-role', 'nodeclass-ready'],
  },
  {
    pattern: /InsufficientInstanceCapacity|insufficient capacity|InsufficientCapacity|no capacity/i,
    what: 'EC2 had no capacity for the offerings allowed',
    checks: [],
  },
  {
    pattern: /VcpuLimitExceeded|MaxSpotInstanceCountExceeded|quota|LimitExceeded/i,
    what: 'an EC2 quota is reached',
    checks: [],
  },
  { pattern: /subnet/i, what: "the EC2NodeClass's subnets", checks: ['discovery-tags', 'nodeclass-ready'] },
  {
    pattern: /security ?group|InvalidGroup/i,
    what: "the EC2NodeClass's security groups",
    checks: ['discovery-tags', 'nodeclass-ready'],
  },
  {
    pattern: /NodeClassNotReady|not ready|AMI|image/i,
    what: 'the EC2NodeClass is not Ready (AMIs, subnets, security groups, instance profile)',
    checks: ['nodeclass-ready'],
  },
]

export function launchErrorChecks(message: string): { what: string; checks: string[] } {
  const hit = LAUNCH_ERRORS.find((e) => e.pattern.test(message))
  return hit
    ? { what: hit.what, checks: hit.checks }
    : // An error we cannot place (Karpenter shortens long ones): every check a launch depends on.
      {
        what: 'the launch error above',
        checks: ['controller-policy', 'node-role', 'passrole-node-role', 'nodeclass-ready'],
      }
}

/** AWS's encoded authorization message, if the error carries one (`sts decode-authorization-message`). */
export function encodedAuthorization(message: string): string | undefined {
  return /Encoded authorization failure message: ([\w-]+)/.exec(message)?.[1]
}
