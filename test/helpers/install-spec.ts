// The install spec the unit tests start from (demo, IRSA, aws-auth, interruption on), changed by `over`.
import { DEFAULT_NODEPOOL, type InstallSpec } from '../../src/desired/install.js'

export const ISSUER = 'https://oidc.eks.us-west-2.amazonaws.com/id/ABC'

export function spec(over: Partial<InstallSpec> = {}): InstallSpec {
  return {
    clusterName: 'demo',
    region: 'us-west-2',
    accountId: '123456789012',
    partition: 'aws',
    karpenterVersion: '1.14.1',
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    identity: 'irsa',
    nodeRole: { create: true },
    access: 'aws-auth',
    interruption: true,
    nodePool: DEFAULT_NODEPOOL,
    oidcIssuer: ISSUER,
    subnetIds: ['subnet-a', 'subnet-b'],
    securityGroupIds: ['sg-cluster'],
    clusterSecurityGroupId: 'sg-cluster',
    adopt: false,
    ...over,
  }
}
