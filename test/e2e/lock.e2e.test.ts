// The cluster's lock on the real bed (issue 36.2): two installs at once on one cluster. The first
// holds a Lease in kube-system while it applies; a second stops in one line naming it (exit 2); a third
// with --wait-for-lock waits, reads its plan again and finds nothing left to do; the Lease is gone after.
// A SIGKILLed teardown leaves its Lease: the re-run on this machine takes it over (its pid is gone) and
// converges, and no karpctl file is left in $TMPDIR (issue 36.3: helm reads its values on stdin).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import {
  CLUSTER_NAME,
  karpenterFixtures,
  bareClusterBed,
  REPO_ROOT,
  targetArgs,
  type Bed,
} from './bed/index.js'

const BIN = join(REPO_ROOT, 'bin', 'run.js')
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/karpctl-lock'

const installArgs = (bed: Bed, extra: string[]) => [
  'install',
  ...targetArgs(bed),
  '--chart-dir',
  join(karpenterFixtures(), 'v1.14.1', 'charts'),
  '--timeout',
  '120',
  '--yes',
  ...extra,
]

interface Running {
  pid: number
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
  /** Resolves once `n` steps have finished (✔ lines on stderr). */
  steps: (n: number) => Promise<void>
  kill: (s: NodeJS.Signals) => void
}

function start(bed: Bed, args: string[], tmp: string): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: bed.childEnv({ NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}`, TMPDIR: tmp }),
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  const waiters: { n: number; resolve: () => void }[] = []
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString()
    const done = (stderr.match(/^✔ /gm) ?? []).length
    for (const w of waiters.filter((x) => done >= x.n)) w.resolve()
  })
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((r) =>
    child.on('close', (code, signal) => r({ code, signal, stderr })),
  )
  return {
    pid: child.pid as number,
    done,
    steps: (n) =>
      Promise.race([
        new Promise<void>((resolve) => waiters.push({ n, resolve })),
        done.then((r) => {
          throw new Error(`exited (${r.code}) before ${n} steps: ${r.stderr}`)
        }),
      ]),
    kill: (s) => child.kill(s),
  }
}

describe('the cluster lock on the bed', { timeout: 1_200_000 }, () => {
  test("two installs at once: the second refuses in one line naming the first (exit 2), --wait-for-lock waits and finds nothing left; a SIGKILLed teardown's lock is taken over at once by the re-run, which converges; no karpctl file in $TMPDIR", async (t) => {
    const { bed } = await bareClusterBed(t)
    const tmp = join(bed.tmpDir, 'lock-tmp')
    mkdirSync(tmp, { recursive: true })

    const first = start(bed, installArgs(bed, []), tmp)
    await first.steps(1)
    const lease = await bed.kube.request<{ metadata: { annotations: Record<string, string> } }>('GET', LEASE)
    assert.equal(lease.body.metadata.annotations['karpctl.io/lock-pid'], String(first.pid))
    const second = start(bed, installArgs(bed, []), tmp)
    const waiter = start(bed, installArgs(bed, ['--wait-for-lock']), tmp)
    const refused = await second.done
    assert.equal(refused.code, 2, refused.stderr)
    const lines = refused.stderr.trim().split('\n')
    assert.match(
      lines.at(-1) ?? '',
      new RegExp(
        `^(Error: )?cluster is being changed by \`karpctl install [^\`]*\` \\(pid ${first.pid} on [^)]+\\) since \\S+; the lock \\(Lease kube-system/karpctl-lock\\) is renewed while that run lasts and expires 60 s after it stops: wait for it to finish, or pass --wait-for-lock$`,
      ),
    )
    assert.doesNotMatch(refused.stderr, /^\s+at /m, 'no stack trace')
    assert.doesNotMatch(refused.stderr, /^✔ (created|updated|deleted) /m, 'the refused run changed nothing')

    const a = await first.done
    assert.equal(a.code, 0, a.stderr)
    const w = await waiter.done
    assert.equal(w.code, 0, w.stderr)
    assert.match(w.stderr, /^waiting: cluster is being changed by `karpctl install/m)
    assert.doesNotMatch(
      w.stderr,
      /^✔ (created|updated|deleted) /m,
      'the waiter found everything done by the first',
    )
    const gone = await bed.kube.request('GET', LEASE).then(
      (r) => r.status,
      (e: { status?: number }) => e.status ?? 0,
    )
    assert.equal(gone, 404, 'the lock is given back')

    // SIGKILL mid-teardown: the Lease stays, held by a pid that is gone; the re-run takes it over at once.
    const teardown = ['teardown', ...targetArgs(bed)]
    const killed = start(bed, [...teardown, '--confirm', CLUSTER_NAME, '--timeout', '120'], tmp)
    await killed.steps(2)
    killed.kill('SIGKILL')
    await killed.done
    const left = await bed.kube.request<{ metadata: { annotations: Record<string, string> } }>('GET', LEASE)
    assert.equal(left.body.metadata.annotations['karpctl.io/lock-pid'], String(killed.pid))
    const again = await start(bed, [...teardown, '--confirm', CLUSTER_NAME, '--timeout', '300'], tmp).done
    assert.equal(again.code, 0, again.stderr)
    assert.match(
      again.stderr,
      new RegExp(
        `took over the lock of \`karpctl teardown .*\` \\(pid ${killed.pid} on [^)]+\\) since \\S+: that process is gone from this machine \\(killed\\)`,
      ),
    )
    assert.deepEqual(
      readdirSync(tmp).filter((n) => n.startsWith('karpctl-')),
      [],
      'no temporary file is left',
    )
  })
})
