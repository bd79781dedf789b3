import assert from 'node:assert/strict'
import { test } from 'node:test'
import { planJson, renderPlan } from '../../../../src/plan/render.js'
import {
  fieldChanges,
  kubeObject,
  objectPath,
  type KubeObject,
} from '../../../../src/plan/resources/kube-object.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'

const OWNER: [string, string] = ['app.kubernetes.io/managed-by', 'karpctl']

const pool = (spec: Record<string, unknown>, labels = { [OWNER[0]]: OWNER[1] }): KubeObject => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default', labels },
  spec,
})

const resource = (object: KubeObject, adopt = false) =>
  kubeObject({ address: 'kube.nodepool.default', object, ownerLabel: OWNER, adopt, dependsOn: [] })

test('objectPath: cluster-scoped and namespaced objects, kinds ending in s', () => {
  assert.equal(objectPath(pool({})), '/apis/karpenter.sh/v1/nodepools/default')
  assert.equal(
    objectPath({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'n' } }),
    '/api/v1/namespaces/n/configmaps/x',
  )
  assert.equal(
    objectPath({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'd' } }),
    '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/d',
  )
})

test('an update shows each changed field with its live value and the desired one', () => {
  const want = pool({ limits: { cpu: '1000' }, weight: 10, disruption: { consolidateAfter: '1m' } })
  const live = {
    ...pool({ limits: { cpu: '500', memory: '1Ti' }, disruption: { consolidateAfter: '1m' } }),
    status: { conditions: [] },
  }
  const v = resource(want).verdict(live)
  assert.equal(v.action, 'update')
  assert.deepEqual(v.changes, [
    { field: 'spec.limits.cpu', from: '500', to: '1000' },
    { field: 'spec.weight', from: undefined, to: 10 },
  ])
})

test('a changed list is shown whole, old and new; a label key keeps its dots', () => {
  const want = pool({ taints: [{ key: 'a', effect: 'NoSchedule' }] }, { [OWNER[0]]: OWNER[1], 'x.io/t': 'b' })
  const live = pool({ taints: [{ key: 'z', effect: 'NoSchedule' }] }, { [OWNER[0]]: OWNER[1], 'x.io/t': 'a' })
  assert.deepEqual(resource(want).verdict(live).changes, [
    { field: 'metadata.labels.x.io/t', from: 'a', to: 'b' },
    {
      field: 'spec.taints',
      from: [{ key: 'z', effect: 'NoSchedule' }],
      to: [{ key: 'a', effect: 'NoSchedule' }],
    },
  ])
})

test("same fields: unchanged; absent: create; not labelled as karpctl: blocked, or used as it is on --adopt; karpctl's own: from → to", () => {
  const want = pool({ weight: 1 })
  assert.deepEqual(resource(want).verdict(pool({ weight: 1 })), { action: 'unchanged', changes: [] })
  // A new object lists the settings it gets.
  assert.deepEqual(resource(want).verdict(null), {
    action: 'create',
    changes: [
      { field: 'metadata.labels', to: { [OWNER[0]]: OWNER[1] } },
      { field: 'spec.weight', to: 1 },
    ],
  })
  const foreign = pool({ weight: 2 }, {})
  assert.match(resource(want).verdict(foreign).blocked ?? '', /pass --adopt/)
  // Another tool's object is never rewritten (no record could give a spec back): kept as it is.
  const adopted = resource(want, true).verdict(foreign)
  assert.equal(adopted.blocked, undefined)
  assert.equal(adopted.action, 'unchanged')
  assert.deepEqual(adopted.changes, [])
  assert.deepEqual(resource(want).verdict(pool({ weight: 2 })).changes, [
    { field: 'spec.weight', from: 2, to: 1 },
  ])
})

test('the plan prints old → new, and --json carries both', () => {
  const r = resource(pool({ limits: { cpu: '1000' } }))
  const step = { resource: r, current: null, verdict: r.verdict(pool({ limits: { cpu: '500' } })) }
  const plan = { title: 'T', steps: [step] }
  assert.match(renderPlan(plan, { color: false }), /\n {8}spec\.limits\.cpu: 500 → 1000\n/)
  assert.deepEqual(planJson(plan).steps[0]?.changes, [{ field: 'spec.limits.cpu', from: '500', to: '1000' }])
})

test('fieldChanges: against no live object every field is new; a map replacing a non-map is one change, not its leaves', () => {
  // Kills: isMap → true (null read as a map) and `isMap(to) && isMap(from)` → `||`.
  assert.deepEqual(fieldChanges(null, { spec: { weight: 1 } }), [
    { field: 'spec', from: undefined, to: { weight: 1 } },
  ])
  assert.deepEqual(fieldChanges({ spec: 'none' }, { spec: { weight: 1 } }), [
    { field: 'spec', from: 'none', to: { weight: 1 } },
  ])
  assert.deepEqual(fieldChanges({ spec: [1] }, { spec: { weight: 1 } }), [
    { field: 'spec', from: [1], to: { weight: 1 } },
  ])
})

test('a Kubernetes object step: Kubernetes group, no IAM permissions, the object as desired and as its document', () => {
  // Kills: group '' and permissions ['Stryker was here'].
  const object = pool({ weight: 1 })
  const r = kubeObject({
    address: 'kube.nodepool.default',
    object,
    ownerLabel: OWNER,
    adopt: false,
    dependsOn: ['x'],
  })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired, r.documents, r.permissions],
    ['kube.nodepool.default', 'NodePool', 'default', 'Kubernetes', ['x'], object, { NodePool: object }, []],
  )
})

test('an object not labelled as karpctl is blocked as an update with no changes, the label named', () => {
  // Kills: the blocked verdict's action and changes literals.
  assert.deepEqual(resource(pool({ weight: 1 })).verdict(pool({ weight: 2 }, {})), {
    action: 'update',
    changes: [],
    blocked:
      'exists and was not made by karpctl (no app.kubernetes.io/managed-by=karpctl label): pass --adopt to install beside it (it is then used as it is), or remove it',
  })
})

test("apply: server-side applies a new object or karpctl's own; never another tool's, labelled otherwise or not at all", async () => {
  // Kills: apply → {} and each part of the owner check (including labels?.[k] → labels[k]).
  const object = pool({ weight: 1 })
  const applied: [string, unknown][] = []
  const env = {
    kube: { apply: async (p: string, o: unknown) => void applied.push([p, o]) },
  } as unknown as ApplyEnv
  const r = resource(object, true)
  await r.apply(env, null)
  await r.apply(env, pool({ weight: 2 }))
  await r.apply(env, pool({ weight: 2 }, { [OWNER[0]]: 'helm' }))
  await r.apply(env, { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'default' } })
  const path = '/apis/karpenter.sh/v1/nodepools/default'
  assert.deepEqual(applied, [
    [path, object],
    [path, object],
  ])
})

test("observe reads the object's path; --adopt keeps an unlabelled object as it is, saying why", async () => {
  // Kills: observe → undefined, keptNote → undefined / ``, labels?.[k] → labels[k] (an object with no labels).
  const object = pool({ weight: 1 })
  const env = {
    kube: { get: async (p: string) => (p === objectPath(object) ? object : null) },
  } as unknown as ApplyEnv
  assert.deepEqual(await resource(object).observe(env), object)
  const bare = { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'default' } }
  assert.deepEqual(resource(object, true).verdict(bare), {
    action: 'unchanged',
    changes: [],
    note: "not karpctl's (no app.kubernetes.io/managed-by=karpctl label): used as it is, never changed or deleted by karpctl",
  })
})
