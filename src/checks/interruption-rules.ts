import { patternMatchesEvent } from '../facts/collect-interruption.js'
import type { EventRule, Facts, ReadFailure } from '../facts/types.js'
import { INTERRUPTION_RULES } from '../desired/controller-policy.js'
import { interruptionRules as installRules, RULE_TARGET_ID } from '../desired/interruption.js'
import {
  NEWEST_REFERENCE,
  REFERENCE_VERSION_LIST,
  referenceFor,
  referenceRules,
} from '../desired/reference-policy.js'
import {
  describeFailure,
  need,
  needRelease,
  releaseVersion,
  shellQuote,
  skip,
  type KarpenterVersion,
} from './lib/facts.js'
import { reservedCapacityUsers } from './lib/capacity.js'
import { interruptionQueue, interruptionQueueArn } from './lib/interruption.js'
import { editStack, inStack, ownership, type Ownership } from './lib/owners.js'
import type { Check, Finding, Fix } from './types.js'

type RuleSpec = (typeof INTERRUPTION_RULES)[number]

/**
 * The rules the installed version's own getting-started template declares (reference data): a 1.10
 * install is not asked for the capacity-reservation rule its template lacks (aws/karpenter-provider-aws#9019).
 */
function templateRules(version: KarpenterVersion | null): RuleSpec[] {
  // Before 1.0 (no template of its own): the oldest held, so a 0.x install is asked for no newer rule.
  const reference = !version
    ? NEWEST_REFERENCE
    : (referenceFor(version.raw)?.version ??
      (version.major < 1 ? REFERENCE_VERSION_LIST[0]! : NEWEST_REFERENCE))
  const keys = new Set(referenceRules(reference).map((r) => r.key))
  return INTERRUPTION_RULES.filter((spec) => keys.has(spec.key))
}

/** The rule only interruptible capacity reservations send: needed only where reservations are used. */
const RESERVATION_RULE = 'CapacityReservationInterruptionRule'

const matches = (rule: EventRule, spec: RuleSpec) =>
  patternMatchesEvent(rule.eventPattern, spec.source, spec.detailType)

const isQueueArn = (arn: string) => /^arn:[^:]+:sqs:/.test(arn)
const queueNameOf = (arn: string) => arn.slice(arn.lastIndexOf(':') + 1)

export const interruptionRules: Check = {
  meta: {
    id: 'interruption-rules',
    title: 'EventBridge rules deliver interruption events to the queue',
    category: 'interruption',
    severity: 'error',
    docs: 'Karpenter learns about spot interruptions, rebalance recommendations, instance state changes, scheduled health events and (where a NodePool allows reserved capacity or an EC2NodeClass selects reservations) capacity-reservation interruptions from EventBridge rules that target its interruption queue; each must exist, be ENABLED and target the queue. Rules are found by target and by event pattern, so one that sends to another queue is named and re-targeted rather than duplicated; two enabled rules that deliver the same event to the queue (a getting-started stack and a second install) are a warning: each event arrives twice.',
  },
  run(facts) {
    const release = needRelease(facts)
    const ref = interruptionQueue(facts, release)
    if (!ref) skip('no interruption queue is configured (settings.interruptionQueue): see interruption-queue')
    const queueArn = interruptionQueueArn(facts, ref)
    if (!queueArn) skip(`${ref.source} (${ref.value}) names no queue: see interruption-queue`)
    if (!ref.elsewhere) {
      const queue = need(facts.sqs.queue)
      if (!queue) skip(`interruption queue ${ref.name} does not exist: see interruption-queue`)
    }
    const rules = need(facts.events.rules)
    const version = releaseVersion(release)
    const partial = facts.events.partial ?? []
    const specs = templateRules(version)
    return [
      ...specs.map((spec) =>
        spec.key === RESERVATION_RULE
          ? reservationFinding(facts, spec, ruleFinding(facts, spec, rules, queueArn, partial))
          : ruleFinding(facts, spec, rules, queueArn, partial),
      ),
      ...specs.flatMap((spec) => duplicateFinding(facts, spec, rules, queueArn)),
    ]
  },
}

