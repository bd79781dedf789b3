// The user's `helm` (>= 3.8: OCI charts without the experimental flag), run as a child process. Install
// writes charts through it, as a user would; doctor never needs it (it reads release Secrets).
import { execFile } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { clip, EnvironmentError, KarpctlError, quote } from '../errors.js'
import { redactClip, redactText } from '../redact/redact.js'
import { interrupt } from './interrupt.js'
import type { CallLog } from './limiter.js'

export interface HelmUpgrade {
  release: string
  chart: string
  version?: string
  namespace: string
  /**
   * The values as YAML, given to helm on its standard input (`--values -`): no values file ever exists,
   * so a kill at any point leaves the release's values (secrets included) nowhere on disk.
   */
  values: string
  labels: Record<string, string>
  timeoutSeconds?: number
}

export class HelmError extends KarpctlError {
  constructor(message: string) {
    super(message, 'HELM_FAILED')
  }
}

export interface Helm {
  bin: string
  version: string
  upgradeInstall(u: HelmUpgrade): Promise<void>
  uninstall(release: string, namespace: string): Promise<void>
  /**
   * `helm rollback` to a revision: an adopted release given back as it was before karpctl (`wait`: until
   * its rollout is done), or a release a killed helm left pending, undone before the upgrade that
   * follows (no wait: the upgrade rolls out anyway, and its own wait is the run's).
   */
  rollback(r: { release: string; namespace: string; revision: number; wait: boolean }): Promise<void>
}

/**
 * Set on every helm karpctl starts: the cluster (its API server) and the release it works on. A later
 * run finds a helm it left behind by this, in the process's environment (readable only for the same
 * user's processes), never by a release name another cluster's helm may share.
 */
export const HELM_MARKER = 'KARPCTL_HELM_RELEASE'

/** What a release's helm carries as HELM_MARKER. */
export const helmMarker = (t: { cluster: string; namespace: string; release: string }) =>
  `${t.cluster} ${t.namespace}/${t.release}`

export interface RunResult {
  code: number
  stdout: string
  stderr: string
  notFound?: boolean
  /** It could not be started for another reason (EACCES: not executable; ENOEXEC: not a program). */
  spawnError?: string
  /** The signal that ended it (SIGTERM when it outlived its timeout). */
  signal?: string
  timedOut?: boolean
}

function run(
  bin: string,
  args: string[],
  timeoutMs: number,
  env?: Record<string, string>,
  stdin?: string,
): Promise<RunResult> {
  // After Ctrl-C no new helm starts: the step that wanted it ends as stopped, the re-run does it.
  if (interrupt.stopping)
    return Promise.resolve({ code: 1, stdout: '', stderr: 'Error: not started: karpctl was interrupted' })
  return new Promise((resolve) => {
    const options = {
      timeout: timeoutMs,
      maxBuffer: 64 << 20,
      ...(env ? { env: { ...process.env, ...env } } : {}),
    }
    const child = execFile(bin, args, options, (err, stdout, stderr) => {
      const e = err as
        (NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string | null }) | null
      resolve({
        code: e ? (typeof e.code === 'number' ? e.code : 1) : 0,
        stdout,
        // A helm that failed once the stop began was ended by it (killed, or exiting on the signal it got):
        // say so, not "no output".
        stderr: e && interrupt.stopping ? `${stderr}\nError: stopped: karpctl was interrupted` : stderr,
        notFound: e?.code === 'ENOENT',
        ...(typeof e?.code === 'string' && e.code !== 'ENOENT' ? { spawnError: e.code } : {}),
        ...(e?.signal ? { signal: e.signal, timedOut: e.killed === true } : {}),
      })
    })
    // Helm reads `--values -` to the end of its input: it is written whole, then closed. A helm that
    // exits before reading it all (a bad flag) closes the pipe: that error is its exit, not ours.
    child.stdin?.on('error', () => {})
    child.stdin?.end(stdin ?? '')
    // SIGTERM to karpctl alone does not reach helm (Ctrl-C reaches the whole process group): the stop
    // passes it on, so helm never writes to the cluster after karpctl has gone.
    interrupt.trackChild(child)
  })
}

/**
 * Helm's own words for a failure: its last `Error:` line, which names the object and the reason.
 * Redacted as snapshots are: a template or schema error may quote a value of the user's --values.
 */
export function helmMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const err = [...lines].reverse().find((l) => l.startsWith('Error:'))
  return redactClip((err ?? lines.at(-1) ?? 'no output').replace(/^Error:\s*/, ''), 500)
}

/**
 * `KARPCTL_HELM` (or `helm` on the PATH) that did not answer `version` as helm does: the file and what it
 * did — could not be started, was stopped, exited non-zero, or printed something that is no version.
 */
