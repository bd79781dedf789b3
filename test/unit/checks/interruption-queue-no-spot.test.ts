// Issue 35 (install matrix): eksctl's `karpenter:` block makes no interruption queue unless
// `withSpotInterruptionQueue: true` (eksctl-io/eksctl pkg/cfn/builder/karpenter.go; the default is false)
// and its NodePools are the user's. With no NodePool that may launch spot, an unset queue loses no spot
// notice: a note, not a warning. Spot allowed, or NodePools unread: the warning stands.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { interruptionQueue } from '../../../src/checks/interruption-queue.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts, NodePool } from '../../../src/facts/types.js'
import { setQueueSetting } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts } from '../../helpers/facts.js'

const onDemandOnly = (f: Facts) => {
  if (!f.kube.nodePools.ok) return
  for (const p of f.kube.nodePools.value as NodePool[]) {
    const reqs = p.spec.template.spec.requirements ?? []
    p.spec.template.spec.requirements = reqs.map((r) =>
      r.key === 'karpenter.sh/capacity-type' ? { ...r, values: ['on-demand'] } : r,
    )
  }
}
const judge = (...fns: ((f: Facts) => void)[]) =>
  runCheck(
    interruptionQueue,
    healthyFacts((f) => fns.forEach((fn) => fn(f))),
  )

test('no queue set, no NodePool allows spot: pass with a note, no fix', () => {
  const r = judge(setQueueSetting(''), onDemandOnly)
  assert.equal(r.status, 'pass')
  assert.deepEqual(r.findings, [
    {
      status: 'pass',
      subject: 'settings.interruptionQueue',
      message:
        'settings.interruptionQueue is not set: interruption handling is off; no NodePool allows spot, so no spot interruption goes unhandled (scheduled maintenance and rebalance events are not acted on)',
    },
  ])
})

test('no queue set, a NodePool allows spot: the warning with its fix stands', () => {
  const r = judge(setQueueSetting(''))
  assert.equal(r.status, 'warn')
  assert.ok(r.findings[0]!.fix?.commands?.length)
})

test('no queue set, NodePools unreadable: not proven, the warning stands', () => {
  const r = judge(setQueueSetting(''), (f) => {
    f.kube.nodePools = failed('list karpenter.sh/v1 nodepools', 'Forbidden')
  })
  assert.equal(r.status, 'warn')
})
