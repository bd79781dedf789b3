// What `doctor --serve` shows on /metrics, in the Prometheus text exposition format (0.0.4). A few
// gauges rendered from the last run's results: a tiny encoder, not a metrics library.
import type { CheckResult } from '../checks/types.js'

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** What the last runs left, as the scrape renders it. */
export interface ServeState {
  /** The last run that produced a report; absent until the first one has. */
  last?: {
    results: CheckResult[]
    /** Failed reads of that run, by kind (denied, throttled, network, …). */
    readFailures: Record<string, number>
    apiCalls: number
  }
  /** When the last run ended (seconds since the epoch), whether it produced a report or not. */
  lastRunEndedS?: number
  lastRunDurationS?: number
  /** Whether the last run produced a report (0: it could not run, e.g. credentials; see the log). */
  lastRunOk?: boolean
  runs: { ok: number; error: number }
  events: { posted: number; failed: number }
}

interface Family {
  name: string
  help: string
  type: 'gauge' | 'counter'
  samples: { labels?: Record<string, string>; value: number }[]
}

/** A label value as the format wants it: backslash, double quote and newline escaped. */
export const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

function line(name: string, labels: Record<string, string> | undefined, value: number): string {
  const l = labels ? Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`) : []
  const shown = Number.isFinite(value) ? String(value) : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN'
  return `${name}${l.length ? `{${l.join(',')}}` : ''} ${shown}`
}

export function encodeFamilies(families: Family[]): string {
  const out: string[] = []
  for (const f of families) {
    // A family with no sample says nothing: left out, as client libraries do.
    if (f.samples.length === 0) continue
    out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`)
    out.push(`# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) out.push(line(f.name, s.labels, s.value))
  }
  return out.length ? `${out.join('\n')}\n` : ''
}

/** Findings of one check by status (a check with two failing EC2NodeClasses counts 2 fail). */
function findingCounts(r: CheckResult): Map<string, number> {
  const counts = new Map<string, number>()
  for (const f of r.findings) counts.set(f.status, (counts.get(f.status) ?? 0) + 1)
  return counts
}

export function renderMetrics(state: ServeState): string {
  const results = state.last?.results ?? []
  const base = (r: CheckResult) => ({ check: r.meta.id, severity: r.meta.severity })
  return encodeFamilies([
    {
      name: 'karpctl_check',
      help: 'The status of each doctor check in the last run (1 for its status; fail, warn, unknown, pass, skipped).',
      type: 'gauge',
      samples: results.map((r) => ({ labels: { ...base(r), status: r.status }, value: 1 })),
    },
    {
      name: 'karpctl_check_findings',
      help: 'Findings of each check in the last run, by finding status.',
      type: 'gauge',
      samples: results.flatMap((r) =>
        [...findingCounts(r)].map(([status, n]) => ({ labels: { ...base(r), status }, value: n })),
      ),
    },
    {
      name: 'karpctl_read_failures',
      help: 'Reads of the last run that failed, by kind (denied, throttled, unsupported, network, error); the checks that needed them are unknown.',
      type: 'gauge',
      samples: Object.entries(state.last?.readFailures ?? {}).map(([kind, n]) => ({
        labels: { kind },
        value: n,
      })),
    },
    {
      name: 'karpctl_api_calls',
      help: 'AWS and Kubernetes API calls the last run made.',
      type: 'gauge',
      samples: state.last ? [{ value: state.last.apiCalls }] : [],
    },
    {
      name: 'karpctl_last_run_timestamp_seconds',
      help: 'When the last doctor run ended, in seconds since the epoch.',
      type: 'gauge',
      samples: state.lastRunEndedS === undefined ? [] : [{ value: state.lastRunEndedS }],
    },
    {
      name: 'karpctl_last_run_duration_seconds',
      help: 'How long the last doctor run took.',
      type: 'gauge',
      samples: state.lastRunDurationS === undefined ? [] : [{ value: state.lastRunDurationS }],
    },
    {
      name: 'karpctl_last_run_success',
      help: '1 when the last run produced a report, 0 when it could not run (credentials, an unreachable API: see the log).',
      type: 'gauge',
      samples: state.lastRunOk === undefined ? [] : [{ value: state.lastRunOk ? 1 : 0 }],
    },
    okAndError('karpctl_runs_total', 'Doctor runs since the start, by result.', state.runs),
    okAndError(
      'karpctl_events_total',
      'Kubernetes Events written (created or their series count raised), by result.',
      { ok: state.events.posted, error: state.events.failed },
    ),
  ])
}

/** A counter by `result`: ok and error. */
const okAndError = (name: string, help: string, n: { ok: number; error: number }): Family => ({
  name,
  help,
  type: 'counter',
  samples: [
    { labels: { result: 'ok' }, value: n.ok },
    { labels: { result: 'error' }, value: n.error },
  ],
})

/** Failed reads in a facts tree, by kind: every `{ ok: false, error }` counted once, not descended into. */
export function readFailuresIn(tree: unknown): Record<string, number> {
  const counts: Record<string, number> = {}
  const seen = new Set<object>()
  const walk = (v: unknown) => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return
    seen.add(v)
    const r = v as { ok?: unknown; error?: { kind?: unknown } }
    if (r.ok === false && r.error && typeof r.error.kind === 'string') {
      counts[r.error.kind] = (counts[r.error.kind] ?? 0) + 1
      return
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child)
  }
  walk(tree)
  return counts
}