export function notHelm(bin: string, v: RunResult): EnvironmentError {
  const fix = 'set KARPCTL_HELM to a Helm 3.8+ binary, or unset it to use `helm` on the PATH'
  const said = (text: string) => {
    const t = redactText(text).trim()
    return t ? `"${clip(t, 120)}"` : 'nothing'
  }
  let what: string
  if (v.spawnError) what = `cannot be run (${v.spawnError}): it is not an executable program`
  else if (v.timedOut) what = 'did not finish `version` within 30 s'
  else if (v.signal) what = `was killed by ${v.signal} running \`version\``
  else if (v.code !== 0)
    what = `exited with code ${v.code} from \`version\` and printed ${v.stderr.trim() ? said(helmMessage(v.stderr)) : said(v.stdout)}`
  else what = `is not helm: \`version\` printed ${said(v.stdout)}, not a Helm version`
  return new EnvironmentError(`${quote(bin)} ${what}: ${fix}`, 'HELM_MISSING')
}

export function parseHelmVersion(text: string): [number, number, number] | null {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(text)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null
}

export async function findHelm(opts: {
  bin?: string
  kubeContext?: string
  /** The run's call log: each upgrade and uninstall is one write call in it. */
  log?: CallLog
  /** The cluster's API server: with the release, the marker each helm karpctl starts carries. */
  cluster?: string
}): Promise<Helm> {
  const bin = opts.bin ?? process.env.KARPCTL_HELM ?? 'helm'
  const v = await run(bin, ['version', '--template', '{{.Version}}'], 30_000)
  if (v.notFound)
    throw new EnvironmentError(
      `helm not found (${bin}): install Helm 3.8 or newer (https://helm.sh/docs/intro/install/) or set KARPCTL_HELM`,
      'HELM_MISSING',
    )
  const parsed = parseHelmVersion(v.stdout)
  if (v.code !== 0 || !parsed) throw notHelm(bin, v)
  const [major, minor] = parsed
  if (major !== 3 || minor < 8)
    throw new EnvironmentError(
      `helm ${v.stdout.trim()} is not supported: karpctl needs Helm 3.8 or newer (3.x) for OCI charts`,
      'HELM_VERSION',
    )
  const context = opts.kubeContext ? ['--kube-context', opts.kubeContext] : []
  const marked = (namespace: string, release: string) => ({
    [HELM_MARKER]: helmMarker({ cluster: opts.cluster ?? opts.kubeContext ?? '', namespace, release }),
  })
  return {
    bin,
    version: v.stdout.trim(),
    async upgradeInstall(u) {
      opts.log?.record(`helm:upgrade:${u.namespace}/${u.release}`, true)
      const args = [
        'upgrade',
        '--install',
        u.release,
        u.chart,
        ...(u.version ? ['--version', u.version] : []),
        '--namespace',
        u.namespace,
        '--create-namespace',
        '--values',
        '-',
        ...(Object.keys(u.labels).length
          ? [
              '--labels',
              Object.entries(u.labels)
                .map(([k, v]) => `${k}=${v}`)
                .join(','),
            ]
          : []),
        ...context,
      ]
      const r = await run(
        bin,
        args,
        (u.timeoutSeconds ?? 600) * 1000,
        marked(u.namespace, u.release),
        u.values,
      )
      if (r.code !== 0)
        throw new HelmError(`helm upgrade --install ${u.release} failed: ${helmMessage(r.stderr)}`)
    },
    async rollback({ release, namespace, revision, wait }) {
      opts.log?.record(`helm:rollback:${namespace}/${release}`, true)
      const r = await run(
        bin,
        [
          'rollback',
          release,
          String(revision),
          '--namespace',
          namespace,
          ...(wait ? ['--wait'] : []),
          ...context,
        ],
        600_000,
        marked(namespace, release),
      )
      if (r.code !== 0)
        throw new HelmError(`helm rollback ${release} ${revision} failed: ${helmMessage(r.stderr)}`)
    },
    async uninstall(release, namespace) {
      opts.log?.record(`helm:uninstall:${namespace}/${release}`, true)
      const r = await run(
        bin,
        ['uninstall', release, '--namespace', namespace, '--wait', ...context],
        600_000,
        marked(namespace, release),
      )
      // Gone already (a teardown that stopped after this step): the end state is the same.
      if (r.code !== 0 && !/not found/i.test(r.stderr))
        throw new HelmError(`helm uninstall ${release} failed: ${helmMessage(r.stderr)}`)
    },
  }
}

/** The helm a recovery must not undo an operation under: the release, in its namespace, on its cluster. */
export interface HelmTarget {
  /** The cluster's API server (as findHelm's `cluster`). */
  cluster: string
  namespace: string
  release: string
  /** The run's kube context: a helm that names another one works on another cluster. */
  kubeContext?: string
}

/**
 * Local helm processes at `t`'s release (pids), from /proc (or, without one, the user's own `ps`);
 * null when neither can tell. A release left pending by a killed helm is recovered only when no helm is
 * still at it: a live one would see its operation undone under it. Another user's processes are never
 * counted: their environment cannot be read, and no helm of theirs is this run's to wait on.
 */
