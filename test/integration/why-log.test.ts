// The controller's log on the wire: the real KubeClient reads each Running replica's log once, as text
// (not an API object), keeps only the lines naming the pods judged, and a log the API will not give
// (RBAC without pods/log) is a failure with its reason — never an error of the run. Then `why`'s
// judgement shows Karpenter's logged reasons NodePool by NodePool, and a log not read changes no exit code.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import nock from 'nock'
import { createRunContext } from '../../src/context/run-context.js'
import { okRead } from '../../src/facts/read.js'
import type { Pod } from '../../src/facts/types.js'
import { controllerLog } from '../../src/why/collect-log.js'
import { judge } from '../../src/why/judge.js'
import { renderWhy } from '../../src/why/render.js'
import { exitCodeOf } from '../../src/why/why.js'
import { KUBE_SERVER, KUBE_TOKEN, kubeconfigYaml } from '../helpers/mock-cluster.js'
import { pendingPod, whyFacts } from '../helpers/why.js'

let dir: string
const saved: Record<string, string | undefined> = {}
const seen: string[] = []

const replica = (name: string, phase = 'Running'): Pod => ({
  metadata: { name, namespace: 'kube-system' },
  phase,
  containerStatuses: [{ name: 'controller', restartCount: 0, ready: true }],
})
const line = (pod: string, error: string, time = '2026-12-03T07:00:00Z') =>
  JSON.stringify({
    level: 'ERROR',
    time,
    logger: 'controller',
    message: 'could not schedule pod',
    controller: 'provisioner',
    Pod: { name: pod, namespace: 'shop' },
    error,
  })
const LOGS: Record<string, string> = {
  'karpenter-a': [
    '{"level":"INFO","time":"2026-12-03T06:59:00Z","message":"found provisionable pod(s)"}',
    line(
      'web-6d4cf56db6-abcde',
      'incompatible with nodepool "default", daemonset overhead={"cpu":"200m","memory":"128Mi","pods":"2"}, incompatible requirements, label "team" does not have known values',
    ),
    line('someone-elses', 'incompatible with nodepool "default", did not tolerate taint x'),
  ].join('\n'),
  'karpenter-b': '',
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-why-log-'))
  writeFileSync(join(dir, 'kubeconfig'), kubeconfigYaml(KUBE_SERVER, KUBE_TOKEN))
  saved.KUBECONFIG = process.env.KUBECONFIG
  process.env.KUBECONFIG = join(dir, 'kubeconfig')
  nock.disableNetConnect()
  nock(KUBE_SERVER)
    .persist()
    .get(/.*/)
    .reply(function (uri) {
      seen.push(uri)
      const m = /^\/api\/v1\/namespaces\/kube-system\/pods\/([^/]+)\/log\?(.*)$/.exec(uri)
      if (!m) return [404, { kind: 'Status', reason: 'NotFound', message: 'not found' }]
      if (m[1] === 'karpenter-denied')
        return [
          403,
          {
            kind: 'Status',
            reason: 'Forbidden',
            message: 'pods "karpenter-denied" is forbidden: User "dev" cannot get resource "pods/log"',
          },
        ]
      return [200, LOGS[m[1]!] ?? '', { 'Content-Type': 'text/plain' }]
    })
})

after(() => {
  nock.cleanAll()
  nock.enableNetConnect()
  if (saved.KUBECONFIG === undefined) delete process.env.KUBECONFIG
  else process.env.KUBECONFIG = saved.KUBECONFIG
  rmSync(dir, { recursive: true, force: true })
})

const context = () =>
  createRunContext({ clusterName: 'demo', region: 'us-west-2', karpctlVersion: 'test', maxAttempts: 1 })

test("each Running replica's log read once as text, only the judged pods' lines kept; shown NodePool by NodePool", async () => {
  seen.length = 0
  const ctx = await context()
  const pods = okRead([pendingPod()])
  const replicas = okRead([replica('karpenter-a'), replica('karpenter-b'), replica('karpenter-c', 'Pending')])
  const log = await controllerLog(ctx.kube, replicas, pods)
  assert.ok(log?.ok)
  assert.deepEqual(log.value, [
    {
      time: '2026-12-03T07:00:00Z',
      pod: 'shop/web-6d4cf56db6-abcde',
      nodePools: { default: 'incompatible requirements, label "team" does not have known values' },
    },
  ])
  // Asked again in the same run: the memo answers.
  await controllerLog(ctx.kube, replicas, pods)
  assert.deepEqual(seen.sort(), [
    '/api/v1/namespaces/kube-system/pods/karpenter-a/log?container=controller&tailLines=5000&limitBytes=8388608',
    '/api/v1/namespaces/kube-system/pods/karpenter-b/log?container=controller&tailLines=5000&limitBytes=8388608',
  ])

  const report = judge(
    whyFacts([pendingPod()], (f) => (f.controllerLog = log)),
    'live',
  )
  assert.deepEqual(report.groups[0]?.karpenter.log, log.value[0])
  const text = renderWhy(report, false)
  assert.match(
    text,
    /karpenter logged: could not schedule pod shop\/web-6d4cf56db6-abcde \(2026-12-03T07:00:00Z\)\n {6}default: incompatible requirements, label "team" does not have known values/,
  )
  assert.doesNotMatch(text, /someone-elses|controller's log was not read/)
})

test('a log the API refuses is a failure with its reason; why says so and its exit code is unchanged', async () => {
  const ctx = await context()
  const log = await controllerLog(ctx.kube, okRead([replica('karpenter-denied')]), okRead([pendingPod()]))
  assert.equal(log?.ok, false)
  assert.match(log.ok ? '' : log.error.message, /cannot get resource "pods\/log"/)
  const withLog = judge(
    whyFacts([pendingPod()], (f) => (f.controllerLog = log)),
    'live',
  )
  const without = judge(whyFacts([pendingPod()]), 'live')
  assert.equal(exitCodeOf(withLog), exitCodeOf(without))
  assert.deepEqual(withLog.unreadable, without.unreadable)
  assert.match(withLog.controllerLogUnread ?? '', /pods\/log/)
  assert.match(renderWhy(withLog, false), /The controller's log was not read: .*pods\/log/)
})

test('nothing is read when no pod is judged, and no Running replica is said, not guessed', async () => {
  seen.length = 0
  const ctx = await context()
  assert.equal(await controllerLog(ctx.kube, okRead([replica('karpenter-a')]), okRead([])), undefined)
  const none = await controllerLog(ctx.kube, okRead([replica('x', 'Pending')]), okRead([pendingPod()]))
  assert.deepEqual(none?.ok ? 'read' : none?.error.message, 'no controller pod is Running')
  assert.deepEqual(seen, [])
})
