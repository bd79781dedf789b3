// Killing a karpctl run at a chosen point (issue 36.3): the point is observable state — a resource
// appearing or going, a helm child running, a step's ✔ line — never a sleep. And what a kill may leave
// behind is looked for: helm processes at the bed's cluster, karpctl's temporary and `.tmp` files.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'

export interface Watched {
  pid: number
  /** stderr so far */
  stderr: () => string
  exited: () => boolean
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
  /** SIGKILL to karpctl alone: its helm, if one runs, is left running (as after an OOM kill of node). */
  kill: () => void
}

export function spawnWatched(bin: string, args: string[], env: NodeJS.ProcessEnv): Watched {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  let exited = false
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((r) =>
    child.on('close', (code, signal) => {
      exited = true
      r({ code, signal, stderr })
    }),
  )
  return {
    pid: child.pid as number,
    stderr: () => stderr,
    exited: () => exited,
    closed,
    kill: () => child.kill('SIGKILL'),
  }
}

/**
 * Polls `cond` until it holds; throws if the run ended first (the point was never reached) or after
 * `boundMs` (generous: the machine is shared). Returns what `cond` returned.
 */
export async function killPoint<T>(
  run: Watched,
  what: string,
  cond: () => Promise<T | undefined | false> | T | undefined | false,
  boundMs = 300_000,
): Promise<T> {
  const end = Date.now() + boundMs
  for (;;) {
    const v = await cond()
    if (v) return v
    if (run.exited()) throw new Error(`the run ended before ${what}:\n${run.stderr()}`)
    if (Date.now() > end) throw new Error(`${what} not seen in ${boundMs} ms:\n${run.stderr()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

interface Proc {
  pid: number
  ppid: number
  argv: string[]
}

function processes(): Proc[] {
  const out: Proc[] = []
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').filter(Boolean)
      // stat: "pid (comm) state ppid …"; comm may hold spaces, so split after its closing paren.
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      out.push({ pid: Number(e), ppid, argv })
    } catch {
      // gone since the listing
    }
  }
  return out
}

const isHelm = (p: Proc) => /^helm/.test(basename(p.argv[0] ?? ''))

/** A helm child of `parent` doing `verb` (upgrade, uninstall…) to `release`, if one runs now. */
export function helmChild(parent: number, verb: string, release: string): number | undefined {
  return processes().find(
    (p) => p.ppid === parent && isHelm(p) && p.argv.includes(verb) && p.argv.includes(release),
  )?.pid
}

/**
 * Every helm process at this bed's cluster, whoever started it: its environment names the bed's API
 * server (karpctl's marker) or kubeconfig. Every bed's kube context has the same name, so other
 * beds' helms (another test on the machine) are told apart by these.
 */
export function helmsAt(bed: { kubeServer: string; kubeconfigPath: string }): string[] {
  return processes()
    .filter((p) => {
      if (!isHelm(p)) return false
      try {
        const env = readFileSync(`/proc/${p.pid}/environ`, 'utf8')
        return env.includes(bed.kubeServer) || env.includes(bed.kubeconfigPath)
      } catch {
        return false
      }
    })
    .map((p) => `${p.pid}: ${p.argv.join(' ')}`)
}

/** karpctl's files a run may leave: `karpctl-*` in TMPDIR, any `*.tmp` under the given folders. */
export function leftovers(tmpDir: string, ...dirs: string[]): string[] {
  const found = readdirSync(tmpDir)
    .filter((n) => n.startsWith('karpctl-'))
    .map((n) => join(tmpDir, n))
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.tmp')) found.push(p)
    }
  }
  for (const d of [tmpDir, ...dirs]) walk(d)
  return found
}
