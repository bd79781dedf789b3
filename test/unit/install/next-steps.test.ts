import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nextSteps } from '../../../src/install/next-steps.js'

test('next steps name the same cluster and context, and skip the smoke test once it ran', () => {
  const t = { clusterName: 'demo', region: 'us-west-2', kubeContext: 'arn:aws:eks:us-west-2:1:cluster/demo' }
  const lines = nextSteps('karpctl', t, { smokeTested: false, nodePool: 'default' })
  assert.deepEqual(lines, [
    'Next steps:',
    '  prove a node launches:      karpctl install --cluster demo --region us-west-2 --kube-context arn:aws:eks:us-west-2:1:cluster/demo --yes --smoke-test',
    '  capacity for one team:      karpctl tenant add <team> --cluster demo --region us-west-2 --kube-context arn:aws:eks:us-west-2:1:cluster/demo',
    '  run a workload on it:       spec.template.spec.nodeSelector: { karpenter.sh/nodepool: default }',
    '  check it again any time:    karpctl doctor --cluster demo --region us-west-2 --kube-context arn:aws:eks:us-west-2:1:cluster/demo',
  ])
  const after = nextSteps(
    'karpctl',
    { clusterName: 'demo', region: 'eu-west-1' },
    { smokeTested: true, nodePool: 'default' },
  )
  assert.equal(after.length, 4)
  assert.ok(!after.some((l) => l.includes('--smoke-test')))
  assert.ok(after.every((l) => !l.includes('--kube-context')))
})
