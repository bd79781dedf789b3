// Names derived from a cluster (and tenant) must fit AWS's limits; when they do not they are shortened
// the same way every time, so a re-run, doctor and teardown all find the same resource.
import { createHash } from 'node:crypto'

export function shortenName(name: string, max: number): string {
  if (name.length <= max) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${name.slice(0, max - hash.length - 1).replace(/[-_.]+$/, '')}-${hash}`
}

/** IAM role names: 64 characters. */
export const roleName = (base: string) => shortenName(base, 64)
