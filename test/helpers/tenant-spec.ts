// The tenant spec the unit tests start from (tenant acme joining the healthy install of cluster demo),
// its fields changed by `over` and its NodePool's by `pool`.
import type { TenantSpec } from '../../src/desired/tenant.js'
import type { InstallFacts } from '../../src/desired/tenant.js'

/** The selectors of the install the tenants share: the default EC2NodeClass of cluster demo. */
export const DEMO_BASE: TenantSpec['base'] = {
  subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
  securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
  amiSelectorTerms: [{ alias: 'al2023@latest' }],
}

/** What tenant commands read of the healthy install fixture (the install a tenant joins). */
export const DEMO_INSTALL: InstallFacts = {
  clusterName: 'demo',
  accountId: '123456789012',
  partition: 'aws',
  controllerRoleName: 'KarpenterControllerRole-demo',
  access: 'aws-auth',
  base: DEMO_BASE,
}

export function tenantSpec(
  over: Partial<TenantSpec> = {},
  pool: Partial<TenantSpec['nodePool']> = {},
): TenantSpec {
  return {
    ...DEMO_INSTALL,
    region: 'us-west-2',
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
    ...over,
  }
}
