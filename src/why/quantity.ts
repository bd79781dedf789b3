// Kubernetes resource quantities (resource.Quantity) as numbers, to add requests and compare them
// against limits: cpu in millicores, everything else in base units (bytes, pods, devices).
import type { ResourceList } from './types.js'

const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
}

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/

/** The quantity's value in base units, or undefined when it is not a quantity. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (typeof q === 'number') return q
  if (typeof q !== 'string') return undefined
  const m = QUANTITY.exec(q.trim())
  if (!m) return undefined
  const base = Number(m[1])
  if (m[2]) return base * 10 ** Number(m[2].slice(1))
  return base * (SUFFIX[m[3] ?? ''] ?? 1)
}

/** Resource amounts by name, in base units (cpu in cores, memory in bytes). */
export type Amounts = Record<string, number>

export function amounts(list: ResourceList | undefined): Amounts {
  const out: Amounts = {}
  for (const [k, v] of Object.entries(list ?? {})) {
    const n = parseQuantity(v)
    if (n !== undefined) out[k] = n
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
