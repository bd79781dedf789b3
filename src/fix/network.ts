// Repairs of the network Karpenter needs: the webhook's tcp/8443 rule and the discovery tags.
import type { Finding } from '../checks/types.js'
import { discoveryTags, DISCOVERY_TAG, REPAIRED_TAGS } from '../plan/resources/discovery-tags.js'
import { REPAIRED_INGRESS, webhookIngress } from '../plan/resources/webhook-ingress.js'
import type { Resource } from '../plan/types.js'
import { Builder, arn, group } from './builder.js'

export const sgWebhook: Builder = (facts, failing, check) => ({
  resources: failing.flatMap((f) => {
    const e = f.evidence as { securityGroup?: string; clusterSecurityGroup?: string } | undefined
    if (!e?.securityGroup || !e.clusterSecurityGroup) return []
    const r = webhookIngress({
      nodeGroupId: e.securityGroup,
      clusterGroupId: e.clusterSecurityGroup,
      arn: arn(facts, 'ec2', `security-group/${e.securityGroup}`),
      record: REPAIRED_INGRESS,
    })
    return [{ ...r, address: `${r.address}.${e.securityGroup}`, group: group(check) }]
  }),
  manual: failing.filter((f) => !(f.evidence as { securityGroup?: string } | undefined)?.securityGroup),
})
/** Only the plain discovery selector (`karpenter.sh/discovery=<cluster>`) is fixed by tagging; a custom one is the user's design. */
export const discovery: Builder = (facts, failing, check) => {
  const cluster = facts.eks.cluster.ok ? facts.eks.cluster.value : null
  const plain = (f: Finding) => {
    const sel = (f.evidence as { selector?: { tags?: Record<string, string>; id?: string }[] } | undefined)
      ?.selector
    return (
      !!sel?.length &&
      sel.every(
        (t) =>
          !t.id && JSON.stringify(t.tags) === JSON.stringify({ [DISCOVERY_TAG]: facts.meta.clusterName }),
      )
    )
  }
  const subnets = failing.filter((f) => f.code === 'subnets-unmatched' && plain(f))
  const groups = failing.filter((f) => f.code === 'security-groups-unmatched' && plain(f))
  const auto = new Set([...subnets, ...groups])
  const sg = cluster?.clusterSecurityGroupId ?? cluster?.securityGroupIds[0]
  const resources: Resource[] =
    cluster && auto.size
      ? [
          {
            ...discoveryTags({
              clusterName: facts.meta.clusterName,
              subnetIds: subnets.length ? cluster.subnetIds : [],
              securityGroupIds: groups.length && sg ? [sg] : [],
              region: facts.meta.region,
              accountId: facts.meta.accountId ?? '',
              partition: facts.meta.partition,
              record: REPAIRED_TAGS,
            }),
            group: group(check),
          },
        ]
      : []
  return { resources, manual: failing.filter((f) => !auto.has(f) || !cluster) }
}
