import assert from 'node:assert/strict'
import { test } from 'node:test'
import { discoveryTags } from '../../../src/checks/discovery-tags.js'
import { runCheck } from '../../../src/checks/run.js'
import { failed, healthyFacts, ok } from '../../helpers/facts.js'

test('healthy: subnets in three AZs and the node security group pass', () => {
  const r = runCheck(discoveryTags, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /3 subnets in 3 AZs/)
})

test('an untagged subnet set: the selector matches nothing and the fix tags the cluster subnets', () => {
  const r = runCheck(
    discoveryTags,
    healthyFacts((f) => {
      f.ec2.subnetsByNodeClass.default = ok([])
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, 'EC2NodeClass/default')
  assert.match(fail.message, /matches no subnet/)
  assert.match(
    fail.fix!.commands![0]!,
    /create-tags .*--resources subnet-0a subnet-0b subnet-0c --tags Key=karpenter.sh\/discovery,Value=demo/,
  )
})

test('a selector copied from another cluster fails naming the value', () => {
  const r = runCheck(
    discoveryTags,
    healthyFacts((f) => {
      if (f.kube.nodeClasses.ok)
        f.kube.nodeClasses.value[0]!.spec.subnetSelectorTerms = [
          { tags: { 'karpenter.sh/discovery': 'my-cluster' } },
        ]
    }),
  )
  assert.equal(r.status, 'fail')
  assert.ok(r.findings.some((x) => x.status === 'fail' && /my-cluster/.test(x.message)))
})

test('subnets in another VPC fail; a single AZ warns', () => {
  const r = runCheck(
    discoveryTags,
    healthyFacts((f) => {
      const s = { id: 'subnet-x', vpcId: 'vpc-other', availabilityZone: 'us-west-2a', tags: {} }
      const mine = {
        id: 'subnet-0a',
        vpcId: 'vpc-0f00d0f00d0f00d00',
        availabilityZone: 'us-west-2a',
        tags: {},
      }
      f.ec2.subnetsByNodeClass.default = ok([s, mine])
    }),
  )
  assert.equal(r.status, 'fail')
  assert.ok(r.findings.some((x) => x.status === 'fail' && x.subject === 'subnet-x'))
  assert.ok(r.findings.some((x) => x.status === 'warn' && /only 1 availability zone/.test(x.message)))
})

test('a failed DescribeSubnets makes the check unknown, not pass', () => {
  const r = runCheck(
    discoveryTags,
    healthyFacts((f) => {
      f.ec2.subnetsByNodeClass.default = failed('ec2:DescribeSubnets', 'UnauthorizedOperation')
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /UnauthorizedOperation/)
})

test('no EC2NodeClasses: skipped with the reason', () => {
  const r = runCheck(
    discoveryTags,
    healthyFacts((f) => {
      f.kube.nodeClasses = ok([])
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no EC2NodeClasses/)
})
