// The managed policies every node role karpctl makes carries, in the partition asked for.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { managedArn, nodeRolePolicies } from '../../../../src/plan/resources/node-role-policies.js'
import { NODE_ADVISED_POLICIES, NODE_MANAGED_POLICIES } from '../../../../src/desired/controller-policy.js'

test('a node role: the node policies, ECR PullOnly or else ReadOnly, then the advised ones, in the partition', () => {
  // Kills: the orElse policy name → ''.
  assert.deepEqual(nodeRolePolicies('aws-cn'), [
    ...NODE_MANAGED_POLICIES.map((p) => ({ arn: `arn:aws-cn:iam::aws:policy/${p}` })),
    {
      arn: 'arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
      orElse: 'arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly',
    },
    ...NODE_ADVISED_POLICIES.map((p) => ({ arn: `arn:aws-cn:iam::aws:policy/${p}` })),
  ])
  assert.equal(managedArn('aws-us-gov', 'X'), 'arn:aws-us-gov:iam::aws:policy/X')
})
