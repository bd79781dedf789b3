import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  canonical,
  changedFields,
  contains,
  isOwned,
  missingTags,
  sameDocument,
} from '../../../src/plan/compare.js'

test('sameDocument ignores key order and one-element lists (IAM answers either)', () => {
  assert.ok(sameDocument({ b: 1, a: ['x'] }, { a: 'x', b: 1 }))
  assert.ok(!sameDocument({ a: ['x', 'y'] }, { a: ['y', 'x'] }), 'order of a real list matters')
  assert.deepEqual(canonical({ z: [{ b: 1, a: 2 }] }), { z: { a: 2, b: 1 } })
})

test('contains: the desired fields are in the live object; extra live fields do not matter', () => {
  assert.ok(contains({ spec: { a: 1, b: 2 }, status: {} }, { spec: { a: 1 } }))
  assert.ok(!contains({ spec: { a: 1 } }, { spec: { a: 2 } }))
  assert.deepEqual(changedFields({ spec: { a: 1, c: { d: 1 } } }, { spec: { a: 2, c: { d: 1 }, e: 3 } }), [
    'spec.a',
    'spec.e',
  ])
})

test('ownership is every ownership tag with its value', () => {
  const own = { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'demo' }
  assert.ok(isOwned({ ...own, other: 'x' }, own))
  assert.ok(!isOwned({ 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'other' }, own))
  assert.deepEqual(missingTags({ a: '1' }, { a: '1', b: '2' }), [['b', '2']])
})
