// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource, resource.Quantity): the one
// parser karpctl has, for flags it writes into NodePools and for what it reads from the cluster.
//
//   <quantity>        ::= <signedNumber><suffix>
//   <signedNumber>    ::= <number> | <sign><number>          <sign> ::= "+" | "-"
//   <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//   <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//   <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//   <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//   <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>   (a whole number: Go's ParseInt)
//
// Its bound: "no quantity may represent a number greater than 2^63-1 in magnitude" (resource.Quantity's
// documentation). Kubernetes caps a larger one; karpctl does not judge or print a number it did not
// get, so a quantity past the bound (`1e400`, which a float makes Infinity) is not one here.

/** Each suffix as a power: of 10 for the decimal ones, of 2 for the binary ones. */
const SUFFIX: Record<string, [10 | 2, number]> = {
  '': [10, 0],
  n: [10, -9],
  u: [10, -6],
  m: [10, -3],
  k: [10, 3],
  M: [10, 6],
  G: [10, 9],
  T: [10, 12],
  P: [10, 15],
  E: [10, 18],
  Ki: [2, 10],
  Mi: [2, 20],
  Gi: [2, 30],
  Ti: [2, 40],
  Pi: [2, 50],
  Ei: [2, 60],
}

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/

/** 2^63-1: the largest magnitude a Kubernetes quantity represents. */
export const MAX_QUANTITY = 2 ** 63 - 1

/**
 * The quantity's value in base units (cores for cpu, bytes, pods), or undefined when Kubernetes'
 * grammar does not take it or it is past the bound. A number (a JSON value) must be finite and
 * within the bound too. No surrounding space: the API server takes none.
 */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (typeof q === 'number') return within(q) ? q : undefined
  if (typeof q !== 'string') return undefined
  const m = QUANTITY.exec(q)
  if (!m) return undefined
  const base = Number(m[1])
  const [radix, power] = m[2] !== undefined ? [10, Number(m[2])] : (SUFFIX[m[3] ?? ''] ?? [10, 0])
  // Divided for a negative power: 12n is 1.2e-8, not 12 × 1e-9 = 1.2000000000000002e-8.
  const value = power < 0 ? base / radix ** -power : base * radix ** power
  return within(value) ? value : undefined
}

/** Finite and below 2^63 (as a double, 2^63-1 is 2^63: the bound is the first number past it). */
const within = (n: number) => Number.isFinite(n) && Math.abs(n) < 2 ** 63
