// `karpctl why --nodes -l SELECTOR`: kubectl's equality-based label selector, matched in memory so the
// one memoized read of every Node serves both the nodes judged and the nodes counted.

/** A `-l` selector matched against a node's labels: `k=v`, `k!=v`, `k`, `!k`, comma-separated (ANDed). */
export function matchesLabels(selector: string | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true
  return selector.split(',').every((raw) => {
    const term = raw.trim()
    const ne = /^([^!=]+)!=(.*)$/.exec(term)
    if (ne) return labels[(ne[1] as string).trim()] !== (ne[2] as string).trim()
    const eq = /^([^=]+)==?(.*)$/.exec(term)
    if (eq) return labels[(eq[1] as string).trim()] === (eq[2] as string).trim()
    if (term.startsWith('!')) return !(term.slice(1) in labels)
    return term in labels
  })
}
