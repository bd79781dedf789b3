// For checks that judge several things at once: a failed read becomes an `unknown` finding for
// that part only, and the rest of the check still runs (need() would abort the whole check).
import type { Read } from '../../facts/types.js'
import type { Finding } from '../types.js'
import { describeFailure } from './facts.js'

/** The read's value, or undefined after pushing an `unknown` finding that carries the reason. */
export function readOr<T>(
  read: Read<T> | undefined,
  findings: Finding[],
  subject: string,
  what: string,
): T | undefined {
  if (read === undefined) {
    findings.push({ status: 'unknown', subject, message: `${what} was not collected` })
    return undefined
  }
  if (read.ok) return read.value
  findings.push({
    status: 'unknown',
    subject,
    message: `${what}: ${describeFailure(read.error)}`,
    evidence: { read: read.error.read, code: read.error.code, kind: read.error.kind },
  })
  return undefined
}
