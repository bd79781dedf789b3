// Repairs of interruption handling: the queue, its policy, its setting, and the five rules.
import type { Finding } from '../checks/types.js'
import type { Facts } from '../facts/types.js'
import { eventRule } from '../plan/resources/event-rule.js'
import { queuePolicyStatements } from '../plan/resources/queue-policy.js'
import { ruleRepair } from '../plan/resources/rule-repair.js'
import { sqsQueue } from '../plan/resources/sqs-queue.js'
import type { Resource } from '../plan/types.js'
import { parseHelmPath } from '../lint/values.js'
import { QUEUE_ATTRIBUTES, queuePolicy } from '../desired/interruption.js'
import { ownershipTags } from '../desired/install.js'
import { type ValueEdit } from './helm-values.js'
import { interruptionRules, RULE_TARGET_ID } from '../desired/interruption.js'
import { patternMatchesEvent } from '../facts/collect-interruption.js'
import { Builder, arn, group, install, naming, NO_RELEASE_WHY, release } from './builder.js'
import { fixBlocked, ownership } from '../checks/lib/owners.js'

/** Rules for no rule at all, created as install names them (after the queue, when this plan makes it). */
const missingRules: Builder = (facts, failing, check) => {
  const q = facts.sqs.queue.ok ? facts.sqs.queue.value : null
  const missing = failing.filter((f) => f.code === 'rule-missing')
  if (!q) return { resources: [], manual: failing }
  const subject = (r: RuleSpecOf) => `${r.eventPattern.source[0]} / ${r.eventPattern['detail-type'][0]}`
  const wanted = interruptionRules(facts.meta.clusterName).filter((r) =>
    missing.some((f) => f.subject === subject(r)),
  )
  return {
    resources: wanted.map((r) => installRule(facts, r, q.arn, check, [])),
    manual: failing.filter((f) => !missing.includes(f) || !wanted.some((r) => f.subject === subject(r))),
  }
}
type RuleSpecOf = ReturnType<typeof interruptionRules>[number]
/** One rule as install makes it (name, pattern, target, karpctl's tags). */
function installRule(facts: Facts, r: RuleSpecOf, queueArn: string, check: string, dependsOn: string[]) {
  const tags = ownershipTags(facts.meta.clusterName)
  return {
    ...eventRule({
      key: r.key,
      name: r.name,
      arn: arn(facts, 'events', `rule/${r.name}`),
      eventPattern: r.eventPattern,
      queueArn,
      targetId: RULE_TARGET_ID,
      tags,
      ownership: tags,
      adopt: false,
    }),
    dependsOn,
    group: group(check),
  }
}
/** A queue this plan creates gets the rules that do not already send to it (interruption-rules skips
 * while the queue is missing, so they would otherwise take a second --fix). */
function rulesForNewQueue(facts: Facts, queueArn: string, check: string): Resource[] {
  const existing = facts.events.rules.ok ? facts.events.rules.value : []
  return interruptionRules(facts.meta.clusterName)
    .filter(
      (r) =>
        !existing.some(
          (x) =>
            x.targetArns.includes(queueArn) &&
            patternMatchesEvent(x.eventPattern, r.eventPattern.source[0]!, r.eventPattern['detail-type'][0]!),
        ),
    )
    .map((r) => installRule(facts, r, queueArn, check, ['sqs-queue.interruption']))
}
/**
 * A missing queue is created as install creates it (karpctl's tags; the name the setting gives); a
 * queue whose policy does not let EventBridge send gets the reference statements beside its own; the
 * queue's ARN or URL in settings.interruptionQueue becomes its name, in the Helm repair.
 */
export const queueFix: Builder = (facts, failing, check) => {
  const resources: Resource[] = []
  const values: ValueEdit[] = []
  const manual: Finding[] = []
  const why = new Map<Finding, string>()
  const r = release(facts)
  for (const f of failing) {
    const e = (f.evidence ?? {}) as {
      interruptionQueue?: string
      missing?: string[]
      source?: string
      queueName?: string | null
      elsewhere?: boolean
    }
    if (e.interruptionQueue && f.code === 'queue-missing') {
      const tags = ownershipTags(facts.meta.clusterName)
      const queueArn = arn(facts, 'sqs', e.interruptionQueue)
      resources.push({
        ...sqsQueue({
          name: e.interruptionQueue,
          arn: queueArn,
          attributes: { ...QUEUE_ATTRIBUTES },
          policy: queuePolicy(queueArn),
          tags,
          ownership: tags,
          adopt: false,
        }),
        group: group(check),
      })
      resources.push(...rulesForNewQueue(facts, queueArn, check))
    } else if (e.missing && f.subject?.startsWith('arn:')) {
      const q = facts.sqs.queue.ok ? facts.sqs.queue.value : null
      // The policy is the queue's attribute: a stack's queue (the getting-started one) gets it in the stack.
      const owner = q ? ownership(facts, q.url) : null
      const held = q && owner ? fixBlocked(owner, `queue ${q.name}`) : null
      if (q && owner && held) {
        const m = naming(f, owner)
        why.set(m, held)
        manual.push(m)
      } else if (q)
        resources.push(queuePolicyStatements({ queueName: q.name, queueArn: q.arn, group: group(check) }))
      else manual.push(f)
    } else if (
      r &&
      e.queueName &&
      e.source &&
      e.source !== 'INTERRUPTION_QUEUE' &&
      !e.elsewhere &&
      (f.code === 'queue-reference' || f.code === 'queue-misnamed')
    ) {
      values.push({ path: parseHelmPath(e.source), value: e.queueName, finding: f })
    } else {
      if (!r && install(facts) && (f.code === 'queue-reference' || f.code === 'queue-misnamed'))
        why.set(f, NO_RELEASE_WHY)
      manual.push(f)
    }
  }
  return { resources, manual, values, why }
}
/** What interruption-rules puts on a `rule-repair` finding: all a repair in place needs. */
type RuleRepairEvidence = {
  rule: string
  queueArn: string
  /** The queue target's id, or the one PutTargets gives it. */
  targetId: string
  otherQueues?: string[]
}
/** Missing rules are created as install names them; an existing rule is repaired in place. */
export const rules: Builder = (facts, failing, check, opts) => {
  const created = missingRules(facts, failing, check, opts)
  const why = new Map<Finding, string>()
  const held: Finding[] = []
  // A stack's rule (the getting-started ones) is re-targeted or enabled in the stack, not here.
  const repairs = created.manual.filter((f) => {
    if (f.code !== 'rule-repair') return false
    const e = f.evidence as RuleRepairEvidence
    const owner = ownership(facts, e.rule)
    const reason = fixBlocked(owner, `rule ${e.rule}`)
    if (!reason) return true
    const m = naming(f, owner)
    why.set(m, reason)
    held.push(m)
    return false
  })
  return {
    why,
    resources: [
      ...created.resources,
      ...repairs.map((f) => {
        const e = f.evidence as RuleRepairEvidence
        return ruleRepair({
          name: e.rule,
          arn: f.subject as string,
          queueArn: e.queueArn,
          targetId: e.targetId,
          staleQueueArns: e.otherQueues ?? [],
          group: group(check),
        })
      }),
    ],
    manual: [
      ...created.manual.filter((f) => !repairs.includes(f) && !held.some((h) => h.subject === f.subject)),
      ...held,
    ],
  }
}
