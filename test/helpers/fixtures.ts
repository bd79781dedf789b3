import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** ../shared/fixtures/karpenter beside the repo (CI clones the repo with shared/ beside it). */
export function fixturePath(rel: string): string {
  const base = process.env.KARPCTL_FIXTURES ?? join(repoRoot, '..', 'shared', 'fixtures', 'karpenter')
  const p = join(base, rel)
  if (!existsSync(p))
    throw new Error(`fixture not found: ${p} (set KARPCTL_FIXTURES to ../shared/fixtures/karpenter)`)
  return p
}
