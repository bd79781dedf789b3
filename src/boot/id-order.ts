// oclif sorts every plugin's commands by id with String#localeCompare (config/plugin.js), at every
// start; the first localeCompare of a process builds ICU's collator, about 10 ms. The build swaps in
// this comparator: ids of lowercase letters and colons (all of karpctl's) sort the same by code point
// under the root collation (letters alphabetical, ':' before any letter, a prefix first), so they skip
// the collator; anything else still goes to localeCompare, so the order is oclif's for every id.
const PLAIN = /^[a-z:]*$/

export function idOrder(a: string, b: string): number {
  if (PLAIN.test(a) && PLAIN.test(b)) return a < b ? -1 : a > b ? 1 : 0
  return a.localeCompare(b)
}