/**
 * Two or more enabled rules that deliver the same event to the queue: Karpenter receives each event
 * once per rule (e.g. the getting-started stack's `<stack>-SpotInterruptionRule-…` beside a second
 * install's `Karpenter-<cluster>-SpotInterruptionRule`). The copy to delete is the one not made by a
 * stack (deleting a stack's rule by hand is drift); each is deleted with its owner's command.
 */
function duplicateFinding(facts: Facts, spec: RuleSpec, rules: EventRule[], queueArn: string): Finding[] {
  const delivering = rules.filter(
    (r) => matches(r, spec) && r.state === 'ENABLED' && r.targetArns.includes(queueArn),
  )
  if (delivering.length < 2) return []
  const owned = delivering.map((r) => ({ rule: r, owner: ownership(facts, r.name) }))
  const stackOf = (o: Ownership) => (o.kind === 'stack' ? o.owner.stackName : undefined)
  // Keep a stack's rule when there is one (its template declares it), else the first.
  const keep = owned.find((o) => stackOf(o.owner)) ?? owned[0]!
  const copies = owned.filter((o) => o !== keep)
  const region = facts.meta.region
  const who = (o: (typeof owned)[number]) =>
    o.owner.kind === 'stack'
      ? `${o.rule.name} (CloudFormation stack ${o.owner.owner.stackName})`
      : o.owner.kind === 'unknown'
        ? `${o.rule.name} (owner not known: ${describeFailure(o.owner.error)})`
        : o.rule.name
  const commands = copies.flatMap((o) => {
    const stack = stackOf(o.owner)
    // The stack holds more than this rule (the getting-started one: roles, policies, the queue).
    if (stack) return editStack(stack)
    const ids = (o.rule.targets ?? []).filter((t) => t.arn === queueArn && t.id).map((t) => shellQuote(t.id))
    return [
      ...(ids.length > 0
        ? [
            `aws events remove-targets --rule ${shellQuote(o.rule.name)} --ids ${ids.join(' ')} --region ${region}`,
          ]
        : []),
      `aws events delete-rule --name ${shellQuote(o.rule.name)} --region ${region}`,
    ]
  })
  return [
    {
      status: 'warn',
      subject: `${queueArn} / ${spec.detailType}`,
      message: `${delivering.length} enabled rules deliver "${spec.detailType}" to the interruption queue: ${owned.map(who).join(' and ')}; Karpenter receives each event ${delivering.length} times`,
      evidence: {
        event: { source: spec.source, detailType: spec.detailType },
        queueArn,
        rules: owned.map((o) => ({
          name: o.rule.name,
          arn: o.rule.arn,
          ...(stackOf(o.owner) ? { stack: stackOf(o.owner) } : {}),
        })),
        keep: keep.rule.name,
      },
      fix: {
        summary: `keep ${keep.rule.name}${stackOf(keep.owner) ? ` (its stack declares it)` : ''} and delete ${copies.map((o) => o.rule.name).join(', ')} with its owner's command: ${copies.map((o) => (stackOf(o.owner) ? `remove it from the template of stack ${stackOf(o.owner)} and update the stack` : 'delete-rule (below), or remove it from the Terraform configuration that made it')).join('; ')}`,
        commands,
      },
    },
  ]
}

/**
 * The capacity-reservation rule matters only to a cluster that may launch into reservations (a NodePool
 * allowing `reserved`, an EC2NodeClass with capacityReservationSelectorTerms): elsewhere no such event
 * concerns it, and terraform-aws-eks's modules/karpenter (four rules) is right not to make it.
 */
function reservationFinding(facts: Facts, spec: RuleSpec, finding: Finding): Finding {
  if (finding.status === 'pass') return finding
  const pools = facts.kube.nodePools
  const classes = facts.kube.nodeClasses
  if (!pools.ok || !classes.ok) {
    const failure = pools.ok ? (classes as { error: ReadFailure }).error : pools.error
    return {
      status: 'unknown',
      subject: finding.subject,
      message: `whether "${spec.detailType}" concerns this cluster is not known: ${describeFailure(failure)}`,
    }
  }
  const users = reservedCapacityUsers(pools.value, classes.value)
  if (users.length > 0)
    return { ...finding, message: `${finding.message} (capacity reservations used by ${users.join(', ')})` }
  return {
    status: 'pass',
    subject: finding.subject,
    message: `no rule for "${spec.detailType}" is needed: no NodePool allows karpenter.sh/capacity-type reserved and no EC2NodeClass selects capacity reservations`,
    code: 'rule-not-needed',
  }
}

