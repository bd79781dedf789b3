// Loads a CommonJS bundle of dist/ through V8's code cache. Node 20 has no module.enableCompileCache,
// and an ES module cannot be given cached data, so the build emits CommonJS bundles and this loader
// compiles each with vm.Script + cachedData, the way Node's own CJS loader would, minus the compile:
// the functions a previous run compiled are deserialized instead of parsed and compiled again.
//
// The cache lives in the user's cache directory ($XDG_CACHE_HOME/karpctl or ~/.cache/karpctl), one file
// per bundle and command, named by karpctl's version, the bundle's content hash (set by the build) and
// Node's version (V8 rejects another V8's cache anyway). It is written once, at exit, when there was
// none or V8 rejected it, to a temporary file renamed into place: two karpctl runs at once never see a
// half-written cache. An unreadable, corrupt or unwritable cache only costs the compile it would save.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import vm from 'node:vm'
import { makeCacheDir, readCacheFile } from './cache-dir.js'
import { pruneCaches } from './prune.js'

export interface CacheOptions {
  /** The directory cache files go to; undefined: no cache (compile as Node would). */
  dir: string | undefined
  /** What names a bundle's cache file besides its name: karpctl's version and the bundle's content hash. */
  key(file: string): string
  /** Called instead of staying silent when a cache cannot be read or written (tests, --debug). */
  onError?: (what: string, err: unknown) => void
  /** Told whether each bundle's cache was absent, accepted or rejected by V8 (tests, --debug). */
  onLoad?: (file: string, cache: 'none' | 'accepted' | 'rejected') => void
}

/** `$XDG_CACHE_HOME/karpctl`, else `~/.cache/karpctl`; undefined when there is no home to put it in. */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.KARPCTL_CODE_CACHE === '0') return undefined
  const xdg = env.XDG_CACHE_HOME
  // The XDG spec: a relative path is invalid and must be ignored.
  if (xdg && xdg.startsWith('/')) return join(xdg, 'karpctl')
  const home = homedir()
  return home ? join(home, '.cache', 'karpctl') : undefined
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)

/** How the cache files of one bundle and command end, whatever karpctl's and Node's versions. */
export const cacheSuffix = (bundle: string, variant: string) => `-${safe(bundle)}-${safe(variant)}.v8cache`

/** A cache file name from parts that may hold anything: only [A-Za-z0-9._-] reach the file system. */
export function cacheFileName(bundle: string, key: string, variant: string): string {
  return `${safe(key)}-node${safe(process.versions.node)}${cacheSuffix(bundle, variant)}`
}

const pending = new Map<string, () => void>()
let exitHook = false

/**
 * Evaluates the CommonJS file `file` as Node's CJS loader would (module, exports, require, __filename,
 * __dirname; registered in require.cache, so a later require() of it returns this module) and returns
 * its exports. `variant` separates caches of runs that compile different code (the command).
 */
export function loadBundle(file: string, variant: string, options: CacheOptions): unknown {
  // Node's own module registry (require.cache of any require function).
  const registry = createRequire(file).cache
  const cached = registry[file]
  if (cached) return cached.exports
  const source = readFileSync(file, 'utf8')
  const cacheFile = options.dir
    ? join(options.dir, cacheFileName(file.replace(/.*[\\/]/, ''), options.key(file), variant))
    : undefined
  let cachedData: Buffer | undefined
  if (cacheFile) cachedData = readCacheFile(cacheFile, (err) => options.onError?.(`read ${cacheFile}`, err))
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  })
  const mod = new Module(file)
  mod.filename = file
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    dirname(file),
  )
  registry[file] = mod
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void
  try {
    wrapper.call(mod.exports, mod.exports, bundleRequire(file, variant, options), mod, file, dirname(file))
  } catch (err) {
    delete registry[file]
    throw err
  }
  mod.loaded = true
  options.onLoad?.(file, !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted')
  if (cacheFile && (!cachedData || script.cachedDataRejected)) {
    // At exit: the cache then also holds every function this run compiled lazily (the command's own).
    pending.set(cacheFile, () =>
      writeCache(cacheFile, script, options, cacheSuffix(file.replace(/.*[\\/]/, ''), variant)),
    )
    if (!exitHook) {
      exitHook = true
      process.once('exit', flushCaches)
    }
  }
  return mod.exports
}

/** Node's require for `file`, except that another bundle of dist/ (a relative path) loads through the cache too. */
function bundleRequire(file: string, variant: string, options: CacheOptions): NodeJS.Require {
  const nodeRequire = createRequire(file)
  const req = (id: string) =>
    id.startsWith('./') || id.startsWith('../')
      ? loadBundle(nodeRequire.resolve(id), variant, options)
      : (nodeRequire(id) as unknown)
  return Object.assign(req, nodeRequire)
}

/** Writes the caches of this run's bundles (also called at exit). */
export function flushCaches(): void {
  for (const write of pending.values()) write()
  pending.clear()
}

function writeCache(cacheFile: string, script: vm.Script, options: CacheOptions, suffix: string): void {
  const tmp = `${cacheFile}.${process.pid}.tmp`
  try {
    const data = script.createCachedData()
    makeCacheDir(dirname(cacheFile))
    writeFileSync(tmp, data, { mode: 0o600 })
    renameSync(tmp, cacheFile)
  } catch (err) {
    options.onError?.(`write ${cacheFile}`, err)
    try {
      rmSync(tmp, { force: true })
    } catch {
      // nothing to clean up
    }
    return
  }
  try {
    pruneCaches(cacheFile, (n) => n.endsWith(suffix))
  } catch (err) {
    options.onError?.(`prune ${dirname(cacheFile)}`, err)
  }
}
