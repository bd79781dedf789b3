// Go durations as Karpenter's NodePool fields take them (`720h`, `1h30m`, `30s`) and `Never`.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 }

/** Milliseconds; `null` for `Never` (or absent); undefined when the text is not a Go duration. */
export function parseDuration(text: string | undefined): number | null | undefined {
  if (text === undefined || text === 'Never') return null
  if (text === '0') return 0
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy
  let total = 0
  let end = 0
  for (let m = part.exec(text); m; m = part.exec(text)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number)
    end = part.lastIndex
  }
  return end === text.length && end > 0 ? total : undefined
}

/** A span in words a person reads at a glance: `3d4h`, `12m`, `40s`. */
export function humanSpan(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (d) return `${d}d${h ? `${h}h` : ''}`
  if (h) return `${h}h${m ? `${m}m` : ''}`
  if (m) return `${m}m`
  return `${s % 60}s`
}

/** ISO time plus its distance from now: `2026-12-04T12:00:00Z (in 3h)` or `(5m ago)`. */
export function when(at: number, now: number): string {
  const iso = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z')
  return at >= now ? `${iso} (in ${humanSpan(at - now)})` : `${iso} (${humanSpan(now - at)} ago)`
}
