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
    [[], /which pod or node\?/],
    [['--snapshot', 'examples/why/pending.json', 'web'], /--snapshot judges what it was saved for/],
    [['node/Bad_Name'], /"node\/Bad_Name" is not a node or NodeClaim name/],
    [['--nodes', 'node/a'], /pass node\/NAME, a pod, or --nodes: not both/],
    [['node/a', '-n', 'shop'], /-n, -A and --all-pending are for pods/],
    [['web', '-l', 'a=b'], /-l goes with --nodes/],
    [['--nodes', '--with', '/nonexistent/np.yaml'], /--with .* cannot be read \(ENOENT\)/],
    [['--snapshot', 'examples/healthy.json'], /is not a why snapshot/],
  ] as const) {
    const r = await run([...args])
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`)
    assert.match(r.stderr, message)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  }
})

test('why --snapshot examples/why/nodes.json: exit 1, a line per node, the blocks of those that need a hand', async () => {
  const r = await run(['--snapshot', 'examples/why/nodes.json'])
  assert.equal(r.code, 1, r.stderr)
  assert.match(
    r.stdout,
    /^✖ ip-10-0-12-34\.us-west-2\.compute\.internal \(default\): consolidation applies but is blocked by one thing: PodDisruptionBudget shop\/checkout/m,
  )
  assert.match(
    r.stdout,
    /^✖ ip-10-0-40-7\.us-west-2\.compute\.internal \(default\): drift applies but is blocked by one thing: pod shop\/report-5f6b-l2m9c has annotation karpenter\.sh\/do-not-disrupt=true/m,
  )
  assert.match(r.stdout, /never registered; the 15m registration timeout passed at 2026-12-04T11:45:00Z/)
  assert.match(
    r.stdout,
    /^ {10}\$ kubectl -n shop annotate pod report-5f6b-l2m9c karpenter\.sh\/do-not-disrupt-$/m,
  )
  assert.match(
    r.stdout,
    /^4 nodes: 1 going, 2 blocked, 0 kept, 0 leaving, 0 gone, 1 never joined, 0 failed to launch, 0 could not tell$/m,
  )
  const j = await run(['--snapshot', 'examples/why/nodes.json', '--json'])
  assert.equal(j.code, 1, j.stderr)
  const report = JSON.parse(j.stdout) as { schema: string; summary: Record<string, number> }
  assert.equal(report.schema, 'karpctl.why-node/v1')
  assert.equal(report.summary.blocked, 2)
})
