// Karpenter's own log lines about a node, shown beside the verdict as `why POD` shows the provisioner's
// lines for a pod: every line whose context names the Node or NodeClaim ("launched nodeclaim",
// "registered nodeclaim", "disrupting node(s)" with its command and savings, "initiating delete from
// interruption message", "tainted node", "deleted nodeclaim"…; sigs.k8s.io/karpenter logs them with
// `NodeClaim`/`Node` objects, and the disruption command lists `disrupted-nodes`). Only the nodes
// judged are kept (a snapshot carries nothing about others), newest last, each line redacted.
import { redactText } from '../../redact/redact.js'
import { splitLogLine } from '../controller-log.js'

export interface NodeLogLine {
  time: string
  level: string
  message: string
  /** What the line adds: the disruption command, the interruption kind, an error. */
  detail?: string
}

/** Lines kept per node: its life in a few lines, the newest. */
export const NODE_LOG_LINES = 8

const nameOf = (v: unknown) =>
  typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string'
    ? (v as { name: string }).name
    : undefined

/** Every node or NodeClaim name a line's context names. */
function namesIn(context: Record<string, unknown>): string[] {
  const out = [nameOf(context.NodeClaim), nameOf(context.Node)]
  const disrupted = context['disrupted-nodes']
  if (Array.isArray(disrupted))
    for (const d of disrupted as Record<string, unknown>[]) out.push(nameOf(d.NodeClaim), nameOf(d.Node))
  return [...new Set(out.filter((x): x is string => Boolean(x)))]
}

function detailOf(c: Record<string, unknown>): string | undefined {
  const parts = [c.command, c.messageKind, c.error, c.reason].filter(
    (x): x is string => typeof x === 'string' && x.length > 0,
  )
  return parts.length ? redactText(parts.join('; ')) : undefined
}

/** The newest lines about each of `names`, from one or more replicas' logs, oldest first. */
export function nodeLogLines(logs: string[], names: Set<string>): Record<string, NodeLogLine[]> {
  const out: Record<string, NodeLogLine[]> = {}
  for (const log of logs)
    for (const raw of log.split('\n')) {
      if (!raw.includes('"name"')) continue
      const l = splitLogLine(raw)
      if (!l) continue
      const about = namesIn(l.context).filter((n) => names.has(n))
      if (!about.length) continue
      const detail = detailOf(l.context)
      const line: NodeLogLine = {
        time: l.time,
        level: l.level,
        message: redactText(l.message),
        ...(detail ? { detail } : {}),
      }
      for (const n of about) (out[n] ??= []).push(line)
    }
  for (const [n, lines] of Object.entries(out))
    out[n] = lines.sort((a, b) => a.time.localeCompare(b.time)).slice(-NODE_LOG_LINES)
  return out
}
