// What runPlan does between the plan and the executor: nothing to change, the confirmation (who asks,
// with how many changes, what a refusal does, what is needed without a terminal), the preflight's
// three answers, the env and progress lines the steps get, and the error that says how to finish.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Aws } from '../../../src/context/aws.js'
import { InputError } from '../../../src/errors.js'
import { PreflightError } from '../../../src/plan/preflight.js'
import type { Prompter } from '../../../src/context/prompter.js'
import { ApplyError } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { runPlan, type Session } from '../../../src/plan/session.js'
import type { Action, ApplyEnv, Resource } from '../../../src/plan/types.js'
import { awsError, bareEnv } from '../../helpers/fake-resource.js'

interface Log {
  applied: string[]
  asked: { message: string; default?: boolean }[]
  said: string[]
  progress: string[]
  hook: number
}
const newLog = (): Log => ({ applied: [], asked: [], said: [], progress: [], hook: 0 })

function step(
  address: string,
  action: Action,
  log: Log,
  o: { fail?: Error; dependsOn?: string[] } = {},
): Resource {
  return {
    address,
    kind: 'thing',
    name: address,
    group: 'g',
    dependsOn: o.dependsOn ?? [],
    desired: {},
    permissions: [{ action: 'iam:CreateRole', resource: `arn:aws:iam::123456789012:role/${address}` }],
    observe: async () => null,
    verdict: () => ({ action, changes: [] }),
    apply: async () => {
      log.applied.push(address)
      if (o.fail) throw o.fail
    },
  }
}

function session(log: Log, over: Partial<Session> = {}, answer = true): Session {
  const prompter: Prompter = {
    select: () => Promise.reject(new Error('not asked')),
    checkbox: () => Promise.reject(new Error('not asked')),
    input: () => Promise.reject(new Error('not asked')),
    confirm: async (q: { message: string; default?: boolean }) => {
      log.asked.push(q)
      return answer
    },
  } as Prompter
  return {
    prompter,
    yes: false,
    dryRun: false,
    color: false,
    say: (l) => log.said.push(l),
    progress: (l) => log.progress.push(l),
    ...over,
  }
}

const opts = (log: Log, aws: unknown = bareEnv().aws) => ({
  aws: aws as Aws,
  question: (n: number) => `apply ${n} change(s)?`,
  beforeApply: async () => {
    log.hook++
  },
})

test('a plan with nothing to change: nothing asked, applied or hooked', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'unchanged', log), step('g.b', 'unchanged', log)], env)
  assert.deepEqual(await runPlan(plan, env, session(log), opts(log)), { kind: 'nothing' })
  assert.deepEqual(log, newLog())
})

test('one change among unchanged steps is applied (not "nothing")', async () => {
  // Kills: `every` for `some`.
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'unchanged', log), step('g.b', 'create', log)], env)
  const out = await runPlan(plan, env, session(log, { yes: true }), opts(log))
  assert.equal(out.kind, 'applied')
  assert.deepEqual(log.applied, ['g.b'])
})

async function mixed(log: Log) {
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      step('g.c', 'create', log),
      step('g.u1', 'update', log),
      step('g.u2', 'update', log),
      step('g.d1', 'delete', log),
      step('g.d2', 'delete', log),
      step('g.d3', 'delete', log),
      step('g.n', 'unchanged', log),
    ],
    env,
  )
  return { env, plan }
}

test('without --yes the terminal is asked once, with every change counted, defaulting to no', async () => {
  // Kills: the `!s.yes` test forced either way; the count's `+` turned `-`; `default: true`.
  const log = newLog()
  const { env, plan } = await mixed(log)
  const out = await runPlan(plan, env, session(log), opts(log))
  assert.equal(out.kind, 'applied')
  assert.deepEqual(log.asked, [{ message: 'apply 6 change(s)?', default: false }])
  assert.equal(log.hook, 1)
  assert.deepEqual([...log.applied].sort(), ['g.c', 'g.d1', 'g.d2', 'g.d3', 'g.u1', 'g.u2'])
})

