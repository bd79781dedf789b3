// The one place errors become a line and an exit code, for an error nothing classified (a bug): one
// line that says so, the stack only with --debug.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Config } from '@oclif/core'
import { BaseCommand } from '../../src/base-command.js'
import { repoRoot } from '../helpers/fixtures.js'

class Crash extends BaseCommand<typeof Crash> {
  static override enableJsonFlag = true
  async run(): Promise<void> {
    // What a bug looks like: a TypeError from deep inside, with a multi-line message.
    throw new TypeError("Cannot read properties of undefined (reading 'ok')\nsecond line")
  }
}

async function run(argv: string[]) {
  const config = await Config.load(repoRoot)
  const out: string[] = []
  const err: string[] = []
  const write = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  }
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write
  const exitCode = process.exitCode
  try {
    await Crash.run(argv, config)
  } finally {
    process.stdout.write = write.out
    process.stderr.write = write.err
  }
  const code = process.exitCode
  process.exitCode = exitCode
  return { stdout: out.join(''), stderr: err.join(''), code }
}

test('an unexpected error is one line saying so, with a pointer to --debug, exit 2', async () => {
  const r = await run([])
  assert.equal(r.code, 2)
  assert.deepEqual(r.stderr.trimEnd().split('\n'), [
    "Error: karpctl could not run: Cannot read properties of undefined (reading 'ok') (run again with --debug for details)",
  ])
})

test('--debug on an unexpected error prints the one line and then the stack it promises', async () => {
  const r = await run(['--debug'])
  const lines = r.stderr.split('\n')
  assert.equal(lines[0], "Error: karpctl could not run: Cannot read properties of undefined (reading 'ok')")
  assert.match(r.stderr, /^\s+at .+:\d+:\d+\)?$/m, 'the stack')
})

test('--json: the unexpected error is one JSON object on stdout', async () => {
  const r = await run(['--json'])
  assert.deepEqual(JSON.parse(r.stdout), {
    error: {
      code: 'INTERNAL',
      message:
        "karpctl could not run: Cannot read properties of undefined (reading 'ok') (run again with --debug for details)",
    },
  })
  assert.equal(r.stderr, '')
})
