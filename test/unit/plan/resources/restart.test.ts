// The controller restart (issue 18): `kubectl rollout restart` as one strategic-merge PATCH of the
// Deployment's pod-template annotation, stamped with the run's clock, and the marker's exact key.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RESTART_PENDING, restartDeployment } from '../../../../src/plan/resources/restart.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

test('the pending-restart marker is the karpctl.io/restart-pending tag', () => {
  // Written out: the next run finds an earlier run's marker by this exact key.
  assert.equal(RESTART_PENDING, 'karpctl.io/restart-pending')
})

test("restartDeployment: patches the Deployment's pod template with restartedAt set to the given time", async () => {
  const r = recordingEnv()
  await restartDeployment(
    r.env.kube,
    { namespace: 'kube-system', name: 'karpenter' },
    new Date('2026-12-03T10:00:00Z'),
  )
  assert.deepEqual(r.kubeWrites, [
    {
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/kube-system/deployments/karpenter',
      body: {
        spec: {
          template: {
            metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-12-03T10:00:00.000Z' } },
          },
        },
      },
      contentType: 'application/strategic-merge-patch+json',
    },
  ])
  assert.deepEqual(r.awsCalls, [])
})