test('with --yes nothing is asked', async () => {
  const log = newLog()
  const { env, plan } = await mixed(log)
  await runPlan(plan, env, session(log, { yes: true }), opts(log))
  assert.deepEqual(log.asked, [])
  assert.equal(log.applied.length, 6)
})

test('a refusal applies nothing and runs no hook: the outcome is declined', async () => {
  const log = newLog()
  const { env, plan } = await mixed(log)
  assert.deepEqual(await runPlan(plan, env, session(log, {}, false), opts(log)), { kind: 'declined' })
  assert.equal(log.asked.length, 1)
  assert.deepEqual([log.applied, log.hook], [[], 0])
})

test("the command's own confirmation replaces the terminal's question", async () => {
  const log = newLog()
  const { env, plan } = await mixed(log)
  let confirmed = 0
  const out = await runPlan(plan, env, session(log), {
    ...opts(log),
    confirm: async () => {
      confirmed++
      return false
    },
  })
  assert.deepEqual(out, { kind: 'declined' })
  assert.deepEqual([confirmed, log.asked.length, log.applied.length], [1, 0, 0])
})

test('without a terminal and without --yes: CONFIRMATION_REQUIRED naming the flag, nothing applied', async () => {
  for (const [flag, shown] of [
    [undefined, '--yes'],
    ['--confirm demo', '--confirm demo'],
  ] as const) {
    const log = newLog()
    const { env, plan } = await mixed(log)
    await assert.rejects(
      runPlan(plan, env, session(log, { prompter: null }), {
        ...opts(log),
        ...(flag ? { confirmFlag: flag } : {}),
      }),
      (e: unknown) => {
        assert.ok(e instanceof InputError)
        assert.equal(e.code, 'CONFIRMATION_REQUIRED')
        assert.equal(
          e.message,
          `the plan changes the cluster: pass ${shown} to apply it without a terminal (or --dry-run to only plan)`,
        )
        return true
      },
    )
    assert.deepEqual([log.applied, log.hook], [[], 0])
  }
})

/** An AWS whose only call is IAM's simulator, answering `decide(action)` (or failing with `err`). */
function simulator(decide: (action: string) => string, err?: Error) {
  const calls: unknown[] = []
  return {
    calls,
    aws: {
      call: async (service: string, op: string, input: { ActionNames: string[]; ResourceArns: string[] }) => {
        assert.deepEqual([service, op], ['iam', 'SimulatePrincipalPolicy'])
        calls.push(input)
        if (err) throw err
        return {
          EvaluationResults: input.ActionNames.map((a) => ({
            EvalActionName: a,
            EvalResourceName: input.ResourceArns[0],
            EvalDecision: decide(a),
          })),
        }
      },
    },
  }
}

const CALLER = 'arn:aws:iam::123456789012:user/ops'

test('preflight all allowed: said with the count, then applied', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'create', log), step('g.b', 'update', log)], env)
  const sim = simulator(() => 'allowed')
  await runPlan(plan, env, session(log, { yes: true }), { ...opts(log, sim.aws), callerArn: CALLER })
  assert.equal(sim.calls.length, 2)
  assert.deepEqual(log.said, ["preflight: 2 permission(s) checked with IAM's policy simulator, all allowed"])
  assert.deepEqual(log.applied, ['g.a', 'g.b'])
})

test('no caller to simulate: no preflight at all', async () => {
  // Kills: `if (o.callerArn)` forced true (the simulator would be called).
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'create', log)], env)
  const sim = simulator(() => 'allowed')
  await runPlan(plan, env, session(log, { yes: true }), opts(log, sim.aws))
  assert.deepEqual([sim.calls.length, log.said], [0, []])
})

