// SQS + EventBridge facts: the interruption queue the install names, the queue itself, and the
// EventBridge rules that target it or that match an interruption event.
import type * as eb from '@aws-sdk/client-eventbridge'
import type * as sqs from '@aws-sdk/client-sqs'
import type { Aws } from '../context/aws.js'
import { isNotFound } from '../context/aws.js'
import { parsePolicyDocument } from './policy-document.js'
import { INTERRUPTION_RULES } from '../desired/controller-policy.js'
import { read } from './read.js'
import type { Deployment, EventRule, HelmRelease, QueueFacts, Read, ReadFailure } from './types.js'

// ---------- the queue the install names ----------

export type QueueSettingSource =
  'settings.interruptionQueue' | 'settings.aws.interruptionQueueName' | 'INTERRUPTION_QUEUE'

/**
 * The interruption queue as the install configures it, derived once for the collector and every check.
 * Karpenter passes the setting to sqs:GetQueueUrl as a queue *name*; a URL or an ARN there is a
 * misconfiguration, but it still says which queue was meant, so the checks that need the queue
 * (controller-policy, interruption-rules) judge that queue instead of an ARN glued together from it.
 */
export interface InterruptionQueueRef {
  /** The setting, verbatim (trimmed). */
  value: string
  source: QueueSettingSource
  /** `name` when the setting is a queue name; otherwise what it is instead. */
  form: 'name' | 'url' | 'arn' | 'invalid'
  /** The queue name meant: the setting itself, or the last part of a URL or ARN; undefined when none can be told. */
  name?: string
  /** The queue's ARN: built from the name in the cluster's account and region, or from the URL or ARN given. */
  arn?: string
  /** The URL or ARN points at another account or region than the cluster's: that queue is not read. */
  elsewhere?: boolean
}

export interface QueueScope {
  partition: string
  region: string
  accountId?: string
}

/** SQS queue names: letters, digits, hyphens and underscores, up to 80 characters (`.fifo` included). */
const QUEUE_NAME = /^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/
const REGION_IN_HOST = /(?:^|\.)([a-z]{2}(?:-[a-z]+)+-\d+)\./

const nonEmpty = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined

/** The interruption queue setting: chart values, the v0.x `settings.aws` key, else the controller's env. */
export function interruptionQueueOf(
  release: HelmRelease | null,
  deployment: Deployment | null,
  scope: QueueScope,
): InterruptionQueueRef | null {
  if (!release) return null
  const settings = release.computedValues.settings as Record<string, unknown> | undefined
  const candidates: [QueueSettingSource, unknown][] = [
    ['settings.interruptionQueue', settings?.interruptionQueue],
    [
      'settings.aws.interruptionQueueName',
      (settings?.aws as Record<string, unknown> | undefined)?.interruptionQueueName,
    ],
    ['INTERRUPTION_QUEUE', deployment?.env.INTERRUPTION_QUEUE],
  ]
  for (const [source, raw] of candidates) {
    const value = nonEmpty(raw)
    if (value) return parseQueueSetting(value, source, scope)
  }
  return null
}

