import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fixWaits } from '../../../src/fix/waits.js'
import { failed, healthyFacts } from '../../helpers/facts.js'
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

test('any Helm step among the applied ones waits for the controller, in kube-system when the Deployment names no namespace', () => {
  const f = withClasses(healthyFacts(), ['True'])
  assert.ok(f.kube.deployment.ok && f.kube.deployment.value)
  f.kube.deployment.value.metadata.namespace = undefined
  const name = f.kube.deployment.value.metadata.name
  assert.deepEqual(
    fixWaits(f, ['tags.subnets', 'helm.karpenter.repair']).map((w) => w.path),
    [`/apis/apps/v1/namespaces/kube-system/deployments/${name}`],
  )
  assert.deepEqual(fixWaits(f, ['iam-policy.helm.x']), [], 'helm. only as the address prefix')
  f.kube.deployment = failed('the Deployment')
  assert.deepEqual(fixWaits(f, ['helm.karpenter.repair']), [], 'no Deployment read: nothing to wait on')
})

test('a class Ready only in another condition, or not True, is waited for', () => {
  const f = withClasses(healthyFacts(), ['True'])
  assert.ok(f.kube.nodeClasses.ok)
  const [base] = f.kube.nodeClasses.value
  f.kube.nodeClasses.value = [
    {
      ...base!,
      metadata: { ...base!.metadata, name: 'other' },
      status: { conditions: [{ type: 'SubnetsReady', status: 'True' }] },
    },
    {
      ...base!,
      metadata: { ...base!.metadata, name: 'false' },
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'X', status: 'True' },
        ],
      },
    },
  ] as typeof f.kube.nodeClasses.value
  assert.deepEqual(
    fixWaits(f, ['ec2-tags.discovery']).map((w) => w.label),
    ['EC2NodeClass other Ready', 'EC2NodeClass false Ready'],
  )
  f.kube.nodeClasses = failed('the EC2NodeClasses')
  assert.deepEqual(fixWaits(f, ['ec2-tags.discovery']), [])
})

test('a class with no status at all is not waited for; one Ready beside another condition is Ready', () => {
  const f = withClasses(healthyFacts(), ['True'])
  assert.ok(f.kube.nodeClasses.ok)
  const [base] = f.kube.nodeClasses.value
  const { status: _none, ...bare } = base!
  f.kube.nodeClasses.value = [
    { ...bare, metadata: { ...base!.metadata, name: 'bare' } },
    {
      ...base!,
      metadata: { ...base!.metadata, name: 'ready' },
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'AMIsReady', status: 'False' },
        ],
      },
    },
  ] as typeof f.kube.nodeClasses.value
  assert.deepEqual(fixWaits(f, ['ec2-tags.discovery']), [])
})
