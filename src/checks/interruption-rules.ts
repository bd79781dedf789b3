import type { EventRule, Facts } from '../facts/types.js'
import { INTERRUPTION_RULES } from '../spec/controller-policy.js'
import { need, needRelease, releaseVersion, shellQuote, skip, type KarpenterVersion } from './lib/facts.js'
import { interruptionQueueSetting } from './lib/interruption.js'
import { asList } from './lib/policy.js'
import type { Check, Finding } from './types.js'

type RuleSpec = (typeof INTERRUPTION_RULES)[number]

/**
 * Rules a Karpenter version does not consume yet: interruptible capacity reservations (the fifth
 * rule) arrived with 1.12 (aws/karpenter-provider-aws#9019); the v1.0-v1.5 templates have four rules.
 */
const RULE_SINCE: Partial<Record<RuleSpec['key'], [number, number]>> = {
  CapacityReservationInterruptionRule: [1, 12],
}

function needed(spec: RuleSpec, version: KarpenterVersion | null): boolean {
  const since = RULE_SINCE[spec.key]
  if (!since || !version) return true
  return version.major > since[0] || (version.major === since[0] && version.minor >= since[1])
}

/** A pattern field lists the value, or is absent (then the rule matches every value of it). */
function patternAllows(pattern: Record<string, unknown> | null, field: string, value: string): boolean {
  if (!pattern) return false
  if (!(field in pattern)) return field !== 'source'
  return asList(pattern[field]).includes(value)
}

const matches = (rule: EventRule, spec: RuleSpec) =>
  patternAllows(rule.eventPattern, 'source', spec.source) &&
  patternAllows(rule.eventPattern, 'detail-type', spec.detailType)

export const interruptionRules: Check = {
  meta: {
    id: 'interruption-rules',
    title: 'EventBridge rules deliver interruption events to the queue',
    category: 'interruption',
    severity: 'error',
    docs: 'Karpenter learns about spot interruptions, rebalance recommendations, instance state changes, scheduled health events and capacity-reservation interruptions from EventBridge rules that target its interruption queue; each must exist, be ENABLED and target the queue.',
  },
  run(facts) {
    const release = needRelease(facts)
    const name = interruptionQueueSetting(facts, release)
    if (!name)
      skip('no interruption queue is configured (settings.interruptionQueue): see interruption-queue')
    const queue = need(facts.sqs.queue)
    if (!queue) skip(`interruption queue ${name} does not exist: see interruption-queue`)
    const rules = need(facts.events.rules)
    const version = releaseVersion(release)
    return INTERRUPTION_RULES.filter((spec) => needed(spec, version)).map((spec) =>
      ruleFinding(facts, spec, rules, queue.arn),
    )
  },
}

function ruleFinding(facts: Facts, spec: RuleSpec, rules: EventRule[], queueArn: string): Finding {
  const subject = `${spec.source} / ${spec.detailType}`
  const candidates = rules.filter((r) => matches(r, spec))
  const good = candidates.find((r) => r.state === 'ENABLED' && r.targetArns.includes(queueArn))
  if (good)
    return {
      status: 'pass',
      subject: good.arn,
      message: `rule ${good.name} sends "${spec.detailType}" to the queue`,
    }

  const region = facts.meta.region
  const disabled = candidates.find((r) => r.state !== 'ENABLED' && r.targetArns.includes(queueArn))
  if (disabled) {
    return {
      status: 'fail',
      subject: disabled.arn,
      message: `rule ${disabled.name} for "${spec.detailType}" is ${disabled.state}: those events never reach the queue`,
      evidence: { rule: disabled.name, state: disabled.state },
      fix: {
        summary: `enable ${disabled.name}`,
        commands: [`aws events enable-rule --name ${disabled.name} --region ${region}`],
      },
    }
  }
  const untargeted = candidates.find((r) => r.state === 'ENABLED')
  if (untargeted) {
    return {
      status: 'fail',
      subject: untargeted.arn,
      message: `rule ${untargeted.name} for "${spec.detailType}" does not target the interruption queue ${queueArn}`,
      evidence: { rule: untargeted.name, targets: untargeted.targetArns, queueArn },
      fix: {
        summary: `add the queue as a target of ${untargeted.name}`,
        commands: [putTargets(untargeted.name, queueArn, region)],
      },
    }
  }
  // EventBridge rule names are limited to 64 characters.
  const ruleName = `Karpenter-${facts.meta.clusterName}-${spec.key}`.slice(0, 64)
  const pattern = JSON.stringify({ source: [spec.source], 'detail-type': [spec.detailType] })
  return {
    status: 'fail',
    subject,
    message: `no enabled EventBridge rule sends "${spec.detailType}" (${spec.source}) to the interruption queue`,
    evidence: {
      expected: { source: spec.source, detailType: spec.detailType },
      queueArn,
      rulesTargetingQueue: rules.map((r) => r.name),
    },
    fix: {
      summary: `create the ${spec.key} rule and target the queue`,
      commands: [
        `aws events put-rule --name ${ruleName} --event-pattern ${shellQuote(pattern)} --region ${region}`,
        putTargets(ruleName, queueArn, region),
      ],
    },
  }
}

const putTargets = (rule: string, queueArn: string, region: string) =>
  `aws events put-targets --rule ${rule} --targets Id=KarpenterInterruptionQueueTarget,Arn=${queueArn} --region ${region}`
