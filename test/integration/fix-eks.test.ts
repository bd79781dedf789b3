// doctor --fix's EKS repairs moto does not offer — the node role's access entry and the controller's
// Pod Identity association (with the controller restart that makes running pods take the credentials)
// — and a disabled interruption rule enabled in place (recorded first), built by fixSet from the judged
// facts, applied by the one executor on the EKS and EventBridge wires (nock):
// a run killed between the association and the restart is finished by the next run, and a third run
// makes no write at all.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../src/checks/catalog.js'
import { runChecks } from '../../src/checks/run.js'
import { Aws } from '../../src/context/aws.js'
import type { KubeClient } from '../../src/context/kube.js'
import { CallLog, Limiter, Memo } from '../../src/context/limiter.js'
import type { Facts } from '../../src/facts/types.js'
import { fixSet } from '../../src/fix/fixes.js'
import { applyPlan } from '../../src/plan/apply.js'
import { buildPlan } from '../../src/plan/plan.js'
import { RESTART_PENDING } from '../../src/plan/resources/restart.js'
import type { ApplyEnv } from '../../src/plan/types.js'
import { ownershipTags } from '../../src/desired/install.js'
import { RETARGETED } from '../../src/plan/resources/rule-repair.js'
import { fakeEks } from '../helpers/fake-eks.js'
import { fakeEvents } from '../helpers/fake-events.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE_ARN,
  healthyFacts,
  NODE_ROLE_ARN,
  ok,
  QUEUE_ARN,
  REGION,
} from '../helpers/facts.js'

/** The Kubernetes side records its writes (the restart is proven against a real apiserver on the bed). */
function fakeKube(failRestart = false) {
  const writes: string[] = []
  const kube = {
    async write(method: string, path: string, body: unknown) {
      if (failRestart) throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' })
      writes.push(`${method} ${path} ${JSON.stringify(body)}`)
      return {}
    },
  } as unknown as KubeClient
  return { kube, writes }
}

async function fix(facts: Facts, kube: KubeClient) {
  const log = new CallLog()
  const aws = new Aws({ region: 'us-west-2', maxAttempts: 1 }, new Limiter(8), new Memo(), log)
  const env: ApplyEnv = {
    aws,
    kube,
    helm: () => Promise.reject(new Error('no helm')),
    ownershipTags: ownershipTags('demo'),
    sleep: async () => {},
    now: () => new Date('2026-12-01T12:00:00Z'),
  }
  const fs = fixSet(facts, runChecks(catalog, facts))
  const plan = await buildPlan('t', fs.resources, env)
  try {
    return { fs, plan, result: await applyPlan(plan, env), log }
  } catch (err) {
    return { fs, plan, error: err as Error, log }
  } finally {
    aws.destroy()
  }
}

test('a node role with no cluster access on an API-mode cluster: --fix creates its EC2_LINUX access entry, once', async (t) => {
  const f = fakeEks(t)
  const facts = healthyFacts((x) => {
    if (x.eks.cluster.ok && x.eks.cluster.value) x.eks.cluster.value.authenticationMode = 'API'
    x.eks.accessEntries = ok([])
  })
  const first = await fix(facts, fakeKube().kube)
  assert.ok(!first.error, first.error?.message)
  assert.deepEqual(
    first.fs.resources.map((r) => r.kind),
    ['EKS access entry'],
  )
  assert.deepEqual(f.writes, [`CreateAccessEntry ${NODE_ROLE_ARN} EC2_LINUX`])
  assert.deepEqual(f.entries.get(NODE_ROLE_ARN)?.tags, ownershipTags('demo'))

  // The same facts again (doctor's verdict is the same until it reads afresh): no second write.
  f.writes.length = 0
  const again = await fix(facts, fakeKube().kube)
  assert.deepEqual(
    again.plan.steps.map((s) => s.verdict.action),
    ['unchanged'],
  )
  assert.deepEqual(f.writes, [])
})

const noAssociation = () =>
  healthyFacts((x) => {
    x.iam.controllerIdentity = 'pod-identity'
    if (x.kube.release.ok && x.kube.release.value) x.kube.release.value.values.serviceAccount = {}
    x.kube.serviceAccount = ok({ metadata: { name: 'karpenter', namespace: 'kube-system', annotations: {} } })
    x.eks.addons = ok(['vpc-cni', 'coredns', 'kube-proxy', 'eks-pod-identity-agent'])
  })

