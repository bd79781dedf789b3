// A cluster as install's discovery sees it before any question: one to vary per test.
import type { Discovery } from '../../src/install/discover.js'

export function discovery(over: Partial<Discovery> = {}): Discovery {
  return {
    accountId: '123456789012',
    partition: 'aws',
    callerArn: 'arn:aws:iam::123456789012:user/me',
    cluster: {
      name: 'demo',
      arn: 'arn:aws:eks:us-west-2:123456789012:cluster/demo',
      version: '1.34',
      oidcIssuer: 'https://oidc.eks.us-west-2.amazonaws.com/id/ABC',
      subnetIds: ['subnet-a', 'subnet-b'],
      securityGroupIds: ['sg-extra'],
      clusterSecurityGroupId: 'sg-cluster',
      authenticationMode: 'API_AND_CONFIG_MAP',
      tags: {},
    },
    podIdentityAgent: true,
    accessEntriesAllowed: true,
    privateSubnetIds: ['subnet-a', 'subnet-b'],
    nodegroupRoles: [{ nodegroup: 'ng-1', roleArn: 'arn:aws:iam::123456789012:role/ng-role' }],
    clusterAutoscalers: [],
    ...over,
  }
}
