// The controller's "could not schedule pod" lines, in the shapes Karpenter has written them: v1's JSON
// (the reasons in `error`, the pod as an object), v0.3x's JSON (reasons in the message, pod as
// `ns/name`) and the console encoding (tab-separated, the context last).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { newestSchedulingLines, reasonsByNodePool } from '../../../src/why/controller-log.js'

const V1 = JSON.stringify({
  level: 'ERROR',
  time: '2025-04-04T10:15:40.110Z',
  logger: 'controller',
  caller: 'provisioning/provisioner.go:350',
  message: 'could not schedule pod',
  controller: 'provisioner',
  Pod: { name: 'web-1', namespace: 'shop' },
  error:
    'incompatible with nodepool "gpu", daemonset overhead={"cpu":"681m","memory":"652Mi","pods":"11"}, did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule); incompatible with nodepool "default", daemonset overhead={"cpu":"681m","memory":"652Mi","pods":"11"}, incompatible requirements, label "team" does not have known values',
})
const V035 = JSON.stringify({
  level: 'ERROR',
  time: '2024-04-03T06:40:04.552Z',
  logger: 'controller.provisioner',
  message:
    'Could not schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"675m","memory":"390Mi","pods":"6"}, incompatible requirements, label "nodegroup" does not have known values',
  commit: '17d6c05',
  pod: 'payments/api-746d677b76-lghl4',
})
const CONSOLE = [
  '2022-12-05T09:58:42.908Z',
  'ERROR',
  'controller.provisioning',
  'Could not schedule pod, incompatible with provisioner "core-system", did not tolerate domain/system-core=true:NoExecute; incompatible with provisioner "tenant", no instance type satisfied resources {"cpu":"7"} and requirements kubernetes.io/arch In [amd64]',
  '{"commit": "27a51c0", "pod": "ci/runner-4j6s8g"}',
].join('\t')

test('reasons are split NodePool by NodePool, the daemonset overhead left out, a `;` inside a reason kept', () => {
  assert.deepEqual(
    reasonsByNodePool(
      'incompatible with nodepool "a", daemonset overhead={"cpu":"1"}, did not tolerate x=y:NoSchedule; z; incompatible with nodepool "b", all available instance types exceed limits for nodepool: "b"',
    ),
    {
      a: 'did not tolerate x=y:NoSchedule; z',
      b: 'all available instance types exceed limits for nodepool: "b"',
    },
  )
  assert.deepEqual(reasonsByNodePool('something else'), {})
})

test('v1 JSON, v0.3x JSON and console lines each give the pod, the time and the reason per NodePool', () => {
  const got = newestSchedulingLines([[V1, V035, CONSOLE].join('\n')])
  assert.deepEqual(got['shop/web-1'], {
    time: '2025-04-04T10:15:40.110Z',
    pod: 'shop/web-1',
    nodePools: {
      gpu: 'did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)',
      default: 'incompatible requirements, label "team" does not have known values',
    },
  })
  assert.deepEqual(got['payments/api-746d677b76-lghl4']?.nodePools, {
    default: 'incompatible requirements, label "nodegroup" does not have known values',
  })
  assert.deepEqual(got['ci/runner-4j6s8g'], {
    time: '2022-12-05T09:58:42.908Z',
    pod: 'ci/runner-4j6s8g',
    nodePools: {
      'core-system': 'did not tolerate domain/system-core=true:NoExecute',
      tenant:
        'no instance type satisfied resources {"cpu":"7"} and requirements kubernetes.io/arch In [amd64]',
    },
  })
  assert.equal(Object.keys(got).length, 3)
})

test('the newest line of a pod wins, across the logs of every replica; an error naming no NodePool is kept whole', () => {
  const line = (time: string, error: string) =>
    JSON.stringify({ time, message: 'could not schedule pod', Pod: { name: 'p', namespace: 'n' }, error })
  const got = newestSchedulingLines([
    line('2025-01-01T00:00:02Z', 'incompatible with nodepool "a", did not tolerate t'),
    [
      line('2025-01-01T00:00:01Z', 'incompatible with nodepool "a", old'),
      line('2025-01-01T00:00:03Z', 'no nodepools found'),
    ].join('\n'),
  ])
  assert.deepEqual(got['n/p'], {
    time: '2025-01-01T00:00:03Z',
    pod: 'n/p',
    nodePools: {},
    error: 'no nodepools found',
  })
})

test('other lines, broken JSON and lines without a pod are skipped', () => {
  const got = newestSchedulingLines([
    [
      '{"level":"INFO","message":"found provisionable pod(s)","Pods":"n/p"}',
      '{"message":"could not schedule pod", "Pod": {"name": "p"',
      JSON.stringify({ message: 'could not schedule pod', error: 'incompatible with nodepool "a", x' }),
      'could not schedule pod n/p',
      '',
    ].join('\n'),
  ])
  assert.deepEqual(got, {})
})
