// --dry-run changes nothing, whatever else is passed (--yes, a confirming terminal, a caller to
// preflight, a hook before applying); a blocked plan applies nothing, neither through the session nor
// through the executor itself.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import type { Prompter } from '../../../src/context/prompter.js'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { runPlan, type Session } from '../../../src/plan/session.js'
import { bareEnv, fakeResource } from '../../helpers/fake-resource.js'

interface Calls {
  applied: string[]
  asked: number
  beforeApply: number
  said: string[]
}

function session(over: Partial<Session>, calls: Calls): Session {
  const prompter: Prompter = {
    select: () => Promise.reject(new Error('not asked')),
    checkbox: () => Promise.reject(new Error('not asked')),
    input: () => Promise.reject(new Error('not asked')),
    confirm: async () => {
      calls.asked++
      return true
    },
  }
  return {
    prompter,
    yes: true,
    dryRun: false,
    color: false,
    say: (l) => calls.said.push(l),
    progress: () => {},
    ...over,
  }
}

const newCalls = (): Calls => ({ applied: [], asked: 0, beforeApply: 0, said: [] })

async function twoSteps(calls: Calls, blocked?: string) {
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      fakeResource('g.a', [], {
        applied: calls.applied,
        permissions: [{ action: 'iam:CreateRole', resource: '*' }],
      }),
      fakeResource('g.b', ['g.a'], { applied: calls.applied, blocked }),
    ],
    env,
  )
  const opts = {
    // Any AWS use (the preflight's simulator) fails the test through bareEnv.
    aws: env.aws as Aws,
    question: (n: number) => `apply ${n}?`,
    beforeApply: async () => {
      calls.beforeApply++
    },
  }
  return { env, plan, opts }
}

test('--dry-run with --yes applies nothing, asks nothing, runs no preflight and no hook: the outcome is dry-run', async () => {
  // Kills: the dry-run check removed or moved after the confirmation / the apply; `s.yes` tested first.
  for (const over of [{ yes: true }, { yes: false }, { yes: true, prompter: null }]) {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls)
    const out = await runPlan(plan, env, session({ ...over, dryRun: true }, calls), {
      ...opts,
      callerArn: 'arn:aws:iam::123456789012:user/u',
      confirm: async () => {
        calls.asked++
        return true
      },
    })
    assert.deepEqual(out, { kind: 'dry-run' })
    assert.deepEqual(calls, newCalls(), JSON.stringify(over))
  }
})

test('the same plan without --dry-run is applied (the harness sees applies)', async () => {
  const calls = newCalls()
  const { env, plan, opts } = await twoSteps(calls)
  const out = await runPlan(plan, env, session({ dryRun: false }, calls), opts)
  assert.equal(out.kind, 'applied')
  assert.deepEqual(calls.applied, ['g.a', 'g.b'])
  assert.equal(calls.beforeApply, 1)
})

test('a blocked plan applies nothing, not even its steps that are not blocked', async () => {
  // Kills: assertNotBlocked removed from applyPlan (the executor's own guard), or from runPlan before
  // the hook that runs before applying.
  {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, 'not ours')
    await assert.rejects(runPlan(plan, env, session({}, calls), opts), { code: 'BLOCKED' })
    assert.deepEqual(calls, newCalls())
  }
  {
    // With --dry-run as well: refused or only planned, never applied.
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, 'not ours')
    await runPlan(plan, env, session({ dryRun: true }, calls), opts).catch(() => undefined)
    assert.deepEqual(calls, newCalls())
  }
  const calls = newCalls()
  const { env, plan } = await twoSteps(calls, 'not ours')
  await assert.rejects(applyPlan(plan, env), { code: 'BLOCKED', message: /thing g.b: not ours/ })
  assert.deepEqual(calls.applied, [])
})

test("the cluster's lock: taken before the question with --wait-for-lock passed on, released after the apply and after a declined question; never taken for a dry run", async () => {
  const events: string[] = []
  const withLock = async (over: Partial<Session>, blocked?: string) => {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, blocked)
    env.lock = async ({ wait }) => {
      events.push(`take wait=${wait}`)
      return { waited: false, release: async () => void events.push('release') }
    }
    const out = await runPlan(plan, env, session(over, calls), {
      ...opts,
      confirm: async () => {
        events.push('asked')
        return over.yes !== false
      },
    }).catch((e: Error) => e.message)
    return { out, calls }
  }
  await withLock({ dryRun: true })
  assert.deepEqual(events, [], 'a dry run takes no lock')
  const applied = await withLock({ yes: true, waitForLock: true })
  assert.deepEqual(applied.calls.applied, ['g.a', 'g.b'])
  assert.deepEqual(events.splice(0), ['take wait=true', 'release'])
  await withLock({ yes: false, prompter: { confirm: async () => false } as never })
  assert.deepEqual(events.splice(0), ['take wait=false', 'asked', 'release'], 'declined: released')
})

