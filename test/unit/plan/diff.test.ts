import assert from 'node:assert/strict'
import { test } from 'node:test'
import { leafChanges, tagChanges } from '../../../src/plan/diff.js'

test('maps are walked key by key: a changed leaf old → new, a new one from undefined, a gone one to undefined', () => {
  const from = { controller: { resources: { requests: { cpu: '1', memory: '1Gi' } } }, replicas: 2 }
  const to = { controller: { resources: { requests: { cpu: '500m' } } }, replicas: 2, logLevel: 'debug' }
  assert.deepEqual(leafChanges(from, to, 'values'), [
    { field: 'values.controller.resources.requests.cpu', from: '1', to: '500m' },
    { field: 'values.controller.resources.requests.memory', from: '1Gi', to: undefined },
    { field: 'values.logLevel', from: undefined, to: 'debug' },
  ])
  assert.deepEqual(leafChanges(from, structuredClone(from), 'values'), [])
  // From nothing: every leaf, as set.
  assert.deepEqual(leafChanges(undefined, { a: { b: 1 }, c: [1, 2] }, ''), [
    { field: 'a.b', from: undefined, to: 1 },
    { field: 'c', from: undefined, to: [1, 2] },
  ])
})

test('a leaf that changes kind is one change; lists of scalars are compared whole, a one-item list equals its item', () => {
  assert.deepEqual(leafChanges({ a: { b: 1 } }, { a: 'x' }, ''), [{ field: 'a', from: { b: 1 }, to: 'x' }])
  assert.deepEqual(leafChanges({ a: ['x', 'y'] }, { a: ['y', 'x'] }, ''), [
    { field: 'a', from: ['x', 'y'], to: ['y', 'x'] },
  ])
  assert.deepEqual(leafChanges({ Action: ['sts:AssumeRole'] }, { Action: 'sts:AssumeRole' }, ''), [])
})

test('IAM statements: paired by Sid and walked; an unnamed one paired with its equal; the rest shown whole', () => {
  const deny = { Sid: 'DenyHTTP', Effect: 'Deny', Action: 'sqs:*' }
  const send = { Effect: 'Allow', Action: 'sqs:SendMessage', Principal: { Service: 'events.amazonaws.com' } }
  const own = { Sid: 'Own', Effect: 'Allow', Action: 'sqs:*' }
  // A named statement edited: its leaf; an added one whole; the unnamed one equal on both sides: nothing.
  assert.deepEqual(
    leafChanges(
      { Statement: [{ ...deny, Action: 'sqs:Send*' }, send] },
      { Statement: [send, deny, own] },
      'Policy',
    ),
    [
      { field: 'Policy.Statement.DenyHTTP.Action', from: 'sqs:Send*', to: 'sqs:*' },
      { field: 'Policy.Statement.Own', from: undefined, to: own },
    ],
  )
  // As many unnamed left on each side (one statement edited): paired in order and walked.
  const edited = { ...send, Principal: { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] } }
  assert.deepEqual(leafChanges({ Statement: [send] }, { Statement: [edited] }, 'trust'), [
    {
      field: 'trust.Statement.0.Principal.Service',
      from: 'events.amazonaws.com',
      to: ['events.amazonaws.com', 'sqs.amazonaws.com'],
    },
  ])
  // Uneven: the one gone whole, the two new whole.
  const other = { Effect: 'Allow', Action: 'x' }
  assert.deepEqual(leafChanges({ S: [send] }, { S: [edited, other] }, ''), [
    { field: 'S.0', from: undefined, to: edited },
    { field: 'S.1', from: undefined, to: other },
    { field: 'S.0', from: send, to: undefined },
  ])
  // Reordered named statements are the same statements: paired by Sid, never by place.
  assert.deepEqual(leafChanges({ S: [deny, own] }, { S: [own, deny] }, ''), [])
  assert.deepEqual(leafChanges({ S: [deny, own] }, { S: [own, { ...deny, Action: 'sqs:Send*' }] }, ''), [
    { field: 'S.DenyHTTP.Action', from: 'sqs:*', to: 'sqs:Send*' },
  ])
  // A whole list gone: each statement removed by its name (Sid, else place), not the list as one value.
  assert.deepEqual(leafChanges({ S: [deny, send] }, {}, ''), [
    { field: 'S.DenyHTTP', from: deny, to: undefined },
    { field: 'S.1', from: send, to: undefined },
  ])
  // A lone statement (as IAM may answer) is the list of one.
  assert.deepEqual(leafChanges({ Statement: send }, { Statement: [send] }, ''), [])
  assert.deepEqual(leafChanges({ Statement: deny }, { Statement: [deny, own] }, ''), [
    { field: 'Statement.Own', from: undefined, to: own },
  ])
})

test('the lines carry the shown values (the redacted document) while the diff reads the real ones', () => {
  const from = { db: { password: 'old-secret', host: 'a' } }
  const to = { db: { password: 'new-secret', host: 'a' } }
  const shown = { from: { db: { password: '[R]', host: 'a' } }, to: { db: { password: '[R]', host: 'a' } } }
  assert.deepEqual(leafChanges(from, to, 'values', shown), [
    { field: 'values.db.password', from: '[R]', to: '[R]' },
  ])
})

test('tagChanges: only the tags wanted that differ, each with its value before', () => {
  assert.deepEqual(tagChanges({ a: '1', b: '2', other: 'kept' }, { a: '1', b: '3', c: '4' }), [
    { field: 'tags.b', from: '2', to: '3' },
    { field: 'tags.c', from: undefined, to: '4' },
  ])
})

// Kills: isMap/objects/sidOf edges, the lone-object shown list, absent sides of lists, pairing by equality.
test('leafChanges: edges of maps, lists and Sids', () => {
  assert.deepEqual(leafChanges(null, { a: 1 }, 'p'), [{ field: 'p', from: null, to: { a: 1 } }])
  assert.deepEqual(leafChanges([], [{ a: 1 }], 'p'), [{ field: 'p', from: [], to: [{ a: 1 }] }])
  assert.deepEqual(leafChanges([{ a: 1 }, 2], [{ a: 1 }], 'p'), [
    { field: 'p', from: [{ a: 1 }, 2], to: [{ a: 1 }] },
  ])
  assert.deepEqual(leafChanges([{ Sid: '', a: 1 }], [{ Sid: '', a: 2 }], 'p'), [
    { field: 'p.0.a', from: 1, to: 2 },
  ])
  assert.deepEqual(leafChanges([{ Sid: 5, a: 1 }], [{ Sid: 5, a: 2 }], 'p'), [
    { field: 'p.0.a', from: 1, to: 2 },
  ])
  assert.deepEqual(leafChanges({ Sid: 'A', x: 1 }, [{ Sid: 'A', x: 2 }], 'S'), [
    { field: 'S.A.x', from: 1, to: 2 },
  ])
  assert.deepEqual(leafChanges(undefined, [{ a: 1 }], 'p'), [{ field: 'p.0', from: undefined, to: { a: 1 } }])
  assert.deepEqual(leafChanges([{ a: 1 }], [{ a: 2 }], 'p', { from: undefined, to: [{ a: 'X' }] }), [
    { field: 'p.0.a', from: undefined, to: 'X' },
  ])
  assert.deepEqual(leafChanges([{ a: 1 }, { b: 2 }], [{ b: 2 }, { c: 3 }], 'p'), [
    { field: 'p.1.a', from: 1, to: undefined },
    { field: 'p.1.c', from: undefined, to: 3 },
  ])
})
