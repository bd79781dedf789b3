// The tags karpctl recorded adding to subnets and security groups it does not own, taken off again.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Resource } from '../types.js'
import { tagMap } from './absent.js'
import { ADDED_TAGS, REPAIRED_TAGS } from './discovery-tags.js'

interface Tagged {
  id: string
  remove: string[]
  /** The resource's tags now (what the plan shows going). */
  tags: Record<string, string>
}

/**
 * The tags karpctl recorded adding (karpctl.io/added-tags) come off; tags that were there before stay.
 * With `repairs` (the install doctor --fix repaired is going too), the tags a repair recorded
 * (karpctl.io/repaired-tags) come off as well. A resource whose discovery tag is already gone is still
 * found by its record, in the cluster's VPC; one another cluster discovers is not this teardown's.
 */
export function recordedTagsRestore(w: {
  clusterName: string
  vpcId?: string
  repairs?: boolean
  dependsOn: string[]
}): Resource<Tagged[]> {
  const records = [ADDED_TAGS, ...(w.repairs ? [REPAIRED_TAGS] : [])]
  return {
    address: 'ec2-tags.restore',
    kind: 'recorded tags',
    name: `${records.join(', ')} (cluster ${w.clusterName})`,
    group: 'Network',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ aws }) {
      // Two listings: the records on what this cluster discovers, and (the discovery tag gone) in its
      // VPC. EC2 emulators differ in which filters they honour; both are narrowed again below.
      // One record key per listing: moto (5.2) matches a multi-valued tag-key filter as none.
      const scopes = records.flatMap((record) => [
        [
          { Name: 'tag-key', Values: [record] },
          { Name: 'tag:karpenter.sh/discovery', Values: [w.clusterName] },
        ],
        ...(w.vpcId
          ? [
              [
                { Name: 'tag-key', Values: [record] },
                { Name: 'vpc-id', Values: [w.vpcId] },
              ],
            ]
          : []),
      ])
      const listings = await Promise.all(
        scopes.map((Filters) =>
          Promise.all([
            aws.call<ec2.DescribeSubnetsCommandOutput>('ec2', 'DescribeSubnets', { Filters }),
            aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', { Filters }),
          ]),
        ),
      )
      const byId = <T>(items: T[], id: (t: T) => string | undefined) => [
        ...new Map(items.map((x) => [id(x) ?? '', x])).values(),
      ]
      const subnets = {
        Subnets: byId(
          listings.flatMap(([s]) => s.Subnets ?? []),
          (s) => s.SubnetId,
        ),
      }
      const groups = {
        SecurityGroups: byId(
          listings.flatMap(([, g]) => g.SecurityGroups ?? []),
          (g) => g.GroupId,
        ),
      }
      // This cluster's: discovered by it, or (its discovery tag gone) in its VPC; never another cluster's.
      const of = (id: string, tags: Record<string, string>, vpc?: string): Tagged[] => {
        const discovery = tags['karpenter.sh/discovery']
        if (discovery !== undefined && discovery !== w.clusterName) return []
        if (discovery === undefined && (!w.vpcId || vpc !== w.vpcId)) return []
        const keys = records.filter((r) => tags[r] !== undefined)
        const remove = [...keys.flatMap((r) => (tags[r] ?? '').split(',').filter(Boolean)), ...keys]
        return keys.length ? [{ id, remove: [...new Set(remove)], tags }] : []
      }
      return [
        ...(subnets.Subnets ?? []).flatMap((s) => of(s.SubnetId ?? '', tagMap(s.Tags), s.VpcId)),
        ...(groups.SecurityGroups ?? []).flatMap((g) => of(g.GroupId ?? '', tagMap(g.Tags), g.VpcId)),
      ]
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            // Each tag that comes off with its value, the records too (a tag already gone is not shown).
            changes: cur.flatMap((t) =>
              t.remove
                .filter((k) => t.tags[k] !== undefined)
                .map((k) => ({ field: `${t.id} ${k}`, from: t.tags[k] })),
            ),
          },
    async apply({ aws }, cur) {
      // The record is removed in the same call as the tags it lists.
      for (const t of cur ?? [])
        await aws.write('ec2', 'DeleteTags', { Resources: [t.id], Tags: t.remove.map((Key) => ({ Key })) })
    },
  }
}
