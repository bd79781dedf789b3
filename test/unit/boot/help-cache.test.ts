// The help-screen cache (src/boot/help-cache.ts): which invocations may show help, what the key holds
// (and what it leaves out), and that a screen is kept only from a clean run.
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, test } from 'node:test'
import {
  fileStamp,
  hash,
  helpFiles,
  mayShowHelp,
  recordStreams,
  saveScreen,
  screenFile,
  screenKey,
  type ScreenInputs,
} from '../../../src/boot/help-cache.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-help-cache-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('help may show with no argument, a help flag before --, or a topic alone; nothing else pays for a key', () => {
  const may = (...argv: string[]) => mayShowHelp(argv, ['--help'], ['tenant'])
  assert.equal(may(), true)
  assert.equal(may('doctor', '--help'), true)
  assert.equal(may('--help'), true)
  assert.equal(may('tenant'), true)
  assert.equal(may('doctor'), false)
  assert.equal(may('tenant', 'add'), false)
  assert.equal(may('doctor', '-h'), false, '-h is not one of karpctl help flags')
  assert.equal(mayShowHelp(['doctor', '-h'], ['--help', '-h'], []), true)
  assert.equal(may('doctor', '--', '--help'), false, 'after -- it is an argument')
  assert.equal(may('doctor', '--snapshot', 'x.json'), false)
})

const inputs = (over: Partial<ScreenInputs> = {}): ScreenInputs => ({
  argv: ['doctor', '--help'],
  env: { HOME: '/home/u', TERM: 'xterm-256color', PWD: '/a', SHLVL: '1' },
  tty: true,
  columns: 120,
  files: ['linux-x64-v20.0.0', '/k/package.json:10:1'],
  ...over,
})

test('the key: the same for the same screen, whatever the order of the environment', () => {
  const a = screenKey('0.1.0-abc', inputs())
  assert.match(a, /^[0-9a-z]{22}$/)
  assert.equal(
    a,
    screenKey(
      '0.1.0-abc',
      inputs({ env: { SHLVL: '1', PWD: '/a', TERM: 'xterm-256color', HOME: '/home/u' } }),
    ),
  )
})

test('the key changes with the build, the arguments, the terminal, the files and any lasting variable', () => {
  const base = screenKey('0.1.0-abc', inputs())
  const others = {
    build: screenKey('0.1.0-abd', inputs()),
    argv: screenKey('0.1.0-abc', inputs({ argv: ['install', '--help'] })),
    notTty: screenKey('0.1.0-abc', inputs({ tty: false })),
    width: screenKey('0.1.0-abc', inputs({ columns: 100 })),
    files: screenKey('0.1.0-abc', inputs({ files: ['linux-x64-v20.0.0', '/k/package.json:10:2'] })),
    term: screenKey('0.1.0-abc', inputs({ env: { ...inputs().env, TERM: 'dumb' } })),
    noColor: screenKey('0.1.0-abc', inputs({ env: { ...inputs().env, NO_COLOR: '1' } })),
    // A variable nobody listed still makes a new key: a miss, never a stale screen.
    unknown: screenKey('0.1.0-abc', inputs({ env: { ...inputs().env, SOMETHING_NEW: 'x' } })),
  }
  for (const [what, key] of Object.entries(others)) assert.notEqual(key, base, what)
  assert.equal(new Set(Object.values(others)).size, Object.keys(others).length)
})

test('the key leaves out what changes on every shell and the width of a pipe', () => {
  const base = screenKey('0.1.0-abc', inputs())
  const env = {
    ...inputs().env,
    PWD: '/elsewhere',
    OLDPWD: '/a',
    SHLVL: '3',
    _: '/usr/bin/env',
    TERM_SESSION_ID: 'w0t1',
  }
  assert.equal(screenKey('0.1.0-abc', inputs({ env })), base)
  // Not a terminal: oclif wraps at 80 columns, whatever the width says.
  assert.equal(
    screenKey('0.1.0-abc', inputs({ tty: false, columns: 100 })),
    screenKey('0.1.0-abc', inputs({ tty: false, columns: undefined })),
  )
})

