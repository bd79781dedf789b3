// The `why node/…` use case: facts from a live cluster or a node snapshot, `--with` manifests laid
// over them, then the judgement.
import { createRunContext, type RunContext, type RunOptions } from '../../context/run-context.js'
import { KarpctlError } from '../../errors.js'
import { applyWith, type WithManifests } from '../with-file.js'
import { collectNodes } from './collect.js'
import { judgeNodes } from './judge.js'
import { checkNodeFacts, saveNodeSnapshot } from './snapshot.js'
import type { NodeFacts, NodeSelector } from './types.js'
import type { NodeReport } from './verdict.js'

export interface NodeRequest {
  selector?: NodeSelector
  /** A snapshot's parsed JSON and its path (the command reads the file once to tell pods from nodes). */
  snapshot?: { path: string; data: unknown }
  saveSnapshot?: string
  /** `--with FILE`, read by the command before anything else (a bad file is a usage error). */
  with?: WithManifests
  live?: RunOptions
  context?: RunContext
  now?: Date
}

export interface NodeOutcome {
  facts: NodeFacts
  report: NodeReport
  calls?: string[]
  saveError?: KarpctlError
}

export async function whyNodes(req: NodeRequest): Promise<NodeOutcome> {
  const manifests = req.with
  let facts: NodeFacts
  let calls: string[] | undefined
  if (req.snapshot) facts = await checkNodeFacts(req.snapshot.data, req.snapshot.path)
  else if ((req.context || req.live) && req.selector) {
    const ctx = req.context ?? (await createRunContext(req.live as RunOptions))
    try {
      facts = await collectNodes(ctx, req.selector)
    } finally {
      ctx.aws.destroy()
    }
    calls = ctx.log.calls
  } else throw new Error('why node needs a snapshot, or a live cluster and nodes to judge')
  let saveError: KarpctlError | undefined
  // The snapshot holds what the cluster is; `--with` is laid over it only for the judgement.
  if (req.saveSnapshot)
    await saveNodeSnapshot(req.saveSnapshot, facts).catch((err: unknown) => {
      if (!(err instanceof KarpctlError)) throw err
      saveError = err
    })
  const judged = manifests
    ? { ...facts, meta: { ...facts.meta, with: manifests.file }, kube: applyWith(facts.kube, manifests) }
    : facts
  return {
    facts,
    report: judgeNodes(judged, req.snapshot ? 'snapshot' : 'live', req.now),
    ...(calls ? { calls } : {}),
    ...(saveError ? { saveError } : {}),
  }
}

/** 1: a node blocked, never joined or failed to launch; 2: one could not be told or a read failed; else 0. */
export function nodeExitCode(report: NodeReport): 0 | 1 | 2 {
  const m = report.summary
  if (m.blocked + m['not-joined'] + m['launch-failed'] > 0) return 1
  if (m['could-not-tell'] > 0 || report.unreadable.length > 0) return 2
  return 0
}
