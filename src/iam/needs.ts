// What a policy statement lets a caller do, as requests the evaluator can replay: one per action and
// resource, with a request context that satisfies the statement's own conditions (the tags Karpenter
// sends). "Does this role still grant what that version's controller needs?" is then the evaluator's
// answer for each of them, not a comparison of action names (a grant scoped or conditioned otherwise
// does not stand in for another).
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import { evaluate, parseOperator, type EvaluationRequest } from '../policy/evaluate.js'

const list = (v: unknown): string[] =>
  v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)]

/** A concrete value a wildcard pattern matches: each `*` one character run, each `?` one character. */
const instance = (pattern: string) => pattern.replace(/\*/g, 'x').replace(/\?/g, 'x')

/**
 * The resource a call on a statement's resource pattern names: `*` stays `*` (describe calls name no
 * resource), an ARN's wildcard account becomes the account, other wildcards a concrete value.
 */
function resourceOf(pattern: string, accountId: string): string {
  if (pattern === '*') return '*'
  const parts = pattern.split(':')
  if (parts[0] === 'arn' && parts.length >= 6 && parts[4] === '*') parts[4] = accountId
  return instance(parts.join(':'))
}

/** A request context that satisfies the statement's conditions, where one can be built from them. */
function contextOf(s: PolicyStatement): Record<string, string | string[]> {
  const context: Record<string, string | string[]> = {}
  for (const [rawOp, block] of Object.entries(s.Condition ?? {})) {
    const op = parseOperator(rawOp)
    for (const [key, raw] of Object.entries(block)) {
      const values = list(raw)
      if (op.base === 'Null') {
        // "false": the key must be there; "true": it must not (left out).
        if (values.some((v) => v.toLowerCase() === 'false')) context[key] ??= 'x'
        continue
      }
      if (/Not/.test(op.base)) continue
      const value = values[0]
      if (value === undefined) continue
      context[key] = op.set === 'ForAllValues' ? values : op.base.endsWith('Like') ? instance(value) : value
    }
  }
  return context
}

/** Every request a statement's Allow stands for (a Deny, or one without Action or Resource, stands for none). */
export function requestsOf(s: PolicyStatement, accountId: string): EvaluationRequest[] {
  if (s.Effect !== 'Allow') return []
  const context = contextOf(s)
  return list(s.Action).flatMap((action) =>
    list(s.Resource).map((r) => ({ action, resource: resourceOf(r, accountId), context })),
  )
}

/** The requests of every Allow statement of the documents, once each. */
export function needsOf(documents: PolicyDocument[], accountId: string): EvaluationRequest[] {
  const seen = new Set<string>()
  return documents
    .flatMap((d) => d.Statement.flatMap((s) => requestsOf(s, accountId)))
    .filter((r) => {
      const key = JSON.stringify([r.action.toLowerCase(), r.resource, r.context])
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
}

export const describeRequest = (r: EvaluationRequest) => `${r.action} on ${r.resource}`

/** The requests the documents do not allow. */
export function unmet(documents: PolicyDocument[], requests: EvaluationRequest[]): EvaluationRequest[] {
  return requests.filter((r) => evaluate(documents, r).decision !== 'allowed')
}
