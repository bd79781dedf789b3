// install's EKS paths moto does not offer — the node role's access entry (EC2_LINUX) and the
// controller's Pod Identity association — on the EKS REST wire (nock), through the real SDK client,
// the plan engine and the executor: throttling and a 5xx are retried, an AccessDenied half-way stops
// only its step, and the same command run again finishes the job, then makes no write at all.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import nock from 'nock'
import { Aws } from '../../src/context/aws.js'
import type { KubeClient } from '../../src/context/kube.js'
import { CallLog, Limiter, Memo } from '../../src/context/limiter.js'
import { applyPlan } from '../../src/plan/apply.js'
import { buildPlan, planCounts } from '../../src/plan/plan.js'
import { accessEntry, podIdentityAssociation } from '../../src/plan/resources/eks-access.js'
import { accessEntryAbsent } from '../../src/plan/resources/eks-access-absent.js'
import { podIdentityAbsent } from '../../src/plan/resources/pod-identity-absent.js'
import type { ApplyEnv } from '../../src/plan/types.js'
import { ownershipTags } from '../../src/desired/install.js'
import { EKS, fakeEks } from '../helpers/fake-eks.js'

const NODE_ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const CONTROLLER_ROLE = 'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo'
const CLUSTER_ARN = 'arn:aws:eks:us-west-2:123456789012:cluster/demo'

/** One run of the command's engine: a fresh context (memo, call log), plan, apply. */
async function run(opts: { adopt?: boolean; roleArn?: string } = {}) {
  const log = new CallLog()
  // maxAttempts 1: the SDK does not retry, so the executor's own retries are what is tested.
  const aws = new Aws({ region: 'us-west-2', maxAttempts: 1 }, new Limiter(8), new Memo(), log)
  const tags = ownershipTags('demo')
  const env: ApplyEnv = {
    aws,
    kube: {} as KubeClient,
    helm: () => Promise.reject(new Error('no helm')),
    ownershipTags: tags,
    sleep: async () => {},
    now: () => new Date(0),
  }
  const resources = [
    accessEntry({
      clusterName: 'demo',
      principalArn: NODE_ROLE,
      clusterArn: CLUSTER_ARN,
      tags,
      dependsOn: [],
    }),
    podIdentityAssociation({
      clusterName: 'demo',
      clusterArn: CLUSTER_ARN,
      namespace: 'kube-system',
      serviceAccount: 'karpenter',
      roleArn: opts.roleArn ?? CONTROLLER_ROLE,
      tags,
      ownership: tags,
      adopt: opts.adopt ?? false,
      dependsOn: [],
    }),
  ]
  const plan = await buildPlan('t', resources, env)
  try {
    const result = await applyPlan(plan, env)
    return { plan, result, log }
  } catch (err) {
    return { plan, error: err as Error, log }
  } finally {
    aws.destroy()
  }
}

test('access entry and Pod Identity association are created with karpctl tags, through a throttle and a 500', async (t) => {
  const f = fakeEks(t)
  f.faults.CreateAccessEntry = [{ status: 429, type: 'ThrottlingException', message: 'Rate exceeded' }]
  f.faults.CreatePodIdentityAssociation = [
    { status: 500, type: 'ServerException', message: 'internal error' },
  ]
  const { plan, result } = await run()
  assert.ok(result)
  assert.deepEqual(planCounts(plan), { create: 2, update: 0, unchanged: 0, delete: 0 })
  assert.deepEqual(result.failed, [])
  assert.deepEqual(f.entries.get(NODE_ROLE), { type: 'EC2_LINUX', tags: ownershipTags('demo') })
  const [assoc] = [...f.associations.values()]
  assert.deepEqual(assoc, {
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    roleArn: CONTROLLER_ROLE,
    tags: ownershipTags('demo'),
  })
  assert.equal(f.writes.length, 2, 'each created once, the faults retried')
})

