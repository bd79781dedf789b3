// What every teardown resource shares: no preflight permission, its want as data, and a restore of
// nothing observed that says so and writes nothing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { autoscalerRestore } from '../../../../src/plan/resources/autoscaler-restore.js'
import { handedCrdsRestore } from '../../../../src/plan/resources/crd-handback.js'
import { helmReleaseAbsent } from '../../../../src/plan/resources/helm-release-absent.js'
import { orphanSweep } from '../../../../src/plan/resources/orphan-sweep.js'
import { podIdentityAbsent } from '../../../../src/plan/resources/pod-identity-absent.js'
import { queueAbsent } from '../../../../src/plan/resources/sqs-queue-absent.js'
import { recordedIngressRestore } from '../../../../src/plan/resources/recorded-ingress.js'
import { recordedTagsRestore } from '../../../../src/plan/resources/recorded-tags.js'
import { ruleAbsent } from '../../../../src/plan/resources/event-rule-absent.js'
import type { Resource } from '../../../../src/plan/types.js'
import { OWN, env } from '../../../helpers/teardown-env.js'

test('the restores of nothing observed (null) say "nothing recorded"', () => {
  const nothing = { action: 'unchanged', changes: [], note: 'nothing recorded' }
  assert.deepEqual(recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(recordedIngressRestore({ dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(autoscalerRestore({ dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }).verdict([]), nothing)
})

test('the restores apply nothing for nothing observed', async () => {
  const e = env()
  for (const r of [
    recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }),
    recordedIngressRestore({ dependsOn: [] }),
    autoscalerRestore({ dependsOn: [] }),
    handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }),
  ] as Resource[])
    await r.apply(e.env, null)
  assert.deepEqual(e.writes, [])
})

test('every teardown resource needs no preflight permission and says what it wants as data', () => {
  const want: [Resource, Record<string, unknown>][] = [
    [ruleAbsent({ key: 'spot', name: 'r', ownership: OWN, dependsOn: [] }) as Resource, { absent: true }],
    [queueAbsent({ name: 'demo', ownership: OWN, dependsOn: [] }) as Resource, { absent: true }],
    [
      podIdentityAbsent({
        clusterName: 'demo',
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        ownership: OWN,
        dependsOn: [],
      }) as Resource,
      { absent: true },
    ],
    [
      helmReleaseAbsent({
        address: 'helm.karpenter',
        release: 'karpenter',
        namespace: 'kube-system',
        labels: {},
        dependsOn: [],
      }) as Resource,
      { absent: true },
    ],
    [recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }) as Resource, { restored: true }],
    [recordedIngressRestore({ dependsOn: [] }) as Resource, { restored: true }],
    [autoscalerRestore({ dependsOn: [] }) as Resource, { restored: true }],
    [orphanSweep({ clusterName: 'demo', sweep: false, dependsOn: [] }) as Resource, { sweep: false }],
  ]
  for (const [r, desired] of want) {
    assert.deepEqual(r.permissions, [], r.address)
    assert.deepEqual(r.desired, desired, r.address)
  }
})
