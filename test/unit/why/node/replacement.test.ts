// Replacement consolidation judged as Karpenter v1.14.1 does (sigs.k8s.io/karpenter
// pkg/controllers/disruption/consolidation.go computeConsolidation): the pods no other node takes go
// to ONE new NodeClaim whose types must be cheaper than the node (RemoveInstanceTypeOptionsByPriceAndMinValues,
// else the Unconsolidatable event "Can't replace with a cheaper node"); a spot node needs the
// SpotToSpotConsolidation gate and live spot prices. Prices: the AWS provider's static list
// (pkg/providers/pricing/zz_generated.pricing_aws.go; us-east-1 for a region it lacks, pricing.go
// Reset). Field: "why isn't this node consolidated?" (aws/karpenter-provider-aws#3745, #4533).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parsePrices } from '../../../../scripts/karpenter-prices.js'
import { judgeNodes } from '../../../../src/why/node/judge.js'
import { dollars, staticOnDemandPrice } from '../../../../src/why/node/prices.js'
import type { NodeFacts } from '../../../../src/why/node/types.js'
import { machine, nodeFacts, NOW, pod, pool } from '../../../helpers/why-node.js'
import { INSTANCE_TYPES } from '../../../helpers/why.js'

/** One m5 node of `type` and `capacity`, with one pod of `cpu` that no other node takes. */
function busyNode(type: string, cpu: string, capacity = 'on-demand', requirements?: unknown[]): NodeFacts {
  const m = machine('ip-a')
  for (const o of [m.claim, m.node]) {
    o.metadata.labels = {
      ...o.metadata.labels,
      'node.kubernetes.io/instance-type': type,
      'karpenter.sh/capacity-type': capacity,
    }
  }
  m.node.status.allocatable = { cpu: '7', memory: '30Gi', pods: '58' }
  const np = pool()
  if (requirements)
    np.spec.template.spec.requirements = requirements as typeof np.spec.template.spec.requirements
  return {
    ...nodeFacts({ machines: [m], pools: [np], pods: [pod('web-1', 'ip-a', { cpu })] }),
    instanceTypes: { ok: true, value: INSTANCE_TYPES },
  }
}
const m5 = {
  key: 'node.kubernetes.io/instance-type',
  operator: 'In',
  values: ['m5.large', 'm5.xlarge', 'm5.2xlarge'],
}
const onDemand = [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }, m5]
const consolidation = (f: NodeFacts) => {
  const v = judgeNodes(f, 'snapshot', NOW).nodes[0]!
  return { v, step: v.steps.find((s) => s.method === 'consolidation')! }
}

test('static prices: the region’s table, else us-east-1’s (pricing.go Reset); parsed from the provider’s Go source', () => {
  assert.deepEqual(staticOnDemandPrice('us-east-1', 'm5.large'), { price: 0.096, table: 'us-east-1' })
  assert.deepEqual(staticOnDemandPrice('eu-west-3', 'm5.xlarge'), { price: 0.192, table: 'us-east-1' })
  assert.equal(staticOnDemandPrice('us-gov-west-1', 'm5.large').table, 'us-gov-west-1')
  assert.deepEqual(staticOnDemandPrice('us-east-1', 'x9.nonesuch'), { table: 'us-east-1' })
  assert.equal(dollars(0.096), '$0.096/h')
  assert.deepEqual(
    parsePrices(
      '\t"us-east-1": {\n\t\t// m5 family\n\t\t"m5.large": 0.096000, "m5.xlarge": 0.192000,\n\t},\n',
    ),
    { 'us-east-1': 'm5.large=0.096 m5.xlarge=0.192' },
  )
})

test('an m5.2xlarge whose one small pod fits nowhere else: replaced by a cheaper type that takes it, named with prices', () => {
  const { v, step } = consolidation(busyNode('m5.2xlarge', '500m', 'on-demand', onDemand))
  assert.equal(step.applies, 'yes')
  assert.equal(step.reason, 'Underutilized')
  assert.match(step.message, /— m5\.large at \$0\.096\/h, m5\.xlarge at \$0\.192\/h against/)
  // any type the NodePool allows, cheapest first: a Graviton and a t3 too when it does not narrow them
  const wide = consolidation(busyNode('m5.2xlarge', '500m', 'on-demand', onDemand.slice(0, 1))).step
  assert.match(
    wide.message,
    /— t3\.micro at \$0\.0104\/h, c6g\.large at \$0\.068\/h, m5\.large at \$0\.096\/h and 1 more/,
  )
  assert.match(
    step.message,
    /against m5\.2xlarge at \$0\.384\/h \(Karpenter's static on-demand list, us-east-1\)/,
  )
  assert.equal(v.outcome, 'going')
})

test('the cheapest type that takes the pod is the node’s own: "Can’t replace with a cheaper node", kept', () => {
  const { v, step } = consolidation(busyNode('m5.large', '1500m', 'on-demand', onDemand))
  assert.equal(step.applies, 'no')
  assert.match(step.message, /no type that takes them is cheaper than m5\.large at \$0\.096\/h/)
  assert.match(step.message, /Can't replace with a cheaper node/)
  assert.equal(v.outcome, 'kept')
})

test('no type takes the pods on one node: Karpenter cannot replace it (more than one new NodeClaim)', () => {
  const { step } = consolidation(busyNode('m5.2xlarge', '30', 'on-demand', onDemand))
  assert.equal(step.applies, 'no')
  assert.match(step.message, /no instance type NodePool default allows takes them all on one node/)
})

test('spot node, or spot allowed and nothing cheaper on demand: maybe (spot prices are live), never a guess', () => {
  assert.equal(consolidation(busyNode('m5.large', '100m', 'spot')).step.applies, 'maybe')
  const spotAllowed = consolidation(busyNode('m5.large', '1500m', 'on-demand', [m5]))
  assert.equal(spotAllowed.step.applies, 'maybe')
  assert.match(spotAllowed.step.message, /spot prices are read live/)
})

test('instance types not read: maybe, with the reason', () => {
  const f = busyNode('m5.2xlarge', '500m', 'on-demand', onDemand)
  const { step } = consolidation({
    ...f,
    instanceTypes: {
      ok: false,
      error: {
        code: 'AccessDenied',
        kind: 'denied',
        read: 'ec2:DescribeInstanceTypes',
        message: 'AccessDenied',
      },
    },
  } as NodeFacts)
  assert.equal(step.applies, 'maybe')
  assert.match(step.message, /instance types were not read \(AccessDenied\)/)
})
