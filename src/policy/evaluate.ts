// A local evaluator for identity-based IAM policies: the fallback when IAM's policy simulator
// (iam:SimulatePrincipalPolicy) is not allowed or not available (moto answers HTTP 500).
// It follows IAM's documented logic for the parts Karpenter's policies use: an explicit Deny wins,
// then any Allow, else an implicit deny. With a permissions boundary (evaluateWithBoundary), an
// action is allowed only when the identity policies and the boundary both allow it. It does not see
// SCPs, session policies or resource policies: the simulator remains the authority, and callers must
// say which one decided.
//
// Where it cannot be sure (an operator it does not implement, an unresolved policy variable) it is
// conservative: the statement does not grant (Allow) and does deny (Deny), and a note says so.
import type { PolicyDocument, PolicyStatement } from './types.js'

export interface EvaluationRequest {
  action: string
  resource: string
  /** Condition keys of the request (e.g. `iam:PassedToService`); multi-valued keys as arrays. */
  context: Record<string, string | string[]>
  /**
   * The context holds only the keys known about the request (karpctl describes a request another
   * service makes, e.g. EC2 calling KMS): a condition on any other key may hold or not, so the
   * statement is uncertain instead of "key absent".
   */
  partialContext?: boolean
}

export interface EvaluationResult {
  decision: 'allowed' | 'implicitDeny' | 'explicitDeny'
  /** The statements that decided: the matching Deny statements, else the matching Allow statements. */
  matchedStatements: string[]
  /** What the evaluator could not judge exactly and how it treated it. */
  notes: string[]
  /** The statements it could not judge exactly (an Allow among them did not grant, a Deny did deny). */
  uncertain?: string[]
}

/** true / false, or `uncertain` when the evaluator cannot judge (treated conservatively by effect). */
type Match = boolean | 'uncertain'

export function evaluate(policies: PolicyDocument[], request: EvaluationRequest): EvaluationResult {
  const notes = new Set<string>()
  const uncertain: string[] = []
  const allows: string[] = []
  const denies: string[] = []
  policies.forEach((doc, p) => {
    doc.Statement.forEach((statement, i) => {
      const label = statementLabel(doc, p, statement, i)
      if (!statementApplies(statement, request, label, notes, uncertain)) return
      if (statement.Effect === 'Deny') denies.push(label)
      else allows.push(label)
    })
  })
  const result = (decision: EvaluationResult['decision'], matched: string[]): EvaluationResult => ({
    decision,
    matchedStatements: matched,
    notes: [...notes],
    ...(uncertain.length > 0 ? { uncertain } : {}),
  })
  if (denies.length > 0) return result('explicitDeny', denies)
  if (allows.length > 0) return result('allowed', allows)
  return result('implicitDeny', [])
}

export interface PrincipalPolicies {
  identity: PolicyDocument[]
  /** The permissions boundary: undefined when the principal has none, null when it has one that could not be read. */
  boundary?: PolicyDocument | null
}

export interface PrincipalEvaluation extends EvaluationResult {
  /** The identity policies alone. */
  identity: EvaluationResult
  /** The boundary alone (absent when the principal has none). */
  boundary?: { decision: EvaluationResult['decision'] | 'unreadable'; matchedStatements: string[] }
}

/**
 * IAM's evaluation for a principal with a permissions boundary: an explicit Deny in either wins;
 * otherwise the action is allowed only if the identity policies allow it AND the boundary allows it
 * (the boundary grants nothing by itself). A boundary that could not be read never lets an allow
 * through: the result is then an implicit deny, and `boundary.decision` says `unreadable`.
 */
export function evaluateWithBoundary(p: PrincipalPolicies, request: EvaluationRequest): PrincipalEvaluation {
  const identity = evaluate(p.identity, request)
  if (p.boundary === undefined) return { ...identity, identity }
  if (p.boundary === null) {
    const boundary = { decision: 'unreadable' as const, matchedStatements: [] }
    if (identity.decision !== 'allowed') return { ...identity, identity, boundary }
    return {
      decision: 'implicitDeny',
      matchedStatements: [],
      notes: [
        ...identity.notes,
        'the permissions boundary could not be read: the allow of the identity policies is not confirmed',
      ],
      identity,
      boundary,
    }
  }
  const b = evaluate([p.boundary], request)
  const boundary = { decision: b.decision, matchedStatements: b.matchedStatements }
  const notes = [...new Set([...identity.notes, ...b.notes.map((n) => `permissions boundary: ${n}`)])]
  const out = (decision: EvaluationResult['decision'], matchedStatements: string[]): PrincipalEvaluation => ({
    decision,
    matchedStatements,
    notes,
    identity,
    boundary,
  })
  if (identity.decision === 'explicitDeny') return out('explicitDeny', identity.matchedStatements)
  if (b.decision === 'explicitDeny')
    return out(
      'explicitDeny',
      b.matchedStatements.map((m) => `permissions boundary ${m}`),
    )
  if (identity.decision === 'implicitDeny') return out('implicitDeny', [])
  if (b.decision === 'implicitDeny') return out('implicitDeny', [])
  return out('allowed', identity.matchedStatements)
}

