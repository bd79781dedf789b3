import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, test } from 'node:test'
import {
  cacheDirectory,
  cacheFileName,
  cacheSuffix,
  flushCaches,
  loadBundle,
  type CacheOptions,
} from '../../../src/boot/code-cache.js'
import { pruneCaches } from '../../../src/boot/prune.js'

let dir: string
let n = 0

/** A fresh CommonJS bundle (a new path each time, as require.cache holds a loaded one for good). */
function bundle(body = ''): string {
  const file = join(dir, `bundle-${++n}.js`)
  writeFileSync(
    file,
    `${body}\nconst path = require('node:path')\nexports.name = path.basename(__filename)\nexports.twice = (x) => x * 2\nexports.self = module.exports === exports\n`,
  )
  return file
}

function options(cacheDir: string | undefined, seen: string[], errors: string[] = []): CacheOptions {
  return {
    dir: cacheDir,
    key: () => '1.0.0-abc',
    onLoad: (_file, cache) => seen.push(cache),
    onError: (what) => errors.push(what),
  }
}

/** Loads `file` again as a new process would: forget the module Node registered. */
function forget(file: string): void {
  delete createRequire(file).cache[file]
}

const loader = new URL('../../../src/boot/code-cache.ts', import.meta.url).href

/**
 * Loads `file` in a new process (V8 reuses what this process compiled, whatever the cache file says)
 * and returns what the loader saw and the bundle's `twice(21)`.
 */
function loadInChild(file: string, cacheDir: string): { seen: string[]; errors: string[]; value: number } {
  const script = `
    import { loadBundle, flushCaches } from ${JSON.stringify(loader)}
    const seen = [], errors = []
    const mod = loadBundle(${JSON.stringify(file)}, 'main', {
      dir: ${JSON.stringify(cacheDir)}, key: () => '1.0.0-abc',
      onLoad: (_f, c) => seen.push(c), onError: (w) => errors.push(w),
    })
    flushCaches()
    console.log(JSON.stringify({ seen, errors, value: mod.twice(21) }))`
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  })
  return JSON.parse(out) as { seen: string[]; errors: string[]; value: number }
}

describe('code cache loader', () => {
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'karpctl-cc-'))
  })
  afterEach(() => {
    flushCaches()
    chmodSync(dir, 0o700)
    rmSync(dir, { recursive: true, force: true })
  })

  test('evaluates a CommonJS file as require would, then runs it from the cache it wrote', () => {
    const file = bundle()
    const cacheDir = join(dir, 'cache')
    const seen: string[] = []
    const first = loadBundle(file, 'doctor', options(cacheDir, seen)) as {
      name: string
      twice(x: number): number
      self: boolean
    }
    assert.equal(first.name, `bundle-${n}.js`)
    assert.equal(first.twice(21), 42)
    assert.equal(first.self, true)
    // A later require() of the same file returns the same module, as Node's loader would.
    assert.equal(createRequire(file)(file), first)
    flushCaches()
    const files = readdirSync(cacheDir)
    assert.deepEqual(files, [cacheFileName(`bundle-${n}.js`, '1.0.0-abc', 'doctor')])
    forget(file)
    const second = loadBundle(file, 'doctor', options(cacheDir, seen)) as { twice(x: number): number }
    assert.equal(second.twice(2), 4)
    assert.deepEqual(seen, ['none', 'accepted'])
  })

  test('a corrupt cache is rejected, the bundle still runs, and the cache is written again', () => {
    const file = bundle()
    const cacheDir = join(dir, 'cache')
    assert.deepEqual(loadInChild(file, cacheDir), { seen: ['none'], errors: [], value: 42 })
    assert.deepEqual(loadInChild(file, cacheDir).seen, ['accepted'])
    const cacheFile = join(cacheDir, readdirSync(cacheDir)[0]!)
    writeFileSync(cacheFile, Buffer.from('not a V8 code cache at all'))
    assert.deepEqual(loadInChild(file, cacheDir), { seen: ['rejected'], errors: [], value: 42 })
    assert.notEqual(readFileSync(cacheFile).toString(), 'not a V8 code cache at all')
    assert.deepEqual(loadInChild(file, cacheDir).seen, ['accepted'])
  })

  test('an unwritable cache directory costs nothing but the cache: no throw, no stray temp file', () => {
    const file = bundle()
    const cacheDir = join(dir, 'ro')
    loadBundle(file, 'main', options(cacheDir, []))
    flushCaches()
    forget(file)
    rmSync(cacheDir, { recursive: true })
    // A file where the directory should be: neither mkdir nor the write can succeed (even as root).
    writeFileSync(cacheDir, 'x')
    const errors: string[] = []
    const mod = loadBundle(file, 'main', options(cacheDir, [], errors)) as { twice(x: number): number }
    assert.equal(mod.twice(1), 2)
    flushCaches()
    assert.equal(errors.length, 2, errors.join('; ')) // the read (ENOTDIR) and the write
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
    )
  })

  test('no cache directory: compiled as Node would, nothing written', () => {
    const file = bundle()
    const seen: string[] = []
    const mod = loadBundle(file, 'main', options(undefined, seen)) as { twice(x: number): number }
    assert.equal(mod.twice(3), 6)
    flushCaches()
    assert.deepEqual(seen, ['none'])
    assert.deepEqual(readdirSync(dir), [`bundle-${n}.js`])
  })

  test('a bundle that throws is not left registered half-evaluated', () => {
    const file = bundle("throw new Error('boom')")
    assert.throws(() => loadBundle(file, 'main', options(join(dir, 'cache'), [])), /boom/)
    assert.equal(createRequire(file).cache[file], undefined)
  })

  test('cache file names keep only safe characters of what they are made of', () => {
    const name = cacheFileName('cli.js', '1.0.0/../../x', 'tenant:add')
    assert.match(name, /^[A-Za-z0-9._-]+$/)
    assert.ok(!name.includes('/'))
  })

  test('the cache directory: $XDG_CACHE_HOME/karpctl (absolute only), else ~/.cache/karpctl; KARPCTL_CODE_CACHE=0 turns it off', () => {
    assert.equal(cacheDirectory({ XDG_CACHE_HOME: '/x/cache' }), '/x/cache/karpctl')
    assert.match(cacheDirectory({ XDG_CACHE_HOME: 'relative' }) ?? '', /[\\/]\.cache[\\/]karpctl$/)
    assert.match(cacheDirectory({}) ?? '', /[\\/]\.cache[\\/]karpctl$/)
    assert.equal(cacheDirectory({ XDG_CACHE_HOME: '/x', KARPCTL_CODE_CACHE: '0' }), undefined)
  })
})