test('after waiting for the lock the plan is read again: applied when it still holds, stopped in one line when it moved, nothing when the other run did it all', async () => {
  {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls)
    env.forget = () => {}
    env.lock = async () => ({ waited: true, release: async () => {} })
    for (const st of plan.steps) st.resource.observe = async () => ({ exists: true })
    assert.deepEqual(await runPlan(plan, env, session({ yes: true }, calls), opts), { kind: 'nothing' })
    assert.deepEqual(calls.applied, [])
  }
  for (const moved of [false, true]) {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls)
    let forgot = 0
    env.forget = () => void forgot++
    env.lock = async () => ({ waited: true, release: async () => {} })
    // The other run created g.b meanwhile: observed again, g.b is unchanged.
    if (moved) plan.steps[1]!.resource.observe = async () => (forgot ? { exists: true } : { exists: false })
    const out = await runPlan(plan, env, session({ yes: true }, calls), opts).catch((e: Error) => e)
    assert.equal(forgot, 1)
    if (moved) {
      assert.ok(out instanceof Error)
      assert.equal(
        out.message,
        'the cluster changed while this run waited for its lock: 1 step(s) plan differently now (g.b); run the same command again to see the new plan',
      )
      assert.deepEqual(calls.applied, [], 'nothing applied from a stale plan')
    } else {
      assert.equal((out as { kind: string }).kind, 'applied')
      assert.deepEqual(calls.applied, ['g.a', 'g.b'])
    }
  }
})

test("a plan blocked by another run's work in progress: the lock speaks first (its holder's line, or the wait), then the plan is judged again", async () => {
  // The e2e lock scenario: a second install read the release while the first's helm was at it, and
  // stopped on "helm is still at it" instead of naming the run that holds the cluster.
  {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, 'helm is still at it')
    env.lock = async () => {
      throw Object.assign(new Error('cluster is being changed by `karpctl install`'), { code: 'LOCKED' })
    }
    await assert.rejects(runPlan(plan, env, session({}, calls), opts), { code: 'LOCKED' })
    assert.deepEqual(calls.applied, [])
  }
  {
    // --wait-for-lock: after the other run, read again; it did everything: nothing to do.
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, 'helm is still at it')
    env.forget = () => {}
    env.lock = async () => ({ waited: true, release: async () => {} })
    // Read again after the other run: its helm is done and every step is as wanted.
    for (const st of plan.steps) st.resource.verdict = () => ({ action: 'unchanged', changes: [] })
    assert.deepEqual(await runPlan(plan, env, session({ yes: true }, calls), opts), { kind: 'nothing' })
  }
  {
    // No other run holds it (a killed run's helm): the lock is taken, the block stands, the lock goes back.
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls, 'helm is still at it')
    let released = 0
    env.lock = async () => ({ waited: false, release: async () => void released++ })
    await assert.rejects(runPlan(plan, env, session({}, calls), opts), { code: 'BLOCKED' })
    assert.equal(released, 1)
    assert.deepEqual(calls.applied, [])
  }
})

test("a killed run's lock taken over with --yes: a plan its leftover helm moved meanwhile is applied as read now, and said so; without --yes, or after a live run, it stops", async () => {
  for (const c of [
    { tookOver: true, yes: true, applies: true },
    { tookOver: true, yes: false, applies: false },
    { tookOver: false, yes: true, applies: false },
  ]) {
    const calls = newCalls()
    const { env, plan, opts } = await twoSteps(calls)
    let forgot = 0
    env.forget = () => void forgot++
    env.lock = async () => ({ waited: true, tookOver: c.tookOver, release: async () => {} })
    // The killed run's helm finished g.b after the plan was read.
    plan.steps[1]!.resource.observe = async () => (forgot ? { exists: true } : { exists: false })
    const progress: string[] = []
    const out = await runPlan(
      plan,
      env,
      session({ yes: c.yes, progress: (l) => progress.push(l) }, calls),
      opts,
    ).catch((e: Error & { code?: string }) => e.code)
    if (c.applies) {
      assert.equal((out as { kind: string }).kind, 'applied')
      assert.deepEqual(calls.applied, ['g.a'], 'only what is still to do')
      assert.match(
        progress.join('\n'),
        /^read again after taking over a stopped run's lock: 1 step\(s\) plan differently now \(g\.b\)/m,
      )
    } else {
      assert.equal(out, 'PLAN_STALE', JSON.stringify(c))
      assert.deepEqual(calls.applied, [])
    }
  }
})
