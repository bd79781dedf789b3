// `karpctl why` as a user runs it (the built CLI, a subprocess): the shipped example snapshot, exit
// codes, --json, and one-line usage errors. No network: a snapshot, or input refused before any read.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { repoRoot } from '../helpers/fixtures.js'

const run = (args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'run.js'), 'why', ...args],
      {
        cwd: repoRoot,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: '/nonexistent',
          NO_COLOR: '1',
          KUBECONFIG: '/nonexistent',
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    )
  })

test('why --snapshot examples/why/pending.json: exit 1, the verdicts, no colour', async () => {
  const r = await run(['--snapshot', 'examples/why/pending.json'])
  assert.equal(r.code, 1, r.stderr)
  assert.ok(!r.stdout.includes('\u001b['))
  assert.match(r.stdout, /^ {2}✖ default: label "team" does not have known values$/m)
  assert.match(r.stdout, /^ {2}✔ default: 4 of 5 instance types have room, the smallest c6g\.large /m)
  assert.match(
    r.stdout,
    /^ {2}✖ default: no instance type has room: the largest left of 5, m5\.2xlarge, has 7910m cpu \/ 28\.6Gi memory \/ 58 pods allocatable, a node for the pod needs 12 cpu$/m,
  )
})

test('why --json: karpctl.why/v1 data with the same exit code', async () => {
  const r = await run(['--snapshot', 'examples/why/pending.json', '--json'])
  assert.equal(r.code, 1, r.stderr)
  const report = JSON.parse(r.stdout) as { schema: string; summary: Record<string, number> }
  assert.equal(report.schema, 'karpctl.why/v1')
  assert.deepEqual(report.summary, { pods: 4, ignored: 0, fits: 2, none: 2, couldNotTell: 0 })
})

test('why: bad input is one line and exit 2, before any read', async () => {
  for (const [args, message] of [
    [['Bad_Name'], /"Bad_Name" is not a pod or workload name/],
    [[], /which pod\?/],
    [['--snapshot', 'examples/why/pending.json', 'web'], /--snapshot judges the pods it was saved for/],
    [['--snapshot', 'examples/healthy.json'], /is not a why snapshot/],
  ] as const) {
    const r = await run([...args])
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`)
    assert.match(r.stderr, message)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  }
})
