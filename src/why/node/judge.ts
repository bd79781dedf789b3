// `why node/NAME`: for each node asked about, what Karpenter will do with it and why. Methods in the
// disruption controller's order — interruption and expiration (their own controllers, outside
// budgets), then emptiness, drift, consolidation (sigs.k8s.io/karpenter
// pkg/controllers/disruption/controller.go NewMethods) — then what blocks the first that applies.
// A node that is leaving, gone, or never joined gets why instead. Pure: facts in, report out.
import { catalog } from '../../checks/catalog.js'
import { stamp } from '../ignored.js'
import { budgetBlocker, countBudgets, type BudgetCount } from './budgets.js'
import { judgeBlockers } from './blockers.js'
import { judgeConsolidation, judgeEmptiness } from './consolidation.js'
import { judgeDrift } from './drift.js'
import { judgeExpiration } from './expiration.js'
import { judgeInterruption } from './interruption.js'
import { apiRouteCauses } from './api-route.js'
import { bootCause, doctorCauses, JOIN_CHECKS } from './join.js'
import { USER_DATA_ERROR, userDataCauses, userDataShape } from './user-data.js'
import { ZONE_LABEL } from '../pod.js'
import { encodedAuthorization, launchErrorChecks, registrationLine, stageOf } from './lifecycle.js'
import { keepNode } from './fixes.js'
import { NODE_LOG_LINES, type NodeLogLine } from './log-lines.js'
import type { NodeFacts } from './types.js'
import type { Blocker, NodeOutcome, NodeReport, NodeVerdict, Step } from './verdict.js'
import {
  clusterView,
  deleting,
  eventsOfGone,
  nodeViews,
  reschedulable,
  type ClusterView,
  type NodeView,
} from './view.js'
import { whyItWent } from './went.js'
import { matchesLabels } from './label-selector.js'

export const NODE_NOT_JUDGED = [
  'replacement consolidation of spot nodes (Karpenter reads spot prices live); on-demand prices are Karpenter’s static list, not the Pricing API’s',
  'multi-node consolidation (several nodes replaced by one)',
  "for a node that never joined, the VPC's DNS attributes, its VPC endpoints and a NAT gateway's address against publicAccessCidrs (said, not read)",
  'subnet and security-group drift before Karpenter marks it (the instance is not read): the Drifted condition is',
]

/** The log lines about any of `names` (a Node and its NodeClaim share many), oldest first. */
function logOf(facts: NodeFacts, names: (string | undefined)[]): NodeLogLine[] | undefined {
  const log = facts.controllerLog
  if (!log?.ok) return undefined
  const seen = new Set<NodeLogLine>()
  const lines = names
    .flatMap((n) => (n ? (log.value[n] ?? []) : []))
    .filter((l) => !seen.has(l) && seen.add(l))
  return lines.sort((a, b) => a.time.localeCompare(b.time)).slice(-NODE_LOG_LINES)
}

/** The events shown beside a verdict: Karpenter's own, newest first, at most five; its log lines after. */
function karpenterEvents(events: NodeView['events'], log?: NodeLogLine[]): NodeVerdict['karpenter'] {
  return {
    ...(log ? { log } : {}),
    events: events.slice(0, 5).map((e) => ({
      kind: e.involvedObject.kind ?? '',
      reason: e.reason ?? '',
      message: e.message ?? '',
      count: e.count ?? 1,
      lastSeen: stamp(e),
    })),
  }
}

/** Does this blocker hold back this step? Budgets only their reason; pod blockers not drift with a grace period. */
function holds(b: Blocker, s: Step): boolean {
  if (s.method === 'interruption' || s.method === 'expiration') return false
  if (b.reasons && (!s.reason || !b.reasons.includes(s.reason))) return false
  if (b.passedByGracePeriod && s.method === 'drift') return false
  return true
}

function base(
  facts: NodeFacts,
  v: NodeView,
): Omit<NodeVerdict, 'outcome' | 'headline' | 'steps' | 'blockers'> {
  return {
    name: v.name,
    ...(v.node ? { node: v.node.metadata.name } : {}),
    ...(v.nodeClaim ? { nodeClaim: v.nodeClaim.metadata.name } : {}),
    ...(v.nodePool ? { nodePool: v.nodePool.metadata.name } : {}),
    pods: reschedulable(v.pods).length,
    karpenter: karpenterEvents(v.events, logOf(facts, [v.node?.metadata.name, v.nodeClaim?.metadata.name])),
  }
}

