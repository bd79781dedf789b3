// doctor --serve's Events: on the object each finding is about, one Event per distinct finding,
// its series count raised when it is seen again instead of a new Event each interval.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clipNote, eventWrite, findingEvents, microTime, regardingOf } from '../../../src/doctor/events.js'
import { failed, healthyFacts } from '../../helpers/facts.js'
import { meta, result } from '../../helpers/results.js'

const NOW = new Date('2026-12-04T15:00:00.123Z')
const facts = healthyFacts((f) => {
  if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.metadata.uid = 'uid-nc'
})

test('microTime has six fractional digits, as the API wants', () => {
  assert.equal(microTime(NOW), '2026-12-04T15:00:00.123000Z')
})

test('a finding about an EC2NodeClass is on it (by Kind/name or its bare name), with its uid', () => {
  const expected = {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    name: 'default',
    uid: 'uid-nc',
  }
  assert.deepEqual(
    regardingOf({ status: 'fail', message: 'm', subject: 'EC2NodeClass/default' }, facts),
    expected,
  )
  assert.deepEqual(regardingOf({ status: 'fail', message: 'm', subject: 'default' }, facts), expected)
  // Named but not listed (a read that failed): still on it, by name.
  assert.deepEqual(regardingOf({ status: 'fail', message: 'm', subject: 'EC2NodeClass/gone' }, facts), {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    name: 'gone',
  })
})

test('a finding about a NodePool is on the NodePool', () => {
  const f = healthyFacts((x) => {
    if (x.kube.nodePools.ok) x.kube.nodePools.value[0]!.metadata.name = 'gpu'
  })
  assert.deepEqual(regardingOf({ status: 'warn', message: 'm', subject: 'gpu' }, f), {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    name: 'gpu',
  })
  assert.equal(regardingOf({ status: 'warn', message: 'm', subject: 'NodePool/x' }, f)?.kind, 'NodePool')
})

test('anything else (a role, a queue, no subject) is on the controller Deployment, none without one', () => {
  assert.deepEqual(regardingOf({ status: 'fail', message: 'm', subject: 'arn:aws:iam::1:role/r' }, facts), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: 'karpenter',
    namespace: 'kube-system',
  })
  const none = healthyFacts((f) => {
    f.kube.deployment = failed('kube:GET:/apis/apps/v1/deployments')
  })
  assert.equal(regardingOf({ status: 'fail', message: 'm' }, none), null)
})

test('fail, warn and unknown findings become Warning Events; pass and skipped do not', () => {
  const results = [
    result(meta('node-role'), [
      { status: 'fail', message: 'no EC2 trust', subject: 'EC2NodeClass/default' },
      { status: 'pass', message: 'fine', subject: 'EC2NodeClass/default' },
    ]),
    result(meta('interruption-queue', 'warning'), [{ status: 'warn', message: 'no queue' }]),
    result(meta('pod-identity'), [
      { status: 'unknown', message: 'denied' },
      { status: 'skipped', message: 's' },
    ]),
  ]
  const events = findingEvents(results, facts, NOW, 'pod-1')
  assert.deepEqual(
    events.map((e) => [e.reason, e.regarding.kind, e.metadata.namespace, e.note]),
    [
      ['CheckFailed', 'EC2NodeClass', 'default', 'node-role: no EC2 trust'],
      ['CheckWarning', 'Deployment', 'kube-system', 'interruption-queue: no queue'],
      ['CheckUnknown', 'Deployment', 'kube-system', 'pod-identity: denied'],
    ],
  )
  const e = events[0]!
  assert.equal(e.type, 'Warning')
  assert.equal(e.reportingController, 'karpctl.io/doctor')
  assert.equal(e.reportingInstance, 'pod-1')
  assert.equal(e.eventTime, '2026-12-04T15:00:00.123000Z')
  assert.match(e.metadata.name, /^karpctl-doctor\.[0-9a-f]{20}$/)
  assert.equal(e.metadata.labels['karpctl.io/check'], 'node-role')
})

test('the same finding has the same Event name run after run; another message or object another name', () => {
  const r = (message: string, subject: string) => [
    result(meta('node-role'), [{ status: 'fail', message, subject }]),
  ]
  const name = (message: string, subject: string, at: Date, who: string) =>
    findingEvents(r(message, subject), facts, at, who)[0]!.metadata.name
  const first = name('no EC2 trust', 'EC2NodeClass/default', NOW, 'pod-1')
  // Another time, another replica: the same Event.
  assert.equal(
    name('no EC2 trust', 'EC2NodeClass/default', new Date(NOW.getTime() + 300_000), 'pod-2'),
    first,
  )
  assert.notEqual(name('no CNI policy', 'EC2NodeClass/default', NOW, 'pod-1'), first)
  assert.notEqual(name('no EC2 trust', 'EC2NodeClass/other', NOW, 'pod-1'), first)
})

test('two findings with the same check, object and message are one Event', () => {
  const results = [
    result(meta('discovery-tags'), [
      { status: 'fail', message: 'untagged', subject: 'EC2NodeClass/default' },
      { status: 'fail', message: 'untagged', subject: 'default' },
    ]),
  ]
  assert.equal(findingEvents(results, facts, NOW, 'p').length, 1)
})

test('a new Event is created; one that exists gets its series count raised, nothing else', () => {
  const [e] = findingEvents(
    [result(meta('node-role'), [{ status: 'fail', message: 'm', subject: 'default' }])],
    facts,
    NOW,
    'p',
  )
  const later = new Date('2026-12-04T15:05:00Z')
  const created = eventWrite(e!, null, later)
  assert.equal(created.method, 'POST')
  assert.equal(created.path, '/apis/events.k8s.io/v1/namespaces/default/events')
  assert.equal(created.body, e)
  // An Event without a series has been seen once: the patch makes it 2 (the API's minimum for a series).
  assert.deepEqual(eventWrite(e!, {}, later), {
    method: 'PATCH',
    path: `/apis/events.k8s.io/v1/namespaces/default/events/${e!.metadata.name}`,
    body: { series: { count: 2, lastObservedTime: '2026-12-04T15:05:00.000000Z' } },
    contentType: 'application/merge-patch+json',
  })
  assert.deepEqual(
    (eventWrite(e!, { series: { count: 7 } }, later).body as { series: { count: number } }).series.count,
    8,
  )
})

test('a note longer than 1 KiB is cut to 1 KiB on a character boundary', () => {
  assert.equal(clipNote('short'), 'short')
  const long = 'é'.repeat(600)
  const cut = clipNote(long)
  assert.ok(Buffer.byteLength(cut) <= 1024)
  assert.ok(cut.endsWith('…'))
  assert.ok(!cut.includes('\uFFFD'))
  assert.equal(clipNote('x'.repeat(1024)), 'x'.repeat(1024))
})
