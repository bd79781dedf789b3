// The webhook's tcp/8443 ingress rule karpctl recorded adding to a security group, revoked again.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Resource } from '../types.js'
import { orNull, tagMap } from './absent.js'
import { ADDED_INGRESS, REPAIRED_INGRESS } from './webhook-ingress.js'

/** The tcp/8443 rule karpctl recorded adding (the karpctl.io/added-ingress-8443 tag names its source). */
export function recordedIngressRestore(w: {
  vpcId?: string
  /** The install a repair opened 8443 for is going too: the repair's rule (karpctl.io/repaired-ingress-8443) goes. */
  repairs?: boolean
  dependsOn: string[]
}): Resource<{ groupId: string; source: string; record: string }[]> {
  const records = [ADDED_INGRESS, ...(w.repairs ? [REPAIRED_INGRESS] : [])]
  return {
    address: 'ec2-ingress.restore',
    kind: 'recorded security group rules',
    name: records.join(', '),
    group: 'Network',
    dependsOn: w.dependsOn,
    desired: { restored: true },
    permissions: [],
    async observe({ aws }) {
      // One record key per listing (moto matches a multi-valued tag-key filter as none).
      const found = await Promise.all(
        records.map(async (record) => {
          const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>(
            'ec2',
            'DescribeSecurityGroups',
            {
              Filters: [
                { Name: 'tag-key', Values: [record] },
                ...(w.vpcId ? [{ Name: 'vpc-id', Values: [w.vpcId] }] : []),
              ],
            },
          )
          return (out.SecurityGroups ?? [])
            .filter((g) => tagMap(g.Tags)[record] !== undefined)
            .map((g) => ({ groupId: g.GroupId ?? '', source: tagMap(g.Tags)[record] ?? '', record }))
        }),
      )
      return found.flat()
    },
    verdict: (cur) =>
      !cur?.length
        ? { action: 'unchanged', changes: [], note: 'nothing recorded' }
        : {
            action: 'update',
            changes: cur.map((r) => ({ field: `${r.groupId} ingress`, from: `tcp/8443 from ${r.source}` })),
          },
    async apply({ aws }, cur) {
      for (const r of cur ?? []) {
        await orNull(
          aws.write('ec2', 'RevokeSecurityGroupIngress', {
            GroupId: r.groupId,
            IpPermissions: [
              { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: r.source }] },
            ],
          }),
        )
        await aws.write('ec2', 'DeleteTags', { Resources: [r.groupId], Tags: [{ Key: r.record }] })
      }
    },
  }
}
