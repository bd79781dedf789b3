// What a server-side apply as `karpctl` removes, read from managedFields: only fields karpctl's Apply owns
// alone that the new object no longer sets. Each assertion fails when the rule it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { droppedFields } from '../../../../src/plan/resources/managed-fields.js'

const live = (managedFields: unknown[]) => ({
  metadata: { name: 'acme', labels: { a: '1', b: '2' }, managedFields },
  spec: { weight: 10, taints: [{ key: 'k', effect: 'NoSchedule' }], limits: { cpu: '8' } },
  status: { ready: true },
})
const apply = (fieldsV1: unknown) => ({ manager: 'karpctl', operation: 'Apply', fieldsV1 })
const ALL = {
  'f:metadata': { 'f:labels': { '.': {}, 'f:a': {}, 'f:b': {} } },
  'f:spec': {
    'f:weight': {},
    'f:taints': { 'k:{"key":"k"}': { '.': {}, 'f:key': {} } },
    'f:limits': { '.': {}, 'f:cpu': {} },
  },
}

test('fields karpctl applied and applies no more are removals, with their live value', () => {
  const want = { metadata: { labels: { a: '1' } }, spec: { taints: [] } }
  assert.deepEqual(droppedFields(live([apply(ALL)]), want), [
    { field: 'metadata.labels.b', from: '2', to: undefined },
    { field: 'spec.weight', from: 10, to: undefined },
    { field: 'spec.limits.cpu', from: '8', to: undefined },
  ])
})

test('a list is one field (its items stay with it); nothing is removed when everything is still applied', () => {
  const want = {
    metadata: { labels: { a: '1', b: '2' } },
    spec: { weight: 5, taints: [], limits: { cpu: '1' } },
  }
  assert.deepEqual(droppedFields(live([apply(ALL)]), want), [])
  const noTaints = { ...want, spec: { weight: 5, limits: { cpu: '1' } } }
  assert.deepEqual(droppedFields(live([apply(ALL)]), noTaints), [
    { field: 'spec.taints', from: [{ key: 'k', effect: 'NoSchedule' }], to: undefined },
  ])
})

test("another manager's field, karpctl's own Update, the status subresource and a field already gone are not karpctl's apply to remove", () => {
  const want = { metadata: { labels: { a: '1', b: '2' } }, spec: { taints: [], limits: { cpu: '1' } } }
  // Shared with another manager (even at a parent path): the API server keeps it.
  assert.deepEqual(
    droppedFields(
      live([
        apply(ALL),
        { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:weight': {} } } },
      ]),
      want,
    ),
    [],
  )
  assert.deepEqual(
    droppedFields(
      live([apply(ALL), { manager: 'other', operation: 'Apply', fieldsV1: { 'f:spec': {} } }]),
      want,
    ),
    [],
  )
  assert.deepEqual(
    droppedFields(live([{ manager: 'karpctl', operation: 'Update', fieldsV1: ALL }]), want),
    [],
  )
  assert.deepEqual(
    droppedFields(live([{ ...apply({ 'f:status': { 'f:ready': {} } }), subresource: 'status' }]), want),
    [],
  )
  const gone = live([apply(ALL)])
  delete (gone.spec as { weight?: number }).weight
  assert.deepEqual(droppedFields(gone, want), [])
  assert.deepEqual(droppedFields({ metadata: {} }, want), [])
  assert.deepEqual(droppedFields(null, want), [])
})

test("a field shares only a prefix with another manager's sibling: still karpctl's to remove", () => {
  // Kills: overlaps' every → some (spec.limits.cpu and spec.weight share only `spec`).
  const want = { metadata: { labels: { a: '1', b: '2' } }, spec: { weight: 10, taints: [] } }
  assert.deepEqual(
    droppedFields(
      live([
        apply(ALL),
        { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:weight': {} } } },
      ]),
      want,
    ),
    [{ field: 'spec.limits.cpu', from: '8', to: undefined }],
  )
})

test('managedFields that are not a list, or entries with no fields or empty ones, remove nothing', () => {
  // Kills: `!Array.isArray(entries)` → false, its [] → ['Stryker was here'], and the leaves' [] of a tree
  // that is not a map or has no `f:` keys.
  const want = { metadata: {}, spec: {} }
  assert.deepEqual(droppedFields(live({} as unknown as unknown[]), want), [])
  assert.deepEqual(droppedFields(live('broken' as unknown as unknown[]), want), [])
  assert.deepEqual(droppedFields(live([{ manager: 'karpctl', operation: 'Apply' }]), want), [])
  assert.deepEqual(droppedFields(live([apply({})]), want), [])
  assert.deepEqual(droppedFields(live([apply({ 'f:spec': { 'f:weight': 'x' } })]), want), [
    { field: 'spec.weight', from: 10, to: undefined },
  ])
})
