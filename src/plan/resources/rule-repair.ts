// An EventBridge rule that exists (perhaps another tool's) but sends its events to another queue or is
// disabled: repaired in place — the interruption queue added as a target, the stale queue targets
// removed, the rule enabled — never duplicated. The rule is tagged with what was there before, in a
// call made before the change.
import type { Resource } from '../types.js'
import { observeRule, type RuleState } from './event-rule.js'

export const RETARGETED = 'karpctl.io/retargeted-from'
/** EventBridge's limit on a tag value. */
const TAG_VALUE_MAX = 256

export function ruleRepair(w: {
  name: string
  arn: string
  queueArn: string
  /** The id the queue target gets (the reference id, unless another target holds it). */
  targetId: string
  /** Targets that send to another queue: removed. */
  staleQueueArns: string[]
  group: string
}): Resource<RuleState> {
  const stale = (cur: RuleState) => cur.targets.filter((t) => w.staleQueueArns.includes(t.Arn))
  // What the repair takes away (the disabled state, stale queue targets), kept on the rule. An added
  // target takes nothing away and leaves nothing to record. A run that stopped half-way recorded some
  // of it already: the re-run adds to that record instead of overwriting it.
  const takenFrom = (cur: RuleState) => {
    const now = [cur.state === 'ENABLED' ? '' : cur.state, ...stale(cur).map((t) => t.Arn)].filter(Boolean)
    if (now.length === 0) return ''
    const before = (cur.tags[RETARGETED] ?? '').split(' ').filter(Boolean)
    return [...new Set([...before, ...now])].join(' ')
  }
  // The note is built from the same record apply writes, so it says what is recorded.
  const noteFor = (cur: RuleState): string => {
    const taken = takenFrom(cur)
    if (!taken) return 'kept, not duplicated; only the queue target is added, so nothing is recorded'
    const what = [
      ...(cur.state === 'ENABLED' ? [] : [`its state ${cur.state}`]),
      ...(stale(cur).length ? ['the removed queue targets'] : []),
    ].join(' and ')
    const cut = taken.length > TAG_VALUE_MAX ? ` (the first ${TAG_VALUE_MAX} characters)` : ''
    return `kept, not duplicated; ${what} recorded as the ${RETARGETED} tag${cut}`
  }
  return {
    address: `events-rule-repair.${w.name}`,
    kind: 'EventBridge rule',
    name: w.name,
    group: w.group,
    dependsOn: [],
    desired: { target: w.queueArn, state: 'ENABLED' },
    permissions: ['PutTargets', 'RemoveTargets', 'EnableRule', 'TagResource'].map((a) => ({
      action: `events:${a}`,
      resource: w.arn,
    })),
    observe: ({ aws }) => observeRule(aws, w.name, w.arn),
    verdict(cur) {
      if (!cur) return { action: 'update', changes: [], blocked: `rule ${w.name} is gone` }
      const changes = [
        ...(cur.targets.some((t) => t.Arn === w.queueArn) ? [] : [{ field: 'target', to: w.queueArn }]),
        ...stale(cur).map((t) => ({ field: 'target', from: t.Arn })),
        ...(cur.state === 'ENABLED' ? [] : [{ field: 'state', from: cur.state, to: 'ENABLED' }]),
      ]
      return changes.length
        ? { action: 'update', changes, note: noteFor(cur) }
        : { action: 'unchanged', changes: [] }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      const old = stale(cur)
      const taken = takenFrom(cur)
      if (taken)
        await aws.write('eventbridge', 'TagResource', {
          ResourceARN: cur.arn,
          Tags: [{ Key: RETARGETED, Value: taken.slice(0, TAG_VALUE_MAX) }],
        })
      if (!cur.targets.some((t) => t.Arn === w.queueArn))
        await aws.write('eventbridge', 'PutTargets', {
          Rule: w.name,
          Targets: [{ Id: w.targetId, Arn: w.queueArn }],
        })
      const ids = old.map((t) => t.Id).filter((id) => id && id !== w.targetId)
      if (ids.length) await aws.write('eventbridge', 'RemoveTargets', { Rule: w.name, Ids: ids })
      if (cur.state !== 'ENABLED') await aws.write('eventbridge', 'EnableRule', { Name: w.name })
    },
  }
}
