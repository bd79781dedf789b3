// The tenant spec the unit tests start from (tenant acme of cluster demo, sharing the install's
// selectors), its fields changed by `over` and its NodePool's by `pool`.
import type { TenantSpec } from '../../src/spec/tenant.js'

export function tenantSpec(
  over: Partial<TenantSpec> = {},
  pool: Partial<TenantSpec['nodePool']> = {},
): TenantSpec {
  return {
    clusterName: 'demo',
    region: 'us-west-2',
    accountId: '123456789012',
    partition: 'aws',
    tenant: 'acme',
    policyArns: [],
    tags: {},
    nodePool: {
      capacityTypes: ['spot'],
      architectures: ['amd64'],
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '1m',
      ...pool,
    },
    access: 'aws-auth',
    controllerRoleName: 'KarpenterControllerRole-demo',
    base: {
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
    },
    ...over,
  }
}
