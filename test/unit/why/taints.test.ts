import assert from 'node:assert/strict'
import { test } from 'node:test'
import { taintText, tolerates, untolerated } from '../../../src/why/taints.js'

const gpu = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }

test('tolerations match taints as Kubernetes matches them', () => {
  assert.equal(
    tolerates({ key: 'nvidia.com/gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }, gpu),
    true,
  )
  assert.equal(
    tolerates({ key: 'nvidia.com/gpu', value: 'true' }, gpu),
    true,
    'empty operator is Equal, empty effect any',
  )
  assert.equal(tolerates({ key: 'nvidia.com/gpu', operator: 'Equal', value: 'false' }, gpu), false)
  assert.equal(tolerates({ key: 'nvidia.com/gpu', operator: 'Exists' }, gpu), true)
  assert.equal(tolerates({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }, gpu), false)
  assert.equal(tolerates({ operator: 'Exists' }, gpu), true, 'an empty key with Exists tolerates everything')
  assert.equal(tolerates({ key: 'other', operator: 'Exists' }, gpu), false)
  assert.equal(
    tolerates({ key: 'nvidia.com/gpu', operator: 'Equal', value: true }, gpu),
    false,
    'a non-string value matches nothing',
  )
  assert.equal(
    tolerates({ key: 'dedicated', operator: 'Equal' }, { key: 'dedicated', effect: 'NoSchedule' }),
    true,
  )
  assert.equal(tolerates({ key: 'nvidia.com/gpu', operator: 'Gt', value: 'true' }, gpu), false)
})

test('the first taint not tolerated, in kubectl notation', () => {
  const taints = [{ key: 'a', effect: 'NoSchedule' }, gpu]
  assert.deepEqual(untolerated(taints, [{ key: 'a', operator: 'Exists' }]), gpu)
  assert.equal(untolerated(taints, [{ operator: 'Exists' }]), undefined)
  assert.equal(untolerated(undefined, undefined), undefined)
  assert.equal(taintText(gpu), 'nvidia.com/gpu=true:NoSchedule')
  assert.equal(taintText({ key: 'a', effect: 'NoSchedule' }), 'a:NoSchedule')
})