export function parseQueueSetting(
  value: string,
  source: QueueSettingSource,
  scope: QueueScope,
): InterruptionQueueRef {
  const account = scope.accountId ?? '<account-id>'
  const arnOf = (name: string, region = scope.region, acct = account, partition = scope.partition) =>
    `arn:${partition}:sqs:${region}:${acct}:${name}`
  const elsewhere = (region?: string, acct?: string) =>
    Boolean((region && region !== scope.region) || (acct && scope.accountId && acct !== scope.accountId))
  if (QUEUE_NAME.test(value)) return { value, source, form: 'name', name: value, arn: arnOf(value) }
  if (/^https?:\/\//i.test(value)) {
    let url: URL | null = null
    try {
      url = new URL(value)
    } catch {
      url = null
    }
    const parts = (url?.pathname ?? '').split('/').filter(Boolean)
    const name = parts.at(-1)
    const acct = parts.length >= 2 && /^\d{12}$/.test(parts[0] as string) ? parts[0] : undefined
    const region = REGION_IN_HOST.exec(url?.hostname ?? '')?.[1]
    const partition = url?.hostname.endsWith('.amazonaws.com.cn') ? 'aws-cn' : scope.partition
    if (!name || !QUEUE_NAME.test(name)) return { value, source, form: 'url' }
    return {
      value,
      source,
      form: 'url',
      name,
      arn: arnOf(name, region ?? scope.region, acct ?? account, partition),
      ...(elsewhere(region, acct) ? { elsewhere: true } : {}),
    }
  }
  if (value.startsWith('arn:')) {
    const [, partition, service, region, acct, name, ...rest] = value.split(':')
    if (service !== 'sqs' || rest.length > 0 || !name || !QUEUE_NAME.test(name) || !region || !acct)
      return { value, source, form: 'arn' }
    return {
      value,
      source,
      form: 'arn',
      name,
      arn: arnOf(name, region, acct, partition || scope.partition),
      ...(elsewhere(region, acct) ? { elsewhere: true } : {}),
    }
  }
  // Something else (a path, spaces, a typo'd URL without scheme): its last part may still be a name.
  const last = value.split(/[/:]/).filter(Boolean).pop()
  return last && QUEUE_NAME.test(last)
    ? { value, source, form: 'invalid', name: last, arn: arnOf(last) }
    : { value, source, form: 'invalid' }
}

// ---------- the queue ----------

export async function queue(aws: Aws, name: string): Promise<QueueFacts | null> {
  let url: string
  try {
    const out = await aws.call<sqs.GetQueueUrlCommandOutput>('sqs', 'GetQueueUrl', { QueueName: name })
    url = out.QueueUrl ?? ''
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
  const out = await aws.call<sqs.GetQueueAttributesCommandOutput>('sqs', 'GetQueueAttributes', {
    QueueUrl: url,
    AttributeNames: ['All'],
  })
  const a = out.Attributes ?? {}
  return {
    name,
    url,
    arn: a.QueueArn ?? '',
    policy: a.Policy ? parsePolicyDocument(a.Policy) : null,
    messageRetentionSeconds: a.MessageRetentionPeriod ? Number(a.MessageRetentionPeriod) : undefined,
    sseEnabled: a.SqsManagedSseEnabled === 'true' || Boolean(a.KmsMasterKeyId),
    ...(a.KmsMasterKeyId ? { kmsMasterKeyId: a.KmsMasterKeyId } : {}),
  }
}

// ---------- the rules ----------

const asList = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v])

/** A pattern field lists the value, or is absent (then the rule matches every value of it; never for `source`). */
function patternAllows(pattern: Record<string, unknown>, field: string, value: string): boolean {
  if (!(field in pattern)) return field !== 'source'
  return asList(pattern[field]).includes(value)
}

/** Whether an EventBridge pattern delivers the events of `source` with `detailType`. */
export function patternMatchesEvent(
  pattern: Record<string, unknown> | null,
  source: string,
  detailType: string,
): boolean {
  if (!pattern) return false
  return patternAllows(pattern, 'source', source) && patternAllows(pattern, 'detail-type', detailType)
}

/** Whether a rule's pattern delivers any of the interruption events Karpenter consumes. */
export const matchesInterruptionEvent = (pattern: Record<string, unknown> | null) =>
  INTERRUPTION_RULES.some((r) => patternMatchesEvent(pattern, r.source, r.detailType))

function parsePattern(text: string | undefined): Record<string, unknown> | null {
  if (!text) return null
  try {
    const p = JSON.parse(text) as unknown
    return p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : null
  } catch {
    return null
  }
}

export interface RuleSearch {
  rules: Read<EventRule[]>
  /** The listing that failed while the other answered. */
  partial?: ReadFailure[]
}

