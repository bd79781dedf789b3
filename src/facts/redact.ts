// Snapshots leave the machine (attached to tickets, shared in chat): nothing secret may be in one.
// Three rules, applied everywhere in the value:
//  - by key: a key that names a secret (case-insensitive and camelCase-aware: `dbPassword`,
//    `someSecretKey`, `API_KEY`, `DB_PASS`, `client-key-data`) has its string or number blanked, and
//    everything below it when it holds an object;
//  - by pair: `{name: AWS_SECRET_ACCESS_KEY, value: …}` (a container's env, a Helm `set`, a tag) is
//    judged by the name, since the key of the secret is just `value`;
//  - by shape: text that looks like a credential is blanked wherever it is (PEM and PGP blocks, JWTs,
//    EKS tokens, AWS and GitHub keys, `Bearer …`, `password=…` inside text, base64 of any of those),
//    and URLs lose their `user:password@`.

export const REDACTED = '[REDACTED]'

/** Below this depth a value is not walked but replaced (a hostile snapshot must not overflow the stack). */
export const MAX_DEPTH = 200
export const TOO_DEEP = '[REDACTED: nested too deep]'

/** Words that make a key secret wherever they are in it. */
const SECRET_WORDS = new Set([
  'token',
  'tokens',
  'password',
  'passwords',
  'passwd',
  'pwd',
  'passphrase',
  'secret',
  'secrets',
  'credential',
  'credentials',
  'creds',
  'authorization',
  'bearer',
  'apikey',
  'privatekey',
  'cabundle',
  'dockerconfigjson',
  'dockercfg',
  'cookie',
  'jwt',
  'otp',
  'mfa',
])

/** Two words in a row that make a key secret (`api_key`, `private-key`, `client-key-data`, `tls.crt`). */
const SECRET_PAIRS = [
  ['api', 'key'],
  ['private', 'key'],
  ['client', 'key'],
  ['access', 'key'],
  ['secret', 'key'],
  ['signing', 'key'],
  ['encryption', 'key'],
  ['ssh', 'key'],
  ['key', 'data'],
  ['certificate', 'data'],
  ['cert', 'data'],
  ['ca', 'bundle'],
  ['ca', 'crt'],
  ['tls', 'crt'],
  ['tls', 'key'],
  ['session', 'id'],
  ['connection', 'string'],
  ['private', 'token'],
]

/** Last words that name something about a secret, not the secret (`tokenFile`, `secretName`, `tokenExpiration`). */
const NOT_SECRET_LAST = new Set([
  'file',
  'path',
  'name',
  'names',
  'ref',
  'namespace',
  'expiration',
  'expiry',
  'expires',
  'ttl',
  'seconds',
  'duration',
  'enabled',
  'length',
  'type',
  'mode',
  'provider',
  'policy',
  'arn',
])

/** A key's words: split at separators and camelCase humps, lowercased (`awsSecretAccessKey` → aws secret access key). */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
}

/** Does this key name a secret? */
export function isSecretKey(key: string): boolean {
  if (key.toLowerCase() === 'auth') return true // dockerconfig's base64 user:password
  const words = keyWords(key)
  if (words.length === 0) return false
  const last = words[words.length - 1] as string
  if (words.length > 1 && NOT_SECRET_LAST.has(last)) return false
  if (words.some((w) => SECRET_WORDS.has(w))) return true
  // `DB_PASS`, `smtpPass`: pass as the last word only (`passRole` is an IAM action, not a password).
  if (last === 'pass' || last === 'pw') return true
  for (let i = 0; i + 1 < words.length; i++) {
    if (SECRET_PAIRS.some(([a, b]) => words[i] === a && words[i + 1] === b)) return true
  }
  return false
}

// ---------- values ----------

/** Credentials recognised by their shape alone, replaced where they occur. */
const SHAPES: RegExp[] = [
  // PEM and PGP armour (private keys, certificates, PGP private key blocks), with their body
  /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?(?:-----END \1-----|$)/g,
  /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g, // JWT (service account and OIDC tokens)
  /\bk8s-aws-v1\.[\w-]{20,}/g, // aws eks get-token
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, // AWS access key ids
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack
  /\bsk_live_[A-Za-z0-9]{16,}/g, // Stripe
  /\bsha256~[A-Za-z0-9_-]{20,}/g, // OpenShift / kube OAuth tokens
]

/** `user:password@` (or a token as the user) in any URL, anywhere in the text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi

/** `Authorization: Bearer …`, `Basic …`, `token …` credentials in text (kubeconfig, curl lines, logs). */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=:-]{8,})/gi