test('preflight denied: PreflightError listing the denials, nothing applied', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'create', log)], env)
  const sim = simulator(() => 'implicitDeny')
  await assert.rejects(
    runPlan(plan, env, session(log, { yes: true }), { ...opts(log, sim.aws), callerArn: CALLER }),
    (e: unknown) => {
      assert.ok(e instanceof PreflightError)
      assert.deepEqual(e.denied, [
        { action: 'iam:CreateRole', resource: 'arn:aws:iam::123456789012:role/g.a' },
      ])
      return true
    },
  )
  assert.deepEqual([log.applied, log.said], [[], []])
})

test('preflight unavailable: said why, and applied anyway', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'create', log)], env)
  const sim = simulator(() => 'allowed', awsError('InternalFailure', 'simulator down', 500))
  await runPlan(plan, env, session(log, { yes: true }), { ...opts(log, sim.aws), callerArn: CALLER })
  assert.deepEqual(log.said, [
    "preflight: IAM's policy simulator is unavailable (InternalFailure: simulator down); permissions could not be checked before applying",
  ])
  assert.deepEqual(log.applied, ['g.a'])
})

test('preflight of a root caller checks nothing and says nothing', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan('t', [step('g.a', 'create', log)], env)
  const sim = simulator(() => 'allowed')
  await runPlan(plan, env, session(log, { yes: true }), {
    ...opts(log, sim.aws),
    callerArn: 'arn:aws:iam::123456789012:root',
  })
  assert.deepEqual([sim.calls.length, log.said, log.applied], [0, [], ['g.a']])
})

test("steps get the run's env with the session's progress; each finished step is a progress line", async () => {
  // Kills: the env passed to the executor emptied; the onEvent handler emptied or its `if (line)`
  // forced (a start event has no line).
  const log = newLog()
  const env = bareEnv()
  const seen: ApplyEnv[] = []
  const r: Resource = {
    ...step('g.a', 'create', log),
    apply: async (e) => {
      seen.push(e)
      e.progress?.('waiting for nodes')
    },
  }
  const plan = await buildPlan('t', [r], env)
  await runPlan(plan, env, session(log, { yes: true }), opts(log))
  assert.equal(seen.length, 1)
  assert.equal(seen[0]?.aws, env.aws)
  assert.equal(seen[0]?.sleep, env.sleep)
  assert.equal(log.progress.length, 2)
  assert.equal(log.progress[0], 'waiting for nodes')
  assert.match(log.progress[1] ?? '', /^✔ created thing g\.a \(\d+\.\d s\)$/)
})

test('failed steps: one ApplyError naming each failure, the count applied and not started', async () => {
  const log = newLog()
  const env = bareEnv()
  const plan = await buildPlan(
    't',
    [
      step('g.ok', 'create', log),
      step('g.bad1', 'create', log, { fail: awsError('ValidationError', 'bad one', 400) }),
      step('g.bad2', 'update', log, { fail: awsError('ValidationError', 'bad two', 400) }),
      step('g.child', 'create', log, { dependsOn: ['g.bad1'] }),
    ],
    env,
  )
  await assert.rejects(runPlan(plan, env, session(log, { yes: true }), opts(log)), (e: unknown) => {
    assert.ok(e instanceof ApplyError)
    assert.equal(
      e.message,
      '2 step(s) failed (g.bad1: ValidationError: bad one; g.bad2: ValidationError: bad two); 1 applied, 1 not started: fix the cause and run the same command again to finish',
    )
    return true
  })
  const log2 = newLog()
  const plan2 = await buildPlan(
    't',
    [step('g.bad', 'create', log2, { fail: awsError('ValidationError', 'bad', 400) })],
    env,
  )
  await assert.rejects(runPlan(plan2, env, session(log2, { yes: true }), opts(log2)), {
    message:
      '1 step(s) failed (g.bad: ValidationError: bad); 0 applied: fix the cause and run the same command again to finish',
  })
})
