// Keeps a cache directory bounded: the V8 code caches (code-cache.ts) and the help screens
// (help-cache.ts) both drop their oldest files this way. A module of its own, so the help class in the
// CLI bundle does not carry the code-cache loader with it.
import { readdirSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * Each upgrade of karpctl (or of Node) names new cache files, megabytes each: of the files beside
 * `current` that `matches` (the caches of one bundle and command), only the newest `keepOthers` stay,
 * so two installs used in turn (a global one and a project's) keep theirs, and nothing piles up. The
 * help-screen cache keeps its newest screens the same way.
 */
export function pruneCaches(current: string, matches: (name: string) => boolean, keepOthers = 1): void {
  const dir = dirname(current)
  const others = readdirSync(dir)
    .filter((n) => matches(n) && join(dir, n) !== current)
    .map((n) => ({
      path: join(dir, n),
      mtime: statSync(join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? 0,
    }))
    .sort((a, b) => b.mtime - a.mtime)
  for (const old of others.slice(keepOthers)) rmSync(old.path, { force: true })
}