function ruleFinding(
  facts: Facts,
  spec: RuleSpec,
  rules: EventRule[],
  queueArn: string,
  partial: ReadFailure[],
): Finding {
  const all = rules.filter((r) => matches(r, spec))
  const good = all.find((r) => r.state === 'ENABLED' && r.targetArns.includes(queueArn))
  if (good)
    return {
      status: 'pass',
      subject: good.arn,
      message: `rule ${good.name} sends "${spec.detailType}" to the queue`,
    }
  // Another cluster's rule is its interruption handling, never this cluster's to re-target: without a
  // rule of its own this cluster needs one created.
  const candidates = all.filter(
    (r) => r.targetArns.includes(queueArn) || !otherCluster(r.name, facts.meta.clusterName),
  )
  if (candidates.length === 0) return missingRule(facts, spec, rules, queueArn, partial)
  return repairRule(facts, spec, pick(candidates, queueArn, facts.meta.clusterName), queueArn)
}

const RULE_KEYS = INTERRUPTION_RULES.map((r) => r.key.replace(/Rule$/, ''))

/**
 * The other cluster a rule is named for, as karpctl (`Karpenter-<cluster>-<Event>`) and the
 * getting-started stack (`Karpenter-<cluster>-<Event>Rule-<suffix>`) name them; undefined when the name
 * says this cluster or none.
 */
export function otherCluster(name: string, cluster: string): string | undefined {
  for (const key of RULE_KEYS) {
    const m = new RegExp(`^Karpenter-(.+)-${key}(Rule(-[A-Za-z0-9]+)?)?$`).exec(name)
    if (m) return m[1] === cluster ? undefined : m[1]
  }
  return undefined
}

/**
 * The rule to repair when several match: one that already targets the queue (only disabled), then
 * an enabled one, then one named for this cluster; the others are left alone.
 */
function pick(candidates: EventRule[], queueArn: string, cluster: string): EventRule {
  const score = (r: EventRule) =>
    (r.targetArns.includes(queueArn) ? 4 : 0) +
    (r.state === 'ENABLED' ? 2 : 0) +
    (r.name.includes(cluster) ? 1 : 0)
  return [...candidates].sort((a, b) => score(b) - score(a))[0] as EventRule
}