export async function helmProcessesFor(
  t: HelmTarget,
  proc = '/proc',
  psBin = 'ps',
): Promise<number[] | null> {
  let entries: string[]
  try {
    entries = await readdir(proc)
  } catch {
    return psHelmProcesses(t, psBin)
  }
  const pids: number[] = []
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue
    // Gone since the listing, or not ours to read: not a helm at this release.
    const cmdline = await readFile(join(proc, e, 'cmdline')).catch(() => null)
    const environ = cmdline && (await readFile(join(proc, e, 'environ')).catch(() => null))
    if (!cmdline || !environ) continue
    if (helmAt(nulSeparated(cmdline), parseEnviron(environ), t)) pids.push(Number(e))
  }
  return pids
}

/**
 * A helm a killed karpctl left running at its own release finishes on its own in seconds (karpctl's
 * helm runs have no --wait): the re-run waits for it this long rather than stop on it, so a re-run
 * after a kill converges instead of asking to be run a third time.
 */
export const HELM_LEFT_WAIT_MS = 120_000

/**
 * Asks `probe` (helmProcessesFor) again until no helm is at the release, it cannot tell (null), or
 * `boundMs` has passed; the last answer. Injected clock and sleep so the bound is tested without waiting.
 */
export async function helmLeftAfter(
  probe: () => Promise<number[] | null>,
  boundMs = HELM_LEFT_WAIT_MS,
  clock: { now: () => number; sleep: (ms: number) => Promise<void> } = {
    now: Date.now,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  },
): Promise<number[] | null> {
  const end = clock.now() + boundMs
  for (;;) {
    const pids = await probe()
    if (!pids?.length || clock.now() >= end) return pids
    await clock.sleep(250)
  }
}

/** /proc/<pid>/cmdline as argv (each argument ends in a NUL). */
function nulSeparated(b: Buffer): string[] {
  const parts = b.toString('utf8').split('\0')
  if (parts.at(-1) === '') parts.pop()
  return parts
}

/** /proc/<pid>/environ as a map. */
export function parseEnviron(b: Buffer): Record<string, string> {
  const out: Record<string, string> = {}
  for (const kv of b.toString('utf8').split('\0')) {
    const eq = kv.indexOf('=')
    if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1)
  }
  return out
}

/** The value of `--flag V`, `--flag=V` (or a short `-n V`) in argv. */
function flagValue(argv: string[], names: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if (names.includes(a)) return argv[i + 1]
    const long = names.find((n) => n.startsWith('--') && a.startsWith(`${n}=`))
    if (long) return a.slice(long.length + 1)
  }
  return undefined
}

// Helm's flags that take a value as the next argument (the rest, --install, --wait…, take none).
const VALUE_FLAGS = new Set([
  '-n',
  '--namespace',
  '--kube-context',
  '--kubeconfig',
  '--version',
  '-f',
  '--values',
  '--set',
  '--set-string',
  '--set-file',
  '--set-json',
  '--labels',
  '-l',
  '--timeout',
  '--repo',
  '--description',
  '--post-renderer',
  '--registry-config',
  '--repository-config',
  '--repository-cache',
])

/** The release a helm command works on: the first argument after the subcommand that is no flag's value. */
function releaseArg(args: string[]): string | undefined {
  const positional: string[] = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    if (VALUE_FLAGS.has(a)) i++
    else if (!a.startsWith('-')) positional.push(a)
  }
  // helm <subcommand> <release> …
  return positional[1]
}

/**
 * Whether a process (its argv and environment) is a helm at `t`'s release. One karpctl started says so
 * in HELM_MARKER, exactly; any other helm must name the release, run in its namespace and not name
 * another kube context (the user's own helm in another terminal, at this cluster's release).
 */
export function helmAt(argv: string[], env: Record<string, string>, t: HelmTarget): boolean {
  const [bin, ...args] = argv
  if (!bin || !/(^|\/)helm[^/]*$/.test(bin)) return false
  const marker = env[HELM_MARKER]
  if (marker !== undefined) return marker === helmMarker(t)
  if (releaseArg(args) !== t.release) return false
  const namespace = flagValue(args, ['--namespace', '-n']) ?? env.HELM_NAMESPACE ?? 'default'
  if (namespace !== t.namespace) return false
  const context = flagValue(args, ['--kube-context']) ?? env.HELM_KUBECONTEXT
  return context === undefined || t.kubeContext === undefined || context === t.kubeContext
}

/** Without /proc (macOS): the user's own processes from `ps`, judged by their arguments alone. */
async function psHelmProcesses(t: HelmTarget, psBin: string): Promise<number[] | null> {
  const uid = process.getuid?.()
  if (uid === undefined) return null
  const r = await new Promise<{ ok: boolean; out: string }>((resolve) => {
    execFile(
      psBin,
      ['-U', String(uid), '-o', 'pid=,args='],
      { timeout: 10_000, maxBuffer: 16 << 20 },
      (err, stdout) => resolve({ ok: !err, out: stdout }),
    )
  })
  if (!r.ok) return null
  const pids: number[] = []
  for (const line of r.out.split('\n')) {
    const [pid, ...argv] = line.trim().split(/\s+/)
    if (pid && Number(pid) !== process.pid && helmAt(argv, {}, t)) pids.push(Number(pid))
  }
  return pids
}
