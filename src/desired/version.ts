// Karpenter versions as karpctl reads them (Helm chart versions, image tags, --to / --karpenter-version).

export interface KarpenterVersion {
  raw: string
  major: number
  minor: number
  patch: number
}

/** `1.2.3`, `v1.2.3`, `1.2.3-rc.1`: its numbers; null when it does not start with three of them. */
export function parseVersion(raw: string | undefined): KarpenterVersion | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(raw ?? '')
  if (!m) return null
  return { raw: raw as string, major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) }
}

export const cmpVersion = (a: KarpenterVersion, b: KarpenterVersion): number =>
  a.major - b.major || a.minor - b.minor || a.patch - b.patch
