// The redactor's rule for shapes it has no name for: a token that looks random is a credential.
// Lists of known prefixes can never be complete (a third of fresh vendor tokens passed them, issue 36),
// so, like the secret scanners, the redactor also judges a token by its randomness:
//  - gitleaks' generic rule (generic-api-key, config/gitleaks.toml) takes a value of 10–150 characters
//    whose Shannon entropy is at least 3.5 bits per character (it needs a keyword before it; free text
//    has none, so the run here must be longer, 16, and mixed, below);
//  - truffleHog's entropy scan (dxa4481/truffleHog, truffleHog.py) takes a run of ≥ 20 base64 characters
//    above 4.5 bits, or of ≥ 20 hex digits above 3.0 bits.
// What karpctl itself prints is never judged (ARNs, resource and IAM ids, UUIDs, digests, EKS endpoints
// and OIDC issuers, versions), and neither is a run made of words (`AmazonEC2ContainerRegistryReadOnly`,
// `KarpenterControllerPolicy20240101`): a name is mostly capitalised words, a random string is not.

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>()
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
  let h = 0
  for (const n of counts.values()) {
    const p = n / s.length
    h -= p * Math.log2(p)
  }
  return h
}

/** gitleaks' generic-api-key threshold (bits per character). */
export const GENERIC_ENTROPY = 3.5
/** truffleHog's thresholds for base64 and hex runs. */
export const BASE64_ENTROPY = 4.5
export const HEX_ENTROPY = 3.0
/** The shortest run judged (gitleaks takes 10 after a keyword; text without one needs more). */
export const MIN_RUN = 16

/**
 * A word inside a name: capitalised (`Service`, `Max`), first (`consolidate` of `consolidateAfter`) or
 * after an underscore, with a vowel in five letters, or in four past nine (`hgukdtencm` has one in five).
 */
const WORD = /(?:^|[A-Z_])[a-z]{2}[a-z]*/g
function isWord(w: string): boolean {
  const vowels = w.match(/[aeiouAEIOU]/g)?.length ?? 0
  return vowels > 0 && vowels / w.length >= (w.length > 9 ? 0.25 : 0.2)
}

/** How much of a run is not words. */
function unwritten(run: string): number {
  let words = 0
  for (const w of run.match(WORD) ?? []) if (isWord(w)) words += w.length
  return run.length - words
}

/**
 * Digits in three or more places apart (`x9wIIoyeG0Sfcop7…`, `ngm4gdokot1m4nzx`): a written name keeps
 * its digits together (`EC2`, `V2`, `20240101`), a drawn string scatters them. Letters of a drawn string
 * fall into word-like pieces often enough (`Sfcop`, `Lruh`) that the word measure would pass it.
 */
function scatteredDigits(run: string): boolean {
  return (run.match(/\d+/g)?.length ?? 0) >= 3
}

/** Does this run of letters and digits look drawn at random rather than written? */
export function looksRandom(run: string): boolean {
  if (run.length < MIN_RUN || /^\d+$/.test(run)) return false
  const h = entropy(run)
  if (/^[0-9a-fA-F]+$/.test(run) && run.length >= 20 && /[a-fA-F]/.test(run)) return h > HEX_ENTROPY
  const mixed = (/\d/.test(run) && /[A-Za-z]/.test(run)) || (/[A-Z]/.test(run) && /[a-z]/.test(run))
  // Scattered digits are no name's: judged at truffleHog's lower (hex) threshold, words or not.
  if (scatteredDigits(run) && mixed && h > HEX_ENTROPY) return true
  // A name is mostly words (`AWSServiceRoleForEC2Spot` leaves `AWSEC2`); a random string is not.
  if (unwritten(run) < run.length / 2) return false
  return (mixed && h >= GENERIC_ENTROPY) || (run.length >= 20 && h > BASE64_ENTROPY)
}

/**
 * Shapes karpctl prints and judges, never secrets however random they look: ARNs, AWS resource ids,
 * IAM unique ids, UUIDs (Kubernetes uids, KMS key ids, request ids), digests with their algorithm,
 * EKS endpoints and OIDC issuers, versions.
 */
