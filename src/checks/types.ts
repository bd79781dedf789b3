import type { Facts } from '../facts/types.js'

export type Severity = 'error' | 'warning' | 'info'
export type Category =
  'network' | 'iam' | 'security' | 'helm' | 'interruption' | 'cluster' | 'tenancy' | 'local'

/** The outcome of one check on one subject. */
export type Status = 'pass' | 'fail' | 'warn' | 'unknown' | 'skipped'

/** A fix the user can copy: one or more shell commands or a snippet in a named language. */
export interface Fix {
  summary: string
  commands?: string[]
  /**
   * The same fix another way, for when `commands` need a tool the user may not have (eksctl): printed
   * after them under its label, never run with them.
   */
  alternative?: { label: string; commands: string[] }
  snippet?: { language: 'yaml' | 'hcl' | 'json'; text: string }
}

export interface Finding {
  status: Status
  /** One line that says what was found. */
  message: string
  /** The resource the finding is about (an ARN, a name, `namespace/name`). */
  subject?: string
  /** The raw evidence: offending values, ARNs, names. */
  evidence?: Record<string, unknown>
  /**
   * What the verdict could not take into account (e.g. SCPs and session policies for a local IAM
   * evaluation): every report shows them with the finding, a passing one included.
   */
  caveats?: string[]
  fix?: Fix
  /**
   * What kind of finding this is within its check, stable like an ESLint messageId: repairs select
   * findings by it (and by evidence), never by their wording, which may change.
   */
  code?: string
}

export interface CheckMeta {
  /** Stable kebab-case id, used by --only / --skip and in reports. */
  id: string
  title: string
  category: Category
  /** The severity of a failure of this check. */
  severity: Severity
  /** One line: what the check proves and where to read more. */
  docs: string
}

export interface Check {
  meta: CheckMeta
  run(facts: Facts): Finding[]
}

export interface CheckResult {
  meta: CheckMeta
  /** The worst status among findings. */
  status: Status
  findings: Finding[]
}
