// One EventBridge rule that sends an interruption event type to the queue.
import type * as eb from '@aws-sdk/client-eventbridge'
import { isNotFound, type Aws } from '../../context/aws.js'
import { ADOPTED_BY, OWNERSHIP, ownershipOf } from '../../desired/ownership.js'
import { notCreatedVerdict } from './not-created.js'
import { isOwned, missingTags, sameDocument } from '../compare.js'
import type { FieldChange, Resource } from '../types.js'
import { leafChanges, tagChanges } from '../diff.js'

/** On an adopted rule: the id of the target karpctl added, and the state it found (teardown's give-back). */
export const ADDED_TARGET = 'karpctl.io/added-target'
export const ENABLED_FROM = 'karpctl.io/enabled-from'

export interface RuleState {
  arn: string
  state: string
  pattern: unknown
  targets: { Id: string; Arn: string }[]
  tags: Record<string, string>
}

/** A rule as EventBridge describes it (null when it does not exist): state, pattern, targets, tags. */
export async function observeRule(aws: Aws, name: string, arn: string): Promise<RuleState | null> {
  let rule: eb.DescribeRuleCommandOutput
  try {
    rule = await aws.call<eb.DescribeRuleCommandOutput>('eventbridge', 'DescribeRule', { Name: name })
  } catch (err) {
    if (isNotFound(err)) return null
    throw err
  }
  const [targets, tags] = await Promise.all([
    aws.call<eb.ListTargetsByRuleCommandOutput>('eventbridge', 'ListTargetsByRule', { Rule: name }),
    aws.call<eb.ListTagsForResourceCommandOutput>('eventbridge', 'ListTagsForResource', {
      ResourceARN: rule.Arn,
    }),
  ])
  return {
    arn: rule.Arn ?? arn,
    state: rule.State ?? 'UNKNOWN',
    pattern: rule.EventPattern ? JSON.parse(rule.EventPattern) : null,
    targets: (targets.Targets ?? []).map((t) => ({ Id: t.Id ?? '', Arn: t.Arn ?? '' })),
    tags: Object.fromEntries((tags.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
  }
}

export function eventRule(w: {
  key: string
  name: string
  arn: string
  eventPattern: Record<string, unknown>
  queueArn: string
  targetId: string
  tags: Record<string, string>
  ownership: Record<string, string>
  adopt: boolean
}): Resource<RuleState> {
  const changesOf = (cur: RuleState | null): FieldChange[] => {
    const c: FieldChange[] = []
    if (!cur) c.push({ field: 'event pattern', to: w.eventPattern })
    else if (!sameDocument(cur.pattern, w.eventPattern))
      c.push(...leafChanges(cur.pattern, w.eventPattern, 'event pattern'))
    if (cur && cur.state !== 'ENABLED') c.push({ field: 'state', from: cur.state, to: 'ENABLED' })
    if (!cur?.targets.some((t) => t.Arn === w.queueArn)) c.push({ field: 'target', to: w.queueArn })
    if (cur) c.push(...tagChanges(cur.tags, w.tags))
    return c
  }
  const cluster = w.ownership[OWNERSHIP.cluster] ?? ''
  const stateOf = (cur: RuleState) =>
    isOwned(cur.tags, w.ownership) ? 'created' : ownershipOf(cur.tags, cluster)
  // An adopted rule keeps its targets and state; the queue target gets an id no other target holds.
  const targetId = (cur: RuleState) =>
    cur.targets.some((t) => t.Id === w.targetId) ? `karpctl-${cluster}`.slice(0, 64) : w.targetId
  const ruleGaps = (cur: RuleState): FieldChange[] => [
    ...(cur.targets.some((t) => t.Arn === w.queueArn) ? [] : [{ field: 'target', to: w.queueArn }]),
    ...(cur.state === 'ENABLED' ? [] : [{ field: 'state', from: cur.state, to: 'ENABLED' }]),
  ]
  // The tags that record an adoption's additions (written before them): the target's id, the state it had.
  const adoptionTags = (cur: RuleState): Record<string, string> => ({
    [ADOPTED_BY]: cluster,
    ...(cur.targets.some((t) => t.Arn === w.queueArn) ? {} : { [ADDED_TARGET]: targetId(cur) }),
    ...(cur.state === 'ENABLED' ? {} : { [ENABLED_FROM]: cur.state }),
  })
  const adoptedRuleChanges = (cur: RuleState): FieldChange[] => {
    const c = ruleGaps(cur)
    return c.length ? [...c, ...tagChanges(cur.tags, adoptionTags(cur))] : c
  }
  async function applyAdoptedRule(aws: Aws, cur: RuleState) {
    const addTarget = !cur.targets.some((t) => t.Arn === w.queueArn)
    if (!addTarget && cur.state === 'ENABLED') return
    const id = targetId(cur)
    await aws.write('eventbridge', 'TagResource', {
      ResourceARN: cur.arn,
      Tags: Object.entries(adoptionTags(cur)).map(([Key, Value]) => ({ Key, Value })),
    })
    if (addTarget)
      await aws.write('eventbridge', 'PutTargets', { Rule: w.name, Targets: [{ Id: id, Arn: w.queueArn }] })
    if (cur.state !== 'ENABLED') await aws.write('eventbridge', 'EnableRule', { Name: w.name })
  }
  return {
    address: `events-rule.${w.key}`,
    kind: 'EventBridge rule',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: ['sqs-queue.interruption'],
    desired: { name: w.name, eventPattern: w.eventPattern, target: w.queueArn, tags: w.tags },
    permissions: ['PutRule', 'PutTargets', 'TagResource'].map((a) => ({
      action: `events:${a}`,
      resource: w.arn,
    })),
    observe: ({ aws }) => observeRule(aws, w.name, w.arn),
    verdict(cur) {
      const state = cur ? stateOf(cur) : null
      if (cur && state && state !== 'created') {
        const samePattern = sameDocument(cur.pattern, w.eventPattern)
        return notCreatedVerdict({
          state,
          changes: [
            ...(samePattern ? [] : [{ field: 'event pattern', from: cur.pattern, to: w.eventPattern }]),
            ...adoptedRuleChanges(cur),
          ],
          adopt: w.adopt,
          notOurs:
            'exists and was not made by karpctl: pass --adopt to use it as it is (karpctl then only adds its queue as a target, recorded)',
          refuse: samePattern
            ? undefined
            : 'exists with another event pattern, and karpctl did not make it: change it with the tool that made it, or remove it',
          adoptedNote: `adopted (not karpctl's): recorded as ${ADOPTED_BY}; teardown takes back what it added and keeps the rule`,
        })
      }
      const changes = changesOf(cur)
      return { action: !cur ? 'create' : changes.length ? 'update' : 'unchanged', changes }
    },
    async apply({ aws }, cur) {
      if (cur && stateOf(cur) !== 'created') return applyAdoptedRule(aws, cur)
      const tags = Object.entries(w.tags).map(([Key, Value]) => ({ Key, Value }))
      if (!cur || !sameDocument(cur.pattern, w.eventPattern) || cur.state !== 'ENABLED')
        await aws.write('eventbridge', 'PutRule', {
          Name: w.name,
          EventPattern: JSON.stringify(w.eventPattern),
          State: 'ENABLED',
          Description: 'Karpenter interruption handling (karpctl)',
          ...(cur ? {} : { Tags: tags }),
        })
      if (!cur?.targets.some((t) => t.Arn === w.queueArn))
        await aws.write('eventbridge', 'PutTargets', {
          Rule: w.name,
          Targets: [{ Id: w.targetId, Arn: w.queueArn }],
        })
      if (cur && missingTags(cur.tags, w.tags).length)
        await aws.write('eventbridge', 'TagResource', { ResourceARN: cur.arn, Tags: tags })
    },
  }
}