test('AccessDenied half-way stops only that step; the same run again finishes; a third run writes nothing', async (t) => {
  const f = fakeEks(t)
  f.faults.CreatePodIdentityAssociation = [
    {
      status: 403,
      type: 'AccessDeniedException',
      message:
        'User: arn:aws:iam::123456789012:user/ci is not authorized to perform: eks:CreatePodIdentityAssociation on resource: ' +
        CLUSTER_ARN,
    },
  ]
  const first = await run()
  assert.deepEqual(first.result!.applied, ['eks-access-entry.node'])
  assert.equal(first.result!.failed.length, 1)
  assert.match(
    first.result!.failed[0]!.message,
    /^AccessDeniedException: .*not authorized to perform: eks:CreatePodIdentityAssociation on resource: arn:aws:eks/,
  )

  const second = await run()
  assert.deepEqual(
    second.plan.steps.map((s) => [s.resource.address, s.verdict.action]),
    [
      ['eks-access-entry.node', 'unchanged'],
      ['eks-pod-identity.controller', 'create'],
    ],
  )
  assert.deepEqual(second.result!.failed, [])

  const third = await run()
  assert.deepEqual(planCounts(third.plan), { create: 0, update: 0, unchanged: 2, delete: 0 })
  assert.deepEqual(third.log.writes, [])
  assert.equal(f.writes.length, 2, 'no duplicate after the re-runs')
})

test('an association karpctl did not make, granting another role, blocks the plan unless --adopt', async (t) => {
  const f = fakeEks(t)
  f.associations.set('a-9', {
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    roleArn: 'arn:aws:iam::123456789012:role/Other',
    tags: {},
  })
  f.entries.set(NODE_ROLE, { type: 'STANDARD', tags: {} })
  const r = await run()
  assert.match(r.error?.message ?? '', /2 resources block the plan/)
  assert.equal(f.writes.length, 0, 'a blocked plan writes nothing')
  const blocked = r.plan.steps.map((s) => s.verdict.blocked ?? '')
  assert.match(blocked[0]!, /an access entry of type STANDARD exists for it: nodes need EC2_LINUX/)
  assert.match(
    blocked[1]!,
    /it grants arn:aws:iam::123456789012:role\/Other, and karpctl did not make it: pass --adopt/,
  )

  f.entries.delete(NODE_ROLE)
  const adopted = await run({ adopt: true })
  assert.deepEqual(adopted.result!.failed, [])
  assert.equal(f.associations.get('a-9')?.roleArn, CONTROLLER_ROLE)
  assert.ok(f.writes.includes(`UpdatePodIdentityAssociation a-9 ${CONTROLLER_ROLE}`))
})

test('teardown removes the access entry and the association karpctl made, keeps the ones it did not, and on an endpoint without the API finds nothing to remove', async (t) => {
  const f = fakeEks(t)
  await run()
  f.associations.set('a-foreign', {
    namespace: 'other',
    serviceAccount: 'app',
    roleArn: 'arn:aws:iam::123456789012:role/App',
    tags: {},
  })
  const tags = ownershipTags('demo')
  const removal = async (serviceAccount = 'karpenter') => {
    const aws = new Aws({ region: 'us-west-2', maxAttempts: 1 }, new Limiter(8), new Memo(), new CallLog())
    const env: ApplyEnv = {
      aws,
      kube: {} as KubeClient,
      helm: () => Promise.reject(new Error('no helm')),
      ownershipTags: tags,
      sleep: async () => {},
      now: () => new Date(0),
    }
    const plan = await buildPlan(
      't',
      [
        accessEntryAbsent({ clusterName: 'demo', principalArn: NODE_ROLE, ownership: tags, dependsOn: [] }),
        podIdentityAbsent({
          clusterName: 'demo',
          namespace: serviceAccount === 'app' ? 'other' : 'kube-system',
          serviceAccount,
          ownership: tags,
          dependsOn: [],
        }),
      ],
      env,
    )
    const result = await applyPlan(plan, env)
    aws.destroy()
    return { plan, result }
  }
  const foreign = await removal('app')
  assert.equal(
    foreign.plan.steps[1]!.verdict.note,
    'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)',
  )
  const r = await removal()
  assert.deepEqual(r.result.failed, [])
  assert.equal(f.entries.size, 0)
  assert.deepEqual([...f.associations.keys()], ['a-foreign'])
  const again = await removal()
  assert.deepEqual(
    again.plan.steps.map((s) => s.verdict.note),
    ['already gone', 'already gone'],
  )

  // An EKS endpoint that does not offer access entries or Pod Identity (moto answers 404 without an AWS error).
  nock.cleanAll()
  nock(EKS).persist().get(/.*/).reply(404, '<html>Not Found</html>', { 'content-type': 'text/html' })
  const bare = await removal()
  assert.deepEqual(
    bare.plan.steps.map((s) => s.verdict.action),
    ['unchanged', 'unchanged'],
  )
})