/** The userData's shape: from the text when it is at hand (live, or a `--with` manifest), else as saved. */
const shapeOf = (facts: NodeFacts, v: NodeView) =>
  v.nodeClass?.spec.userData !== undefined
    ? userDataShape(v.nodeClass.spec.userData)
    : facts.userData?.[v.nodeClass?.metadata.name ?? '']

function judgeJoin(facts: NodeFacts, v: NodeView, now: number): NodeVerdict | undefined {
  const nc = v.nodeClaim
  if (!nc || v.node) return undefined
  const s = stageOf(nc, now)
  if (s.stage === 'launch-failed') {
    const mapped = launchErrorChecks(s.message)
    const encoded = encodedAuthorization(s.message)
    return {
      ...base(facts, v),
      outcome: 'launch-failed',
      headline: `NodeClaim ${nc.metadata.name} failed to launch (Launched=False, ${s.reason}): ${s.message}${s.deadline ? `; the 5m launch timeout deletes it at ${s.deadline}` : ''}`,
      steps: [],
      blockers: [],
      join: [
        { source: 'launch', status: 'fail', message: `the cause is ${mapped.what}` },
        ...(encoded
          ? [
              {
                source: 'launch',
                status: 'info' as const,
                message: 'AWS encoded the denial: decode it to see the action, resource and policy',
                fix: {
                  summary: 'decode the authorization message (needs sts:DecodeAuthorizationMessage)',
                  commands: [
                    `aws sts decode-authorization-message --encoded-message ${encoded} --query DecodedMessage --output text`,
                  ],
                },
              },
            ]
          : []),
        ...(mapped.checks.length
          ? doctorCauses(catalog, facts.doctor, mapped.checks, facts.doctorUnread)
          : []),
        ...(USER_DATA_ERROR.test(s.message) ? userDataCauses(v.nodeClass, shapeOf(facts, v)) : []),
      ],
    }
  }
  if (s.stage === 'not-registered')
    return {
      ...base(facts, v),
      outcome: 'not-joined',
      headline: registrationLine(s, nc.metadata.name),
      steps: [],
      blockers: [],
      join: [
        ...doctorCauses(catalog, facts.doctor, JOIN_CHECKS, facts.doctorUnread),
        // Without doctor's facts the route is not read either: the doctor line above says why, once.
        ...(facts.doctor
          ? apiRouteCauses({
              cluster: facts.doctor?.eks.cluster,
              ...(v.nodeClass ? { nodeClass: v.nodeClass } : {}),
              subnets: facts.doctor?.ec2.subnetsByNodeClass[v.nodeClass?.metadata.name ?? ''],
              zone: nc.metadata.labels?.[ZONE_LABEL],
              tables: facts.routeTables,
            })
          : []),
        ...userDataCauses(v.nodeClass, shapeOf(facts, v)),
        bootCause(facts.bootLogs?.[nc.metadata.name]),
      ],
    }
  if (s.stage === 'launching')
    return {
      ...base(facts, v),
      outcome: 'could-not-tell',
      headline: `NodeClaim ${nc.metadata.name} is launching (no Launched condition yet)`,
      steps: [],
      blockers: [],
    }
  return undefined
}

function judgeOne(facts: NodeFacts, c: ClusterView, v: NodeView, budgets: BudgetCount[]): NodeVerdict {
  const now = c.now
  if (deleting(v)) {
    const why = whyItWent(v.events, v.nodeClaim, v.node)
    return {
      ...base(facts, v),
      outcome: 'leaving',
      headline: `being removed: ${why ?? 'deleted, and no event says by what (events are kept about an hour)'}`,
      steps: [],
      blockers: [],
    }
  }
  const join = judgeJoin(facts, v, now)
  if (join) return join
  const steps: Step[] = [
    judgeInterruption(v),
    judgeExpiration(v, now),
    judgeEmptiness(c, v),
    judgeDrift(v),
    judgeConsolidation(c, v),
  ]
  const blockers = judgeBlockers(c, v)
  const pool = v.nodePool?.metadata.name
  for (const s of steps) {
    if (s.applies !== 'yes' || !s.reason || !pool) continue
    const b = budgetBlocker(budgets.find((x) => x.nodePool === pool && x.reason === s.reason))
    if (b && !blockers.some((x) => x.message === b.message)) blockers.push(b)
  }
  const first = steps.find((s) => s.applies === 'yes')
  const held = first ? blockers.filter((b) => holds(b, first)) : []
  let outcome: NodeOutcome
  let headline: string
  if (!first) {
    outcome = 'kept'
    const next = steps.find((s) => s.applies === 'later')
    headline = `kept: no disruption method applies now${next ? `; next: ${next.method} ${next.at ? `at ${next.at}` : ''}`.trimEnd() : ''}`
  } else if (held.length) {
    outcome = 'blocked'
    headline = `${first.method} applies but is blocked by ${held.length === 1 ? 'one thing' : `${held.length} things`}: ${held[0]?.message}`
  } else {
    outcome = 'going'
    headline = `going: ${first.message}`
    if (first.method !== 'interruption' && first.method !== 'expiration' && v.node && !first.fix)
      first.fix = keepNode(v.node.metadata.name)
  }
  return { ...base(facts, v), outcome, headline, steps, blockers }
}