/**
 * `key: value`, `key=value`, `"key": "value"` inside text (YAML, .env, JSON, ini, connection strings),
 * judged by the key. A quoted value ends at its quote; a bare one at the end of the line, a comma, a
 * semicolon or a closing brace (so `password: two words` loses both). The bare value repeats runs of
 * characters, not single characters: a repetition per character of a multi-megabyte line overflows
 * the regular expression engine's stack ("Maximum call stack size exceeded").
 */
const KEY_VALUE =
  /(^|[\s{,;&?("'[-])(["']?)([A-Za-z_][A-Za-z0-9_.-]*)\2(\s*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|(?:\[REDACTED\]|[^\s"',;}\])])(?:[^\n,;}\])[]+|\[REDACTED\]|\[)*)/gm

/** `--password value` and `-p=value` on a command line. */
const FLAG_VALUE = /(^|\s)(--?)([A-Za-z][\w-]*)([ \t]+|=)("[^"\n]*"|'[^'\n]*'|[^\s"']+)/g

function redactKeyValues(text: string, re: RegExp, keyGroup: number): string {
  re.lastIndex = 0
  let out = ''
  let last = 0
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const value = m[m.length - 1] as string
    const valueAt = m.index + m[0].length - value.length
    const key = m[keyGroup] as string
    if (!isSecretKey(key) || value.startsWith(REDACTED) || /^["']?\$/.test(value)) {
      // Not a secret: look for keys inside the value too (`{"auths": {"r": {"auth": …}}}`).
      re.lastIndex = valueAt
      continue
    }
    const quoted = /^["']/.test(value) ? (value[0] as string) : ''
    out += `${text.slice(last, valueAt)}${quoted}${REDACTED}${quoted}`
    last = valueAt + value.length
  }
  return out + text.slice(last)
}

/** A run of base64 long enough to hide a key or a certificate. */
const BASE64_RUN = /[A-Za-z0-9+/]{24,}={0,2}/g

function isPrintable(s: string): boolean {
  const odd = s.match(/[^\t\n\r\x20-\x7e\u00a0-\ufffc]/g)?.length ?? 0
  return odd <= s.length / 50
}

/** Decoded base64 that is itself a credential (a base64 PEM, kubeconfig or dockerconfig). */
function secretBase64(run: string): boolean {
  if (run.length % 4 === 1) return false
  let decoded: string
  try {
    decoded = Buffer.from(run, 'base64').toString('utf8')
  } catch {
    return false
  }
  if (decoded.length < 12 || !isPrintable(decoded)) return false
  return redactText(decoded, 1) !== decoded || /-----BEGIN |"auths?"\s*:/.test(decoded)
}

/** Text with every credential in it blanked and every URL's userinfo stripped. */
export function redactText(text: string, depth = 0): string {
  let out = text.replace(URL_USERINFO, '$1')
  for (const re of SHAPES) out = out.replace(re, REDACTED)
  out = out.replace(AUTH_SCHEME, (m, scheme: string, space: string, cred: string) =>
    // `Token` only as a scheme before something credential-like (not prose: "token expired").
    scheme.toLowerCase() === 'token' && !/[\d._~+/=-]/.test(cred) ? m : `${scheme}${space}${REDACTED}`,
  )
  out = redactKeyValues(out, KEY_VALUE, 3)
  out = redactKeyValues(out, FLAG_VALUE, 3)
  if (depth === 0) out = out.replace(BASE64_RUN, (run) => (secretBase64(run) ? REDACTED : run))
  return out
}

/** A scalar under a secret key. Booleans and null say nothing secret and keep their type. */
function blank(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? value : REDACTED
  if (typeof value === 'number' || typeof value === 'bigint') return REDACTED
  return value
}

export function redact<T>(value: T): T {
  return walk(value, undefined, 0) as T
}

const NAME_KEYS = ['name', 'Name', 'key', 'Key']
const VALUE_KEYS = new Set(['value', 'Value', 'values', 'Values'])

function walk(value: unknown, key: string | undefined, depth: number): unknown {
  if (depth > MAX_DEPTH) return TOO_DEEP
  if (key !== undefined && isSecretKey(key)) return redactAll(value, depth)
  if (typeof value === 'string') return redactText(value)
  if (Array.isArray(value)) return value.map((v) => walk(v, undefined, depth + 1))
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>
    // {name: DB_PASSWORD, value: …}: the pair's name says what the value is.
    const pairName = NAME_KEYS.map((k) => obj[k]).find((v): v is string => typeof v === 'string')
    const secretPair = pairName !== undefined && isSecretKey(pairName)
    return Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [
        k,
        secretPair && VALUE_KEYS.has(k) ? redactAll(v, depth + 1) : walk(v, k, depth + 1),
      ]),
    )
  }
  return value
}

/** Everything below a secret-named key goes, keeping only the shape. */
function redactAll(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return TOO_DEEP
  if (Array.isArray(value)) return value.map((v) => redactAll(v, depth + 1))
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactAll(v, depth + 1)]))
  return blank(value)
}
