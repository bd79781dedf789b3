// The executor's order follows the transitive dependencies, unchanged steps included: an unchanged step
// is already as wanted, but what stands behind it must still happen first (issue 33: on karpctl's own
// install the CRD hand-over is unchanged, and `helm karpenter-crd` ran before IAM had finished).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan, changingDependencies } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import type { Resource } from '../../../src/plan/types.js'
import { awsError, bareEnv, fakeResource } from '../../helpers/fake-resource.js'

/** Applies the resources' plan; every apply yields a few times, so an unordered start would overtake. */
async function order(resources: Resource[]): Promise<{ log: string[]; skipped: string[] }> {
  const log: string[] = []
  const slow = (r: Resource): Resource => ({
    ...r,
    apply: async (env, cur) => {
      log.push(`start ${r.address}`)
      for (let i = 0; i < 5; i++) await new Promise((res) => setImmediate(res))
      await r.apply(env, cur)
      log.push(`done ${r.address}`)
    },
  })
  const env = bareEnv()
  const plan = await buildPlan('t', resources.map(slow), env)
  const r = await applyPlan(plan, env)
  return { log, skipped: r.skipped }
}

const before = (log: string[], a: string, b: string) =>
  assert.ok(log.indexOf(`done ${a}`) < log.indexOf(`start ${b}`), `${a} before ${b}:\n${log.join('\n')}`)

test('a chain A → B (unchanged) → C: C starts only after A is done', async () => {
  // Kills: unchanged dependencies dropped without looking through them (the old behaviour).
  const { log } = await order([
    fakeResource('g.c', ['g.b']),
    fakeResource('g.b', ['g.a'], { exists: true }),
    fakeResource('g.a'),
  ])
  before(log, 'g.a', 'g.c')
  assert.ok(!log.includes('start g.b'), 'the unchanged step is not applied')
})

test('several unchanged levels: A → U1 → U2 → C, and C beside a direct changing dependency', async () => {
  const { log } = await order([
    fakeResource('g.a'),
    fakeResource('g.u1', ['g.a'], { exists: true }),
    fakeResource('g.u2', ['g.u1'], { exists: true }),
    fakeResource('g.x'),
    fakeResource('g.c', ['g.x', 'g.u2']),
  ])
  before(log, 'g.a', 'g.c')
  before(log, 'g.x', 'g.c')
})

test('a diamond: D waits for both sides, through the unchanged one too; the top runs once', async () => {
  const applied: string[] = []
  const { log } = await order([
    fakeResource('g.top', [], { applied }),
    fakeResource('g.left', ['g.top'], { exists: true }),
    fakeResource('g.right', ['g.top'], { applied }),
    fakeResource('g.deep', [], { applied }),
    fakeResource('g.left2', ['g.left', 'g.deep'], { exists: true }),
    fakeResource('g.d', ['g.left2', 'g.right'], { applied }),
  ])
  before(log, 'g.top', 'g.right')
  before(log, 'g.right', 'g.d')
  before(log, 'g.deep', 'g.d')
  assert.equal(applied.filter((a) => a === 'g.top').length, 1)
})

test('a failure behind an unchanged step skips what depends on it', async () => {
  const { log, skipped } = await order([
    fakeResource('g.a', [], { apply: () => Promise.reject(awsError('AccessDenied', 'no', 403)) }),
    fakeResource('g.b', ['g.a'], { exists: true }),
    fakeResource('g.c', ['g.b']),
    fakeResource('g.free', ['g.b-free']),
    fakeResource('g.b-free', [], { exists: true }),
  ])
  assert.deepEqual(skipped, ['g.c'])
  assert.ok(!log.includes('start g.c'))
  assert.ok(log.includes('done g.free'), 'a step behind unchanged steps only runs at once')
})

test('changingDependencies: the nearest changing steps through unchanged ones, never beyond a changing one', async () => {
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.a'),
      fakeResource('g.b', ['g.a']),
      fakeResource('g.u', ['g.b'], { exists: true }),
      fakeResource('g.c', ['g.u', 'g.a']),
      fakeResource('g.alone', [], { exists: true }),
    ],
    env,
  )
  const deps = changingDependencies(plan.steps)
  const of = (a: string) => (deps.get(a) ?? []).map((s) => s.resource.address).sort()
  assert.deepEqual(of('g.c'), ['g.a', 'g.b'])
  assert.deepEqual(of('g.b'), ['g.a'])
  assert.deepEqual(of('g.a'), [])
  assert.equal(deps.has('g.u'), false, 'unchanged steps are not applied, so they wait for nothing')
})
