// The cron schedules of NodePool disruption budgets, evaluated as Karpenter evaluates them
// (sigs.k8s.io/karpenter pkg/apis/v1/nodepool.go Budget.IsActive, robfig/cron standard parser, UTC):
// a budget is active when a schedule hit falls within the last `duration`.

const FIELDS: [number, number][] = [
  [0, 59], // minute
  [0, 23], // hour
  [1, 31], // day of month
  [1, 12], // month
  [0, 6], // day of week
]
const NAMES: Record<string, number> = Object.fromEntries([
  ...['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'].map((n, i) => [
    n,
    i + 1,
  ]),
  ...['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'].map((n, i) => [n, i]),
])
const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
}

export interface Schedule {
  sets: Set<number>[]
  /** robfig/cron: when day-of-month or day-of-week is a star, both must match; otherwise either may. */
  anyDay: boolean
}

function value(text: string): number {
  const n = NAMES[text.toUpperCase()] ?? Number(text)
  if (!Number.isInteger(n)) throw new Error(`"${text}" is not a number`)
  return n
}

function field(text: string, [lo, hi]: [number, number]): Set<number> {
  const out = new Set<number>()
  for (const part of text.split(',')) {
    const [range = '', stepText] = part.split('/')
    const step = stepText === undefined ? 1 : value(stepText)
    const [a, last] = range === '*' || range === '?' ? [lo, hi] : range.split('-').map(value)
    if (a === undefined) throw new Error(`empty field "${text}"`)
    let b = last ?? (stepText === undefined ? a : hi)
    // Sunday may be written 7.
    if (hi === 6 && b === 7) b = 6
    if (a < lo || b > hi || a > b || step < 1) throw new Error(`"${part}" is out of range ${lo}-${hi}`)
    for (let v = a; v <= b; v += step) out.add(v)
  }
  return out
}

/** A parsed schedule, or an Error naming what is wrong (Karpenter fails closed on it: budget 0). */
export function parseSchedule(text: string): Schedule | Error {
  try {
    const spec = MACROS[text.trim()] ?? text.trim()
    const parts = spec.split(/\s+/)
    if (parts.length !== 5) return new Error(`"${text}" does not have 5 fields`)
    const sets = parts.map((p, i) => field(p, FIELDS[i] as [number, number]))
    // robfig/cron marks only a bare `*` or `?` (not `*/2`) as a star.
    const star = (p: string | undefined) => p === '*' || p === '?'
    return { sets, anyDay: star(parts[2]) || star(parts[4]) }
  } catch (err) {
    return err as Error
  }
}

const MINUTE = 60_000
/** How far ahead a hit is searched: a budget schedule fires at least once a year. */
const HORIZON = 366 * 24 * 60

function matches(s: Schedule, t: Date): boolean {
  const [min, hour, dom, month, dow] = s.sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ]
  if (!min.has(t.getUTCMinutes()) || !hour.has(t.getUTCHours()) || !month.has(t.getUTCMonth() + 1))
    return false
  const d = dom.has(t.getUTCDate())
  const w = dow.has(t.getUTCDay())
  return s.anyDay ? d && w : d || w
}

/** The first hit strictly after `after` (ms), as robfig/cron's Next; undefined within a year none. */
export function nextHit(s: Schedule, after: number): number | undefined {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE
  for (let i = 0; i < HORIZON; i++, t += MINUTE) if (matches(s, new Date(t))) return t
  return undefined
}

/** Karpenter's IsActive: the next hit after (now − duration) is not after now. */
export function isActive(s: Schedule, durationMs: number, now: number): boolean {
  const hit = nextHit(s, now - durationMs)
  return hit !== undefined && hit <= now
}

/** When an active window ends (later hits inside it extend it); when an inactive one next opens. */
export function windowChange(s: Schedule, durationMs: number, now: number): number | undefined {
  let hit = nextHit(s, now - durationMs)
  if (hit === undefined) return undefined
  if (hit > now) return hit
  for (let i = 0; i < 10_000; i++) {
    const end = hit + durationMs
    const next: number | undefined = nextHit(s, hit)
    if (next === undefined || next > end) return end
    hit = next
  }
  return undefined
}
