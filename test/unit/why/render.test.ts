import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { judge } from '../../../src/why/judge.js'
import { renderWhy } from '../../../src/why/render.js'
import { loadWhySnapshot, saveWhySnapshot } from '../../../src/why/snapshot.js'
import { pendingPod, pools, whyFacts } from '../../helpers/why.js'

test('one block per pod, a line per NodePool with the fix under it, and the not-judged line; no colour when asked', () => {
  const f = whyFacts()
  pools(f)[0]!.spec.template.spec.taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]
  const text = renderWhy(judge(f, 'snapshot'), false)
  assert.ok(!text.includes('\u001b['))
  assert.match(text, /^pod shop\/web-6d4cf56db6-abcde \(deployment\/web\) — requests cpu 500m, memory 1Gi$/m)
  assert.match(
    text,
    /^ {2}✖ default: did not tolerate taint dedicated=gpu:NoSchedule \(spec\.template\.spec\.taints\)$/m,
  )
  assert.match(text, /^ {6}fix: let deployment\/web tolerate the taint of NodePool default/m)
  assert.match(text, /^Not judged yet: vpc\.amazonaws\.com\/pod-eni/m)
  assert.doesNotMatch(text, /instance types not judged|Not judged yet: instance types/)
  assert.match(
    text,
    /^1 pod: 1 without a NodePool, 0 could not tell, 0 with a NodePool, 0 ignored by Karpenter$/m,
  )
})

test('text from the cluster cannot forge a line or an escape sequence', () => {
  const f = whyFacts([pendingPod({ nodeSelector: { 'team\n✔ default: fits': 'x\u001b[2J' } })])
  const text = renderWhy(judge(f, 'snapshot'), false)
  assert.ok(!text.split('\n').some((l) => l.startsWith('✔')))
  assert.ok(!text.includes('\u001b'))
  assert.ok(text.includes('team\\n✔ default: fits'))
})

test('a why snapshot saves and loads back; a doctor snapshot or a wrong shape is refused naming the path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'why-'))
  const f = whyFacts()
  await saveWhySnapshot(join(dir, 's.json'), f)
  const back = await loadWhySnapshot(join(dir, 's.json'))
  assert.deepEqual(judge(back, 'snapshot', new Date(0)), judge(f, 'snapshot', new Date(0)))
  writeFileSync(join(dir, 'doctor.json'), JSON.stringify({ schema: 'karpctl.facts/v1' }))
  await assert.rejects(
    loadWhySnapshot(join(dir, 'doctor.json')),
    /is not a why snapshot \(expected "schema": "karpctl.why-facts\/v1"\)/,
  )
  writeFileSync(
    join(dir, 'bad.json'),
    JSON.stringify({ ...f, pods: { ok: true, value: [{ metadata: {} }] } }),
  )
  await assert.rejects(
    loadWhySnapshot(join(dir, 'bad.json')),
    /not a valid why snapshot at \$\.pods\.value\[0\]\.metadata\.name/,
  )
  // Instance types feed arithmetic: a count that is not a number is refused, naming the field.
  writeFileSync(
    join(dir, 'types.json'),
    JSON.stringify({
      ...f,
      instanceTypes: { ok: true, value: [{ name: 'm5.large', vcpus: '2', memoryMiB: 8192 }] },
    }),
  )
  await assert.rejects(
    loadWhySnapshot(join(dir, 'types.json')),
    /not a valid why snapshot at \$\.instanceTypes\.value\[0\]\.vcpus/,
  )
  writeFileSync(
    join(dir, 'offers.json'),
    JSON.stringify({ ...f, offerings: { ok: true, value: [{ instanceType: 'm5.large' }] } }),
  )
  await assert.rejects(
    loadWhySnapshot(join(dir, 'offers.json')),
    /not a valid why snapshot at \$\.offerings\.value\[0\]\.zone/,
  )
  // A snapshot from before instance types were read still loads (they are unknown then).
  const { instanceTypes: _t, offerings: _o, ...old } = f
  writeFileSync(join(dir, 'old.json'), JSON.stringify(old))
  assert.equal((await loadWhySnapshot(join(dir, 'old.json'))).instanceTypes, undefined)
})
