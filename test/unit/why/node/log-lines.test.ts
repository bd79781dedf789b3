// Karpenter's log lines about a node, as the real v1.14.1 controller wrote them on the e2e bed
// (test/e2e/why-node.e2e.test.ts: `launched nodeclaim`, `disrupting node(s)` with its command,
// `initiating delete from interruption message`), picked out by the Node or NodeClaim they name.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { typesToRead } from '../../../../src/why/node/collect.js'
import { nodeLogLines } from '../../../../src/why/node/log-lines.js'
import { machine, pool } from '../../../helpers/why-node.js'

const LOG = [
  '{"level":"INFO","time":"2026-12-04T18:21:47.886Z","logger":"controller","message":"launched nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"e-annot-8kx5b"},"namespace":"","name":"e-annot-8kx5b","provider-id":"aws:///us-west-2b/i-93093a51c96a4f413","instance-type":"m5.large","zone":"us-west-2b","capacity-type":"on-demand"}',
  '{"level":"INFO","time":"2026-12-04T18:22:18.117Z","logger":"controller","message":"initiating delete from interruption message","controller":"interruption","namespace":"","name":"","queue":"demo","messageKind":"spot_interrupted","NodeClaim":{"name":"i-spot-8trfn"},"action":"CordonAndDrain","Node":{"name":"i-spot-8trfn"}}',
  '{"level":"INFO","time":"2026-12-04T18:22:35.644Z","logger":"controller","message":"disrupting node(s)","controller":"disruption","namespace":"","name":"","command":"Empty/fdf6587d: delete: nodepools=[e-annot]: [e-annot-8kx5b] (savings: $0.10)","decision":"delete","disrupted-nodes":[{"Node":{"name":"e-annot-8kx5b"},"NodeClaim":{"name":"e-annot-8kx5b"},"capacity-type":"on-demand","instance-type":"m5.large"}],"replacement-nodes":[]}',
  'not json at all e-annot-8kx5b',
  '2026-12-04T18:23:00.000Z\tINFO\tcontroller\tdeleted nodeclaim\t{"NodeClaim":{"name":"e-annot-8kx5b"}}',
].join('\n')

test('the lines that name a judged node, oldest first, with what they add (command, interruption kind)', () => {
  const got = nodeLogLines([LOG], new Set(['e-annot-8kx5b', 'i-spot-8trfn']))
  assert.deepEqual(
    got['e-annot-8kx5b']?.map((l) => [l.message, l.detail]),
    [
      ['launched nodeclaim', undefined],
      ['disrupting node(s)', 'Empty/fdf6587d: delete: nodepools=[e-annot]: [e-annot-8kx5b] (savings: $0.10)'],
      ['deleted nodeclaim', undefined],
    ],
  )
  assert.deepEqual(
    got['i-spot-8trfn']?.map((l) => [l.message, l.detail]),
    [['initiating delete from interruption message', 'spot_interrupted']],
  )
  // nodes not judged are not kept (a snapshot carries nothing about others)
  assert.deepEqual(Object.keys(nodeLogLines([LOG], new Set(['other']))), [])
})

test('EC2 types are read only for busy on-demand nodes of consolidating NodePools, narrowed to listed types', () => {
  const np = pool()
  np.spec.template.spec.requirements = [
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge', 'm5.large'] },
  ]
  const { claim } = machine('ip-a')
  assert.deepEqual(typesToRead([claim], [np]), ['m5.large', 'm5.xlarge'])
  assert.equal(typesToRead([claim], [pool()]), 'all', 'no list: every type')
  const whenEmpty = pool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1m' } })
  assert.equal(typesToRead([claim], [whenEmpty]), undefined)
  const spot = machine('ip-b').claim
  spot.metadata.labels = { ...spot.metadata.labels, 'karpenter.sh/capacity-type': 'spot' }
  assert.equal(typesToRead([spot], [np]), undefined)
  assert.equal(typesToRead([], [np]), undefined)
})
