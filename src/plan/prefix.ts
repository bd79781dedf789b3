import type { Resource } from './types.js'

/** The same resources under distinct addresses (one tenant's among several), dependencies renamed with them. */
export function prefixed(prefix: string, resources: Resource[]): Resource[] {
  const own = new Set(resources.map((r) => r.address))
  const rename = (a: string) => (own.has(a) ? `${prefix}${a}` : a)
  return resources.map((r) => ({ ...r, address: rename(r.address), dependsOn: r.dependsOn.map(rename) }))
}
