import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { KarpctlError } from '../../../src/errors.js'
import { loadSnapshot, parseSnapshot, saveSnapshot } from '../../../src/facts/snapshot.js'
import { healthyFacts } from '../../helpers/facts.js'

test('save then load round-trips the facts, redacted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-'))
  const facts = healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.values.token = 'hunter2'
  })
  await saveSnapshot(join(dir, 's.json'), facts)
  assert.ok(!readFileSync(join(dir, 's.json'), 'utf8').includes('hunter2'))
  const back = await loadSnapshot(join(dir, 's.json'))
  assert.equal(back.meta.clusterName, 'demo')
})

test('corrupt and foreign files are one-line input errors', async () => {
  assert.throws(
    () => parseSnapshot('{"schema":', 'x.json'),
    (e: unknown) => e instanceof KarpctlError && /not valid JSON/.test(e.message),
  )
  assert.throws(() => parseSnapshot('{"a":1}', 'x.json'), /not a karpctl snapshot/)
  assert.throws(() => parseSnapshot('{"schema":"karpctl.facts/v1","meta":{}}', 'x.json'), /incomplete/)
  await assert.rejects(loadSnapshot('/nonexistent/x.json'), /does not exist/)
})