test('no Pod Identity association: --fix associates the controller role, restarts the controller, then drops the marker', async (t) => {
  const f = fakeEks(t)
  const k = fakeKube()
  const r = await fix(noAssociation(), k.kube)
  assert.ok(!r.error, r.error?.message)
  assert.deepEqual(f.writes, [
    `CreatePodIdentityAssociation kube-system/karpenter ${CONTROLLER_ROLE_ARN}`,
    `UntagResource a-1 ${RESTART_PENDING}`,
  ])
  const [assoc] = [...f.associations.values()]
  assert.deepEqual(assoc?.tags, ownershipTags('demo'), 'karpctl tags stay, the marker is gone')
  assert.equal(k.writes.length, 1)
  assert.match(k.writes[0]!, /^PATCH \/apis\/apps\/v1\/namespaces\/kube-system\/deployments\/karpenter /)
  assert.match(k.writes[0]!, /"kubectl.kubernetes.io\/restartedAt":"2026-12-01T12:00:00.000Z"/)
})

test('killed between the association and the restart: the re-run restarts and drops the marker; a third run writes nothing', async (t) => {
  const f = fakeEks(t)
  const broken = await fix(noAssociation(), fakeKube(true).kube)
  assert.ok(!broken.error, broken.error?.message)
  assert.deepEqual(
    broken.result?.failed.map((x) => x.address),
    ['eks-pod-identity.controller'],
  )
  assert.match(broken.result?.failed[0]?.message ?? '', /connection reset/)
  const [assoc] = [...f.associations.values()]
  assert.equal(assoc?.tags[RESTART_PENDING], 'true', 'the marker says a restart is owed')

  f.writes.length = 0
  const k = fakeKube()
  const rerun = await fix(noAssociation(), k.kube)
  assert.ok(!rerun.error, rerun.error?.message)
  assert.deepEqual(
    rerun.plan.steps.map((s) => [s.verdict.action, s.verdict.changes.map((c) => c.field)]),
    [['update', ['restart']]],
  )
  assert.deepEqual(f.writes, [`UntagResource a-1 ${RESTART_PENDING}`])
  assert.equal(k.writes.length, 1)

  f.writes.length = 0
  const k3 = fakeKube()
  const third = await fix(noAssociation(), k3.kube)
  assert.deepEqual(
    third.plan.steps.map((s) => s.verdict.action),
    ['unchanged'],
  )
  assert.deepEqual([...f.writes, ...k3.writes], [])
})

test('a disabled rule that still targets the queue: --fix records its state on it, then enables it; once', async (t) => {
  fakeEks(t)
  const name = 'Karpenter-demo-SpotInterruptionRule'
  const ev = fakeEvents({
    [name]: {
      arn: `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}`,
      state: 'DISABLED',
      eventPattern: JSON.stringify({
        source: ['aws.ec2'],
        'detail-type': ['EC2 Spot Instance Interruption Warning'],
      }),
      targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE_ARN }],
      tags: {},
    },
  })
  const facts = healthyFacts((x) => {
    if (x.events.rules.ok)
      x.events.rules = ok(
        x.events.rules.value.map((r) => (r.name === name ? { ...r, state: 'DISABLED' } : r)),
      )
  })
  const first = await fix(facts, fakeKube().kube)
  assert.ok(!first.error, first.error?.message)
  assert.deepEqual(first.fs.manual, [], 'an enable-rule is not left manual')
  // The record is written before the change, so a run killed in between leaves no unrecorded change.
  assert.deepEqual(ev.writes, [`TagResource ${name} ${RETARGETED}`, `EnableRule ${name}`])
  assert.equal(ev.rules.get(name)?.tags[RETARGETED], 'DISABLED')
  assert.equal(ev.rules.get(name)?.state, 'ENABLED')

  ev.writes.length = 0
  const again = await fix(facts, fakeKube().kube)
  assert.deepEqual(
    again.plan.steps.map((s) => s.verdict.action),
    ['unchanged'],
  )
  assert.deepEqual(ev.writes, [])
})
