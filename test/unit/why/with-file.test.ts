// `--with FILE`: the manifests laid over the live NodePools and EC2NodeClasses, and what they change —
// a template edit drifts the nodes (aws/karpenter-provider-aws#8297 "why did Karpenter replace all
// my nodes"), a requirements edit drifts only the nodes it excludes, a consolidateAfter edit lets
// nodes consolidate.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { judgeNodes } from '../../../src/why/node/judge.js'
import { applyWith, changedFields, loadWith } from '../../../src/why/with-file.js'
import { machine, nodeFacts, NOW, pod, pool } from '../../helpers/why-node.js'

const dir = mkdtempSync(join(tmpdir(), 'karpctl-with-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

const NODEPOOL = (extra: string) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]}
${extra}`

test('a changed template drifts the nodes, naming the fields; requirements alone do not move the hash', async () => {
  const facts = nodeFacts({ machines: [machine('ip-a')], pods: [pod('web-1', 'ip-a')] })
  const w = await loadWith(file('np.yaml', NODEPOOL('      expireAfter: 48h\n')))
  const judged = judgeNodes(
    { ...facts, meta: { ...facts.meta, with: w.file }, kube: applyWith(facts.kube, w) },
    'snapshot',
    NOW,
  )
  const drift = judged.nodes[0]?.steps.find((s) => s.method === 'drift')
  assert.equal(drift?.applies, 'yes')
  assert.match(drift?.message ?? '', /NodePoolDrifted.*changed by .*np.yaml: spec.template.spec.expireAfter/)
  assert.equal(judged.with, w.file)

  const same = await loadWith(file('same.yaml', NODEPOOL('')))
  const kept = judgeNodes({ ...facts, kube: applyWith(facts.kube, same) }, 'snapshot', NOW)
  assert.equal(kept.nodes[0]?.steps.find((s) => s.method === 'drift')?.applies, 'no')
})

test('a consolidateAfter edit: the node becomes consolidatable as Karpenter would recompute it', async () => {
  const m = machine('ip-a', {
    conditions: [
      { type: 'Launched', status: 'True' },
      { type: 'Registered', status: 'True' },
      { type: 'Initialized', status: 'True', lastTransitionTime: '2026-12-04T10:00:00Z' },
    ],
  })
  const facts = nodeFacts({ machines: [m], pools: [pool({ disruption: { consolidateAfter: 'Never' } })] })
  assert.equal(judgeNodes(facts, 'snapshot', NOW).nodes[0]?.outcome, 'kept')
  const w = await loadWith(file('consolidate.yaml', NODEPOOL('')))
  const judged = judgeNodes(
    { ...facts, meta: { ...facts.meta, with: w.file }, kube: applyWith(facts.kube, w) },
    'snapshot',
    NOW,
  )
  assert.equal(judged.nodes[0]?.outcome, 'going')
})

test('bad --with files are one line each', async () => {
  await assert.rejects(
    loadWith(join(dir, 'missing.yaml')),
    /--with .*missing.yaml.* cannot be read \(ENOENT\)/,
  )
  await assert.rejects(
    loadWith(file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nspec: {}\n')),
    /only karpenter.sh\/v1 NodePool and karpenter.k8s.aws\/v1 EC2NodeClass/,
  )
  await assert.rejects(loadWith(file('bad.yaml', 'a: [\n')), /document 1 is not valid YAML/)
  await assert.rejects(loadWith(file('empty.yaml', '')), /holds no NodePool or EC2NodeClass/)
})

test('changedFields names the keys that differ, whatever their order', () => {
  assert.deepEqual(changedFields({ a: 1, b: { x: 1, y: 2 } }, { b: { y: 2, x: 1 }, a: 2 }, 'spec'), [
    'spec.a',
  ])
  assert.deepEqual(changedFields({ a: 1 }, { a: 1 }, 'spec'), [])
})