/** The Sid when there is one (that is what people grep for), else the statement's position. */
function statementLabel(doc: PolicyDocument, p: number, s: PolicyStatement, i: number): string {
  if (s.Sid) return s.Sid
  return `${doc.Id ?? `policy[${p}]`}.Statement[${i}]`
}

function statementApplies(
  s: PolicyStatement,
  req: EvaluationRequest,
  label: string,
  notes: Set<string>,
  uncertain: string[],
): boolean {
  const action = matchesAction(s, req.action)
  if (action === null) {
    notes.add(`${label}: has neither Action nor NotAction; ignored`)
    return false
  }
  if (!action) return false
  const resource = matchesResource(s, req.resource, label, notes)
  if (resource === false) return false
  const condition = matchesConditions(s, req.context, label, notes, req.partialContext === true)
  if (condition === false) return false
  if (resource === 'uncertain' || condition === 'uncertain') {
    uncertain.push(label)
    // Conservative: never let an uncertain Allow grant, always let an uncertain Deny deny.
    notes.add(
      `${label}: treated as ${s.Effect === 'Allow' ? 'not granting' : 'denying'} because it could not be evaluated exactly`,
    )
    return s.Effect === 'Deny'
  }
  return true
}

// Callers check for undefined first: an absent Action or Resource means something else than [].
const list = (v: string | string[]): string[] => (Array.isArray(v) ? v : [v])

/** null when the statement names no action at all (invalid for IAM). */
function matchesAction(s: PolicyStatement, action: string): boolean | null {
  // Action names are case-insensitive in IAM (iam:passrole == iam:PassRole).
  if (s.Action !== undefined) return list(s.Action).some((p) => globMatch(p, action, true))
  if (s.NotAction !== undefined) return !list(s.NotAction).some((p) => globMatch(p, action, true))
  return null
}

function matchesResource(s: PolicyStatement, resource: string, label: string, notes: Set<string>): Match {
  const patterns =
    s.Resource !== undefined ? list(s.Resource) : s.NotResource !== undefined ? list(s.NotResource) : null
  if (patterns === null) {
    notes.add(`${label}: has neither Resource nor NotResource (required in identity policies); ignored`)
    return false
  }
  if (patterns.some(hasPolicyVariable)) {
    notes.add(
      `${label}: resource pattern uses a policy variable (\${...}), which the local evaluator does not resolve`,
    )
    return 'uncertain'
  }
  const any = patterns.some((p) => arnMatch(p, resource))
  return s.Resource !== undefined ? any : !any
}

// ---------- conditions ----------

interface ParsedOperator {
  set?: 'ForAllValues' | 'ForAnyValue'
  base: string
  ifExists: boolean
}

export function parseOperator(op: string): ParsedOperator {
  let rest = op
  let set: ParsedOperator['set']
  const m = /^(ForAllValues|ForAnyValue):(.*)$/i.exec(rest)
  if (m) {
    set = (m[1] as string).toLowerCase() === 'forallvalues' ? 'ForAllValues' : 'ForAnyValue'
    rest = m[2] as string
  }
  const ifExists = /IfExists$/.test(rest) && rest !== 'IfExists'
  if (ifExists) rest = rest.slice(0, -'IfExists'.length)
  return set ? { set, base: rest, ifExists } : { base: rest, ifExists }
}

interface Operator {
  /** Does one request value match one policy value? */
  test: (requestValue: string, policyValue: string) => boolean
  /** Not* operators: the condition holds when no policy value matches. */
  negated: boolean
}

const stringEquals = (r: string, p: string) => r === p
const equalsIgnoreCase = (r: string, p: string) => r.toLowerCase() === p.toLowerCase()
const stringLike = (r: string, p: string) => globMatch(p, r, false)
const arnLike = (r: string, p: string) => arnMatch(p, r)

const OPERATORS: Record<string, Operator> = {
  StringEquals: { test: stringEquals, negated: false },
  StringNotEquals: { test: stringEquals, negated: true },
  StringEqualsIgnoreCase: { test: equalsIgnoreCase, negated: false },
  StringNotEqualsIgnoreCase: { test: equalsIgnoreCase, negated: true },
  StringLike: { test: stringLike, negated: false },
  StringNotLike: { test: stringLike, negated: true },
  // IAM documents ArnEquals and ArnLike as the same comparison (both take wildcards per ARN segment).
  ArnEquals: { test: arnLike, negated: false },
  ArnLike: { test: arnLike, negated: false },
  ArnNotEquals: { test: arnLike, negated: true },
  ArnNotLike: { test: arnLike, negated: true },
  Bool: { test: equalsIgnoreCase, negated: false },
}

