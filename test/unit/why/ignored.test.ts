import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ignoredBecause, type IgnoreInputs } from '../../../src/why/ignored.js'
import type { WorkloadPod } from '../../../src/why/types.js'
import { pendingPod } from '../../helpers/why.js'

const none: IgnoreInputs = { pvcs: [], storageClasses: [], events: [], nodeClaims: [] }
const reason = (pod: WorkloadPod, inputs: IgnoreInputs = none) => ignoredBecause(pod, inputs)?.reason

test('pods Karpenter ignores, each with its reason', () => {
  assert.equal(reason(pendingPod()), undefined)
  assert.equal(reason({ ...pendingPod(), status: { phase: 'Running' } }), 'not-pending')
  assert.equal(reason(pendingPod({ nodeName: 'ip-10-0-0-1' })), 'scheduled')
  assert.equal(
    reason({
      ...pendingPod(),
      metadata: {
        ...pendingPod().metadata,
        ownerReferences: [{ kind: 'DaemonSet', name: 'aws-node', controller: true }],
      },
    }),
    'daemonset',
  )
  assert.equal(reason(pendingPod({ schedulerName: 'volcano' })), 'other-scheduler')
  assert.equal(reason(pendingPod({ schedulerName: 'default-scheduler' })), undefined)
  assert.equal(
    reason({ ...pendingPod(), status: { ...pendingPod().status, nominatedNodeName: 'n1' } }),
    'preempting',
  )
  assert.equal(reason({ ...pendingPod(), status: { phase: 'Pending', conditions: [] } }), 'not-unschedulable')
})

test('an unbound claim whose StorageClass binds Immediate; WaitForFirstConsumer is not ignored', () => {
  const pod = pendingPod({ volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] })
  assert.equal(reason(pod), 'missing-pvc')
  const pvc = { metadata: { name: 'data', namespace: 'shop' }, spec: {}, status: { phase: 'Pending' } }
  const immediate = {
    metadata: { name: 'gp2', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  }
  const i = ignoredBecause(pod, { ...none, pvcs: [pvc], storageClasses: [immediate] })
  assert.equal(i?.reason, 'immediate-pvc')
  assert.equal(
    i?.message,
    'its PersistentVolumeClaim data is unbound and StorageClass gp2 binds Immediate: Karpenter ignores the pod until the volume is provisioned (use volumeBindingMode: WaitForFirstConsumer)',
  )
  assert.equal(
    reason(pod, {
      ...none,
      pvcs: [pvc],
      storageClasses: [{ ...immediate, volumeBindingMode: 'WaitForFirstConsumer' }],
    }),
    undefined,
  )
})

test('nominated to a NodeClaim: which, and its state', () => {
  const pod = pendingPod()
  const i = ignoredBecause(pod, {
    ...none,
    events: [
      {
        metadata: { name: 'e' },
        involvedObject: { kind: 'Pod', namespace: 'shop', name: pod.metadata.name, uid: pod.metadata.uid },
        reason: 'Nominated',
        message: 'Pod should schedule on: nodeclaim/default-x2k9f',
        source: { component: 'karpenter' },
      },
    ],
    nodeClaims: [
      {
        metadata: { name: 'default-x2k9f' },
        status: {
          conditions: [
            {
              type: 'Launched',
              status: 'False',
              reason: 'LaunchFailed',
              message: 'UnauthorizedOperation: not authorized',
            },
          ],
        },
      },
    ],
  })
  assert.equal(i?.reason, 'nominated')
  assert.equal(
    i?.message,
    'Karpenter nominated nodeclaim default-x2k9f for the pod: Launched=False (LaunchFailed: UnauthorizedOperation: not authorized)',
  )
})
