// The bound on credential resolution. The SDK's chain has none of its own: a credential_process that
// never exits (one waiting for an MFA code on a terminal it does not have, a hung helper), an SSO or
// web identity endpoint that accepts and never answers, would hold every request of the run, and an
// install would wait before its first question for ever. Every command resolves credentials through
// Aws (src/context/aws.ts), which wraps its provider with this.
import { readdirSync, readFileSync } from 'node:fs'
import { EnvironmentError, InputError, quote } from '../errors.js'

/** Long enough for a helper that asks for an MFA code, or a slow SSO refresh; lengthened by the variable. */
export const DEFAULT_CREDENTIALS_TIMEOUT_S = 60
export const CREDENTIALS_TIMEOUT_ENV = 'KARPCTL_CREDENTIALS_TIMEOUT'
const MAX_CREDENTIALS_TIMEOUT_S = 3600

/** The bound in milliseconds, from KARPCTL_CREDENTIALS_TIMEOUT (seconds, decimals allowed) or the default. */
export function credentialsTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const given = env[CREDENTIALS_TIMEOUT_ENV]
  if (given === undefined || given === '') return DEFAULT_CREDENTIALS_TIMEOUT_S * 1000
  const seconds = /^\d+(\.\d+)?$/.test(given.trim()) ? Number(given) : NaN
  if (!(seconds >= 0.1 && seconds <= MAX_CREDENTIALS_TIMEOUT_S))
    throw new InputError(
      `${CREDENTIALS_TIMEOUT_ENV} ${quote(given)} is not a number of seconds from 0.1 to ${MAX_CREDENTIALS_TIMEOUT_S}: set it to how long AWS credentials may take to resolve (e.g. 120), or unset it`,
      'INVALID_CREDENTIALS_TIMEOUT',
    )
  return Math.round(seconds * 1000)
}

/** The one line a bound that fired ends the run with: a command is run by hand, an endpoint checked. */
export function credentialsTimeoutError(
  profile: string | undefined,
  source: { what: string; command?: string },
  ms: number,
): EnvironmentError {
  const whose = profile ? `of profile ${quote(profile)}` : 'of the default chain'
  const seconds = Number((ms / 1000).toFixed(1))
  const look = source.command ? 'run it by hand to see why' : 'check the network and any proxy (HTTPS_PROXY)'
  return new EnvironmentError(
    `AWS credentials ${whose} were not resolved within ${seconds} s: ${source.what} never finished; ${look}, fix the profile (--profile, AWS_PROFILE), or allow longer with ${CREDENTIALS_TIMEOUT_ENV}=<seconds>`,
    'CREDENTIALS_TIMEOUT',
  )
}

type Provider = (...args: never[]) => Promise<unknown>

/**
 * `provider`, bounded: a resolution that takes longer than `ms` rejects with `fail()` (after `onTimeout`,
 * which stops what was left running), and so does every call after it — the run is ending. Concurrent
 * calls share one resolution and one timer, so a hundred reads queued behind it do not each wait `ms`.
 */
export function boundCredentials<P extends Provider>(
  provider: P,
  ms: number,
  fail: () => Error,
  onTimeout: () => void = () => {},
): P {
  let pending: Promise<unknown> | undefined
  let failed: Error | undefined
  const bounded = (...args: Parameters<P>): Promise<unknown> => {
    if (failed) return Promise.reject(failed)
    if (pending) return pending
    const attempt = new Promise<unknown>((resolve, reject) => {
      // Not unref'd: while the provider is pending, this timer is what ends the wait.
      const timer = setTimeout(() => {
        failed = fail()
        onTimeout()
        reject(failed)
      }, ms)
      provider(...args).then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (err: unknown) => {
          clearTimeout(timer)
          reject(err)
        },
      )
    })
    pending = attempt
    const clear = () => {
      if (pending === attempt) pending = undefined
    }
    attempt.then(clear, clear)
    return attempt
  }
  return bounded as unknown as P
}

/** Every process below `root` in `table` (pid → parent pid). */
export function descendants(root: number, table: Map<number, number>): number[] {
  const children = new Map<number, number[]>()
  for (const [pid, ppid] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid])
  const out: number[] = []
  const queue = [...(children.get(root) ?? [])]
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (out.includes(pid)) continue
    out.push(pid)
    queue.push(...(children.get(pid) ?? []))
  }
  return out
}

/**
 * Whether `argv` is the SDK's run of `command`: `exec(command)` spawns `/bin/sh -c command`, which a
 * shell may replace by the command itself (dash and bash exec a single simple command).
 */
export function runsCommand(argv: string[], command: string): boolean {
  if (argv.length === 3 && /(^|\/)sh$/.test(argv[0] ?? '') && argv[1] === '-c') return argv[2] === command
  return argv.length > 0 && argv.join(' ') === command.trim().split(/\s+/).join(' ')
}

/**
 * Stops the credential_process the SDK started for this run and everything it started (SIGTERM): the
 * SDK gives no handle to its child, and left alone it outlives karpctl for ever. Only this process's
 * own children that run `command` are touched, found in /proc (Linux; elsewhere nothing is found).
 */
export function stopCredentialProcess(command: string): number[] {
  const table = new Map<number, number>()
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n))
  } catch {
    return []
  }
  for (const pid of pids) {
    try {
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so it is read after the last `)`.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (Number.isInteger(ppid)) table.set(Number(pid), ppid)
    } catch {
      // gone meanwhile
    }
  }
  const stopped: number[] = []
  for (const [pid, ppid] of table) {
    if (ppid !== process.pid) continue
    let argv: string[]
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
    } catch {
      continue
    }
    if (!runsCommand(argv, command)) continue
    for (const each of [pid, ...descendants(pid, table)]) {
      try {
        process.kill(each, 'SIGTERM')
        stopped.push(each)
      } catch {
        // gone meanwhile
      }
    }
  }
  return stopped
}
