// Parses IAM policy documents as the APIs return them. IAM's Get*Policy / GetRole calls return the
// document URL-encoded (`%7B%22Version%22...`, RFC 3986, so spaces are %20); moto does the same.
// Users paste plain JSON. Both end up as one normalised PolicyDocument (Statement always an array).
import type { PolicyDocument, PolicyStatement } from '../policy/types.js'

/** The text is not an IAM policy document; the message says why and shows the start of the text. */
export class PolicyDocumentError extends Error {
  override name = 'PolicyDocumentError'
}

export function parsePolicyDocument(text: string): PolicyDocument {
  const raw = parseJsonOrUrlEncoded(text)
  return normalisePolicyDocument(raw, text)
}

/** Validates an already-parsed document (e.g. from a snapshot) and normalises Statement to an array. */
export function normalisePolicyDocument(raw: unknown, originalText?: string): PolicyDocument {
  const fail = (why: string): never => {
    throw new PolicyDocumentError(
      `not an IAM policy document: ${why}${originalText === undefined ? '' : ` (text: ${preview(originalText)})`}`,
    )
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('expected a JSON object')
  const doc = raw as Record<string, unknown>
  if (!('Statement' in doc)) fail('no "Statement"')
  const list = Array.isArray(doc.Statement) ? doc.Statement : [doc.Statement]
  const statements = list.map((s, i) => checkStatement(s, i, fail))
  const out: PolicyDocument = { Statement: statements }
  if (typeof doc.Version === 'string') out.Version = doc.Version
  if (typeof doc.Id === 'string') out.Id = doc.Id
  return out
}

function parseJsonOrUrlEncoded(text: string): unknown {
  const trimmed = text.trim()
  if (trimmed === '') throw new PolicyDocumentError('not an IAM policy document: the text is empty')
  const direct = tryJson(trimmed)
  if (direct.ok) return direct.value
  // Only try URL-decoding when the text actually carries percent escapes; otherwise the JSON error is the useful one.
  if (/%[0-9A-Fa-f]{2}/.test(trimmed)) {
    for (const candidate of decodings(trimmed)) {
      const decoded = tryJson(candidate)
      if (decoded.ok) return decoded.value
    }
    throw new PolicyDocumentError(
      `not an IAM policy document: URL-decoded text is not JSON (text: ${preview(trimmed)})`,
    )
  }
  throw new PolicyDocumentError(`not an IAM policy document: ${direct.error} (text: ${preview(trimmed)})`)
}

/** AWS encodes spaces as %20; form-style encoders use `+`. Try the faithful decoding first. */
function decodings(text: string): string[] {
  const out: string[] = []
  for (const t of [text, text.replace(/\+/g, ' ')]) {
    try {
      out.push(decodeURIComponent(t))
    } catch {
      // malformed escape sequence: this candidate is not decodable
    }
  }
  return out
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) }
  }
}

function checkStatement(s: unknown, i: number, fail: (why: string) => never): PolicyStatement {
  if (s === null || typeof s !== 'object' || Array.isArray(s)) fail(`Statement[${i}] is not an object`)
  const st = s as Record<string, unknown>
  if (st.Effect !== 'Allow' && st.Effect !== 'Deny')
    fail(`Statement[${i}].Effect must be "Allow" or "Deny" (got ${JSON.stringify(st.Effect)})`)
  const hasAction = st.Action !== undefined || st.NotAction !== undefined
  if (!hasAction) fail(`Statement[${i}] has neither Action nor NotAction`)
  for (const key of ['Action', 'NotAction', 'Resource', 'NotResource'] as const) {
    const v = st[key]
    if (v !== undefined && !isStringOrStrings(v))
      fail(`Statement[${i}].${key} must be a string or a list of strings`)
  }
  if (
    st.Condition !== undefined &&
    (st.Condition === null || typeof st.Condition !== 'object' || Array.isArray(st.Condition))
  ) {
    fail(`Statement[${i}].Condition must be an object`)
  }
  return st as unknown as PolicyStatement
}

const isStringOrStrings = (v: unknown) =>
  typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'))

function preview(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ')
  return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t)
}
