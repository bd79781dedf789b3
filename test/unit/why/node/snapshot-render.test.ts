import assert from 'node:assert/strict'
import { test } from 'node:test'
import { matchesLabels } from '../../../../src/why/node/label-selector.js'
import { judgeNodes } from '../../../../src/why/node/judge.js'
import { pickBootErrors } from '../../../../src/why/node/join.js'
import { renderNodes } from '../../../../src/why/node/render.js'
import { checkNodeFacts } from '../../../../src/why/node/snapshot.js'
import { machine, nodeFacts, NOW, pdb, pod } from '../../../helpers/why-node.js'

test('a node snapshot is read back whole, and a broken one is one line naming the path', async () => {
  const f = nodeFacts({ machines: [machine('ip-a')] })
  assert.deepEqual(await checkNodeFacts(JSON.parse(JSON.stringify(f)), 'f.json'), f)
  await assert.rejects(checkNodeFacts({ ...f, schema: 'x' }, 'f.json'), /is not a node snapshot/)
  await assert.rejects(
    checkNodeFacts({ ...f, nodes: { ok: true, value: [{}] } }, 'f.json'),
    /at \$.nodes.value\[0\].metadata.name/,
  )
  await assert.rejects(
    checkNodeFacts({ ...f, meta: { ...f.meta, selector: { kind: 'pods' } } }, 'f.json'),
    /at \$.meta.selector.kind/,
  )
  await assert.rejects(
    checkNodeFacts(
      { ...f, bootLogs: { x: { ok: true, value: { instanceId: 'i-1', lines: [3] } } } },
      'f.json',
    ),
    /at \$.bootLogs.x.value/,
  )
})

test('render: the verdict, methods, blockers with their commands, and the count line; escapes cluster text', () => {
  const f = nodeFacts({
    machines: [machine('ip-a'), machine('ip-b')],
    pods: [pod('web-1\u001b[31m', 'ip-a'), pod('web-2', 'ip-a')],
    pdbs: [pdb('web', 0)],
    selector: { kind: 'node', name: 'ip-a' },
  })
  const text = renderNodes(judgeNodes(f, 'snapshot', NOW), false, false)
  assert.match(text, /^node ip-a \(NodeClaim default-ip-a, NodePool default, 2 pods to move\)$/m)
  assert.match(text, /✖ consolidation applies but is blocked by one thing: PodDisruptionBudget shop\/web/)
  assert.match(
    text,
    /disruption methods, in Karpenter's order:\n {4}– interruption: .*\n {4}◔? ?. expiration: /,
  )
  assert.match(text, /\$ kubectl -n shop patch pdb web/)
  assert.match(text, /1 node: 0 going, 1 blocked, 0 kept/)
  assert.ok(!text.includes('\u001b'), 'no escape reaches the terminal')
  const many = renderNodes(
    judgeNodes({ ...f, meta: { ...f.meta, selector: { kind: 'nodes' } } }, 'snapshot', NOW),
    false,
    true,
  )
  assert.match(many, /^✖ ip-a \(default\): consolidation applies but is blocked/m)
  assert.match(many, /What holds the nodes that need a hand:/)
})

test('-l selectors as kubectl reads them; boot-log lines that name kubelet or nodeadm failures', () => {
  const labels = { 'karpenter.sh/nodepool': 'default', team: 'a' }
  assert.equal(matchesLabels('karpenter.sh/nodepool=default,team', labels), true)
  assert.equal(matchesLabels('team!=a', labels), false)
  assert.equal(matchesLabels('!gpu', labels), true)
  assert.equal(matchesLabels('karpenter.sh/nodepool==batch', labels), false)
  const log = [
    '[   10.1] cloud-init[1234]: ok',
    'nodeadm[1500]: error: failed to get cluster details: AccessDeniedException',
    'kubelet[2000]: E1204 Unauthorized: failed to get node',
    'systemd[1]: Started kubelet.',
  ].join('\n')
  assert.deepEqual(pickBootErrors(log), [
    'nodeadm[1500]: error: failed to get cluster details: AccessDeniedException',
    'kubelet[2000]: E1204 Unauthorized: failed to get node',
  ])
})
