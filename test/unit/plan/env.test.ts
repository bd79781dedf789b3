import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RunContext } from '../../../src/context/run-context.js'
import { ownershipTags } from '../../../src/desired/ownership.js'
import { applyEnv, requireTools } from '../../../src/plan/env.js'
import type { ApplyEnv, Plan, Step } from '../../../src/plan/types.js'
import { fakeResource } from '../../helpers/fake-resource.js'

const SERVER = 'https://demo.eks.example'

/** A RunContext whose kube context points at the EKS cluster's endpoint. */
function ctx(): RunContext {
  const clock = () => new Date(7)
  return {
    options: {},
    aws: { call: async () => ({ cluster: { endpoint: SERVER } }) },
    kube: {
      server: SERVER,
      creds: {
        contextName: 'demo',
        server: SERVER,
        requestOptions: async () => ({}),
        config: { getContexts: () => [], getCluster: () => undefined },
      },
    },
    log: undefined,
    clock,
  } as unknown as RunContext
}

test('applyEnv: the judged kube target, the run clients and clock, tags of the cluster, helm looked for once with the given binary', async () => {
  const c = ctx()
  const env = await applyEnv(c, { clusterName: 'demo' }, '/nonexistent/karpctl-helm')
  assert.deepEqual(env.kubeTarget, { context: 'demo', server: SERVER, match: 'endpoint' })
  assert.equal(env.aws, c.aws)
  assert.equal(env.kube, c.kube)
  assert.equal(env.now, c.clock)
  assert.deepEqual(env.ownershipTags, ownershipTags('demo'))
  const first = env.helm()
  assert.equal(env.helm(), first)
  await assert.rejects(first, /helm not found \(\/nonexistent\/karpctl-helm\)/)
  const slept = env.sleep(1)
  assert.ok(slept instanceof Promise)
  await slept
})

const step = (address: string, action: Step['verdict']['action']): Step => ({
  resource: fakeResource(address),
  verdict: { action, changes: [] },
  current: null,
})

function helmCounter(): { env: ApplyEnv; calls: () => number } {
  let n = 0
  const env = { helm: async () => void n++ } as unknown as ApplyEnv
  return { env, calls: () => n }
}

test('requireTools: helm is looked for only when a helm step changes something', async () => {
  const cases: [Step[], number][] = [
    [[], 0],
    [[step('helm.karpenter', 'unchanged')], 0],
    [[step('iam.role', 'create')], 0],
    [[step('x.helm.', 'create')], 0],
    [[step('iam.role', 'unchanged'), step('helm.karpenter', 'update')], 1],
    [[step('helm.karpenter', 'delete')], 1],
  ]
  for (const [steps, want] of cases) {
    const h = helmCounter()
    await requireTools({ title: 't', steps } as Plan, h.env)
    assert.equal(h.calls(), want, steps.map((s) => s.resource.address).join(','))
  }
})
