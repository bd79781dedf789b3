// Snapshots leave the machine (attached to tickets, shared in chat): nothing secret may be in one.
// Three rules, applied everywhere in the value:
//  - by key: a key that names a secret (case-insensitive and camelCase-aware: `dbPassword`,
//    `someSecretKey`, `API_KEY`, `DB_PASS`, `client-key-data`) has its string or number blanked, and
//    everything below it when it holds an object;
//  - by pair: `{name: AWS_SECRET_ACCESS_KEY, value: …}` (a container's env, a Helm `set`, a tag) is
//    judged by the name, since the key of the secret is just `value`;
//  - by shape: text that looks like a credential is blanked wherever it is (PEM and PGP blocks, JWTs,
//    EKS tokens, AWS keys and session tokens, provider tokens with well-known prefixes, `Bearer …`,
//    `password=…` inside text and connection strings, passwords on command lines, base64 (twice
//    over) and URL-encodings of any of those), and URLs lose their `user:password@`;
//  - `kubectl.kubernetes.io/last-applied-configuration` is parsed and redacted inside (it repeats the
//    whole object, secrets included), or dropped when it is not JSON.
// Every pass is linear in the text: no expression backtracks per character over a run (`X{n,}` is
// written `X{n}X*`, which V8 runs without a backtrack entry per character; an 8 MiB run of `X{24,}`
// overflows its stack), and nothing recurses with the text's size.

import { redactRandom } from './redact-random.js'

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
  // The same words in other languages (German, Dutch, Spanish, Portuguese, French, Italian, Polish, …).
  'passwort',
  'kennwort',
  'wachtwoord',
  'contraseña',
  'contrasena',
  'clave',
  'senha',
  'segredo',
  'secreto',
  'geheimnis',
  'motdepasse',
  'parola',
  'haslo',
  'hasło',
  'heslo',
  'salasana',
  'lösenord',
  'losenord',
  'пароль',
  '密码',
  'パスワード',
  '비밀번호',
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
  ['pass', 'phrase'],
  ['pass', 'word'],
  ['session', 'key'],
  ['account', 'key'],
  ['shared', 'access'],
  ['de', 'passe'],
  ['master', 'key'],
  ['auth', 'key'],
]

/** Whole keys that are a secret only alone (`sig` of an Azure SAS URL, dockerconfig's `auth`). */
const SECRET_KEYS = new Set(['auth', 'sig'])

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
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
}

