// Child-process supervision for the bed: every server runs in its own process
// group under a tiny bash "leash" that kills it when our stdin pipe closes, so
// nothing survives the test process, even if that one is SIGKILLed.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

// stdin (fd 0) is a pipe from the Node process. The server gets /dev/null; a
// watchdog blocks on the pipe and TERMs the server when it reaches EOF, i.e.
// when the Node process closes it or dies. TERM/INT/HUP sent to the leash are
// forwarded once to the server, and the leash waits for it to finish its
// graceful shutdown (Kubernetes servers exit hard on a *second* TERM, so the
// group is not signalled as a whole until the leash is gone).
const LEASH = `
exec 3<&0
"$@" </dev/null 3<&- &
c=$!
{ cat <&3 >/dev/null 2>&1; kill -TERM "$c" 2>/dev/null; } &
exec 3<&-
trap 'kill -TERM "$c" 2>/dev/null' TERM INT HUP
wait "$c"; rc=$?
while kill -0 "$c" 2>/dev/null; do wait "$c"; rc=$?; done
exit "$rc"
`

export interface Proc {
  readonly name: string
  readonly pid: number
  readonly logPath: string
  /** exit code (or null when killed by a signal) once the process has exited */
  readonly exitCode: () => number | null | undefined
  /** resolves when the process exits */
  readonly exited: Promise<number | null>
  /** last lines of the log, for error messages */
  logTail(lines?: number): string
  /** SIGTERM to the leash (forwarded once to the server), then SIGKILL to the whole group; after `graceMs` at the latest */
  stop(graceMs?: number): Promise<void>
}

const live = new Set<Proc>()
const tempDirs = new Set<string>()
let handlersInstalled = false

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig)
  } catch {
    // already gone
  }
}

/** Is any non-zombie process left in process group `pgid`? */
export function groupAlive(pgid: number): boolean {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // no procfs: fall back to kill(0), which also counts zombies
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8')
    } catch {
      continue
    }
    // pid (comm) state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

function installHandlers(): void {
  if (handlersInstalled) return
  handlersInstalled = true
  // Last resort, synchronous: whatever is still running dies with us.
  process.on('exit', () => {
    for (const p of live) killGroup(p.pid, 'SIGKILL')
    if (!process.env.KARPCTL_E2E_KEEP) for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
  })
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      void stopAll().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143))
    })
  }
}

/** Registers a temp dir to delete at process exit (unless KARPCTL_E2E_KEEP=1). */
export function registerTempDir(dir: string): void {
  installHandlers()
  tempDirs.add(dir)
}
export function forgetTempDir(dir: string): void {
  tempDirs.delete(dir)
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()))
}

export function startProc(
  name: string,
  cmd: string,
  args: string[],
  opts: { logPath: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Proc {
  installHandlers()
  const logFd = openSync(opts.logPath, 'a')
  let child: ChildProcess
  try {
    child = spawn('bash', ['-c', LEASH, `leash:${name}`, cmd, ...args], {
      detached: true, // own process group: kill(-pid) reaches bash, the server and the watchdog
      stdio: ['pipe', logFd, logFd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    })
  } finally {
    closeSync(logFd)
  }
  if (child.pid === undefined) throw new Error(`failed to spawn ${name} (${cmd})`)
  const pid = child.pid
  // Do not keep the event loop alive for the children (a forgotten stop()
  // must not hang the test run); the 'exit' hook above kills them instead.
  child.unref()
  const stdin = child.stdin as unknown as { unref?: () => void } | null
  stdin?.unref?.()
  child.stdin?.on('error', () => {})

  let code: number | null | undefined
  const exited = new Promise<number | null>((res) => {
    child.once('exit', (c) => {
      code = c // null when killed by a signal
      live.delete(proc)
      child.stdin?.destroy()
      res(code ?? null)
    })
  })

  const proc: Proc = {
    name,
    pid,
    logPath: opts.logPath,
    exitCode: () => code,
    exited,
    logTail(lines = 40) {
      try {
        return readFileSync(opts.logPath, 'utf8').split('\n').slice(-lines).join('\n')
      } catch {
        return ''
      }
    },
    async stop(graceMs = 15_000) {
      if (code === undefined) {
        // to the leash only: it forwards one TERM and waits for a graceful exit
        try {
          process.kill(pid, 'SIGTERM')
        } catch {
          // already gone
        }
        const deadline = Date.now() + graceMs
        // poll with ref'd timers: the child itself is unref'd
        while (code === undefined && Date.now() < deadline) await sleep(20)
      }
      // the watchdog (or a hung server after graceMs) may linger: sweep the group
      killGroup(pid, 'SIGKILL')
      for (let i = 0; i < 100 && (groupAlive(pid) || code === undefined); i++) await sleep(20)
      live.delete(proc)
    },
  }
  live.add(proc)
  return proc
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', rej)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => res(port))
    })
  })
}

/**
 * Polls `check` until it returns true. Fails early when `proc` exits, with
 * the tail of its log.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; proc?: Proc; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs
  let lastErr: unknown
  for (;;) {
    if (opts.proc && opts.proc.exitCode() !== undefined) {
      throw new Error(
        `${what}: ${opts.proc.name} exited with ${opts.proc.exitCode()}; log ${opts.proc.logPath}:\n${opts.proc.logTail()}`,
      )
    }
    try {
      if (await check()) return
    } catch (e) {
      lastErr = e
    }
    if (Date.now() > deadline) {
      const tail = opts.proc ? `\nlog ${opts.proc.logPath}:\n${opts.proc.logTail()}` : ''
      throw new Error(
        `timed out after ${opts.timeoutMs}ms waiting for ${what} (last error: ${String(lastErr)})${tail}`,
      )
    }
    await sleep(opts.intervalMs ?? 100)
  }
}
