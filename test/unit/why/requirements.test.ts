import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  addRequirement,
  describe,
  emptyRequirements,
  fromSelector,
  incompatibilities,
  intersect,
  size,
  type Requirement,
} from '../../../src/why/requirements.js'

const r = (key: string, operator: string, values?: string[]) =>
  fromSelector({ key, operator, values }) as Requirement
const set = (...reqs: Requirement[]) => {
  const s = emptyRequirements()
  for (const x of reqs) addRequirement(s, x, { kind: 'nodeSelector' })
  return s
}

test('each operator as Karpenter holds it, and printed as Karpenter prints it', () => {
  assert.equal(describe(r('k', 'In', ['b', 'a'])), 'k In [a b]')
  assert.equal(describe(r('k', 'NotIn', ['a'])), 'k NotIn [a]')
  assert.equal(describe(r('k', 'Exists')), 'k Exists')
  assert.equal(describe(r('k', 'DoesNotExist')), 'k DoesNotExist')
  assert.equal(describe(r('k', 'Gt', ['4'])), 'k Exists >4')
  assert.equal(describe(r('k', 'Lt', ['4'])), 'k Exists <4')
  assert.equal(describe(r('k', 'In', ['a', 'b', 'c', 'd', 'e', 'f', 'g'])), 'k In [a b c d e and 2 others]')
  assert.equal(fromSelector({ key: 'k', operator: 'Gt', values: ['x'] }), undefined)
  assert.equal(fromSelector({ key: 'k', operator: 'Near', values: ['x'] }), undefined)
})

test('intersections: In, NotIn, Exists, DoesNotExist, Gt and Lt', () => {
  assert.deepEqual(intersect(r('k', 'In', ['a', 'b']), r('k', 'In', ['b', 'c'])).values, ['b'])
  assert.deepEqual(intersect(r('k', 'In', ['a', 'b']), r('k', 'NotIn', ['a'])).values, ['b'])
  assert.equal(size(intersect(r('k', 'In', ['a']), r('k', 'NotIn', ['a']))), 0)
  assert.equal(size(intersect(r('k', 'Exists'), r('k', 'NotIn', ['a']))), Infinity)
  assert.equal(size(intersect(r('k', 'DoesNotExist'), r('k', 'In', ['a']))), 0)
  assert.equal(size(intersect(r('k', 'DoesNotExist'), r('k', 'Exists'))), 0)
  assert.deepEqual(intersect(r('k', 'In', ['2', '8', '16']), r('k', 'Gt', ['4'])).values, ['8', '16'])
  assert.deepEqual(intersect(r('k', 'In', ['2', '8', '16', 'x']), r('k', 'Lt', ['10'])).values, ['2', '8'])
  assert.equal(size(intersect(r('k', 'Gt', ['4']), r('k', 'Lt', ['5']))), 0, 'no integer between 4 and 5')
  assert.equal(size(intersect(r('k', 'Gt', ['4']), r('k', 'Lt', ['6']))), Infinity)
})

test('a custom label the NodePool does not define "does not have known values"; a well-known one may be left undefined', () => {
  const np = set(r('karpenter.sh/capacity-type', 'In', ['on-demand']))
  assert.deepEqual(
    incompatibilities(np, set(r('team', 'In', ['a']))).map((i) => i.message),
    ['label "team" does not have known values'],
  )
  assert.deepEqual(incompatibilities(np, set(r('kubernetes.io/arch', 'In', ['arm64']))), [])
  assert.deepEqual(incompatibilities(np, set(r('karpenter.k8s.aws/instance-family', 'In', ['m5']))), [])
  // Only excluding values asks for nothing: a node without the label satisfies it.
  assert.deepEqual(incompatibilities(np, set(r('team', 'NotIn', ['a']))), [])
  assert.deepEqual(incompatibilities(np, set(r('team', 'DoesNotExist'))), [])
  // Exists, Gt and Lt ask for a value.
  assert.equal(incompatibilities(np, set(r('team', 'Exists'))).length, 1)
  assert.equal(incompatibilities(np, set(r('gpus', 'Gt', ['1']))).length, 1)
  // kubernetes.io/hostname is not one of Karpenter's well-known labels.
  assert.equal(
    incompatibilities(np, set(r('kubernetes.io/hostname', 'In', ['ip-10-0-0-1'])))[0]?.kind,
    'undefined-label',
  )
})

test('a key both define needs a value in common, unless both only exclude', () => {
  const np = set(r('karpenter.sh/capacity-type', 'In', ['on-demand']), r('team', 'NotIn', ['b']))
  assert.deepEqual(
    incompatibilities(np, set(r('karpenter.sh/capacity-type', 'In', ['spot']))).map((i) => i.message),
    [
      'incompatible requirements, key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [spot] not in karpenter.sh/capacity-type In [on-demand]',
    ],
  )
  assert.deepEqual(incompatibilities(np, set(r('team', 'NotIn', ['a']))), [])
  assert.deepEqual(incompatibilities(np, set(r('team', 'DoesNotExist'))), [])
  assert.equal(incompatibilities(np, set(r('team', 'In', ['b']))).length, 1)
  assert.deepEqual(incompatibilities(np, set(r('team', 'In', ['c']))), [])
  assert.deepEqual(incompatibilities(np, set(r('karpenter.sh/capacity-type', 'NotIn', ['spot']))), [])
  assert.equal(incompatibilities(np, set(r('karpenter.sh/capacity-type', 'DoesNotExist'))).length, 1)
})
