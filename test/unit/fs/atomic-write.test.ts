// Saving a snapshot loses nothing: a reader always finds the old file or the new one, whole, private.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeFileAtomic } from '../../../src/fs/atomic-write.js'
import { repoRoot } from '../../helpers/fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'karpctl-atomic-'))

function writer(path: string, marker: string, count: number, mib: number) {
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repoRoot, 'test', 'helpers', 'save-writer.ts'),
      path,
      marker,
      String(count),
      String(mib),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  )
}

const exited = (child: ReturnType<typeof spawn>) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )

/** The marker of the snapshot at `path`: it must parse whole. */
function markerOf(path: string): string {
  const text = readFileSync(path, 'utf8')
  const facts = JSON.parse(text) as { meta: { notes: string[] } }
  return facts.meta.notes[0] as string
}

test('over an existing 0644 file, the new file is 0600 and whole', async () => {
  const path = join(dir, 'mode.json')
  writeFileSync(path, 'old')
  chmodSync(path, 0o644)
  await writeFileAtomic(path, '{"new": true}\n')
  assert.equal(statSync(path).mode & 0o777, 0o600)
  assert.equal(readFileSync(path, 'utf8'), '{"new": true}\n')
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('mode.json.')),
    [],
    'no temporary file left',
  )
})

test('a failed write leaves the target as it was and no temporary file', async () => {
  const path = join(dir, 'kept.json')
  writeFileSync(path, 'kept')
  // A directory where the file should be: the rename fails after the temporary file was written.
  await assert.rejects(writeFileAtomic(dir, 'x'), /EISDIR|EEXIST|ENOTEMPTY|EPERM/)
  assert.equal(readFileSync(path, 'utf8'), 'kept')
  assert.deepEqual(
    readdirSync(join(dir, '..')).filter((f) => f.endsWith('.tmp') && f.includes('karpctl-atomic')),
    [],
  )
})

test('a writer killed (SIGKILL) mid-write leaves the previous good snapshot intact', async () => {
  const path = join(dir, 'killed.json')
  const first = writer(path, 'good', 1, 1)
  assert.equal((await exited(first)).code, 0)
  assert.equal(markerOf(path), 'good')
  for (let round = 0; round < 3; round++) {
    const child = writer(path, `new-${round}`, 50, 16)
    // Kill it while it writes: once its temporary file exists (or, were it writing in place, once
    // the target changed).
    const before = statSync(path)
    const started = Date.now()
    const writing = () =>
      readdirSync(dir).some((f) => f.startsWith('.killed.json.') && f.endsWith('.tmp')) ||
      statSync(path).mtimeMs !== before.mtimeMs ||
      statSync(path).size !== before.size
    while (!writing()) {
      assert.ok(Date.now() - started < 30_000, 'the writer never started writing')
      await sleep(1)
    }
    child.kill('SIGKILL')
    assert.equal((await exited(child)).signal, 'SIGKILL')
    const now = markerOf(path)
    assert.ok(now === 'good' || /^new-\d$/.test(now), now)
  }
})

test('two writers at once never leave a torn file: every read parses and is one of the two', async () => {
  const path = join(dir, 'race.json')
  const a = writer(path, 'A', 8, 2)
  const b = writer(path, 'B', 8, 2)
  const done = Promise.all([exited(a), exited(b)])
  let finished = false
  void done.then(() => (finished = true))
  const seen = new Set<string>()
  while (!finished) {
    try {
      seen.add(markerOf(path))
    } catch (err) {
      // Before the first rename there is no file yet; anything else (a torn file) fails the test.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    await sleep(1)
  }
  const codes = (await done).map((r) => r.code)
  assert.deepEqual(codes, [0, 0])
  seen.add(markerOf(path))
  for (const m of seen) assert.ok(m === 'A' || m === 'B', m)
  assert.equal(statSync(path).mode & 0o777, 0o600)
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('.race.json.')),
    [],
    'no temporary file left',
  )
})

test("the next save removes the temporaries of dead writers of the same target, never a live writer's or another target's", async () => {
  const path = join(dir, 'stale.json')
  // A pid no process has: past the kernel's pid_max (4194304 at most on Linux).
  const dead = 4_194_305
  const stale = [`.stale.json.${dead}.0123456789ab.tmp`, `.stale.json.${dead + 1}.abcdef012345.tmp`]
  const kept = [
    // a live writer's (this test runner's parent, which runs)
    `.stale.json.${process.ppid}.0123456789ab.tmp`,
    // another target's, and a name only like a temporary
    `.other.json.${dead}.0123456789ab.tmp`,
    `.stale.json.${dead}.not-hex.tmp`,
  ]
  for (const f of [...stale, ...kept]) writeFileSync(join(dir, f), 'half')
  await writeFileAtomic(path, '{"whole":true}')
  const left = readdirSync(dir)
  for (const f of stale) assert.ok(!left.includes(f), `${f} removed`)
  for (const f of kept) assert.ok(left.includes(f), `${f} kept`)
  assert.equal(readFileSync(path, 'utf8'), '{"whole":true}')
})