describe('which cache a run uses', () => {
  const commands = ['doctor', 'install', 'tenant:add', 'tenant', 'teardown']
  test('one per command, its help apart, and one shared by everything else', async () => {
    const { cacheVariant } = await import('../../../src/boot/main.js')
    assert.equal(cacheVariant(['doctor', '--cluster', 'demo'], commands), 'doctor')
    assert.equal(cacheVariant(['tenant', 'add', 'acme'], commands), 'tenant:add')
    assert.equal(cacheVariant(['doctor', '--help'], commands), 'doctor-help')
    assert.equal(cacheVariant(['--version'], commands), 'main')
    // A typo or any other word never names a file of its own.
    assert.equal(cacheVariant(['doctr'], commands), 'main')
    assert.equal(cacheVariant(['../../etc'], commands), 'main')
  })
})

describe('old caches', () => {
  test('of one bundle and command, only the newest other than the current stays; nothing else is touched', () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'karpctl-prune-'))
    try {
      const name = (version: string, variant = 'doctor') => cacheFileName('aws.js', `${version}-abc`, variant)
      const files = ['0.1.0', '0.2.0', '0.3.0', '0.4.0'].map((v, i) => {
        const f = join(cacheDir, name(v))
        writeFileSync(f, 'x')
        utimesSync(f, 1000 + i, 1000 + i)
        return f
      })
      const keep = [
        name('0.1.0', 'doctor-help'),
        cacheFileName('cli.js', '0.1.0-abc', 'doctor'),
        'help-k.txt',
      ]
      for (const k of keep) writeFileSync(join(cacheDir, k), 'x')
      // The current one is the oldest by mtime: it stays whatever its age.
      pruneCaches(files[0] as string, (n) => n.endsWith(cacheSuffix('aws.js', 'doctor')))
      assert.deepEqual(readdirSync(cacheDir).sort(), [name('0.1.0'), name('0.4.0'), ...keep].sort())
      assert.ok(name('0.1.0').endsWith(cacheSuffix('aws.js', 'doctor')))
    } finally {
      rmSync(cacheDir, { recursive: true, force: true })
    }
  })

  test('writing a new cache drops the stale ones of the same bundle and command', () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'karpctl-prune-write-'))
    dir = mkdtempSync(join(tmpdir(), 'karpctl-prune-bundle-'))
    try {
      const file = bundle()
      const base = file.replace(/.*[\\/]/, '')
      const stale = ['0.7.0-a', '0.8.0-b', '0.9.0-c'].map((k, i) => {
        const f = join(cacheDir, cacheFileName(base, k, 'main'))
        writeFileSync(f, 'x')
        utimesSync(f, 1000 + i, 1000 + i)
        return f
      })
      const seen: string[] = []
      loadBundle(file, 'main', options(cacheDir, seen))
      flushCaches()
      assert.deepEqual(seen, ['none'])
      assert.deepEqual(
        readdirSync(cacheDir).sort(),
        [cacheFileName(base, '1.0.0-abc', 'main'), stale[2]!.replace(/.*[\\/]/, '')].sort(),
      )
    } finally {
      rmSync(cacheDir, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
