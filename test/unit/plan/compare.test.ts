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

test('contains: a desired object is never contained in null, a string or a list', () => {
  // Kills: each part of the "not an object" guard dropped (a string's or a list's own properties
  // would match, null would throw).
  assert.equal(contains(undefined, { a: 1 }), false)
  assert.equal(contains(null, { a: 1 }), false)
  assert.equal(contains('ab', { length: 2 }), false)
  assert.equal(contains([1], { 0: 1 }), false)
  assert.equal(contains({ 0: 1, length: 1 }, { 0: 1 }), true)
})

test('changedFields: a field is reported whole unless both sides are plain objects', () => {
  // Kills: the live value read from a non-object (a string's length); recursion into a desired
  // list, a desired scalar or null, or a live null, list or string.
  assert.deepEqual(changedFields(null, { a: 1 }), ['a'])
  assert.deepEqual(changedFields('abc', { length: 3 }), ['length'])
  assert.deepEqual(changedFields({ a: { 0: 1 } }, { a: [1, 2] }), ['a'])
  assert.deepEqual(changedFields({ a: { b: 1 } }, { a: 'x' }), ['a'])
  assert.deepEqual(changedFields({ a: { b: 1 } }, { a: null }), ['a'])
  assert.deepEqual(changedFields({ a: null }, { a: { b: 1 } }), ['a'])
  assert.deepEqual(changedFields({ a: [1] }, { a: { b: 1 } }), ['a'])
  assert.deepEqual(changedFields({ a: 's' }, { a: { length: 1 } }), ['a'])
  assert.deepEqual(changedFields({ a: { b: { c: 1, d: 2 } } }, { a: { b: { c: 2 } } }, 'x.'), ['x.a.b.c'])
})