function matchesConditions(
  s: PolicyStatement,
  context: Record<string, string | string[]>,
  label: string,
  notes: Set<string>,
  partialContext: boolean,
): Match {
  let uncertain = false
  // Operators are ANDed, keys within an operator are ANDed, values of one key are ORed.
  for (const [rawOp, block] of Object.entries(s.Condition ?? {})) {
    const op = parseOperator(rawOp)
    for (const [key, rawValues] of Object.entries(block)) {
      const policyValues = (Array.isArray(rawValues) ? rawValues : [rawValues]).map(String)
      const requestValues = lookup(context, key)
      if (requestValues === undefined && partialContext) {
        notes.add(`${label}: condition ${rawOp} on ${key}, a key karpctl does not know for this request`)
        uncertain = true
        continue
      }
      const m = matchesKey(op, rawOp, policyValues, requestValues, label, notes)
      if (m === false) return false
      if (m === 'uncertain') uncertain = true
    }
  }
  return uncertain ? 'uncertain' : true
}

/** Condition keys are case-insensitive; `undefined` when the request does not carry the key. */
function lookup(context: Record<string, string | string[]>, key: string): string[] | undefined {
  const wanted = key.toLowerCase()
  for (const [k, v] of Object.entries(context)) {
    if (k.toLowerCase() === wanted) return Array.isArray(v) ? v : [v]
  }
  return undefined
}

function matchesKey(
  op: ParsedOperator,
  rawOp: string,
  policyValues: string[],
  requestValues: string[] | undefined,
  label: string,
  notes: Set<string>,
): Match {
  // Null asks only whether the key is present: "true" means "must be absent".
  if (op.base === 'Null') {
    const absent = requestValues === undefined || requestValues.length === 0
    return policyValues.some((v) => v.toLowerCase() === String(absent))
  }
  const impl = OPERATORS[op.base]
  if (!impl) {
    notes.add(`${label}: condition operator ${rawOp} is not supported by the local evaluator`)
    return 'uncertain'
  }
  if (policyValues.some(hasPolicyVariable)) {
    notes.add(
      `${label}: condition ${rawOp} uses a policy variable (\${...}), which the local evaluator does not resolve`,
    )
    return 'uncertain'
  }
  const present = requestValues !== undefined && requestValues.length > 0
  if (op.set === 'ForAllValues') {
    // IAM: ForAllValues is true when the key is missing or empty (the classic over-permissive trap).
    if (!present) return true
    return requestValues.every((r) => valueMatches(impl, r, policyValues))
  }
  if (op.set === 'ForAnyValue') {
    if (!present) return op.ifExists
    return requestValues.some((r) => valueMatches(impl, r, policyValues))
  }
  if (!present) {
    // IAM: a missing key fails a positive operator but satisfies a negated one (StringNotEquals, ArnNotLike...).
    return op.ifExists || impl.negated
  }
  return impl.negated
    ? requestValues.every((r) => valueMatches(impl, r, policyValues))
    : requestValues.some((r) => valueMatches(impl, r, policyValues))
}

/** For positive operators: r matches one of the values; for negated ones: r matches none of them. */
function valueMatches(impl: Operator, r: string, policyValues: string[]): boolean {
  const hit = policyValues.some((p) => impl.test(r, p))
  return impl.negated ? !hit : hit
}

// ---------- wildcards ----------

const hasPolicyVariable = (s: string) => s.includes('${')

/**
 * Each pattern's expression, compiled once per run: doctor matches the same few hundred patterns (the
 * reference policy's actions and resources) against every statement of every role, and compiling them
 * on every call was a tenth of a live run's CPU. Bounded, since patterns come from the policies read.
 */
const compiled = new Map<string, RegExp>()

/** IAM wildcards: `*` any run of characters, `?` exactly one. Nothing else is special. */
export function globMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  if (pattern === '*') return true
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`
  let re = compiled.get(key)
  if (!re) {
    const source = pattern
      .split('')
      .map((c) =>
        c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'),
      )
      .join('')
    if (compiled.size >= 10_000) compiled.clear()
    re = new RegExp(`^${source}$`, ignoreCase ? 'i' : '')
    compiled.set(key, re)
  }
  return re.test(value)
}

/**
 * ARN matching as IAM does for Resource and ArnLike: each of the six colon-separated parts is
 * compared on its own, case-sensitively (the last part keeps its colons). Non-ARN patterns compare whole.
 */
export function arnMatch(pattern: string, arn: string): boolean {
  if (pattern === '*') return true
  const p = splitArn(pattern)
  const a = splitArn(arn)
  if (!p || !a) return globMatch(pattern, arn, false)
  return p.every((part, i) => globMatch(part, a[i] as string, false))
}

function splitArn(s: string): string[] | null {
  const parts = s.split(':')
  if (parts.length < 6 || parts[0] !== 'arn') return null
  return [...parts.slice(0, 5), parts.slice(5).join(':')]
}
