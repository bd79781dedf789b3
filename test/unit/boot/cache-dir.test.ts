// Where the caches may write (issue 36 §4 "Hang", "A write outside the temp folder"): a cache path
// that is not a usable directory is given up at once, nothing is made in a parent that does not exist,
// and a cache file that is not a regular file is not read.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { makeCacheDir, readCacheFile } from '../../../src/boot/cache-dir.js'

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-cache-dir-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('makeCacheDir makes the base and karpctl in an existing parent, 0700, and again is a no-op', () => {
  const target = join(dir, 'home', '.cache', 'karpctl')
  mkdirSync(join(dir, 'home'))
  makeCacheDir(target)
  assert.ok(statSync(target).isDirectory())
  assert.equal(statSync(target).mode & 0o777, 0o700)
  makeCacheDir(target)
})

test('makeCacheDir never makes a missing home or a missing XDG parent (HOME=/nonexistent/home)', () => {
  const home = join(dir, 'nonexistent', 'home')
  assert.throws(
    () => makeCacheDir(join(home, '.cache', 'karpctl')),
    /is not a directory: no cache is made in it/,
  )
  assert.equal(existsSync(join(dir, 'nonexistent')), false)
})

test('makeCacheDir refuses a base that is a file, and /proc/self at once (recursive mkdir loops there)', () => {
  writeFileSync(join(dir, 'file'), 'x')
  assert.throws(() => makeCacheDir(join(dir, 'file', 'karpctl')))
  if (process.platform !== 'linux') return
  // In a child with a deadline: were it Node's recursive mkdir, this would spin forever.
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import('${join(process.cwd(), 'src/boot/cache-dir.ts')}').then((m) => { try { m.makeCacheDir('/proc/self/karpctl') } catch (e) { console.log(e.code ?? e.message) } })`,
    ],
    { timeout: 30_000, encoding: 'utf8' },
  )
  assert.equal(child.signal, null, 'makeCacheDir returned (no hang)')
  assert.match(child.stdout, /ENOENT|EACCES|not a directory/)
})

test('readCacheFile reads a regular file; absent, a directory or a FIFO is undefined, without blocking', () => {
  writeFileSync(join(dir, 'cache'), 'data')
  assert.equal(readCacheFile(join(dir, 'cache'))?.toString(), 'data')
  const errors: unknown[] = []
  assert.equal(
    readCacheFile(join(dir, 'absent'), (e) => errors.push(e)),
    undefined,
  )
  assert.equal(errors.length, 0, 'absence is not an error')
  assert.equal(
    readCacheFile(dir, (e) => errors.push(e)),
    undefined,
  )
  if (process.platform === 'win32') return
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  assert.equal(
    readCacheFile(fifo, (e) => errors.push(e)),
    undefined,
  )
  assert.equal(errors.length, 2)
})
