// Whether a principal may use a KMS key, by KMS's rules: the key policy is the primary control. A
// statement of the key policy that names the principal (or `*`) grants by itself; IAM policies grant
// only when the key policy lets them, with a statement that allows the account (`arn:…:root` or the
// account id) the action. An explicit Deny in the key policy or the IAM policies wins. Grants, SCPs,
// session and resource control policies are not seen: callers say so.
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'
import {
  evaluate,
  evaluateWithBoundary,
  type EvaluationRequest,
  type PrincipalPolicies,
} from '../policy/evaluate.js'

export interface KeyUseRequest {
  action: string
  keyArn: string
  /** The role's ARN as IAM returns it (with its path: key policies name roles that way). */
  principalArn: string
  principalAccount: string
  /** Condition keys of the request; only these are known (see EvaluationRequest.partialContext). */
  context: Record<string, string | string[]>
}

export interface KeyUse {
  /** `uncertain`: the answer hangs on a statement the evaluator could not judge (see notes). */
  decision: 'allowed' | 'implicitDeny' | 'explicitDeny' | 'uncertain'
  /** What allowed or denied: the key policy itself or the principal's IAM policies. */
  via?: 'key-policy' | 'iam'
  /** Does the key policy let IAM policies of the principal's account grant this action? */
  iamEnabled: boolean
  matchedStatements: string[]
  notes: string[]
}

type PrincipalMatch = 'principal' | 'account' | 'none' | 'uncertain'

const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v])

/**
 * How a statement's Principal covers the role: by name (or `*`), through its account (the root ARN or
 * the bare account id), or not. NotPrincipal and non-AWS principals other than `*` are not judged.
 */
export function principalMatch(s: PolicyStatement, principalArn: string, account: string): PrincipalMatch {
  if (s.NotPrincipal !== undefined) return 'uncertain'
  if (s.Principal === undefined) return 'none'
  if (s.Principal === '*') return 'principal'
  const aws = list(s.Principal.AWS)
  if (aws.some((p) => p === '*' || p === principalArn)) return 'principal'
  const partition = principalArn.split(':')[1] ?? 'aws'
  if (aws.some((p) => p === account || p === `arn:${partition}:iam::${account}:root`)) return 'account'
  return 'none'
}

function only(doc: PolicyDocument, keep: (s: PolicyStatement) => boolean): PolicyDocument {
  const statements = doc.Statement.map((s, i) => (s.Sid ? s : { ...s, Sid: `key policy Statement[${i}]` }))
  return { Statement: statements.filter(keep) }
}

/**
 * May `principalArn` perform `action` on the key? `identity` is the principal's IAM policies, or
 * null when they could not be read (then only the key policy can decide).
 */