/** Does this key name a secret? */
export function isSecretKey(key: string): boolean {
  if (SECRET_KEYS.has(key.toLowerCase())) return true
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

/**
 * Credentials recognised by their shape alone, replaced where they occur: the prefixes of the public
 * secret-scanning rule sets (gitleaks, trufflehog, GitHub secret scanning).
 */
const SHAPES: RegExp[] = [
  // PEM and PGP armour (private keys, certificates, PGP private key blocks), with their body
  /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?(?:-----END \1-----|$)/g,
  /\beyJ[\w-]{8}[\w-]*\.eyJ[\w-]{8}[\w-]*\.[\w-]*/g, // JWT (service account and OIDC tokens)
  /\bk8s-aws-v1\.[\w-]{20}[\w-]*/g, // aws eks get-token
  /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, // AWS access key ids
  // AWS session tokens: the base64 of their binary header, then hundreds of characters
  /\b(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9/+=]{20}[A-Za-z0-9/+=]*/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20}[A-Za-z0-9]*/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20}[A-Za-z0-9_]*/g,
  /\bgl(?:pat|ptt|dt|rt|cbt|imt|oas|ft)-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*/g, // GitLab
  /\bxox[abeprs]-[A-Za-z0-9-]{10}[A-Za-z0-9-]*/g, // Slack tokens
  /\bxapp-\d-[A-Za-z0-9-]{10}[A-Za-z0-9-]*/g, // Slack app tokens
  /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{10}[A-Za-z0-9/_-]*/g, // Slack webhooks
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*/g, // Stripe
  /\bwhsec_[A-Za-z0-9]{24}[A-Za-z0-9]*/g, // Stripe webhook secrets
  /\bnpm_[A-Za-z0-9]{36}\b/g, // npm
  /\bsk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*/g, // OpenAI, Anthropic
  /\bAIza[0-9A-Za-z_-]{35}/g, // Google API keys
  /\bya29\.[0-9A-Za-z_-]{20}[0-9A-Za-z_-]*/g, // Google OAuth access tokens
  /\bGOCSPX-[0-9A-Za-z_-]{28}/g, // Google OAuth client secrets
  /\bSG\.[\w-]{16,32}\.[\w-]{16,64}/g, // SendGrid
  /\bhv[sbr]\.[A-Za-z0-9_-]{24}[A-Za-z0-9_-]*/g, // Vault (1.10+)
  /\b[sbr]\.[A-Za-z0-9]{24}\b/g, // Vault (before 1.10)
  /\bSK[0-9a-fA-F]{32}\b/g, // Twilio API keys
  /\bkey-[0-9a-zA-Z]{32}\b/g, // Mailgun
  /\b[0-9a-f]{32}-us\d{1,2}\b/g, // Mailchimp
  /\bdop_v1_[a-f0-9]{64}\b/g, // DigitalOcean
  /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50}[A-Za-z0-9_-]*/g, // PyPI
  /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g, // Shopify
  /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22}[0-9A-Za-z_-]*/g, // Square
  /\bdapi[a-f0-9]{32}\b/g, // Databricks
  /\bATATT3[A-Za-z0-9_=-]{20}[A-Za-z0-9_=-]*/g, // Atlassian
  /\bNRAK-[A-Z0-9]{27}\b/g, // New Relic
  /\bdckr_pat_[A-Za-z0-9_-]{27}\b/g, // Docker Hub
  /\bhf_[A-Za-z]{34}\b/g, // Hugging Face
  /\blin_api_[A-Za-z0-9]{40}\b/g, // Linear
  /\bsha256~[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*/g, // OpenShift / kube OAuth tokens
  /\bAccountKey=[A-Za-z0-9+/=]{20}[A-Za-z0-9+/=]*/g, // Azure storage connection strings
  // From gitleaks' rules (config/gitleaks.toml), the shapes the generic rule cannot see: too short,
  // letters only, or armour without its space.
  /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:KEY(?: BLOCK)?-----|$)/g,
  /\bFLW(?:SECK|PUBK)_TEST-[A-Za-z0-9]{12}[A-Za-z0-9-]*/g, // Flutterwave
  /\bapi_org_[A-Za-z]{34}\b/g, // Hugging Face organisation tokens
  /\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[=:]\s*[a-f0-9]{8}:[a-f0-9]{8}/gi, // Sidekiq
  /(?<=\blinked-?in[\w.-]{0,20}\s*[:=]\s*["']?)[a-z0-9]{14}[a-z0-9]{0,2}\b/gi, // LinkedIn client secrets
  // A bare AWS secret access key: 40 characters of base64, upper, lower and digits all present (a
  // hex digest has no upper case, a name no digit run this long).
  /(?<![A-Za-z0-9+/=])(?=[A-Za-z0-9+/]{0,39}[A-Z])(?=[A-Za-z0-9+/]{0,39}[a-z])(?=[A-Za-z0-9+/]{0,39}\d)[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/g,
]

/** `user:password@` (or a token as the user) in any URL, anywhere in the text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi

/** `Authorization: Bearer …`, `Basic …`, `token …` credentials in text (kubeconfig, curl lines, logs). */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=:-]{8}[A-Za-z0-9._~+/=:-]*)/gi

/**
 * `key: value`, `key=value`, `"key": "value"`, `'key' => 'value'`, `key := value` inside text (YAML,
 * .env, JSON, ini, connection strings, PHP, Ruby and Perl hashes, Go),
 * judged by the key. A quoted value ends at its quote; a bare one at the end of the line, a comma, a
 * semicolon or a closing brace (so `password: two words` loses both). The bare value repeats runs of
 * characters, not single characters: a repetition per character of a multi-megabyte line overflows
 * the regular expression engine's stack ("Maximum call stack size exceeded").
 */
