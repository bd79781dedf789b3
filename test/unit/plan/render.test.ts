import assert from 'node:assert/strict'
import { test } from 'node:test'
import { visible } from '../../../src/report/terminal.js'
import { planJson, printable, renderPlan } from '../../../src/plan/render.js'
import type { Plan, Step, Verdict } from '../../../src/plan/types.js'
import { fakeResource } from '../../helpers/fake-resource.js'

const step = (name: string, verdict: Verdict, documents?: Record<string, unknown>): Step => ({
  resource: { ...fakeResource(name), ...(documents ? { documents } : {}) },
  verdict,
  current: null,
})

test('printable: a name from AWS is made visible', () => {
  const raw = 'evil\u001b[2Jname'
  assert.equal(printable(step(raw, { action: 'create', changes: [] })).resource.name, visible(raw))
  assert.notEqual(visible(raw), raw)
})

const plan: Plan = {
  title: 'Install',
  kubeTarget: { context: 'demo', server: 'https://k', match: 'endpoint' },
  steps: [
    step(
      'a',
      { action: 'create', changes: [{ field: 'x', to: 1 }], note: 'said beside' },
      { policy: { v: 1 } },
    ),
    step('b', { action: 'unchanged', changes: [{ field: 'y', from: 1, to: 2 }] }, { policy: { v: 2 } }),
    step('c', { action: 'delete', changes: [], blocked: 'not ours' }),
  ],
}

// Kills: the kube context line, notes, blocked (plain and red), changes and documents hidden on unchanged,
// the blank line after a group, the delete count.
test('renderPlan: every line of a plan, plain', () => {
  assert.equal(
    renderPlan(plan, { color: false, showDocuments: true }),
    [
      'Install',
      "kube context: demo (https://k: the cluster's endpoint)",
      '',
      'g',
      '  + create    thing a',
      '        x: 1',
      '        note: said beside',
      '        policy:',
      '          {',
      '            "v": 1',
      '          }',
      '  = unchanged thing b',
      '  - delete    thing c',
      '        blocked: not ours',
      '',
      'Plan: 1 to create, 0 to update, 1 to delete, 1 unchanged.',
    ].join('\n'),
  )
})

test('renderPlan: coloured signs and a red blocked; no delete count without deletes', () => {
  const p: Plan = { title: 'T', steps: [step('c', { action: 'update', changes: [], blocked: 'no' })] }
  assert.equal(
    renderPlan(p, { color: true }),
    [
      'T',
      '',
      'g',
      '  \u001b[33m~ update   \u001b[0m thing c',
      '        \u001b[31mblocked\u001b[0m: no',
      '',
      'Plan: 0 to create, 1 to update, 0 unchanged.',
    ].join('\n'),
  )
})

test('planJson: kube context, events, notes and blocked only where they are', () => {
  const p: Plan = {
    ...plan,
    steps: [
      step('a', {
        action: 'update',
        changes: [{ field: 'restart', to: 'd', event: true }, { field: 'x' }],
        note: 'n',
        blocked: 'b',
      }),
    ],
  }
  const j = planJson(p)
  assert.deepEqual(j.kubeContext, plan.kubeTarget)
  assert.deepEqual(j.steps[0], {
    address: 'a',
    kind: 'thing',
    name: 'a',
    group: 'g',
    action: 'update',
    changes: [
      { field: 'restart', from: null, to: 'd', event: true },
      { field: 'x', from: null, to: null },
    ],
    note: 'n',
    blocked: 'b',
    dependsOn: [],
    desired: {},
  })
  const bare = planJson({ title: 't', steps: [step('z', { action: 'create', changes: [] })] })
  assert.deepEqual(Object.keys(bare), ['title', 'summary', 'steps'])
  assert.deepEqual(Object.keys(bare.steps[0]!), [
    'address',
    'kind',
    'name',
    'group',
    'action',
    'changes',
    'dependsOn',
    'desired',
  ])
})