/** An existing rule for the event that is disabled, targets another queue, or both: fix it in place. */
function repairRule(facts: Facts, spec: RuleSpec, rule: EventRule, queueArn: string): Finding {
  const region = facts.meta.region
  const targets = rule.targets ?? rule.targetArns.map((arn) => ({ id: '', arn }))
  const targetsQueue = rule.targetArns.includes(queueArn)
  const disabled = rule.state !== 'ENABLED'
  // Targets that deliver to another SQS queue are stale: that queue is not the one Karpenter reads.
  const stale = targetsQueue ? [] : targets.filter((t) => isQueueArn(t.arn) && t.arn !== queueArn)
  const queue = `${queueNameOf(queueArn)} (${queueArn})`

  const problems: string[] = []
  if (disabled) problems.push(`is ${rule.state}`)
  if (!targetsQueue) {
    problems.push(
      stale.length > 0
        ? `sends to ${stale.map((t) => `queue ${queueNameOf(t.arn)} (${t.arn})`).join(', ')}, not to the interruption queue ${queue}`
        : `does not target the interruption queue ${queue}${targets.length > 0 ? ` (targets: ${targets.map((t) => t.arn).join(', ')})` : ' (it has no target)'}`,
    )
  }
  const commands: string[] = []
  const steps: string[] = []
  // The repair (doctor --fix) needs the id the queue target has or gets, even when it only enables
  // the rule: it is the id PutTargets would use if the target vanished before the apply.
  let targetId = targets.find((t) => t.arn === queueArn && t.id)?.id ?? RULE_TARGET_ID
  if (!targetsQueue) {
    // PutTargets replaces a target with the same id: reuse the stale queue's id when it is the
    // reference one; never take the id of a target that is not a stale queue.
    const kept = new Set(targets.filter((t) => !stale.includes(t)).map((t) => t.id))
    const id = kept.has(RULE_TARGET_ID)
      ? `${RULE_TARGET_ID}-${facts.meta.clusterName}`.slice(0, 64)
      : RULE_TARGET_ID
    targetId = id
    commands.push(putTargets(rule.name, id, queueArn, region))
    const removable = stale.filter((t) => t.id && t.id !== id)
    if (removable.length > 0)
      commands.push(
        `aws events remove-targets --rule ${shellQuote(rule.name)} --ids ${removable.map((t) => shellQuote(t.id)).join(' ')} --region ${region}`,
      )
    const unknownIds = stale.filter((t) => !t.id)
    steps.push(
      stale.length > 0
        ? `point ${rule.name} at ${queueNameOf(queueArn)} instead of ${stale.map((t) => queueNameOf(t.arn)).join(', ')}${unknownIds.length > 0 ? ` (then remove the old target: \`aws events list-targets-by-rule --rule ${rule.name}\` shows its id)` : ''}`
        : `add the queue as a target of ${rule.name}`,
    )
  }
  if (disabled) {
    commands.push(`aws events enable-rule --name ${shellQuote(rule.name)} --region ${region}`)
    steps.push(`enable ${rule.name}`)
  }
  // A stack's rule (the getting-started ones) is repaired in the stack.
  const fix: Fix = inStack(
    { summary: `${steps.join(', then ')} (the rule is kept, not duplicated)`, commands },
    ownership(facts, rule.name),
    `rule ${rule.name}`,
  )
  return {
    status: 'fail',
    subject: rule.arn,
    message: `rule ${rule.name} for "${spec.detailType}" ${problems.join(' and ')}: those events never reach the queue`,
    code: 'rule-repair',
    evidence: {
      rule: rule.name,
      state: rule.state,
      targets: rule.targetArns,
      ...(stale.length > 0 ? { otherQueues: stale.map((t) => t.arn) } : {}),
      queueArn,
      targetId,
    },
    fix,
  }
}

/** No rule for the event anywhere: create the one `karpctl install` would (same name, pattern and target). */
function missingRule(
  facts: Facts,
  spec: RuleSpec,
  rules: EventRule[],
  queueArn: string,
  partial: ReadFailure[],
): Finding {
  const region = facts.meta.region
  const reference = installRules(facts.meta.clusterName).find((r) => r.key === spec.key)
  const ruleName = reference?.name ?? `Karpenter-${facts.meta.clusterName}-${spec.key}`.slice(0, 64)
  const pattern = JSON.stringify({ source: [spec.source], 'detail-type': [spec.detailType] })
  const unsearched =
    partial.length > 0
      ? ` (rules that target other queues could not all be searched: ${partial.map(describeFailure).join('; ')})`
      : ''
  return {
    status: 'fail',
    subject: `${spec.source} / ${spec.detailType}`,
    message: `no EventBridge rule matches "${spec.detailType}" (${spec.source}) and sends it to the interruption queue${unsearched}`,
    code: 'rule-missing',
    evidence: {
      expected: { source: spec.source, detailType: spec.detailType },
      queueArn,
      rulesFound: rules.map((r) => r.name),
      ...(partial.length > 0 ? { unsearched: partial.map((p) => p.read) } : {}),
    },
    fix: {
      summary: `create the ${spec.key} rule and target the queue`,
      commands: [
        `aws events put-rule --name ${ruleName} --event-pattern ${shellQuote(pattern)} --region ${region}`,
        putTargets(ruleName, RULE_TARGET_ID, queueArn, region),
      ],
    },
  }
}

const putTargets = (rule: string, id: string, queueArn: string, region: string) =>
  `aws events put-targets --rule ${shellQuote(rule)} --targets Id=${id},Arn=${queueArn} --region ${region}`
