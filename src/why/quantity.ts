// Kubernetes resource quantities (resource.Quantity, parsed by src/desired/quantity.ts) as numbers, to
// add requests and compare them against limits: cpu in cores, everything else in base units (bytes,
// pods, devices).
import { InputError, quote } from '../errors.js'
import type { ResourceList } from './types.js'

import { parseQuantity } from '../desired/quantity.js'

export { parseQuantity }

/** Resource amounts by name, in base units (cpu in cores, memory in bytes). */
export type Amounts = Record<string, number>

/**
 * A resource list's amounts. A value Kubernetes would not take (or past its bound) ends the run in one
 * line: dropped, the pod would be judged as asking for nothing, and fit.
 */
export function amounts(list: ResourceList | undefined): Amounts {
  const out: Amounts = {}
  for (const [k, v] of Object.entries(list ?? {})) {
    const n = parseQuantity(v)
    if (n === undefined)
      throw new InputError(
        `${quote(k)}: ${quote(String(v))} is not a Kubernetes quantity within its bounds (e.g. 500m, 2Gi; at most 2^63-1): karpctl cannot judge it`,
        'BAD_QUANTITY',
      )
    out[k] = n
  }
  return out
}

export function add(a: Amounts, b: Amounts): Amounts {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

export function max(a: Amounts, b: Amounts): Amounts {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v)
  return out
}

const BINARY = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi']

/** A readable quantity: cpu as cores or millicores, memory-like in binary units (`1536Mi`, `2Gi`). */
export function formatQuantity(resource: string, n: number): string {
  // Never a number karpctl did not get (`Infinitym`, `NaNm`): what could not be computed is unknown.
  if (!Number.isFinite(n)) return '?'
  if (resource === 'cpu') {
    if (Number.isInteger(n)) return String(n)
    return `${Math.round(n * 1000)}m`
  }
  if (/memory|storage/.test(resource) && n >= 1024) {
    let unit = ''
    let v = n
    for (const u of BINARY) {
      if (v < 1024 || !Number.isInteger(v / 1024)) break
      v /= 1024
      unit = u
    }
    if (unit === '' && n >= 1024 * 1024) return `${Math.ceil(n / 2 ** 20)}Mi`
    return `${v}${unit}`
  }
  return String(Number(n.toPrecision(12)))
}

export function formatAmounts(a: Amounts, only?: string[]): string {
  const keys = (only ?? Object.keys(a)).filter((k) => a[k] !== undefined && a[k] !== 0)
  return keys.map((k) => `${k} ${formatQuantity(k, a[k] as number)}`).join(', ') || 'nothing'
}
