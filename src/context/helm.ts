// The user's `helm` (>= 3.8: OCI charts without the experimental flag), run as a child process. Install
// writes charts through it, as a user would; doctor never needs it (it reads release Secrets).
import { execFile } from 'node:child_process'
import { clip, EnvironmentError, KarpctlError, quote } from '../errors.js'
import { redactText } from '../facts/redact.js'
import { interrupt } from './interrupt.js'
import type { CallLog } from './limiter.js'

export interface HelmUpgrade {
  release: string
  chart: string
  version?: string
  namespace: string
  valuesFiles: string[]
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
  /** `helm rollback` to a revision: an adopted release given back as it was before karpctl. */
  rollback(release: string, namespace: string, revision: number): Promise<void>
}

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

function run(bin: string, args: string[], timeoutMs: number): Promise<RunResult> {
  // After Ctrl-C no new helm starts: the step that wanted it ends as stopped, the re-run does it.
  if (interrupt.stopping)
    return Promise.resolve({ code: 1, stdout: '', stderr: 'Error: not started: karpctl was interrupted' })
  return new Promise((resolve) => {
    const child = execFile(bin, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
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
  return redactText((err ?? lines.at(-1) ?? 'no output').replace(/^Error:\s*/, '')).slice(0, 500)
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
        ...u.valuesFiles.flatMap((f) => ['--values', f]),
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
      const r = await run(bin, args, (u.timeoutSeconds ?? 600) * 1000)
      if (r.code !== 0)
        throw new HelmError(`helm upgrade --install ${u.release} failed: ${helmMessage(r.stderr)}`)
    },
    async rollback(release, namespace, revision) {
      opts.log?.record(`helm:rollback:${namespace}/${release}`, true)
      const r = await run(
        bin,
        ['rollback', release, String(revision), '--namespace', namespace, '--wait', ...context],
        600_000,
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
      )
      // Gone already (a teardown that stopped after this step): the end state is the same.
      if (r.code !== 0 && !/not found/i.test(r.stderr))
        throw new HelmError(`helm uninstall ${release} failed: ${helmMessage(r.stderr)}`)
    },
  }
}

/**
 * Local helm processes working on `release` (pids), from `ps`; null when `ps` cannot tell. A release
 * left pending by a killed helm is recovered only when no helm is still at it: a live one would see
 * its operation undone under it.
 */
export async function helmProcessesFor(release: string, psBin = 'ps'): Promise<number[] | null> {
  const r = await new Promise<{ ok: boolean; out: string }>((resolve) => {
    execFile(psBin, ['-eo', 'pid=,args='], { timeout: 10_000, maxBuffer: 16 << 20 }, (err, stdout) =>
      resolve({ ok: !err, out: stdout }),
    )
  })
  if (!r.ok) return null
  return helmProcessesIn(r.out, release)
}

/** The pids of `ps -eo pid=,args=` lines that run a helm binary with `release` as an argument. */
export function helmProcessesIn(psOutput: string, release: string): number[] {
  const pids: number[] = []
  for (const line of psOutput.split('\n')) {
    const [pid, bin, ...args] = line.trim().split(/\s+/)
    if (!pid || !bin || !/(^|\/)helm[^/]*$/.test(bin) || !args.includes(release)) continue
    if (Number(pid) !== process.pid) pids.push(Number(pid))
  }
  return pids
}
