// tcp/8443 from the cluster security group to the node security group: only for Karpenter versions
// with webhooks (v1.0.x). The rule is not on a karpctl resource, so it is recorded as a tag on the group.
import type * as ec2 from '@aws-sdk/client-ec2'
import type { Resource } from '../types.js'

export const ADDED_INGRESS = 'karpctl.io/added-ingress-8443'
/** doctor --fix's record: a repair, which teardown does not revoke. */
export const REPAIRED_INGRESS = 'karpctl.io/repaired-ingress-8443'

interface IngressState {
  present: boolean
  tags: Record<string, string>
}

export function webhookIngress(w: {
  nodeGroupId: string
  clusterGroupId: string
  arn: string
  record?: typeof ADDED_INGRESS | typeof REPAIRED_INGRESS
}): Resource<IngressState> {
  const record = w.record ?? ADDED_INGRESS
  return {
    address: 'ec2-ingress.webhook-8443',
    kind: 'security group rule',
    name: `${w.nodeGroupId} tcp/8443 from ${w.clusterGroupId}`,
    group: 'Network',
    dependsOn: [],
    desired: { groupId: w.nodeGroupId, protocol: 'tcp', port: 8443, source: w.clusterGroupId },
    permissions: [
      { action: 'ec2:AuthorizeSecurityGroupIngress', resource: w.arn },
      { action: 'ec2:CreateTags', resource: w.arn },
    ],
    async observe({ aws }) {
      const out = await aws.call<ec2.DescribeSecurityGroupsCommandOutput>('ec2', 'DescribeSecurityGroups', {
        GroupIds: [w.nodeGroupId],
      })
      const g = out.SecurityGroups?.[0]
      if (!g) return null
      const present = (g.IpPermissions ?? []).some(
        (p) =>
          (p.IpProtocol === '-1' ||
            (p.IpProtocol === 'tcp' && (p.FromPort ?? 0) <= 8443 && (p.ToPort ?? 0) >= 8443)) &&
          (p.UserIdGroupPairs ?? []).some((u) => u.GroupId === w.clusterGroupId),
      )
      return { present, tags: Object.fromEntries((g.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])) }
    },
    verdict(cur) {
      if (!cur)
        return {
          action: 'update',
          changes: [],
          blocked: `security group ${w.nodeGroupId} not found: check --security-group-ids`,
        }
      return cur.present
        ? { action: 'unchanged', changes: [] }
        : {
            action: 'create',
            changes: [{ field: 'ingress', to: `tcp/8443 from ${w.clusterGroupId}` }],
            note: `recorded as the ${record} tag on ${w.nodeGroupId}`,
          }
    },
    async apply({ aws }, cur) {
      if (cur?.present) return
      // The record first: a crash between the two leaves a record of a rule that may be missing, which
      // teardown tolerates; the other order could leave a rule nobody knows karpctl added.
      await aws.write('ec2', 'CreateTags', {
        Resources: [w.nodeGroupId],
        Tags: [{ Key: record, Value: w.clusterGroupId }],
      })
      await aws.write('ec2', 'AuthorizeSecurityGroupIngress', {
        GroupId: w.nodeGroupId,
        IpPermissions: [
          {
            IpProtocol: 'tcp',
            FromPort: 8443,
            ToPort: 8443,
            UserIdGroupPairs: [{ GroupId: w.clusterGroupId }],
          },
        ],
      })
    },
  }
}