const ALLOWED = new RegExp(
  [
    String.raw`\barn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:\d{0,12}:[^\s"'<>,;]*`,
    String.raw`\b(?:i|vpc|subnet|sg|sgr|ami|lt|eni|igw|nat|rtb|acl|vol|snap|eipalloc|eipassoc|tgw|vpce|pl|dopt|fs|cr|r|ins|fleet|spot|sir|eigw|lgw|cvpn)-[0-9a-f]{8}(?:[0-9a-f]{9})?\b`,
    String.raw`\b(?:AROA|AIDA|ANPA|ANVA|AGPA|AIPA|APKA)[A-Z0-9]{16}[A-Z0-9]*\b`,
    String.raw`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`,
    String.raw`\b(?:sha1|sha224|sha256|sha384|sha512|md5)[:=][0-9a-fA-F]{32}[0-9a-fA-F]*\b`,
    String.raw`\b[0-9A-Z]{32}\.[a-z0-9]{2,4}\.[a-z0-9-]+\.eks\.amazonaws\.com(?:\.cn)?\b`,
    String.raw`\boidc\.eks\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?/id/[0-9A-Z]{32}\b`,
    // A URL's host (its userinfo is stripped first): a DNS name, public by nature, never a credential.
    // An API server's endpoint that is not EKS's shape (a proxy, a test endpoint) is compared, not hidden.
    String.raw`(?<=\b[a-z][a-z0-9+.-]*://)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?=[:/?#\s"'<>]|$)`,
    String.raw`/(?:blob|tree|commit|raw)/[0-9a-f]{40}/`,
    // A version's pre-release or build suffix is short (`-eks-4096722`, `-rc.1`): a long one after `v1.0-`
    // is a key that starts like a version, and is judged as any token.
    String.raw`\bv?\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z.-]{1,24})?\b`,
  ].join('|'),
  'g',
)

/**
 * A key in groups (`5r4n2goa-9xvb-2qst-6f3d-nvh2ji1pfjwf`, `UDHUXZ6U-6BJ8WGA4-O4QWJJBE-EVOASRMZ`): each
 * group too short to judge, together random. A pod name (`web-v2-7d9f8c6b5-x7k2p`) has fewer mixed groups.
 */
export function groupedKey(token: string): boolean {
  // The layout of a UUID, not in hex: a UUID it is not.
  if (/^[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}$/.test(token))
    return !/^[0-9a-fA-F-]+$/.test(token)
  const groups = token.split('-')
  if (groups.length < 4 || groups.some((g) => !/^[A-Za-z0-9]{1,12}$/.test(g))) return false
  const joined = groups.join('')
  const mixed = groups.filter((g) => g.length >= 4 && /\d/.test(g) && /[A-Za-z]/.test(g)).length
  return joined.length >= 20 && mixed >= 3 && entropy(joined) >= GENERIC_ENTROPY
}

/** A token: what a credential is made of (base64, base64url, separators), ending at any other character. */
const TOKEN = /[A-Za-z0-9+/_.~-]{16}[A-Za-z0-9+/_.~-]*=*/g
/** A run of letters, digits and underscores inside a token (`rzp_live_…`, `AWS_SECRET_ACCESS_KEY`). */
const RUN = /[A-Za-z0-9_]{16}[A-Za-z0-9_]*/g

/** Every token that holds a random-looking run, replaced (only the run, beside an allowed shape). */
export function redactRandom(text: string, replacement: string): string {
  if (text.length < MIN_RUN) return text
  const allowed: [number, number][] = []
  ALLOWED.lastIndex = 0
  for (let m = ALLOWED.exec(text); m; m = ALLOWED.exec(text)) {
    if (m[0] === '') ALLOWED.lastIndex++
    else allowed.push([m.index, m.index + m[0].length])
  }
  let a = 0
  return text.replace(TOKEN, (whole: string, at: number) => {
    // A sentence's full stop (or a trailing dash) is not part of the token.
    const trail = /[.~-]*$/.exec(whole)?.[0] ?? ''
    const token = whole.slice(0, whole.length - trail.length)
    // The allowed spans that end after this token starts (tokens come in order: a pointer suffices).
    while (a < allowed.length && (allowed[a] as [number, number])[1] <= at) a++
    const end = at + token.length
    const overlaps = (s: number, e: number) => {
      for (let i = a; i < allowed.length && (allowed[i] as [number, number])[0] < e; i++)
        if ((allowed[i] as [number, number])[1] > s) return true
      return false
    }
    const touched = overlaps(at, end)
    let random = false
    const kept = token.replace(RUN, (run: string, i: number) => {
      if (overlaps(at + i, at + i + run.length) || !looksRandom(run)) return run
      random = true
      return replacement
    })
    if (!random && !touched && groupedKey(token)) return `${replacement}${trail}`
    if (!random) return whole
    // Beside an allowed shape only the random runs go; alone, the whole token (its short pieces too).
    return `${touched ? kept : replacement}${trail}`
  })
}
