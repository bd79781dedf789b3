// The doctor --fix use case: judge, build the repairs from install's resource kinds, show them as one
// plan grouped by check (and the manual findings with their commands), apply after confirmation, and
// judge again with a fresh read.
import { catalog } from '../checks/catalog.js'
import { runChecks, selectChecks } from '../checks/run.js'
import type { CheckResult } from '../checks/types.js'
import { createRunContext, type RunOptions } from '../context/run-context.js'
import { collect } from '../facts/collect.js'
import type { Facts } from '../facts/types.js'
import { applyEnv, requireTools } from '../plan/env.js'
import type { Prompter } from '../context/prompter.js'
import { buildPlan } from '../plan/plan.js'
import { planJson, renderPlan } from '../plan/render.js'
import { runPlan, type Outcome } from '../plan/session.js'
import { changing } from '../plan/types.js'
import { waitFor } from '../plan/waits.js'
import { fixSet, type Manual } from './fixes.js'
import { fixWaits } from './waits.js'

export interface FixRequest {
  live: RunOptions
  only?: string[]
  skip?: string[]
  /** A folder holding the karpenter/ chart, for repairs made through Helm (else the OCI chart). */
  chartDir?: string
  yes: boolean
  dryRun: boolean
  /** --wait-for-lock: wait for another run's lock on the cluster instead of stopping. */
  waitForLock?: boolean
  prompter: Prompter | null
  color: boolean
  say: (s: string) => void
  progress: (s: string) => void
  /** How long to wait for Karpenter to re-resolve what was fixed before judging again (default 120 s). */
  waitMs?: number
}

export interface FixOutcome {
  outcome: Outcome | { kind: 'needs-confirmation' }
  plan: ReturnType<typeof planJson>
  manual: Manual[]
  writes: number
  /** The judgement after the fix (before it, when nothing was applied). */
  facts: Facts
  results: CheckResult[]
  rendered: string
}

export async function runFix(req: FixRequest): Promise<FixOutcome> {
  const checks = selectChecks(catalog, req.only, req.skip)
  const ctx = await createRunContext({ ...req.live, retryMode: 'adaptive' })
  try {
    // The kube context is proven to be the cluster's before anything is read from it.
    const env = await applyEnv(ctx, { clusterName: req.live.clusterName })
    const facts = await collect(ctx)
    const results = runChecks(checks, facts)
    const fs = fixSet(facts, results, { chartDir: req.chartDir })
    const plan = await buildPlan(
      `karpctl doctor --fix — cluster ${req.live.clusterName} (${req.live.region}, account ${facts.meta.accountId})`,
      fs.resources,
      env,
    )
    const rendered = [
      fs.resources.length
        ? renderPlan(plan, { color: req.color })
        : 'Nothing doctor found can be fixed automatically.',
      ...(fs.manual.length
        ? [
            '',
            `Manual (${fs.manual.length}): karpctl does not change these for you`,
            ...fs.manual.flatMap((m) => [
              `  ${m.check}: ${m.message}`,
              `    why: ${m.why}`,
              ...m.commands.map((c) => `    $ ${c}`),
              ...(m.alternative
                ? [`    or, ${m.alternative.label}:`, ...m.alternative.commands.map((c) => `    $ ${c}`)]
                : []),
            ]),
          ]
        : []),
    ].join('\n')
    const base = { plan: planJson(plan), manual: fs.manual, rendered }
    if (!req.yes && !req.prompter && !req.dryRun && plan.steps.some(changing))
      return { ...base, outcome: { kind: 'needs-confirmation' }, writes: 0, facts, results }
    const callerArn = (await ctx.aws.call<{ Arn?: string }>('sts', 'GetCallerIdentity')).Arn
    req.say(rendered)
    const outcome = await runPlan(
      plan,
      env,
      {
        prompter: req.prompter,
        yes: req.yes,
        dryRun: req.dryRun,
        waitForLock: req.waitForLock,
        color: req.color,
        say: req.say,
        progress: req.progress,
      },
      {
        aws: ctx.aws,
        callerArn,
        question: (n) => `Apply ${n} fix(es) to cluster ${req.live.clusterName}?`,
        beforeApply: () => requireTools(plan, env),
      },
    )
    if (outcome.kind !== 'applied')
      return { ...base, outcome, writes: ctx.log.writes.length, facts, results, rendered: '' }
    const waitMs = req.waitMs ?? 120_000
    const pending = await waitFor(ctx.kube, fixWaits(facts, outcome.result.applied), {
      timeoutMs: waitMs,
      sleep: env.sleep,
      onReady: (label, ms) => req.progress(`✔ ${label}${ms > 0 ? ` (${(ms / 1000).toFixed(1)} s)` : ''}`),
    })
    for (const p of pending) req.progress(`! ${p}: not yet after ${waitMs / 1000} s (doctor says why)`)
    // Judge again from a fresh read: what was fixed, and what is left.
    const after = await createRunContext(req.live)
    try {
      const facts2 = await collect(after)
      return {
        ...base,
        outcome,
        writes: ctx.log.writes.length,
        facts: facts2,
        results: runChecks(checks, facts2),
        rendered: '',
      }
    } finally {
      after.aws.destroy()
    }
  } finally {
    ctx.aws.destroy()
  }
}
