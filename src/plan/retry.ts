// Which failures a step may retry, and how long it waits: AWS is eventually consistent (a role just made
// is not yet assumable or passable; a CRD just installed is not yet served) and throttles bursts.
import { KubeApiError } from '../context/kube.js'
import { failureOf } from '../facts/read.js'

export interface RetryPolicy {
  attempts: number
  baseMs: number
  maxMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseMs: 500, maxMs: 8_000 }

const EVENTUAL = [
  /Invalid principal/i, // a trust naming a provider or role created seconds ago
  /role.*(cannot be assumed|does not exist|not (be )?found|is not authorized)/i,
  /not authorized to perform: sts:AssumeRole/i,
  /InvalidParameterValue.*(IAM|role|instance profile)/i,
]

export function retryable(err: unknown): boolean {
  if (err instanceof KubeApiError) {
    // 404 on a custom resource right after its CRD was installed; 409 on a concurrent update; 429; 5xx.
    return err.status === 404 || err.status === 409 || err.status === 429 || err.status >= 500
  }
  const f = failureOf(err, '')
  if (f.kind === 'throttled' || f.kind === 'network') return true
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0
  if (status >= 500 && f.kind !== 'unsupported') return true
  return EVENTUAL.some((re) => re.test(`${f.code} ${f.message}`))
}

export function backoff(policy: RetryPolicy, attempt: number): number {
  const ms = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1))
  return Math.round(ms / 2 + Math.random() * (ms / 2))
}
