// The `why` use case: facts from a live cluster or a why snapshot, then the judgement.
import { createRunContext, type RunContext, type RunOptions } from '../context/run-context.js'
import { KarpctlError } from '../errors.js'
import { collectWhy } from './collect.js'
import { judge, type WhyReport } from './judge.js'
import { checkWhyFacts, loadWhySnapshot, saveWhySnapshot } from './snapshot.js'
import { applyWith, type WithManifests } from './with-file.js'
import type { WhyFacts, WhySelector } from './types.js'

export interface WhyRequest {
  selector?: WhySelector
  snapshot?: string
  /** The snapshot's JSON, when the command already read it (to tell a pod snapshot from a node one). */
  snapshotData?: unknown
  saveSnapshot?: string
  /** `--with FILE` (read by the command first): judge as if its NodePools and EC2NodeClasses were applied. */
  with?: WithManifests
  live?: RunOptions
  /** A prepared run context (tests); else one is made from `live`. */
  context?: RunContext
}

export interface WhyOutcome {
  facts: WhyFacts
  report: WhyReport
  calls?: string[]
  saveError?: KarpctlError
}

export async function why(req: WhyRequest): Promise<WhyOutcome> {
  const manifests = req.with
  let facts: WhyFacts
  let calls: string[] | undefined
  if (req.snapshot)
    facts =
      req.snapshotData !== undefined
        ? checkWhyFacts(req.snapshotData, req.snapshot)
        : await loadWhySnapshot(req.snapshot)
  else if ((req.context || req.live) && req.selector) {
    const ctx = req.context ?? (await createRunContext(req.live as RunOptions))
    try {
      facts = await collectWhy(ctx, req.selector)
    } finally {
      ctx.aws.destroy()
    }
    calls = ctx.log.calls
  } else throw new Error('why needs a snapshot, or a live cluster and pods to judge')
  let saveError: KarpctlError | undefined
  if (req.saveSnapshot)
    await saveWhySnapshot(req.saveSnapshot, facts).catch((err: unknown) => {
      if (!(err instanceof KarpctlError)) throw err
      saveError = err
    })
  return {
    facts,
    report: manifests
      ? {
          ...judge({ ...facts, kube: applyWith(facts.kube, manifests) }, req.snapshot ? 'snapshot' : 'live'),
          with: manifests.file,
        }
      : judge(facts, req.snapshot ? 'snapshot' : 'live'),
    ...(calls ? { calls } : {}),
    ...(saveError ? { saveError } : {}),
  }
}

/** Exit policy: 1 when a pod has no NodePool; 2 when one could not be told (or a read failed); else 0. */
export function exitCodeOf(report: WhyReport): 0 | 1 | 2 {
  if (report.summary.none > 0) return 1
  if (report.summary.couldNotTell > 0 || report.unreadable.length > 0) return 2
  return 0
}
