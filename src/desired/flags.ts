// Validation of the flags of install, tenant add/remove and teardown: each value that reaches a plan
// (a NodePool field, an IAM call, a tag) is checked here first, against the grammar of what consumes
// it, so a bad value is one line with exit 2 before anything is read or planned — not a plan that the
// API server, IAM or Karpenter rejects half-way through an apply.
import { InputError, quote } from '../errors.js'
import { parseQuantity } from './quantity.js'

/**
 * Node's timers hold a signed 32-bit count of milliseconds: a longer delay overflows, warns and fires
 * at once. So a --timeout of more seconds than that would end the wait immediately.
 */
export const MAX_TIMEOUT_S = Math.floor((2 ** 31 - 1) / 1000)

/** The bounds oclif's integer parser enforces for every --timeout (one place, so they cannot drift). */
export const TIMEOUT_BOUNDS = { min: 1, max: MAX_TIMEOUT_S } as const

/** No cluster has a million cores; a larger number is a typo (and past 2^53 not even an integer). */
export const MAX_CPU_LIMIT = 1_000_000

const bad = (message: string) => new InputError(message, 'INVALID_INPUT')

export function validateCpuLimit(n: number, flag = '--cpu-limit'): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_CPU_LIMIT)
    throw bad(`${flag} ${n} is not a whole number of cores from 1 to ${MAX_CPU_LIMIT}: fix ${flag}`)
  return n
}

/** A quantity for a NodePool's limits: Kubernetes' grammar and bound (src/desired/quantity.ts), not negative. */
export function validateQuantity(v: string, flag: string): string {
  const n = parseQuantity(v)
  if (n === undefined || n < 0 || v.startsWith('-'))
    throw bad(`${flag} ${quote(v)} is not a Kubernetes quantity (e.g. 400Gi, 512M, 1.5Ti): fix ${flag}`)
  return v
}

// Karpenter's NodePool duration (disruption.consolidateAfter): a Go duration of h, m, s (ms, us, ns
// are valid Go but Karpenter's CRD pattern allows only these three), or `Never`.
const DURATION = /^(([0-9]+(s|m|h))+|Never)$/

export function validateDuration(v: string, flag: string): string {
  if (!DURATION.test(v))
    throw bad(`${flag} ${quote(v)} is not a duration (e.g. 30s, 5m, 1h30m) or Never: fix ${flag}`)
  return v
}

// An availability zone is its region's name and one letter (us-west-2a); Local Zones and Wavelength
// zones add a suffix (us-west-2-lax-1a, us-east-1-wl1-bos-wlz-1).
const ZONE_SUFFIX = /^([a-z]|-[a-z0-9-]+[a-z0-9])$/

/** The zones' shape against the region; `known`, when AWS said, are the region's zones by name. */
export function validateZones(zones: string[], region: string, known?: string[]): string[] {
  for (const z of zones) {
    const ok = known ? known.includes(z) : z.startsWith(region) && ZONE_SUFFIX.test(z.slice(region.length))
    if (!ok) {
      const hint = known?.length ? `one of ${known.join(', ')}` : `a zone of ${region}, e.g. ${region}a`
      throw bad(`--zones ${quote(z)} is not an availability zone of ${region}: pass ${hint}`)
    }
  }
  return zones
}

// An EC2 instance family (m7g, c6in, u-6tb1, trn1n, g6e): Karpenter matches
// karpenter.k8s.aws/instance-family by value, so a pattern (`*`, `m7*`) matches nothing.
const FAMILY = /^[a-z][a-z0-9-]{0,15}$/

export function validateInstanceFamilies(families: string[]): string[] {
  for (const f of families)
    if (!FAMILY.test(f) || /[-]$/.test(f))
      throw bad(
        `--instance-families ${quote(f)} is not an EC2 instance family (e.g. m7g, c6i; no wildcards): fix --instance-families`,
      )
  return families
}

// An EC2 instance category, as Karpenter labels it (karpenter.k8s.aws/instance-category): the letters
// before the generation (c, m, r, t, g, p, inf, trn, hpc, mac…). Anything else (`c;rm`, `*`) matches no
// type, and would be written into a NodePool as is.
const CATEGORY = /^[a-z]{1,3}$/

export function validateInstanceCategories(categories: string[]): string[] {
  for (const c of categories)
    if (!CATEGORY.test(c))
      throw bad(
        `--instance-categories ${quote(c)} is not an EC2 instance category (e.g. c, m, r): fix --instance-categories`,
      )
  return categories
}

/** AWS's tag limits (IAM, EC2): a key of at most 128 characters, a value of at most 256. */
export const MAX_TAG_KEY = 128
export const MAX_TAG_VALUE = 256

// What AWS takes in a tag (EC2, IAM, SQS, EventBridge): letters, numbers and spaces in any script, and
// `+ - = . _ : / @`; EC2 takes any Unicode but refuses controls. karpctl refuses what would not be shown
// as typed — controls (ESC, a newline), the line separators U+2028/U+2029, the bidirectional controls
// and the other format characters (zero-width ones) — whichever service the tag lands on.
const TAG_REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

/** Refuses a tag key or value with a character AWS refuses or a terminal would not show as typed. */
export function tagCharacters(key: string, value: string, flag: string): void {
  for (const [what, text] of [
    ['key', key],
    ['value', value],
  ] as const) {
    const c = TAG_REFUSED.exec(text)?.[0]
    if (c)
      throw bad(
        `${flag} ${what} ${quote(text)} holds U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, a control or invisible character AWS refuses in tags: remove it`,
      )
  }
}

