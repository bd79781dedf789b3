// Where the caches (code-cache.ts, help-cache.ts) may write, and how they read: a cache is an
// optimisation, so a path it cannot use costs the run nothing — neither a hang nor a directory the user
// did not have. Node's `mkdirSync(…, { recursive: true })` loops forever on a path under /proc
// (XDG_CACHE_HOME=/proc/self: ENOENT for a parent that exists), inside the exit handler where SIGTERM
// cannot end it; and it creates a missing home (HOME=/nonexistent/home) whole. So: at most the cache
// base (`$XDG_CACHE_HOME` or `~/.cache`) and `karpctl` in it are made, one level each, and only in a
// parent that is already a directory. A cache file is read only if it is a regular file (a FIFO there
// would block the start of every run).
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs'
import { dirname } from 'node:path'

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true

/** Makes `dir` (a cache base's `karpctl`) and its base if missing, one level each; throws, at once, when it cannot. */
export function makeCacheDir(dir: string): void {
  const base = dirname(dir)
  if (!isDirectory(dirname(base)))
    throw new Error(`${dirname(base)} is not a directory: no cache is made in it`)
  for (const d of [base, dir]) {
    try {
      mkdirSync(d, { mode: 0o700 })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    if (!isDirectory(d)) throw new Error(`${d} is not a directory`)
  }
}

/**
 * A cache file's content, or undefined when it is absent, not a regular file, or cannot be read (each
 * but the absence told to `onError`).
 */
export function readCacheFile(path: string, onError?: (err: unknown) => void): Buffer | undefined {
  let fd: number
  try {
    // Non-blocking: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError?.(err)
    return undefined
  }
  try {
    if (fstatSync(fd).isFile()) return readFileSync(fd)
    onError?.(new Error(`${path} is not a regular file`))
  } catch (err) {
    onError?.(err)
  } finally {
    closeSync(fd)
  }
  return undefined
}
