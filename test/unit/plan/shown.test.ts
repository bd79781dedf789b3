import assert from 'node:assert/strict'
import { test } from 'node:test'
import { REDACTED } from '../../../src/redact/redact.js'
import { changeText, redactAt, redactedStep, valueText } from '../../../src/plan/shown.js'
import type { Step } from '../../../src/plan/types.js'

test('changeText: a create lists the value; otherwise old → new, (not set) → new, old → (removed); an event its value', () => {
  assert.equal(
    changeText({ field: 'spec.limits', to: { cpu: '1000' } }, 'create'),
    'spec.limits: {cpu: 1000}',
  )
  assert.equal(changeText({ field: 'cpu', from: '500', to: '1000' }, 'update'), 'cpu: 500 → 1000')
  assert.equal(changeText({ field: 'weight', to: 10 }, 'update'), 'weight: (not set) → 10')
  // A removal never reads as a value of "(none)".
  assert.equal(
    changeText({ field: 'spec.limits.cpu', from: '1000' }, 'update'),
    'spec.limits.cpu: 1000 → (removed)',
  )
  assert.equal(
    changeText({ field: 'chart', from: 'karpenter-1.0.0' }, 'delete'),
    'chart: karpenter-1.0.0 → (removed)',
  )
  assert.equal(
    changeText({ field: 'restart', to: 'deployment a/b', event: true }, 'update'),
    'restart: deployment a/b',
  )
  assert.equal(changeText({ field: 'x', from: '', to: null }, 'update'), 'x: "" → null')
  // A long value is cut, with the cut shown.
  const line = changeText({ field: 'f', to: 'y'.repeat(400) }, 'create')
  assert.equal(line.length, 'f: '.length + 300)
  assert.ok(line.endsWith('...'))
})

test('valueText: flow form for data; node selector requirements as Kubernetes people say them', () => {
  assert.equal(valueText({ a: [1, true], b: { c: 'd' } }), '{a: [1, true], b: {c: d}}')
  assert.equal(
    valueText([
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
      { key: 'karpenter.k8s.aws/instance-family', operator: 'Exists' },
      { key: 'k', operator: 'In', values: ['a'], minValues: 2 },
    ]),
    '[kubernetes.io/arch In [amd64, arm64], karpenter.k8s.aws/instance-family Exists, k In [a] (min 2)]',
  )
  // Not a requirement (another key): the plain form.
  assert.equal(
    valueText({ key: 'a', operator: 'Equal', effect: 'NoSchedule' }),
    '{key: a, operator: Equal, effect: NoSchedule}',
  )
})

test('redactAt: a leaf is judged by the key path it sits under; the rest by its shape', () => {
  assert.equal(redactAt('values.db.password', 'hunter2'), REDACTED)
  assert.equal(redactAt('values.controller.env', 'x'), 'x')
  assert.deepEqual(redactAt('values.extraEnv', [{ name: 'AWS_SECRET_ACCESS_KEY', value: 'abc' }]), [
    { name: 'AWS_SECRET_ACCESS_KEY', value: REDACTED },
  ])
  assert.equal(redactAt('values.note', 'use AKIAIOSFODNN7EXAMPLE'), `use ${REDACTED}`)
  assert.equal(redactAt('values.x', undefined), undefined)
})

test('redactedStep: changes, desired state, documents, note and blocked all redacted; the resource itself untouched', () => {
  const values = { apiToken: 'tok-123', settings: { clusterName: 'demo' } }
  const step = {
    resource: {
      address: 'helm.x',
      kind: 'Helm release',
      name: 'n/x',
      group: 'g',
      dependsOn: [],
      desired: { values },
      documents: { values },
      permissions: [],
    },
    current: null,
    verdict: {
      action: 'update',
      changes: [{ field: 'values.apiToken', from: 'tok-0', to: 'tok-123' }],
      note: 'password=tok-123',
      blocked: 'Bearer abcdefghijkl',
    },
  } as unknown as Step
  const r = redactedStep(step)
  assert.doesNotMatch(JSON.stringify(r), /tok-/)
  assert.doesNotMatch(JSON.stringify(r), /abcdefghijkl/)
  assert.deepEqual(r.verdict.changes, [{ field: 'values.apiToken', from: REDACTED, to: REDACTED }])
  assert.deepEqual((r.resource.documents as { values: unknown }).values, {
    apiToken: REDACTED,
    settings: { clusterName: 'demo' },
  })
  assert.equal(values.apiToken, 'tok-123', 'the real values stay for the apply')
})

// Kills: the undefined shortcut, requirement's key/operator guard, the clip's bound, the create condition.
test('shown edges: undefined stays undefined, a non-requirement is flow form, 300 characters are not cut', () => {
  assert.equal(redactAt('a.b', undefined), undefined)
  assert.equal(valueText({ key: 1, operator: 'In' }), '{key: 1, operator: In}')
  assert.equal(valueText({ key: 'k', operator: 2 }), '{key: k, operator: 2}')
  assert.equal(changeText({ field: 'f', to: 'y'.repeat(300) }, 'create'), `f: ${'y'.repeat(300)}`)
  assert.equal(changeText({ field: 'f', from: 'a', to: 'b' }, 'create'), 'f: a → b')
})
