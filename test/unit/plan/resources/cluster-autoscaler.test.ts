// Scaling a cluster-autoscaler Deployment to 0: its shape, which Deployment it observes (namespace and
// name both match), each verdict, and the one merge patch its apply makes — recording the first count.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import type { AutoscalerDeployment } from '../../../../src/facts/cluster-autoscalers.js'
import { clusterAutoscalerScaleDown } from '../../../../src/plan/resources/cluster-autoscaler.js'
import { SCALED_FROM } from '../../../../src/desired/ownership.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const want = () =>
  clusterAutoscalerScaleDown({
    namespace: 'kube-system',
    name: 'cluster-autoscaler',
    dependsOn: ['helm.karpenter'],
  })
const PATH = '/apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler'
const deployment = (replicas: number, annotations: Record<string, string> = {}): AutoscalerDeployment => ({
  namespace: 'kube-system',
  name: 'cluster-autoscaler',
  replicas,
  annotations,
  args: [],
})
const raw = (namespace: string, name: string, replicas: number) => ({
  metadata: { namespace, name },
  spec: { replicas },
})

test('shape: the named Deployment in the Kubernetes group, desired at 0 replicas, no AWS permissions', () => {
  const r = want()
  assert.deepEqual(shapeOf(r), {
    address: 'kube.cluster-autoscaler',
    kind: 'Deployment',
    name: 'kube-system/cluster-autoscaler',
    group: 'Kubernetes',
    dependsOn: ['helm.karpenter'],
    desired: { replicas: 0 },
    permissions: [],
  })
})

test('observe picks the autoscaler whose namespace and name both match, not a namesake elsewhere', async () => {
  // Kills: the find's `&&` made `||`, or either comparison made `true`.
  const { env } = recordingEnv({
    kube: {
      '/apis/apps/v1/deployments': {
        items: [
          raw('other', 'cluster-autoscaler', 5),
          raw('kube-system', 'cluster-autoscaler-extra', 4),
          raw('kube-system', 'cluster-autoscaler', 3),
        ],
      },
    },
  })
  assert.deepEqual(await want().observe(env), {
    namespace: 'kube-system',
    name: 'cluster-autoscaler',
    replicas: 3,
    annotations: {},
    args: [],
  })
})

test('observe answers null when only namesakes in other namespaces or with other names exist', async () => {
  const { env } = recordingEnv({
    kube: {
      '/apis/apps/v1/deployments': {
        items: [raw('other', 'cluster-autoscaler', 5), raw('kube-system', 'cluster-autoscaler-extra', 4)],
      },
    },
  })
  assert.equal(await want().observe(env), null)
})

test('verdict: unchanged with a note when the Deployment is not found', () => {
  assert.deepEqual(want().verdict(null), {
    action: 'unchanged',
    changes: [],
    note: 'not found: nothing to scale down',
  })
})

test('verdict: unchanged without a note when it is already at 0 replicas', () => {
  assert.deepEqual(want().verdict(deployment(0)), { action: 'unchanged', changes: [] })
})

test('verdict: update replicas to 0, noting the count recorded for teardown', () => {
  assert.deepEqual(want().verdict(deployment(2)), {
    action: 'update',
    changes: [{ field: 'replicas', from: 2, to: 0 }],
    note: `recorded as ${SCALED_FROM}=2, so teardown gives the replicas back`,
  })
})

test('apply makes no write when the Deployment is not found', async () => {
  const { env, kubeWrites } = recordingEnv()
  await want().apply(env, null)
  assert.deepEqual(kubeWrites, [])
})

test('apply makes no write when it is already at 0 replicas', async () => {
  const { env, kubeWrites } = recordingEnv()
  await want().apply(env, deployment(0))
  assert.deepEqual(kubeWrites, [])
})

test('apply merge-patches replicas to 0 and records the current count in the same patch', async () => {
  const { env, kubeWrites } = recordingEnv()
  await want().apply(env, deployment(3))
  assert.deepEqual(kubeWrites, [
    {
      method: 'PATCH',
      path: PATH,
      body: { metadata: { annotations: { [SCALED_FROM]: '3' } }, spec: { replicas: 0 } },
      contentType: 'application/merge-patch+json',
    },
  ])
})

test('apply keeps the first recorded count when the Deployment was scaled up again since', async () => {
  const { env, kubeWrites } = recordingEnv()
  await want().apply(env, deployment(1, { [SCALED_FROM]: '4' }))
  assert.deepEqual(kubeWrites, [
    {
      method: 'PATCH',
      path: PATH,
      body: { metadata: { annotations: { [SCALED_FROM]: '4' } }, spec: { replicas: 0 } },
      contentType: 'application/merge-patch+json',
    },
  ])
})
