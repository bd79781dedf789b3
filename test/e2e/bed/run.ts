// Running commands (karpctl, helm, anything) against the bed.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CLUSTER_NAME, REGION } from './constants.js'
import { REPO_ROOT } from './paths.js'

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
  durationMs: number
}

export interface RunOptions {
  /** extra environment on top of bed.childEnv() */
  env?: Record<string, string>
  input?: string
  timeoutMs?: number
  cwd?: string
}

/** Something with a childEnv() (a Bed). */
export interface EnvTarget {
  childEnv(extra?: Record<string, string>): NodeJS.ProcessEnv
}

/** Runs `cmd args` with the bed's environment; never throws on a non-zero exit. */
export function runCommand(
  target: EnvTarget,
  cmd: string,
  args: string[],
  opts: RunOptions = {},
): Promise<RunResult> {
  const t0 = Date.now()
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, {
      env: target.childEnv(opts.env),
      cwd: opts.cwd ?? REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => err.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000)
    child.on('error', (e) => {
      clearTimeout(timer)
      rej(e)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      res({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        durationMs: Date.now() - t0,
      })
    })
    child.stdin.end(opts.input ?? '')
  })
}

/**
 * Runs the built CLI (`node bin/run.js …`, i.e. dist/ from `npm run build`)
 * with the bed's AWS_ENDPOINT_URL, fake credentials, AWS_REGION and KUBECONFIG.
 */
export function runKarpctl(target: EnvTarget, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  if (!existsSync(join(REPO_ROOT, 'dist', 'cli.js'))) {
    throw new Error('karpctl e2e: dist/cli.js missing — run `npm run build` (scripts/e2e.sh does)')
  }
  return runCommand(target, process.execPath, [join(REPO_ROOT, 'bin', 'run.js'), ...args], opts)
}

/** The flags that point a karpctl command at the bed's cluster: --cluster, --region, --kube-context. */
export function targetArgs(bed: { kubeContext: string }): string[] {
  return ['--cluster', CLUSTER_NAME, '--region', REGION, '--kube-context', bed.kubeContext]
}
