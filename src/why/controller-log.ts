// Karpenter's own word in its log: the provisioner's "could not schedule pod" lines, which name the pod
// and give, NodePool by NodePool, the reason its scheduler ruled each out. Karpenter logs them as JSON
// (v1: `"message":"could not schedule pod"`, `"Pod":{"name","namespace"}`, `"error":"incompatible with
// nodepool \"a\", …; incompatible with nodepool \"b\", …"`; before v1 the reasons were in the message
// itself and the pod was `"pod":"ns/name"`) or, with `logEncoding: console`, as tab-separated text
// whose last field is that JSON's context. Lines of any other shape are skipped, never guessed at.

/** One "could not schedule pod" line: when, which pod, and the reason given for each NodePool. */
export interface SchedulingLine {
  time: string
  /** `namespace/name` */
  pod: string
  /** NodePool name → Karpenter's reason, as it wrote it (daemonset overhead left out). */
  nodePools: Record<string, string>
  /** The whole error when it names no NodePool (e.g. `all available instance types exceed limits`). */
  error?: string
}

const COULD_NOT = /could not schedule pod/i
// `incompatible with nodepool "x", daemonset overhead={…}, reason` (also `provisioner` before v1beta1).
const PER_POOL =
  /^incompatible with (?:nodepool|provisioner) "([^"]+)"(?:, daemonset overhead=\{[^}]*\})?,?\s*(.*)$/s

/** Splits Karpenter's error at each `; incompatible with nodepool "…"` (reasons may hold `;` themselves). */
export function reasonsByNodePool(error: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of error.split(/;\s*(?=incompatible with (?:nodepool|provisioner) ")/)) {
    const m = PER_POOL.exec(part.trim())
    if (m) out[m[1]!] = m[2]!.trim()
  }
  return out
}

interface JsonLine {
  time?: unknown
  ts?: unknown
  message?: unknown
  msg?: unknown
  error?: unknown
  Pod?: { name?: unknown; namespace?: unknown }
  pod?: unknown
}

function podOf(j: JsonLine): string | undefined {
  if (j.Pod && typeof j.Pod.name === 'string' && typeof j.Pod.namespace === 'string')
    return `${j.Pod.namespace}/${j.Pod.name}`
  return typeof j.pod === 'string' && j.pod.includes('/') ? j.pod : undefined
}

function fromJson(j: JsonLine, time: string, message: string): SchedulingLine | undefined {
  const pod = podOf(j)
  if (!pod || !COULD_NOT.test(message)) return undefined
  // v1 puts the reasons in `error`; older versions after "Could not schedule pod, " in the message.
  const error =
    typeof j.error === 'string' ? j.error : message.replace(/^could not schedule pod,?\s*/i, '').trim()
  const nodePools = reasonsByNodePool(error)
  return { time, pod, nodePools, ...(Object.keys(nodePools).length === 0 && error ? { error } : {}) }
}

/** One controller log line, JSON or console-encoded: when, the message, and its JSON context. */
export interface LogLine {
  time: string
  level: string
  message: string
  context: Record<string, unknown>
}

const text = (v: unknown) => (typeof v === 'string' ? v : '')

/** A line of Karpenter's log split into its parts, or undefined for any other shape (never guessed at). */
export function splitLogLine(line: string): LogLine | undefined {
  const t = line.trim()
  try {
    if (t.startsWith('{')) {
      const j = JSON.parse(t) as Record<string, unknown>
      return {
        time: text(j.time) || text(j.ts),
        level: text(j.level),
        message: text(j.message) || text(j.msg),
        context: j,
      }
    }
    // console encoding: time \t level \t logger \t message \t {context}
    const fields = t.split('\t')
    const context = fields.at(-1) ?? ''
    if (fields.length < 3 || !context.startsWith('{')) return undefined
    return {
      time: fields[0]!,
      level: fields[1] ?? '',
      message: fields.slice(3, -1).join('\t') || fields[fields.length - 2]!,
      context: JSON.parse(context) as Record<string, unknown>,
    }
  } catch {
    return undefined
  }
}

function parseLine(line: string): SchedulingLine | undefined {
  if (!COULD_NOT.test(line)) return undefined
  const l = splitLogLine(line)
  return l ? fromJson(l.context as JsonLine, l.time, l.message) : undefined
}

/**
 * The newest "could not schedule pod" line of each pod, from one or more controller logs (the leader
 * writes them; every replica's log is read since which one leads is not known).
 */
export function newestSchedulingLines(logs: string[]): Record<string, SchedulingLine> {
  const out: Record<string, SchedulingLine> = {}
  for (const log of logs)
    for (const line of log.split('\n')) {
      const s = parseLine(line)
      if (!s) continue
      const had = out[s.pod]
      if (!had || had.time <= s.time) out[s.pod] = s
    }
  return out
}
