// Small IAM policy helpers for coverage checks: "does some Allow statement grant this action on this
// resource?" and "does this resource/trust policy let that AWS service do X?". Conditions are not
// evaluated here (that is src/policy/evaluate.ts's job); checks look at them only to judge breadth.
import type { AttachedPolicy, InlinePolicy } from '../../facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../policy/types.js'
import { globMatch } from '../../policy/evaluate.js'

export const asList = (v: unknown): string[] =>
  v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)]

/** IAM wildcard match: `*` is any run of characters, `?` exactly one (the evaluator's, compiled once). */
export const wildcardMatch = (pattern: string, value: string, ignoreCase = false): boolean =>
  globMatch(pattern, value, ignoreCase)

export const isWildcard = (pattern: string) => /[*?]/.test(pattern)

/** Reads only: breadth on these is not a security finding. */
export const isReadOnlyAction = (action: string) => /^[\w-]+:(Describe|Get|List)/i.test(action)

export const hasCondition = (s: PolicyStatement) => Object.keys(s.Condition ?? {}).length > 0

/** One statement of a role's permission policies, with where it came from. */
export interface SourcedStatement {
  /** Policy name (attached or inline). */
  source: string
  kind: 'attached' | 'inline'
  index: number
  statement: PolicyStatement
}

export const statementLabel = (s: SourcedStatement) =>
  `${s.source}${s.statement.Sid ? `#${s.statement.Sid}` : `[${s.index}]`}`

/** Every statement of the readable attached policies and the inline policies. */
export function roleStatements(attached: AttachedPolicy[], inline: InlinePolicy[]): SourcedStatement[] {
  const out: SourcedStatement[] = []
  for (const p of attached) {
    p.document?.Statement.forEach((statement, index) =>
      out.push({ source: p.name, kind: 'attached', index, statement }),
    )
  }
  for (const p of inline) {
    p.document.Statement.forEach((statement, index) =>
      out.push({ source: p.name, kind: 'inline', index, statement }),
    )
  }
  return out
}

/** How a statement names an action: the matching Action pattern, or its NotAction list; null when it does not. */
export function actionMatch(s: PolicyStatement, action: string): string | null {
  if (s.Action !== undefined) return asList(s.Action).find((p) => wildcardMatch(p, action, true)) ?? null
  if (s.NotAction !== undefined) {
    const not = asList(s.NotAction)
    return not.some((p) => wildcardMatch(p, action, true)) ? null : `NotAction ${not.join(',')}`
  }
  return null
}

/** Whether the statement's action match is broader than the action itself (a wildcard or a NotAction). */
export const broadActionMatch = (match: string, action: string) =>
  match.startsWith('NotAction ') || (isWildcard(match) && match.toLowerCase() !== action.toLowerCase())

/**
 * Whether a statement's resources include a reference resource. Reference ARNs may hold `*` (any
 * account): that is matched literally, and also with the account filled in, so a grant scoped to
 * the caller's own account still counts.
 */
export function coversResource(s: PolicyStatement, resource: string, accountId?: string): boolean {
  const candidates = [resource]
  const parts = resource.split(':')
  if (accountId && parts.length >= 6 && parts[4] === '*') {
    candidates.push([...parts.slice(0, 4), accountId, ...parts.slice(5)].join(':'))
  }
  if (s.Resource !== undefined) {
    return asList(s.Resource).some((p) => candidates.some((c) => wildcardMatch(p, c)))
  }
  if (s.NotResource !== undefined) {
    const not = asList(s.NotResource)
    return candidates.some((c) => !not.some((p) => wildcardMatch(p, c)))
  }
  return false
}

/** A statement that applies to every resource (Resource "*" or an ARN pattern that is all wildcards). */
export const unscopedResource = (s: PolicyStatement) =>
  s.NotResource !== undefined ||
  asList(s.Resource).some((r) => r === '*' || /^arn:[^:]*:[^:]*:\*:\*:\*$/.test(r))

const principalNames = (s: PolicyStatement, kind: 'Service' | 'AWS'): string[] => {
  const p = s.Principal
  if (p === undefined) return []
  if (p === '*') return ['*']
  return asList(p[kind])
}

/**
 * Whether a resource or trust policy has an Allow statement for the AWS service principal and the
 * action (on `resource` when given; a statement without Resource applies to the policy's resource).
 */
export function allowsService(
  doc: PolicyDocument | null,
  service: string,
  action: string,
  resource?: string,
): boolean {
  if (!doc) return false
  return doc.Statement.some((s) => {
    if (s.Effect !== 'Allow') return false
    const services = [...principalNames(s, 'Service'), ...principalNames(s, 'AWS').filter((a) => a === '*')]
    if (!services.some((p) => p === '*' || p === service)) return false
    if (!actionMatch(s, action)) return false
    if (resource === undefined || (s.Resource === undefined && s.NotResource === undefined)) return true
    return coversResource(s, resource)
  })
}

/** The actions of `actions` that the trust policy does not let `service` perform. */
export function missingServiceTrust(trust: PolicyDocument, services: string[], actions: string[]): string[] {
  return actions.filter((a) => !services.some((svc) => allowsService(trust, svc, a)))
}
