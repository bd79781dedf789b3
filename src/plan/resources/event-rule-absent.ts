// An interruption rule teardown removes, or gives back as it was when karpctl adopted it.
import type * as eb from '@aws-sdk/client-eventbridge'
import { stackKeptNote } from '../../facts/collect-owners.js'
import { ADOPTED_BY } from '../../desired/ownership.js'
import { isOwned } from '../compare.js'
import type { Resource } from '../types.js'
import { orNull, ownedVerdict, ownerHint, removedTags, tagMap } from './absent.js'
import { ADDED_TARGET, ENABLED_FROM } from './event-rule.js'

interface RuleTeardownState {
  owner?: string
  arn: string
  targets: string[]
  tags: Record<string, string>
}

/** karpctl's rule is deleted; an adopted one loses the target karpctl added, its records, and is
 * disabled again when karpctl enabled it. */
export function ruleAbsent(w: {
  key: string
  name: string
  ownership: Record<string, string>
  dependsOn: string[]
  keptNote?: string
}): Resource<RuleTeardownState> {
  const records = (cur: RuleTeardownState) =>
    [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM].filter((k) => cur.tags[k] !== undefined)
  return {
    address: `events-rule.${w.key}`,
    kind: 'EventBridge rule',
    name: w.name,
    group: 'Interruption handling',
    dependsOn: w.dependsOn,
    desired: { absent: true },
    permissions: [],
    async observe({ aws }) {
      const r = await orNull(
        aws.call<eb.DescribeRuleCommandOutput>('eventbridge', 'DescribeRule', { Name: w.name }),
      )
      if (!r) return null
      const [t, tags] = await Promise.all([
        aws.call<eb.ListTargetsByRuleCommandOutput>('eventbridge', 'ListTargetsByRule', { Rule: w.name }),
        aws.call<eb.ListTagsForResourceCommandOutput>('eventbridge', 'ListTagsForResource', {
          ResourceARN: r.Arn,
        }),
      ])
      const tagged = tagMap(tags.Tags)
      const owner = isOwned(tagged, w.ownership) ? undefined : await stackKeptNote(aws, w.name)
      return { owner, arn: r.Arn ?? '', targets: (t.Targets ?? []).map((x) => x.Id ?? ''), tags: tagged }
    },
    verdict(cur) {
      if (!cur || isOwned(cur.tags, w.ownership)) return ownedVerdict(cur, w.ownership)
      const kept = w.keptNote ?? cur.owner ?? ownerHint(cur.tags)
      const keys = records(cur)
      if (!keys.length) return { action: 'unchanged', changes: [], note: kept }
      const target = cur.tags[ADDED_TARGET]
      return {
        action: 'update',
        changes: [
          ...(target && cur.targets.includes(target) ? [{ field: 'target', from: target }] : []),
          ...(cur.tags[ENABLED_FROM]
            ? [{ field: 'state', from: 'ENABLED', to: cur.tags[ENABLED_FROM] }]
            : []),
          ...removedTags(cur.tags, keys),
        ],
        note: `${kept}; karpctl's recorded changes given back`,
      }
    },
    async apply({ aws }, cur) {
      if (!cur) return
      if (!isOwned(cur.tags, w.ownership)) {
        const target = cur.tags[ADDED_TARGET]
        if (target && cur.targets.includes(target))
          await orNull(aws.write('eventbridge', 'RemoveTargets', { Rule: w.name, Ids: [target] }))
        if (cur.tags[ENABLED_FROM] === 'DISABLED')
          await orNull(aws.write('eventbridge', 'DisableRule', { Name: w.name }))
        const keys = records(cur)
        if (keys.length)
          await aws.write('eventbridge', 'UntagResource', { ResourceARN: cur.arn, TagKeys: keys })
        return
      }
      if (cur.targets.length)
        await orNull(aws.write('eventbridge', 'RemoveTargets', { Rule: w.name, Ids: cur.targets }))
      await orNull(aws.write('eventbridge', 'DeleteRule', { Name: w.name }))
    },
  }
}