const KEY_VALUE =
  /(^|[\s{,;&?("'[-])(["']?)([A-Za-z_][A-Za-z0-9_.-]*)\2(\s*(?:=>|:=|[:=])[ \t]*)("[^"\n]*"|'[^'\n]*'|(?:\[REDACTED\]|[^\s"',;}\])])(?:[^\n,;}\])[]+|\[REDACTED\]|\[)*)/gm

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
      // Not a secret: look for keys inside the value too (`{"auths": {"r": {"auth": …}}}`), from the
      // character before it, so a quoted key there (`note: 'secret_key'=>'…'`) has its delimiter.
      re.lastIndex = Math.max(valueAt - 1, m.index + 1)
      continue
    }
    const quoted = /^["']/.test(value) ? (value[0] as string) : ''
    out += `${text.slice(last, valueAt)}${quoted}${REDACTED}${quoted}`
    last = valueAt + value.length
  }
  return out + text.slice(last)
}

/** A run of base64 long enough to hide a key or a certificate. */
const BASE64_RUN = /[A-Za-z0-9+/]{24}[A-Za-z0-9+/]*={0,2}/g

/** Text, not binary: at most one character in 50 outside tab, newlines and the printable ranges. */
function isPrintable(s: string): boolean {
  let odd = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c !== 9 && c !== 10 && c !== 13 && (c < 0x20 || (c > 0x7e && c < 0xa0) || c > 0xfffc)) odd++
  }
  return odd <= s.length / 50
}

/** How many times a value is decoded (base64 of base64, URL-encoded base64) before it is judged. */
const MAX_DECODES = 2

/** Decoded base64 that is itself a credential (a base64 PEM, kubeconfig or dockerconfig). */
function secretBase64(run: string, depth: number): boolean {
  if (run.length % 4 === 1) return false
  let decoded: string
  try {
    decoded = Buffer.from(run, 'base64').toString('utf8')
  } catch {
    return false
  }
  if (decoded.length < 12 || !isPrintable(decoded)) return false
  return redactText(decoded, depth + 1) !== decoded || /-----BEGIN |"auths?"\s*:/.test(decoded)
}

/**
 * A run of text with a `%XX` escape in it: one URL-encoded value (a query string, a form body). It
 * starts only after a delimiter, so a run without an escape is read once, not once per character.
 */
const PERCENT_RUN = /(?<![^\s"'<>])[^\s"'<>%]*(?:%[0-9A-Fa-f]{2}[^\s"'<>%]*)+/g

/** URL-encoded text that, decoded, holds a credential (`password%3Dhunter2`, an encoded URL with userinfo). */
function secretPercent(run: string, depth: number): boolean {
  let decoded: string
  try {
    decoded = decodeURIComponent(run)
  } catch {
    return false
  }
  return redactText(decoded, depth + 1) !== decoded
}

/**
 * Passwords given on a command line without a `--password` flag: `mysql -u root -pS3cret` and the
 * input of `… | docker login --password-stdin` (`echo S3cret |`, `printf '%s' S3cret |`, `<<< S3cret`).
 * What they look past is bounded (a command line, not the rest of an 8 MiB line per occurrence).
 */
const MYSQL_P =
  /(\bmysql(?:admin|dump|import|show)?\b|\bmariadb\b)([^\n|;&]{0,200}?\s)-p([^\s"']+|"[^"\n]{0,200}"|'[^'\n]{0,200}')/g
const STDIN_ECHO =
  /\b(echo|printf(?:\s+(?:'[^'\n]{0,200}'|"[^"\n]{0,200}"))?)(\s+)("[^"\n]{0,200}"|'[^'\n]{0,200}'|[^\s|;&]+)(\s*\|[^\n|]{0,200}?--password-stdin)/g
const STDIN_HERE = /(--password-stdin[^\n<]{0,200}<<<\s*)("[^"\n]*"|'[^'\n]*'|\S+)/g

/**
 * The value after `-p` or `-a` on a command line (`redis-cli -a S3cret`, `psql … -p S3cret`): a port
 * given with `-p` goes too, a small price for a password that never shows.
 */
const SHORT_FLAG = /(^|\s)-([pa])([ \t]+|=)("[^"\n]{0,200}"|'[^'\n]{0,200}'|[^\s"'-][^\s"']*)/g

function redactCommandLines(text: string): string {
  if (!text.includes('-p') && !text.includes('-a')) return text
  return text
    .replace(
      SHORT_FLAG,
      (_m, before: string, flag: string, sep: string) => `${before}-${flag}${sep}${REDACTED}`,
    )
    .replace(MYSQL_P, (_m, cmd: string, args: string) => `${cmd}${args}-p${REDACTED}`)
    .replace(
      STDIN_ECHO,
      (_m, echo: string, space: string, _v: string, rest: string) => `${echo}${space}${REDACTED}${rest}`,
    )
    .replace(STDIN_HERE, (_m, head: string) => `${head}${REDACTED}`)
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
  out = redactCommandLines(out)
  out = redactRandom(out, REDACTED)
  if (depth < MAX_DECODES) {
    out = out.replace(BASE64_RUN, (run) => (secretBase64(run, depth) ? REDACTED : run))
    if (out.includes('%'))
      out = out.replace(PERCENT_RUN, (run) => (secretPercent(run, depth) ? REDACTED : run))
  }
  return out
}

/**
 * Text cut to `max` characters for a message, redacted BEFORE the cut: a credential cut in two is a
 * shape the redactor no longer knows, and its first half would pass.
 */
export function redactClip(text: string, max: number): string {
  const r = redactText(text)
  return r.length > max ? `${r.slice(0, max - 1)}…` : r
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

/** The annotation `kubectl apply` leaves: the whole object as JSON, its secrets included. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'

/** The annotation's JSON, redacted inside; dropped (blanked) when it does not parse. */
function lastApplied(value: string, depth: number): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return REDACTED
  }
  return JSON.stringify(walk(parsed, undefined, depth + 1))
}

const NAME_KEYS = ['name', 'Name', 'key', 'Key']
const VALUE_KEYS = new Set(['value', 'Value', 'values', 'Values'])

function walk(value: unknown, key: string | undefined, depth: number): unknown {
  if (depth > MAX_DEPTH) return TOO_DEEP
  if (key !== undefined && isSecretKey(key)) return redactAll(value, depth)
  if (key === LAST_APPLIED && typeof value === 'string') return lastApplied(value, depth)
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
