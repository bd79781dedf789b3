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

/**
 * What a retried step waits for, as a person reads it ("the API server to serve NodePools"), instead of
 * the raw answer ("HTTP404: 404 page not found"); undefined when the error says nothing more.
 */
export function waitingFor(err: unknown, kind: string): string | undefined {
  if (err instanceof KubeApiError) {
    if (err.status === 404 && err.path.startsWith('/apis/'))
      return `the API server to serve ${kind} objects (its CustomResourceDefinition was just installed)`
    if (err.status === 404) return `the API server to find what ${kind} needs (just created)`
    if (err.status === 409) return `another writer's change to ${kind} to settle (conflict)`
    if (err.status === 429) return 'the API server, which asks to slow down (HTTP 429)'
    if (err.status >= 500) return `the API server to recover (HTTP ${err.status})`
    return undefined
  }
  const f = failureOf(err, '')
  if (f.kind === 'throttled') return `AWS, which throttles the requests (${f.code})`
  if (f.kind === 'network') return `the network (${f.code})`
  if (EVENTUAL.some((re) => re.test(`${f.code} ${f.message}`)))
    return 'IAM to make a role or provider just created usable (IAM is eventually consistent)'
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0
  if (status >= 500) return `AWS to recover (HTTP ${status})`
  return undefined
}