function goneVerdict(facts: NodeFacts, c: ClusterView, name: string, unread: string[]): NodeVerdict {
  const events = eventsOfGone(c, name)
  const why = unread.length ? undefined : whyItWent(events)
  return {
    name,
    outcome: why ? 'gone' : 'could-not-tell',
    // A failed read of Nodes or NodeClaims is not their absence: say which read, never "gone".
    headline: unread.length
      ? `could not tell: ${unread.join('; ')}`
      : why
        ? `gone: ${why}`
        : events.length
          ? `gone, and Karpenter's remaining events about it do not say why (newest: ${events[0]?.involvedObject.kind} ${events[0]?.reason} "${events[0]?.message ?? ''}"); an expiry or a registration timeout is only in the controller's log`
          : `no Node or NodeClaim ${name} exists and no event about it remains (the API server keeps events about an hour)`,
    steps: [],
    blockers: [],
    pods: 0,
    karpenter: karpenterEvents(events, logOf(facts, [name])),
  }
}

const EMPTY_SUMMARY = (): NodeReport['summary'] => ({
  nodes: 0,
  going: 0,
  blocked: 0,
  kept: 0,
  leaving: 0,
  gone: 0,
  'not-joined': 0,
  'launch-failed': 0,
  'could-not-tell': 0,
})

const ORDER: NodeOutcome[] = [
  'launch-failed',
  'not-joined',
  'going',
  'blocked',
  'leaving',
  'could-not-tell',
  'kept',
  'gone',
]

export function judgeNodes(facts: NodeFacts, source: 'live' | 'snapshot', now = new Date()): NodeReport {
  const c = clusterView(facts, now.getTime())
  const views = nodeViews(c)
  const budgets = countBudgets(c.nodePools, views, c.now)
  const sel = facts.meta.selector
  let verdicts: NodeVerdict[]
  if (sel.kind === 'nodes')
    verdicts = views
      .filter((v) =>
        matchesLabels(sel.labelSelector, v.node?.metadata.labels ?? v.nodeClaim?.metadata.labels ?? {}),
      )
      .map((v) => judgeOne(facts, c, v, budgets))
  else {
    const v = views.find((x) =>
      sel.kind === 'node' ? x.node?.metadata.name === sel.name : x.nodeClaim?.metadata.name === sel.name,
    )
    const unread = [facts.nodes, facts.nodeClaims].flatMap((r) =>
      r.ok ? [] : [`${r.error.read}: ${r.error.message}`],
    )
    verdicts = [v ? judgeOne(facts, c, v, budgets) : goneVerdict(facts, c, sel.name, unread)]
  }
  verdicts.sort((a, b) => ORDER.indexOf(a.outcome) - ORDER.indexOf(b.outcome) || a.name.localeCompare(b.name))
  const summary = EMPTY_SUMMARY()
  for (const v of verdicts) summary[v.outcome]++
  summary.nodes = verdicts.length
  const pools = new Set(verdicts.map((v) => v.nodePool).filter(Boolean))
  const reads = [
    facts.nodes,
    facts.nodeClaims,
    facts.pods,
    facts.pdbs,
    facts.events,
    facts.kube.nodePools,
    facts.kube.nodeClasses,
  ]
  return {
    schema: 'karpctl.why-node/v1',
    cluster: facts.meta.clusterName,
    region: facts.meta.region,
    generatedAt: now.toISOString(),
    source,
    ...(facts.meta.with ? { with: facts.meta.with } : {}),
    nodes: verdicts,
    budgets: budgets
      .filter((b) => pools.has(b.nodePool))
      .map(({ nodePool, reason, allowed, nodes, disrupting }) => ({
        nodePool,
        reason,
        allowed,
        nodes,
        disrupting,
      })),
    ...(facts.controllerLog && !facts.controllerLog.ok
      ? { controllerLogUnread: facts.controllerLog.error.message }
      : {}),
    unreadable: reads.flatMap((r) => (r.ok ? [] : [`${r.error.read}: ${r.error.message}`])),
    notJudged: NODE_NOT_JUDGED,
    summary,
  }
}
