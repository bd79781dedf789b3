// One ServiceAccount annotation (issue 18): its shape, where it reads the ServiceAccount, each verdict
// (with and without a controller restart, and a restart left pending by a killed run), and the exact
// patches: the annotation with its record (and the pending marker), the restart, the marker removed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RESTART_PENDING } from '../../../../src/plan/resources/restart.js'
import { ADDED_ANNOTATIONS, serviceAccountAnnotation } from '../../../../src/plan/resources/sa-annotation.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const KEY = 'eks.amazonaws.com/role-arn'
const VALUE = 'arn:aws:iam::123456789012:role/demo-karpenter'
const PATH = '/api/v1/namespaces/kube-system/serviceaccounts/karpenter'
const DEPLOYMENT = { namespace: 'kube-system', name: 'karpenter' }
const make = (restart = false) =>
  serviceAccountAnnotation({
    namespace: 'kube-system',
    name: 'karpenter',
    key: KEY,
    value: VALUE,
    group: 'Controller',
    ...(restart ? { restart: DEPLOYMENT } : {}),
  })
const sa = (annotations?: Record<string, string>) => ({ metadata: annotations ? { annotations } : {} })
const NOTE = 'recorded in the karpctl.io/added-annotations annotation'
const RESTART_CHANGE = { field: 'restart', to: 'deployment kube-system/karpenter', event: true }

test('the record is the annotation teardown reads on the ServiceAccount', () => {
  assert.equal(ADDED_ANNOTATIONS, 'karpctl.io/added-annotations')
})

test('shape: addressed by the key, in the given group, its document the annotated ServiceAccount', () => {
  const { observe, verdict, apply, ...shape } = make()
  assert.equal(
    [observe, verdict, apply].every((f) => typeof f === 'function'),
    true,
  )
  assert.deepEqual(shape, {
    address: `kube.sa-annotation.${KEY}`,
    kind: 'ServiceAccount annotation',
    name: `kube-system/karpenter ${KEY}`,
    group: 'Controller',
    dependsOn: [],
    desired: { [KEY]: VALUE },
    documents: {
      ServiceAccount: {
        metadata: { namespace: 'kube-system', name: 'karpenter', annotations: { [KEY]: VALUE } },
      },
    },
    permissions: [],
  })
})

test('observe: the ServiceAccount at its namespaced path, or null when there is none', async () => {
  const there = sa({ [KEY]: VALUE })
  assert.deepEqual(await make().observe(recordingEnv({ kube: { [PATH]: there } }).env), there)
  const elsewhere = { '/api/v1/namespaces/karpenter/serviceaccounts/karpenter': there }
  assert.equal(await make().observe(recordingEnv({ kube: elsewhere }).env), null)
})

test('verdict: a missing ServiceAccount blocks, naming it', () => {
  assert.deepEqual(make().verdict(null), {
    action: 'update',
    changes: [],
    blocked: 'ServiceAccount kube-system/karpenter does not exist',
  })
})

test('verdict: the annotation in place is unchanged, a restart marker ignored when no restart is asked', () => {
  const unchanged = { action: 'unchanged', changes: [] }
  assert.deepEqual(make().verdict(sa({ [KEY]: VALUE })), unchanged)
  assert.deepEqual(make().verdict(sa({ [KEY]: VALUE, [RESTART_PENDING]: 'true' })), unchanged)
  assert.deepEqual(make(true).verdict(sa({ [KEY]: VALUE })), unchanged)
})

test('verdict: a missing or different annotation changes; with a restart, the restart follows', () => {
  assert.deepEqual(make().verdict(sa()), {
    action: 'update',
    changes: [{ field: KEY, from: undefined, to: VALUE }],
    note: NOTE,
  })
  assert.deepEqual(make(true).verdict(sa({ [KEY]: 'old' })), {
    action: 'update',
    changes: [{ field: KEY, from: 'old', to: VALUE }, RESTART_CHANGE],
    note: NOTE,
  })
  assert.deepEqual(make(true).verdict(sa()), {
    action: 'update',
    changes: [{ field: KEY, from: undefined, to: VALUE }, RESTART_CHANGE],
    note: NOTE,
  })
})

test('verdict: a restart left pending by a killed run is redone even though the annotation is in place', () => {
  assert.deepEqual(make(true).verdict(sa({ [KEY]: VALUE, [RESTART_PENDING]: 'true' })), {
    action: 'update',
    changes: [RESTART_CHANGE],
    note: NOTE,
  })
})

const annotate = (annotations: Record<string, string | null>) => ({
  method: 'PATCH',
  path: PATH,
  body: { metadata: { annotations } },
  contentType: 'application/merge-patch+json',
})

test('apply: one merge patch of the annotation and its record, kept with the keys recorded before', async () => {
  const r = recordingEnv()
  await make().apply(r.env, sa({ [ADDED_ANNOTATIONS]: `a,,${KEY}` }))
  assert.deepEqual(r.kubeWrites, [annotate({ [KEY]: VALUE, [ADDED_ANNOTATIONS]: `a,${KEY}` })])
  const fresh = recordingEnv()
  await make().apply(fresh.env, sa())
  assert.deepEqual(fresh.kubeWrites, [annotate({ [KEY]: VALUE, [ADDED_ANNOTATIONS]: KEY })])
  const none = recordingEnv()
  await make().apply(none.env, null)
  assert.deepEqual(none.kubeWrites, [annotate({ [KEY]: VALUE, [ADDED_ANNOTATIONS]: KEY })])
})

test('apply: with a restart, the marker set with the annotation, the rollout, then the marker removed', async () => {
  const r = recordingEnv()
  await make(true).apply(r.env, sa({ [ADDED_ANNOTATIONS]: 'a,b' }))
  assert.deepEqual(r.kubeWrites, [
    annotate({ [KEY]: VALUE, [ADDED_ANNOTATIONS]: `a,b,${KEY}`, [RESTART_PENDING]: 'true' }),
    {
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/kube-system/deployments/karpenter',
      body: {
        spec: {
          template: {
            metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '1970-01-01T00:00:00.000Z' } },
          },
        },
      },
      contentType: 'application/strategic-merge-patch+json',
    },
    annotate({ [RESTART_PENDING]: null }),
  ])
})