test('the hash: two independent halves, stable, and no secret of the environment in the file name', () => {
  assert.equal(hash('abc'), hash('abc'))
  assert.notEqual(hash('abc'), hash('abd'))
  assert.notEqual(hash('abc').slice(0, 11), hash('abc').slice(11))
  const key = screenKey('v', inputs({ env: { AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' } }))
  assert.doesNotMatch(screenFile(dir, key), /wJalr/)
  assert.equal(screenFile(dir, key), join(dir, `help-${key}.txt`))
})

test('a file stamp: absent, then size and mtime once written', () => {
  const f = join(dir, 'theme.json')
  assert.equal(fileStamp(f), `${f}:absent`)
  writeFileSync(f, '{}')
  utimesSync(f, 1000, 1000)
  assert.equal(fileStamp(f), `${f}:2:1000000`)
  utimesSync(f, 2000, 2000)
  assert.equal(fileStamp(f), `${f}:2:2000000`)
})

test("oclif's files as oclif finds them: the package, its manifest, the user's plugins and theme", () => {
  const files = helpFiles('/k', { XDG_DATA_HOME: '/d', KARPCTL_CONFIG_DIR: '/c' }, 'karpctl')
  assert.ok(files)
  assert.deepEqual(files, [
    `${process.platform}-${process.arch}-${process.version}`,
    '/k/package.json:absent',
    '/k/oclif.manifest.json:absent',
    '/d/karpctl/package.json:absent',
    '/c/theme.json:absent',
  ])
  const home = helpFiles('/k', { HOME: process.env.HOME }, 'karpctl')
  assert.match(home?.[3] ?? '', /\/\.local\/share\/karpctl\/package\.json:/)
  assert.match(home?.[4] ?? '', /\/\.config\/karpctl\/theme\.json:/)
})

/** A stream's write, recorded (what recordStreams wraps). */
function stream() {
  const written: string[] = []
  const s = new EventEmitter() as unknown as NodeJS.WriteStream
  const write = ((chunk: string | Uint8Array) =>
    written.push(Buffer.from(chunk).toString()) > 0) as NodeJS.WriteStream['write']
  s.write = write
  return { s, written, write }
}

test('a clean run: what reached stdout is the screen, and the streams are as they were', () => {
  const out = stream()
  const err = stream()
  const rec = recordStreams(out.s, err.s)
  out.s.write('USAGE\n')
  out.s.write(Buffer.from('  $ karpctl doctor\n'))
  assert.deepEqual(out.written, ['USAGE\n', '  $ karpctl doctor\n'], 'still written through')
  assert.equal(rec.finish(0)?.toString(), 'USAGE\n  $ karpctl doctor\n')
  assert.equal(out.s.write, out.write)
  assert.equal(err.s.write, err.write)
})

test('no screen from a run that wrote to stderr, exited non-zero, or printed nothing', () => {
  const cases: [string, (o: NodeJS.WriteStream, e: NodeJS.WriteStream) => void, number][] = [
    ['a warning', (o, e) => (o.write('x'), e.write('Warning: …')), 0],
    ['exit 2', (o) => o.write('x'), 2],
    ['nothing', () => undefined, 0],
  ]
  for (const [what, act, code] of cases) {
    const out = stream()
    const err = stream()
    const rec = recordStreams(out.s, err.s)
    act(out.s, err.s)
    assert.equal(rec.finish(code), undefined, what)
  }
})

test('a screen is written whole (no temporary file left) and the oldest beyond the limit are dropped', () => {
  for (let i = 0; i < 4; i++) {
    const f = screenFile(dir, `k${i}`)
    saveScreen(f, Buffer.from(`screen ${i}`), 3)
    utimesSync(f, 1000 + i, 1000 + i)
  }
  writeFileSync(join(dir, 'other.v8cache'), 'x')
  saveScreen(screenFile(dir, 'k4'), Buffer.from('screen 4'), 3)
  utimesSync(screenFile(dir, 'k4'), 2000, 2000)
  assert.deepEqual(readdirSync(dir).sort(), ['help-k2.txt', 'help-k3.txt', 'help-k4.txt', 'other.v8cache'])
  assert.equal(readFileSync(screenFile(dir, 'k4'), 'utf8'), 'screen 4')
})

test('a cache directory that cannot be written costs nothing but the screen', () => {
  const file = join(dir, 'not-a-dir')
  writeFileSync(file, '')
  assert.doesNotThrow(() => saveScreen(join(file, 'help-k.txt'), Buffer.from('x')))
  assert.deepEqual(readdirSync(dir), ['not-a-dir'])
})
