// `karpenter.sh/discovery=<cluster>` on the cluster's private subnets and its node security group.
// These are not karpctl's resources: each tag it adds is recorded on the resource itself
// (`karpctl.io/added-tags`), where a teardown run from any machine finds it and removes only that.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Resource } from '../types.js'

export const DISCOVERY_TAG = 'karpenter.sh/discovery'
export const ADDED_TAGS = 'karpctl.io/added-tags'
/**
 * The record doctor --fix leaves instead: a repair of an install karpctl may not have made, which
 * teardown must not give back (that would break the install it repaired).
 */
export const REPAIRED_TAGS = 'karpctl.io/repaired-tags'

type TagMap = Record<string, Record<string, string>>

const tagsOf = (t?: ec2.Tag[]) => Object.fromEntries((t ?? []).map((x) => [x.Key ?? '', x.Value ?? '']))

export function discoveryTags(w: {
  clusterName: string
  subnetIds: string[]
  securityGroupIds: string[]
  region: string
  accountId: string
  partition: string
  /** The tag that records the change: install's (given back by teardown), or a repair's. */
  record?: typeof ADDED_TAGS | typeof REPAIRED_TAGS
}): Resource<TagMap> {
  const record = w.record ?? ADDED_TAGS
  const ids = [...w.subnetIds, ...w.securityGroupIds]
  const lacking = (cur: TagMap | null) => ids.filter((id) => cur?.[id]?.[DISCOVERY_TAG] !== w.clusterName)
  const arn = (id: string) =>
    `arn:${w.partition}:ec2:${w.region}:${w.accountId}:${id.startsWith('sg-') ? 'security-group' : 'subnet'}/${id}`
  return {
    address: 'ec2-tags.discovery',
    kind: 'discovery tags',
    name: `${DISCOVERY_TAG}=${w.clusterName}`,
    group: 'Network',
    dependsOn: [],
    desired: {
      tag: { [DISCOVERY_TAG]: w.clusterName },
      subnets: w.subnetIds,
      securityGroups: w.securityGroupIds,
    },
    permissions: ids.map((id) => ({ action: 'ec2:CreateTags', resource: arn(id) })),
    async observe({ aws }) {
      const [subnets, groups] = await Promise.all([
        w.subnetIds.length
          ? aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', { SubnetIds: w.subnetIds })
          : Promise.resolve({ Subnets: [] } as Partial<ec2.DescribeSubnetsCommandOutput>),
        w.securityGroupIds.length
          ? aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', {
              GroupIds: w.securityGroupIds,
            })
          : Promise.resolve({ SecurityGroups: [] } as Partial<ec2.DescribeSecurityGroupsCommandOutput>),
      ])
      const out: TagMap = {}
      for (const s of subnets.Subnets ?? []) out[s.SubnetId ?? ''] = tagsOf(s.Tags)
      for (const g of groups.SecurityGroups ?? []) out[g.GroupId ?? ''] = tagsOf(g.Tags)
      return out
    },
    verdict(cur) {
      const conflicts = ids.filter((id) => {
        const v = cur?.[id]?.[DISCOVERY_TAG]
        return v !== undefined && v !== w.clusterName
      })
      if (conflicts.length)
        return {
          action: 'update',
          changes: [],
          blocked: `${conflicts.map((id) => `${id} has ${DISCOVERY_TAG}=${cur?.[id]?.[DISCOVERY_TAG]}`).join(', ')}: another cluster discovers them; pass --subnet-ids / --security-group-ids to choose others`,
        }
      const todo = lacking(cur)
      if (todo.length === 0) return { action: 'unchanged', changes: [] }
      return {
        action: 'update',
        changes: todo.map((id) => ({
          field: `${id} ${DISCOVERY_TAG}`,
          from: cur?.[id]?.[DISCOVERY_TAG],
          to: w.clusterName,
        })),
        note:
          record === ADDED_TAGS
            ? `recorded on each resource as ${ADDED_TAGS}, so teardown removes only what karpctl added`
            : `recorded on each resource as ${REPAIRED_TAGS} (a repair: teardown keeps it)`,
      }
    },
    async apply({ aws }, cur) {
      const todo = lacking(cur)
      if (todo.length === 0) return
      // One call tags and records: a crash cannot leave a tag karpctl added without its record.
      await aws.write('ec2', 'CreateTags', {
        Resources: todo,
        Tags: [
          { Key: DISCOVERY_TAG, Value: w.clusterName },
          { Key: record, Value: DISCOVERY_TAG },
        ],
      })
    },
  }
}
