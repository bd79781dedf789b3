// nodeclass-ready and NodePool spec.limits (issue 35, item 10): a limit of 0 on a resource every node
// has (`cpu: 0`, a freeze never lifted) lets the NodePool launch nothing — Karpenter says only
// "all available instance types exceed limits for nodepool" (docs: concepts/nodepools spec.limits,
// aws/karpenter-provider-aws PR #7879; aws/karpenter-provider-aws#5909: lowering a limit disables
// node creation). `nvidia.com/gpu: 0` keeps GPU nodes out of a pool: a healthy shape, not a freeze.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeclassReady } from '../../../src/checks/nodeclass-ready.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { nodePool } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, healthyNodePool } from '../../helpers/facts.js'

const limited = (limits: Record<string, unknown>) => (f: Facts) => {
  nodePool(f).spec.limits = limits as Record<string, string>
}
const limitFindings = (facts: Facts) =>
  runCheck(nodeclassReady, facts).findings.filter((x) => x.code === 'limits-allow-nothing')

test('cpu: 0 on the only NodePool fails, with a kubectl patch that lifts the limit', () => {
  const [f, ...rest] = limitFindings(healthyFacts(limited({ cpu: '0' })))
  assert.equal(rest.length, 0)
  assert.equal(f!.status, 'fail')
  assert.equal(f!.subject, 'nodepool/default')
  assert.match(
    f!.message,
    /limits cpu to 0 \(spec.limits\): Karpenter launches no node from it, and no other/,
  )
  assert.deepEqual(f!.fix!.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":null}}}'`,
  ])
})

test('zero in any unit and as a YAML number: 0m, 0Gi, 0.0, 0 (number)', () => {
  for (const limits of [{ cpu: '0m' }, { memory: '0Gi' }, { cpu: '0.0' }, { cpu: 0 }, { nodes: '0' }])
    assert.equal(limitFindings(healthyFacts(limited(limits))).length, 1, JSON.stringify(limits))
})

test('healthy shapes stay clean: gpu 0 (no GPU nodes here), small limits, no limits, 10m', () => {
  for (const limits of [
    { 'nvidia.com/gpu': '0', cpu: '100' },
    { cpu: '1' },
    {},
    { cpu: '10m' },
    { cpu: '1000' },
  ])
    assert.deepEqual(limitFindings(healthyFacts(limited(limits))), [], JSON.stringify(limits))
  assert.equal(runCheck(nodeclassReady, healthyFacts(limited({ 'nvidia.com/gpu': 0 }))).status, 'pass')
})

test('one frozen NodePool beside one that can launch is a warning, not a failure', () => {
  const facts = healthyFacts((f) => {
    limited({ cpu: '0', memory: '0' })(f)
    const other = healthyNodePool()
    other.metadata.name = 'spare'
    if (f.kube.nodePools.ok) f.kube.nodePools.value.push(other)
  })
  const [f] = limitFindings(facts)
  assert.equal(f!.status, 'warn')
  assert.match(f!.message, /limits cpu to 0 and memory to 0/)
  assert.deepEqual(f!.fix!.commands, [
    `kubectl patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":null,"memory":null}}}'`,
  ])
})

test('NodePools that could not be read: unknown, never passed', () => {
  const r = runCheck(
    nodeclassReady,
    healthyFacts((f) => (f.kube.nodePools = failed('kubernetes: NodePools'))),
  )
  assert.equal(r.status, 'unknown')
})