/** `key=value`, the key trimmed (a tag a selector matches, as --subnet-tag: any key AWS has). */
export function parseKeyValue(v: string, flag: string): [string, string] {
  const m = /^([^=]+)=(.*)$/s.exec(v)
  const key = m?.[1]?.trim()
  if (!m || !key) throw bad(`${flag} takes key=value (got ${quote(v)}): fix ${flag}`)
  return [key, m[2] ?? '']
}

/** A tag a selector matches (--subnet-tag): any key AWS has, but no character AWS refuses in tags. */
export function parseSelectorTag(v: string, flag: string): [string, string] {
  const [key, value] = parseKeyValue(v, flag)
  tagCharacters(key, value, flag)
  return [key, value]
}

/**
 * A user's tag k=v, which karpctl writes. `aws:` keys are AWS's own (AWS refuses them); `karpctl.io/` keys are karpctl's
 * marks of ownership, which a user's value would overwrite or which karpctl would drop: both refused.
 * Spaces are refused because karpctl records the user's keys space-separated (tenant/asked-extras.ts).
 */
export function parseTag(v: string, flag = '--tag'): [string, string] {
  const [key, value] = parseSelectorTag(v, flag)
  if (/\s/.test(key)) throw bad(`${flag} key ${quote(key)} has a space: use a key without spaces`)
  if (/^(karpctl\.io\/|aws:)/i.test(key))
    throw bad(`${flag} key ${quote(key)} is reserved (karpctl.io/ and aws: keys): choose another key`)
  if ([...key].length > MAX_TAG_KEY)
    throw bad(`${flag} key ${quote(key.slice(0, 20))}… is longer than ${MAX_TAG_KEY} characters: shorten it`)
  if ([...value].length > MAX_TAG_VALUE)
    throw bad(`${flag} value of ${quote(key)} is longer than ${MAX_TAG_VALUE} characters: shorten it`)
  return [key, value]
}

// An IAM policy ARN: a path of /-separated segments of IAM's path characters, then the name
// (IAM: path elements of [\x21-\x7E], name [\w+=,.@-]). `.` and `..` segments are refused: IAM takes
// them literally, but they read as a traversal and are never what the user meant.
const POLICY_ARN =
  /^arn:aws[\w-]*:iam::(\d{12}|aws):policy\/((?:[\x21-\x2e\x30-\x7e]+\/)*)([\w+=,.@-]{1,128})$/

export function validatePolicyArn(arn: string): string {
  const m = POLICY_ARN.exec(arn)
  const segments = (m?.[2] ?? '').split('/').filter(Boolean)
  if (!m || segments.some((s) => s === '.' || s === '..') || m[3] === '.' || m[3] === '..')
    throw bad(
      `--policy-arn ${quote(arn)} is not an IAM policy ARN (arn:aws:iam::<account>:policy/[<path>/]<name>): fix --policy-arn`,
    )
  return arn
}

/** An IAM role name as IAM takes it ([\w+=,.@-], 1–64): the name alone, not an ARN or a path. */
export function validateRoleName(name: string, flag = '--role-name'): string {
  if (!/^[\w+=,.@-]{1,64}$/.test(name))
    throw bad(
      `${flag} ${quote(name)} is not an IAM role name (1–64 of letters, digits and + = , . @ _ -, no path or ARN): fix ${flag}`,
    )
  return name
}

/** The Karpenter minors karpctl installs and knows: 1.0 – 1.14. */
export const KARPENTER_MAX_MINOR = 14

/**
 * Why `v` (a bare x.y.z, or v-prefixed) is not a Karpenter version karpctl installs, or undefined.
 * Strict x.y.z: a version is also a path segment (`<chart>-<version>`) and shown in plans, so
 * anything else — `../`, an escape sequence, a prerelease suffix — is not one.
 */
export function karpenterVersionProblem(v: string): string | undefined {
  const bare = v.replace(/^v/, '')
  // SemVer's numbers: no leading zero (`01.14.1`, `1.14.01` name tags that do not exist), one `v` at most.
  if (!/^(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,5})$/.test(bare))
    return `${quote(v)} is not a Karpenter version (e.g. 1.14.1)`
  const [major, minor] = bare.split('.').map(Number)
  if (major !== 1) return `karpctl installs Karpenter v1 (1.0 – 1.${KARPENTER_MAX_MINOR}); ${quote(v)} is not`
  if ((minor ?? 0) > KARPENTER_MAX_MINOR)
    return `Karpenter ${bare} is newer than karpctl knows (1.${KARPENTER_MAX_MINOR})`
  return undefined
}

/**
 * doctor --serve's --interval: a Go-style duration of seconds, minutes or hours (`30s`, `5m`, `1h`, or a
 * sum such as `1m30s`), from 10 s (a shorter one only multiplies reads of AWS) to what a timer holds.
 */
export function parseInterval(text: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim())
  const ms =
    m && text.trim() ? (Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) * 1000 : NaN
  if (!Number.isFinite(ms) || ms < 10_000 || ms > MAX_TIMEOUT_S * 1000)
    throw bad(
      `--interval ${quote(text)} is not a duration from 10s to ${Math.floor(MAX_TIMEOUT_S / 3600)}h (e.g. 30s, 5m, 1h): fix --interval`,
    )
  return ms
}

/** doctor --serve's --listen: `host:port` or `:port` (then every interface), IPv6 in brackets. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})$/.exec(text.trim())
  const port = m ? Number(m[2]) : NaN
  if (!m || port > 65535)
    throw bad(
      `--listen ${quote(text)} is not host:port (e.g. 127.0.0.1:9464, or :9464 for every interface): fix --listen`,
    )
  const host = (m[1] as string).replace(/^\[(.*)\]$/, '$1')
  return { host: host || '0.0.0.0', port }
}