export function keyUse(
  keyPolicy: PolicyDocument,
  identity: PrincipalPolicies | null,
  req: KeyUseRequest,
): KeyUse {
  const match = (s: PolicyStatement) => principalMatch(s, req.principalArn, req.principalAccount)
  const request: EvaluationRequest = {
    action: req.action,
    resource: req.keyArn,
    context: req.context,
    partialContext: true,
  }
  const notes: string[] = []
  const unjudged = keyPolicy.Statement.filter((s) => match(s) === 'uncertain').length
  if (unjudged > 0)
    notes.push(`${unjudged} key policy statement(s) use NotPrincipal, which karpctl does not evaluate`)
  // A Deny that names the account covers every principal in it; an Allow that names it only delegates.
  const direct = evaluate(
    [only(keyPolicy, (s) => match(s) === 'principal' || (s.Effect === 'Deny' && match(s) === 'account'))],
    request,
  )
  const enabling = evaluate([only(keyPolicy, (s) => s.Effect === 'Allow' && match(s) === 'account')], request)
  const iamEnabled = enabling.decision === 'allowed'
  const ident = identity ? evaluateWithBoundary(identity, request) : null
  notes.push(...[...new Set([...direct.notes, ...enabling.notes])].map((n) => `key policy: ${n}`))
  if (iamEnabled && ident) notes.push(...ident.notes.map((n) => `IAM: ${n}`))
  const out = (decision: KeyUse['decision'], via: KeyUse['via'], matched: string[]): KeyUse => ({
    decision,
    ...(via ? { via } : {}),
    iamEnabled,
    matchedStatements: matched,
    notes,
  })
  // A Deny that could not be judged exactly denies in the evaluator: here it makes the answer uncertain.
  const onlyUncertain = (r: { matchedStatements: string[]; uncertain?: string[] }) =>
    r.matchedStatements.every((m) => r.uncertain?.includes(m))
  if (direct.decision === 'explicitDeny')
    return out(onlyUncertain(direct) ? 'uncertain' : 'explicitDeny', 'key-policy', direct.matchedStatements)
  // An IAM Deny applies whatever the key policy says.
  if (ident?.decision === 'explicitDeny')
    return out(onlyUncertain(ident) ? 'uncertain' : 'explicitDeny', 'iam', ident.matchedStatements)
  const crossAccount = req.keyArn.split(':')[4] !== req.principalAccount
  // Another account's key: its policy must allow the principal (or its account) AND IAM must allow.
  if (direct.decision === 'allowed' && !crossAccount)
    return out('allowed', 'key-policy', direct.matchedStatements)
  if ((iamEnabled || (crossAccount && direct.decision === 'allowed')) && !ident) {
    notes.push('the IAM policies of the role could not be read')
    return out('uncertain', 'iam', [])
  }
  if (iamEnabled || (crossAccount && direct.decision === 'allowed')) {
    if (ident?.decision === 'allowed') return out('allowed', 'iam', ident.matchedStatements)
    if (ident?.uncertain?.length) return out('uncertain', 'iam', [])
    // The identity policies allow, but the permissions boundary could not be read: not confirmed, not denied.
    if (ident?.boundary?.decision === 'unreadable' && ident.identity.decision === 'allowed')
      return out('uncertain', 'iam', [])
    return out('implicitDeny', 'iam', [])
  }
  if (direct.uncertain?.length || enabling.uncertain?.length || unjudged > 0)
    return out('uncertain', undefined, [])
  return out('implicitDeny', undefined, [])
}

/** What a key policy lets an AWS service principal (events.amazonaws.com, …) do: only the key policy can. */
export interface ServiceKeyRequest {
  action: string
  keyArn: string
  service: string
  /** Condition keys of the request; only these are known (see EvaluationRequest.partialContext). */
  context: Record<string, string | string[]>
}

/**
 * May an AWS service principal perform `action` on the key? A service principal has no IAM policies,
 * so only the key policy's statements that name the service (or `*`) decide; a Deny among them wins.
 */
export function serviceKeyUse(keyPolicy: PolicyDocument, req: ServiceKeyRequest): KeyUse {
  const names = (s: PolicyStatement, kind: 'AWS' | 'Service') =>
    s.Principal && s.Principal !== '*' ? list(s.Principal[kind]) : []
  const covers = (s: PolicyStatement) =>
    s.Principal === '*' || names(s, 'AWS').includes('*') || names(s, 'Service').includes(req.service)
  const notes: string[] = []
  const unjudged = keyPolicy.Statement.filter((s) => s.NotPrincipal !== undefined).length
  if (unjudged > 0)
    notes.push(`${unjudged} key policy statement(s) use NotPrincipal, which karpctl does not evaluate`)
  const r = evaluate([only(keyPolicy, (s) => s.NotPrincipal === undefined && covers(s))], {
    action: req.action,
    resource: req.keyArn,
    context: req.context,
    partialContext: true,
  })
  notes.push(...r.notes.map((n) => `key policy: ${n}`))
  const out = (decision: KeyUse['decision'], matched: string[]): KeyUse => ({
    decision,
    via: 'key-policy',
    iamEnabled: false,
    matchedStatements: matched,
    notes,
  })
  const onlyUncertain = r.matchedStatements.every((m) => r.uncertain?.includes(m))
  if (r.decision === 'explicitDeny')
    return out(onlyUncertain ? 'uncertain' : 'explicitDeny', r.matchedStatements)
  if (r.decision === 'allowed') return out('allowed', r.matchedStatements)
  if (r.uncertain?.length || unjudged > 0) return out('uncertain', [])
  return out('implicitDeny', [])
}
