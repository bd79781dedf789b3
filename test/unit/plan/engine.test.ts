import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan, type StepEvent } from '../../../src/plan/apply.js'
import { assertNotBlocked, buildPlan, orderResources, planCounts } from '../../../src/plan/plan.js'
import { planJson, renderPlan } from '../../../src/plan/render.js'
import type { ApplyEnv, Resource, Verdict } from '../../../src/plan/types.js'

const env = { sleep: async () => {} } as unknown as ApplyEnv

interface Fake {
  exists: boolean
}

function fake(
  address: string,
  dependsOn: string[] = [],
  o: { exists?: boolean; blocked?: string; apply?: () => Promise<void>; log?: string[] } = {},
): Resource<Fake> {
  return {
    address,
    kind: 'thing',
    name: address,
    group: address.split('.')[0] ?? 'g',
    dependsOn,
    desired: {},
    permissions: [],
    observe: async () => ({ exists: o.exists ?? false }),
    verdict: (cur): Verdict =>
      o.blocked
        ? { action: 'update', changes: [], blocked: o.blocked }
        : cur?.exists
          ? { action: 'unchanged', changes: [] }
          : { action: 'create', changes: [{ field: 'x', to: 1 }] },
    apply: async () => {
      o.log?.push(`start ${address}`)
      await (o.apply ?? (async () => {}))()
      o.log?.push(`end ${address}`)
    },
  }
}

test('orderResources puts dependencies first and names a cycle or an unknown dependency', () => {
  const order = orderResources([fake('a.c', ['a.b']), fake('a.b', ['a.a']), fake('a.a')]).map(
    (r) => r.address,
  )
  assert.deepEqual(order, ['a.a', 'a.b', 'a.c'])
  assert.throws(() => orderResources([fake('a', ['b']), fake('b', ['a'])]), /dependency cycle: a → b → a/)
  assert.throws(() => orderResources([fake('a', ['zzz'])]), /a depends on unknown zzz/)
  assert.throws(() => orderResources([fake('a'), fake('a')]), /duplicate/)
})

test('buildPlan observes each resource and counts create / unchanged; blocked steps fail together', async () => {
  const plan = await buildPlan('t', [fake('g.new'), fake('g.old', [], { exists: true })], env)
  assert.deepEqual(planCounts(plan), { create: 1, update: 0, unchanged: 1, delete: 0 })
  const blocked = await buildPlan(
    't',
    [fake('g.x', [], { blocked: 'not ours' }), fake('g.y', [], { blocked: 'nor this' })],
    env,
  )
  assert.throws(
    () => assertNotBlocked(blocked),
    /2 resources block the plan: thing g.x: not ours; thing g.y: nor this/,
  )
})

test('renderPlan prints + create with the changed fields, = unchanged, and the count line', async () => {
  const plan = await buildPlan('Title', [fake('IAM.a'), fake('IAM.b', [], { exists: true })], env)
  const text = renderPlan(plan, { color: false })
  assert.match(text, /^Title\n\nIAM\n {2}\+ create {4}thing IAM.a\n {8}x: 1\n {2}= unchanged thing IAM.b\n/)
  assert.match(text, /Plan: 1 to create, 0 to update, 1 unchanged\.$/)
  assert.equal(planJson(plan).steps[0]?.action, 'create')
})

test('applyPlan runs a step only after its dependencies, and independent steps concurrently', async () => {
  const log: string[] = []
  const slow = () => new Promise<void>((r) => setTimeout(r, 20))
  const plan = await buildPlan(
    't',
    [
      fake('g.a', [], { log, apply: slow }),
      fake('g.b', [], { log, apply: slow }),
      fake('g.c', ['g.a', 'g.b'], { log }),
    ],
    env,
  )
  const r = await applyPlan(plan, env)
  assert.deepEqual(r.failed, [])
  assert.deepEqual(log.slice(0, 2).sort(), ['start g.a', 'start g.b'], 'a and b start together')
  assert.deepEqual(log.slice(-2), ['start g.c', 'end g.c'], 'c waits for both')
})

test('applyPlan retries throttling, stops on a non-retryable error, skips its dependents and finishes the rest', async () => {
  let calls = 0
  const throttled = async () => {
    if (++calls < 3) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })
  }
  const denied = async () => {
    throw Object.assign(new Error('User: x is not authorized to perform: iam:CreateRole on resource: r'), {
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    })
  }
  const events: StepEvent[] = []
  const plan = await buildPlan(
    't',
    [
      fake('g.t', [], { apply: throttled }),
      fake('g.d', [], { apply: denied }),
      fake('g.after', ['g.d']),
      fake('g.free'),
    ],
    env,
  )
  const r = await applyPlan(plan, env, { onEvent: (e) => events.push(e) })
  assert.equal(calls, 3)
  assert.deepEqual(r.applied.sort(), ['g.free', 'g.t'])
  assert.deepEqual(r.failed, [
    {
      address: 'g.d',
      message: 'AccessDenied: User: x is not authorized to perform: iam:CreateRole on resource: r',
    },
  ])
  assert.deepEqual(r.skipped, ['g.after'])
  assert.equal(events.filter((e) => e.status === 'retry').length, 2)
})

test("applyPlan gives up on a retryable error after the policy's attempts", async () => {
  let calls = 0
  const plan = await buildPlan(
    't',
    [
      fake('g.x', [], {
        apply: async () => {
          calls++
          throw Object.assign(new Error('boom'), {
            name: 'ServiceUnavailable',
            $metadata: { httpStatusCode: 503 },
          })
        },
      }),
    ],
    env,
  )
  const r = await applyPlan(plan, env, { retry: { attempts: 4, baseMs: 1, maxMs: 1 } })
  assert.equal(calls, 4)
  assert.equal(r.failed.length, 1)
})

test('unchanged steps are not applied', async () => {
  let applied = false
  const plan = await buildPlan(
    't',
    [
      fake('g.x', [], {
        exists: true,
        apply: async () => {
          applied = true
        },
      }),
    ],
    env,
  )
  const r = await applyPlan(plan, env)
  assert.equal(applied, false)
  assert.deepEqual(r, { applied: [], failed: [], skipped: [] })
})