/**
 * The rules that target the queue (ListRuleNamesByTarget) and those whose pattern matches an
 * interruption event (ListRules), each with its state and targets. ListRules carries each rule's
 * pattern and state; DescribeRule is asked only for a rule it did not list (memoized like every read).
 */
export async function interruptionRules(aws: Aws, queueArn: string | undefined): Promise<RuleSearch> {
  const [byTarget, listed] = await Promise.all([
    queueArn
      ? read(`events:ListRuleNamesByTarget ${queueArn}`, () =>
          aws.all<eb.ListRuleNamesByTargetCommandOutput, string>(
            'eventbridge',
            'ListRuleNamesByTarget',
            { TargetArn: queueArn },
            'NextToken',
            (out) => ({ items: out.RuleNames, next: out.NextToken }),
          ),
        )
      : Promise.resolve<Read<string[]>>({ ok: true, value: [] }),
    read('events:ListRules', () =>
      aws.all<eb.ListRulesCommandOutput, eb.Rule>('eventbridge', 'ListRules', {}, 'NextToken', (out) => ({
        items: out.Rules,
        next: out.NextToken,
      })),
    ),
  ])
  if (!byTarget.ok && !listed.ok) return { rules: byTarget }
  const partial = [byTarget, listed].flatMap((r) => (r.ok ? [] : [r.error]))
  const known = new Map((listed.ok ? listed.value : []).map((r) => [r.Name ?? '', r]))
  const names = [
    ...new Set([
      ...(byTarget.ok ? byTarget.value : []),
      ...[...known.values()]
        .filter((r) => matchesInterruptionEvent(parsePattern(r.EventPattern)))
        .map((r) => r.Name ?? ''),
    ]),
  ].filter(Boolean)
  const rules = await read(`events:ListTargetsByRule (${names.length} rules)`, () =>
    Promise.all(names.map((name) => ruleFacts(aws, name, known.get(name)))),
  )
  return partial.length > 0 ? { rules, partial } : { rules }
}

async function ruleFacts(aws: Aws, name: string, listed: eb.Rule | undefined): Promise<EventRule> {
  const described =
    listed && listed.EventPattern !== undefined && listed.State !== undefined
      ? Promise.resolve(listed)
      : aws.call<eb.DescribeRuleCommandOutput>('eventbridge', 'DescribeRule', { Name: name })
  const [rule, targets] = await Promise.all([
    described,
    aws.all<eb.ListTargetsByRuleCommandOutput, eb.Target>(
      'eventbridge',
      'ListTargetsByRule',
      { Rule: name },
      'NextToken',
      (out) => ({ items: out.Targets, next: out.NextToken }),
    ),
  ])
  const list = targets.map((t) => ({ id: t.Id ?? '', arn: t.Arn ?? '' }))
  return {
    name,
    arn: rule.Arn ?? '',
    state: rule.State ?? 'UNKNOWN',
    eventPattern: parsePattern(rule.EventPattern),
    targetArns: list.map((t) => t.arn),
    targets: list,
  }
}

/**
 * The SQS queues of this account and region that enabled interruption rules deliver to, other than
 * `named` (at most `limit`, first found first): where a misnamed setting's queue may really be.
 */
export function deliveredQueueNames(
  rules: EventRule[],
  named: string | undefined,
  queueArnPrefix: string,
  limit = 3,
): string[] {
  const names = rules
    .filter((r) => r.state === 'ENABLED' && matchesInterruptionEvent(r.eventPattern))
    .flatMap((r) => r.targetArns)
    .filter((arn) => arn.startsWith(queueArnPrefix))
    .map((arn) => arn.slice(queueArnPrefix.length))
    .filter((name) => name !== named && /^[A-Za-z0-9_-]{1,80}$/.test(name))
  return [...new Set(names)].slice(0, limit)
}
