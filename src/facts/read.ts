import { toReadFailure } from '../context/aws.js'
import { KubeApiError } from '../context/kube.js'
import { KarpctlError } from '../errors.js'
import type { Read, ReadFailure } from './types.js'

/** Runs one read and captures its failure as data; only errors that end the run (credentials) escape. */
export async function read<T>(label: string, fn: () => Promise<T>): Promise<Read<T>> {
  try {
    return { ok: true, value: await fn() }
  } catch (err) {
    if (err instanceof KarpctlError) throw err
    return { ok: false, error: failureOf(err, label) }
  }
}

export function failureOf(err: unknown, label: string): ReadFailure {
  if (err instanceof KubeApiError) {
    const kind =
      err.status === 403 || err.status === 401 ? 'denied' : err.status === 429 ? 'throttled' : 'error'
    return { code: err.reason, kind, message: err.message, read: label }
  }
  return toReadFailure(err, label)
}

/** Chains reads: a failed dependency propagates as the same failure. */
export async function then<A, B>(a: Read<A>, fn: (value: A) => Promise<Read<B>>): Promise<Read<B>> {
  return a.ok ? fn(a.value) : a
}

export const okRead = <T>(value: T): Read<T> => ({ ok: true, value })
