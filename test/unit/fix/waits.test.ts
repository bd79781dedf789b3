import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fixWaits } from '../../../src/fix/waits.js'
import { healthyFacts } from '../../helpers/facts.js'
import type { Facts } from '../../../src/facts/types.js'

const withClasses = (f: Facts, statuses: (string | null)[]): Facts => {
  const base = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value[0]! : null
  assert.ok(base)
  return {
    ...f,
    kube: {
      ...f.kube,
      nodeClasses: {
        ok: true,
        value: statuses.map((st, i) => ({
          ...base,
          metadata: { ...base.metadata, name: `c${i}` },
          status: st === null ? {} : { conditions: [{ type: 'Ready', status: st }] },
        })),
      },
    },
  } as Facts
}

test('after a fix: each EC2NodeClass that was not Ready is waited for; Ready ones and never-reconciled ones are not', () => {
  const f = withClasses(healthyFacts(), ['True', 'False', null, 'Unknown'])
  assert.deepEqual(
    fixWaits(f, ['tags.subnets']).map((w) => w.label),
    ['EC2NodeClass c1 Ready', 'EC2NodeClass c3 Ready'],
  )
  assert.deepEqual(fixWaits(f, []), [], 'nothing applied, nothing to wait for')
})

test('a changed Helm release waits for its controller Deployment, by the name it runs as', () => {
  const f = withClasses(healthyFacts(), ['True'])
  const dep = f.kube.deployment.ok ? f.kube.deployment.value : null
  assert.ok(dep)
  const waits = fixWaits(f, ['helm.karpenter'])
  assert.deepEqual(
    waits.map((w) => [w.label, w.path]),
    [
      [
        `Karpenter controller ${dep.metadata.namespace}/${dep.metadata.name} available`,
        `/apis/apps/v1/namespaces/${dep.metadata.namespace}/deployments/${dep.metadata.name}`,
      ],
    ],
  )
  assert.equal(waits[0]!.ready({ status: { availableReplicas: 1 } }), true)
  assert.equal(waits[0]!.ready({ status: { availableReplicas: 0 } }), false)
})
