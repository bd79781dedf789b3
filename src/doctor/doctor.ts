// The doctor use case: facts from a live cluster or a snapshot, then the catalog's judgement.
import { catalog } from '../checks/catalog.js'
import { runChecks, selectChecks } from '../checks/run.js'
import type { CheckResult } from '../checks/types.js'
import { createRunContext, type RunContext, type RunOptions } from '../context/run-context.js'
import { collect } from '../facts/collect.js'
import { KarpctlError } from '../errors.js'
import { loadSnapshot, saveSnapshot } from '../facts/snapshot.js'
import type { Facts } from '../facts/types.js'

export interface DoctorRequest {
  snapshot?: string
  saveSnapshot?: string
  only?: string[]
  skip?: string[]
  live?: RunOptions
  /** A prepared run context (tests swap clients, clock or limits here); else one is made from `live`. */
  context?: RunContext
  onProgress?: (calls: number) => void
}

export interface DoctorOutcome {
  facts: Facts
  results: CheckResult[]
  calls?: string[]
  /** `--save-snapshot` failed: the report was still collected and is printed, then this ends the run. */
  saveError?: KarpctlError
}

export async function doctor(req: DoctorRequest): Promise<DoctorOutcome> {
  // Validate the selection before any network work: an unknown id is a usage error.
  const checks = selectChecks(catalog, req.only, req.skip)
  let facts: Facts
  let calls: string[] | undefined
  if (req.snapshot) {
    facts = await loadSnapshot(req.snapshot)
  } else if (req.context || req.live) {
    const ctx = req.context ?? (await createRunContext(req.live as RunOptions))
    const timer = req.onProgress ? setInterval(() => req.onProgress?.(ctx.log.calls.length), 100) : undefined
    try {
      facts = await collect(ctx)
    } finally {
      if (timer) clearInterval(timer)
      ctx.aws.destroy()
    }
    calls = ctx.log.calls
  } else {
    throw new Error('doctor needs a snapshot or a live cluster')
  }
  let saveError: KarpctlError | undefined
  if (req.saveSnapshot)
    await saveSnapshot(req.saveSnapshot, facts).catch((err: unknown) => {
      if (!(err instanceof KarpctlError)) throw err
      saveError = err
    })
  return { facts, results: runChecks(checks, facts), calls, ...(saveError ? { saveError } : {}) }
}
