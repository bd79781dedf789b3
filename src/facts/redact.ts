// Snapshots leave the machine (attached to tickets, shared in chat): nothing secret may be in one.
// Keys that name secrets are blanked whatever their value; values that look like credentials are
// blanked whatever their key.

export const REDACTED = '[REDACTED]'

const secretKey =
  /(^|[^a-z])(token|password|passwd|secret|credentials?|private.?key|client.?key|certificate.?data|cabundle|ca\.crt|tls\.(crt|key)|authorization|bearer|session.?token|access.?key.?id|secret.?access.?key)($|[^a-z])/i

const secretValue = [
  /-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----/, // PEM
  /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+/, // JWT (service account and OIDC tokens)
  /\bk8s-aws-v1\.[\w-]{20,}/, // aws eks get-token
  /\b(AKIA|ASIA)[A-Z0-9]{16}\b/, // AWS access key ids
  /\bghp_[A-Za-z0-9]{20,}/,
]

export function redact<T>(value: T): T {
  return walk(value, '') as T
}

function walk(value: unknown, key: string): unknown {
  if (key && secretKey.test(key) && value !== null && typeof value !== 'object') return REDACTED
  if (typeof value === 'string') return secretValue.some((re) => re.test(value)) ? REDACTED : value
  if (Array.isArray(value)) return value.map((v) => walk(v, ''))
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        secretKey.test(k) && v && typeof v === 'object' ? redactAll(v) : walk(v, k),
      ]),
    )
  }
  return value
}

/** Everything below a secret-named key goes, keeping only the shape. */
function redactAll(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactAll)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactAll(v)]))
  return REDACTED
}
