// A karpctl command run in this process, as a user runs it, against the nock mock (which a subprocess
// would be beyond the reach of): stdout and stderr captured, the exit code read back.
import type { Command } from '@oclif/core'
import { Config } from '@oclif/core'
import { repoRoot } from './fixtures.js'

export interface InProcess {
  stdout: string
  stderr: string
  code: number | string | undefined
  error?: Error
}

let config: Config | undefined

export async function runInProcess(
  command: { run: (argv: string[], config: Config) => Promise<unknown> } & typeof Command,
  argv: string[],
  /** How long a failed run's delayed exit is held (0: the caller stubs process.exit itself). */
  holdExitMs = 400,
): Promise<InProcess> {
  config ??= await Config.load(repoRoot)
  const out: string[] = []
  const err: string[] = []
  const write = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  }
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write
  const exitCode = process.exitCode
  let error: Error | undefined
  try {
    await command.run(argv, config)
  } catch (e) {
    error = e as Error
  } finally {
    process.stdout.write = write.out
    process.stderr.write = write.err
  }
  const code = process.exitCode
  process.exitCode = exitCode
  // A run that ended in an error exits the process 250 ms later (base-command: queued reads must not
  // keep it alive); in this process that would end the test file, so that one exit is held here.
  if (code !== undefined && code !== 0 && holdExitMs > 0) {
    const exit = process.exit
    process.exit = (() => undefined) as typeof process.exit
    await new Promise((resolve) => setTimeout(resolve, holdExitMs))
    process.exit = exit
  }
  return { stdout: out.join(''), stderr: err.join(''), code, ...(error ? { error } : {}) }
}
