// The subnet a fix tags for an EC2NodeClass: private before public, the most free addresses, the class's
// own selector tags (a `*` value as the cluster's name), or an id term when the class selects by id.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tagSubnetsFix } from '../../../src/why/subnets.js'
import type { VpcSubnet, WhyFacts } from '../../../src/why/types.js'
import { healthyNodeClass } from '../../helpers/facts.js'
import { whyFacts } from '../../helpers/why.js'

const subnet = (
  id: string,
  zone: string,
  availableIps: number,
  extra: Partial<VpcSubnet> = {},
): VpcSubnet => ({
  id,
  zone,
  vpcId: 'vpc-1',
  availableIps,
  tags: {},
  ...extra,
})

function facts(subnets: VpcSubnet[]): WhyFacts {
  const f = whyFacts()
  f.subnets = { ok: true, value: subnets }
  return f
}

const inB = (z: string) => z === 'us-west-2b'

test('the private subnet of the zone with the most free addresses, tagged with every tag of the class term', () => {
  const nc = healthyNodeClass()
  nc.spec.subnetSelectorTerms = [{ tags: { 'karpenter.sh/discovery': 'demo', tier: 'private' } }]
  nc.status = { subnets: [{ id: 'subnet-a', zone: 'us-west-2a' }] }
  const f = facts([
    subnet('subnet-a', 'us-west-2a', 100, { tags: { 'karpenter.sh/discovery': 'demo', tier: 'private' } }),
    subnet('subnet-b-pub', 'us-west-2b', 4000, { public: true }),
    subnet('subnet-b1', 'us-west-2b', 50),
    subnet('subnet-b2', 'us-west-2b', 300),
    // Another VPC's subnet is never the class's.
    subnet('subnet-b3', 'us-west-2b', 9000, { vpcId: 'vpc-2' }),
  ])
  const fix = tagSubnetsFix(f, nc, inB, { one: true, because: 'x' })
  assert.deepEqual(fix?.commands, [
    `aws ec2 create-tags --region us-west-2 --resources subnet-b2 --tags '[{"Key":"karpenter.sh/discovery","Value":"demo"},{"Key":"tier","Value":"private"}]'`,
  ])
  // Only a public subnet left: it is named as public.
  const g = facts([subnet('subnet-b-pub', 'us-west-2b', 4000, { public: true })])
  assert.match(
    tagSubnetsFix(g, nc, inB, { because: 'x' })?.summary ?? '',
    /subnet-b-pub \(us-west-2b, public, 4000 free addresses\)/,
  )
})

test('a `*` tag value is any value: the cluster name is written', () => {
  const nc = healthyNodeClass()
  nc.spec.subnetSelectorTerms = [{ tags: { 'kubernetes.io/role/internal-elb': '*' } }]
  const fix = tagSubnetsFix(facts([subnet('subnet-b', 'us-west-2b', 10)]), nc, inB, { because: 'x' })
  assert.match(
    fix?.commands?.[0] ?? '',
    /'\[\{"Key":"kubernetes\.io\/role\/internal-elb","Value":"demo"\}\]'$/,
  )
})

test('a class that selects by id gets an id term added; without a selector or a subnet there, no fix', () => {
  const nc = healthyNodeClass()
  nc.spec.subnetSelectorTerms = [{ id: 'subnet-a' }]
  const f = facts([subnet('subnet-a', 'us-west-2a', 10), subnet('subnet-b', 'us-west-2b', 10)])
  assert.deepEqual(tagSubnetsFix(f, nc, inB, { because: 'x' })?.commands, [
    `kubectl patch ec2nodeclass default --type json -p '[{"op":"add","path":"/spec/subnetSelectorTerms/-","value":{"id":"subnet-b"}}]'`,
  ])
  assert.equal(
    tagSubnetsFix(f, nc, (z) => z === 'us-west-2c', { because: 'x' }),
    undefined,
  )
  nc.spec.subnetSelectorTerms = []
  assert.equal(tagSubnetsFix(f, nc, inB, { because: 'x' }), undefined)
  // Subnets not read (an older snapshot, no permission): no fix from here.
  const old = whyFacts()
  assert.equal(tagSubnetsFix(old, healthyNodeClass(), inB, { because: 'x' }), undefined)
})

test('every zone: the best private subnet of each, in zone order', () => {
  const f = facts([
    subnet('subnet-c', 'us-west-2c', 10),
    subnet('subnet-a1', 'us-west-2a', 10),
    subnet('subnet-a2', 'us-west-2a', 20),
  ])
  const fix = tagSubnetsFix(f, healthyNodeClass(), () => true, { because: 'x' })
  assert.match(fix?.commands?.[0] ?? '', /--resources subnet-a2 subnet-c --tags/)
})
