// Flags every cluster-facing command shares, and the one place errors become a one-line message
// and an exit code (the stack only with --debug): on stderr, or with --json as
// `{"error": {"code", "message"}}` on stdout — whatever the error, karpctl's own, oclif's or a bug.
import { statSync } from 'node:fs'
import { Command, Flags, ux, type Interfaces } from '@oclif/core'
import { answerOf, ExitCode, InputError, KarpctlError, outOfFiles, quote } from './errors.js'
import { debugStack, jsonText, terminalLine, writeError } from './report/terminal.js'
import { TIMEOUT_BOUNDS } from './desired/flags.js'

const REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/

/** The overall bound of a run whose command has no `--timeout` of its own (doctor, tenant list). */
export const DEFAULT_RUN_TIMEOUT_S = 300

/** Every changing command's --wait-for-lock (the cluster's lock: src/plan/lock.ts). */
export const waitForLockFlag = (helpGroup: string) =>
  Flags.boolean({
    summary:
      "When another karpctl run holds the cluster's lock, wait for it to finish instead of stopping (exit 2).",
    helpGroup,
  })

/** What oclif's parser throws (unknown flag, bad option, missing value): a usage error. */
interface ParseError extends Error {
  parse?: unknown
  oclif?: { exit?: number }
}

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    cluster: Flags.string({
      char: 'c',
      summary: 'EKS cluster name (default: from an EKS kube context, or KARPCTL_CLUSTER).',
      env: 'KARPCTL_CLUSTER',
      helpGroup: 'CLUSTER',
    }),
    region: Flags.string({
      summary: 'AWS region (default: AWS_REGION, the profile, or an EKS kube context).',
      helpGroup: 'CLUSTER',
    }),
    profile: Flags.string({
      summary: 'AWS profile from ~/.aws/config (default: AWS_PROFILE).',
      helpGroup: 'CLUSTER',
    }),
    'kube-context': Flags.string({
      summary: 'Kubeconfig context (default: the current context).',
      helpGroup: 'CLUSTER',
    }),
    timeout: Flags.integer({
      summary: `Give up after this many seconds, with exit 2 (default ${DEFAULT_RUN_TIMEOUT_S}; doctor --fix: none).`,
      ...TIMEOUT_BOUNDS,
      helpGroup: 'GLOBAL',
    }),
    debug: Flags.boolean({ summary: 'Print stack traces and every API call.', helpGroup: 'GLOBAL' }),
  }

  // A command's own flag of a base flag's name (install's --timeout) replaces it, as oclif merges them.
  protected flags!: Interfaces.InferredFlags<
    Omit<(typeof BaseCommand)['baseFlags'], keyof T['flags']> & T['flags']
  >

  private watchdog: NodeJS.Timeout | undefined
  /** Set once the command line parsed: an error before that is a usage error. */
  private parsedArgs = false
  /** The overall bound of this run in seconds, when the base `--timeout` applies to it. */
  private runTimeoutS: number | undefined

  public override async init(): Promise<void> {
    await super.init()
    const { flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as typeof this.flags
    this.parsedArgs = true
    refuseSpecialFiles(flags as Record<string, unknown>)
    await this.startWatchdog()
    // Ctrl-C, SIGTERM, SIGHUP: one line and exit 130/143/129, temporary files removed (interrupt.ts).
    const { installSignalHandlers } = await import('./context/interrupt.js')
    installSignalHandlers((err) => {
      this.printError(err)
      process.exit(err.exitCode)
    })
  }

  /**
   * The overall bound: every request has its own timeout, but a credential provider, a file that never
   * ends (a FIFO) or a bug must not hang the run either. Commands with a `--timeout` of their own (the
   * wait of install, tenant and teardown) keep its meaning; an interactive `doctor --fix` has no
   * default bound (it waits for the user).
   */
  private async startWatchdog(): Promise<void> {
    const own = (this.ctor.flags as Record<string, unknown> | undefined)?.timeout
    const given = (this.flags as { timeout?: number }).timeout
    if (own !== undefined && own !== BaseCommand.baseFlags.timeout) {
      // Its --timeout (default 300) bounds the reads before the plan too (read-bound.ts).
      if (given === undefined) return
      const { armReadBound } = await import('./context/read-bound.js')
      armReadBound(given * 1000, () => void this.giveUp(given, 'reading the cluster'))
      return
    }
    const fixing = (this.flags as { fix?: boolean }).fix === true
    // doctor --all-clusters: --timeout bounds each cluster (src/fleet), not the whole fleet.
    if ((this.flags as { 'all-clusters'?: boolean })['all-clusters'] === true) return
    // doctor --serve runs until stopped: --timeout bounds each of its runs (src/doctor/serve.ts).
    if ((this.flags as { serve?: boolean }).serve === true) return
    const seconds = given ?? (fixing ? undefined : DEFAULT_RUN_TIMEOUT_S)
    if (seconds === undefined) return
    this.runTimeoutS = seconds
    this.watchdog = setTimeout(() => this.giveUp(seconds), seconds * 1000)
    this.watchdog.unref()
  }

  private async giveUp(seconds: number, doing?: string): Promise<void> {
    const { inFlight } = await import('./context/aws.js')
    const waiting = [...new Set(inFlight.values())]
    const what = waiting.length
      ? `still waiting for ${waiting.slice(0, 3).join('; ')}${waiting.length > 3 ? ` and ${waiting.length - 3} more` : ''}`
      : 'it was not waiting on the network (a file that never ends, or a credential prompt?)'
    const err = new KarpctlError(
      `karpctl did not finish ${doing ? `${doing} ` : ''}within ${seconds} s (--timeout): ${what}; check the network, the kube context and the AWS credentials, or pass a larger --timeout`,
      'TIMEOUT',
    )
    this.printError(err)
    process.exit(ExitCode.cannotRun)
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    if (this.watchdog) clearTimeout(this.watchdog)
    // An error ended the run and said so: reads still queued behind it (each bounded by its own
    // timeout) have nothing left to tell, and must not keep the process alive for that long.
    if (err && (err as { code?: unknown }).code !== 'EEXIT') {
      setTimeout(() => process.exit(), 250).unref()
    }
    return super.finally(err)
  }

  protected validateRegion(region: string): string {
    if (!REGION.test(region)) {
      throw new InputError(
        `${quote(region)} is not an AWS region (e.g. us-west-2): fix --region or AWS_REGION`,
        'INVALID_REGION',
      )
    }
    return region
  }

  /** Cluster, region, profile and kube context of a live run, from the flags and the environment. */
  protected async liveOptions() {
    const { resolveTarget } = await import('./context/target.js')
    const flags = this.flags as unknown as Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags']>
    const target = resolveTarget({ ...flags, region: flags.region ?? undefined })
    // Within an overall bound, one request may take a fraction of it (the SDK tries three times).
    const bound = this.runTimeoutS === undefined ? undefined : this.runTimeoutS * 1000
    return {
      clusterName: target.clusterName,
      region: this.validateRegion(target.region),
      profile: flags.profile ?? process.env.AWS_PROFILE,
      kubeContext: flags['kube-context'],
      karpctlVersion: this.config.version,
      ...(bound === undefined
        ? {}
        : {
            requestTimeoutMs: Math.min(10_000, Math.max(500, Math.floor(bound / 4))),
            kubeTimeoutMs: Math.min(15_000, Math.max(500, Math.floor(bound / 3))),
          }),
    }
  }

  /**
   * stdout: every line a command prints, with control characters from the cluster, AWS or a file made
   * visible (karpctl's own colours kept; see src/report/terminal.ts). One place, not each call site.
   */
  public override log(message = '', ...args: unknown[]): void {
    super.log(terminalLine(message), ...args)
  }

  public override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(terminalLine(message), ...args)
  }

  /** stderr: progress lines of a run (plan steps, waits, smoke test), neutralised as `log` is. */
  protected progress(message: string): void {
    process.stderr.write(`${terminalLine(message)}\n`)
  }

  /** --json: valid JSON with no control character left raw (JSON.stringify leaves DEL and C1 as they are). */
  public override logJson(json: unknown): void {
    process.stdout.write(`${jsonText(json, 2)}\n`)
  }

  private get debugging(): boolean {
    return this.argv.includes('--debug')
  }

  /** The run's error was printed: the watchdog and the command's own failure may race to say theirs. */
  private errorPrinted = false

  /** One line on stderr, or the JSON error object on stdout; the stack too with --debug. Once per run. */
  private printError(err: KarpctlError, stack?: string, cause: Error = err): void {
    if (this.errorPrinted) return
    this.errorPrinted = true
    writeError(err, this.jsonEnabled())
    // The message in a stack may come from a server: one line, no escape sequence reaches the terminal.
    if (stack && this.debugging) process.stderr.write(`${debugStack(cause, stack)}\n`)
  }

  protected override async catch(
    err: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    try {
      if (ux.action.running) ux.action.stop('!')
    } catch {
      // the spinner is cosmetic
    }
    // `this.exit()` and oclif's own exits end the run as they asked.
    if ((err as { code?: unknown }).code === 'EEXIT') return super.catch(err)
    process.exitCode = ExitCode.cannotRun
    if (err instanceof KarpctlError) {
      this.printError(err, err.stack)
      process.exitCode = err.exitCode
      return
    }
    // Out of file descriptors anywhere (a file, a socket, a child's pipe): the limit, named.
    const files = outOfFiles(err, 'karpctl')
    if (files) {
      this.printError(files, err.stack, err)
      return
    }
    // A server's answer nothing handled (an AWS 5xx, a proxy's page): its line says whose it was.
    const answer = answerOf(err)
    if (answer) {
      this.printError(new KarpctlError(answer.line, answer.code), err.stack, err)
      return
    }
    const parse = err as ParseError
    if (parse.parse !== undefined || (!this.parsedArgs && parse.oclif !== undefined)) {
      this.printError(new KarpctlError(usageLine(err.message, this.id), 'USAGE'), err.stack, err)
      return
    }
    // A bug or an error nothing classified: one line that says so; --debug has the stack.
    const first = (err.message || String(err)).split('\n').find((l) => l.trim() !== '') ?? err.name
    this.printError(
      new KarpctlError(
        `karpctl could not run: ${first.trim()}${this.debugging ? '' : ' (run again with --debug for details)'}`,
        'INTERNAL',
      ),
      err.stack ?? String(err),
      err,
    )
    return
  }
}

/**
 * A flag that names a FIFO, a socket or a device would block the run (a FIFO with no writer never
 * opens) or read something that is not a file: every karpctl flag that takes a path wants a regular
 * file or a directory, so such a path is refused before anything reads it.
 */
function refuseSpecialFiles(flags: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(flags)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string' || v === '') continue
      let info
      try {
        info = statSync(v)
      } catch {
        continue
      }
      if (info.isFile() || info.isDirectory()) continue
      const kind = info.isFIFO()
        ? 'a FIFO'
        : info.isSocket()
          ? 'a socket'
          : info.isCharacterDevice() || info.isBlockDevice()
            ? 'a device'
            : 'not a regular file'
      throw new InputError(`--${name} ${quote(v)} is ${kind}: pass a regular file`, 'NOT_A_FILE')
    }
  }
}

/**
 * oclif's parse errors in one line: `Nonexistent flag: --nope`, the reasons of a failed validation,
 * and where to read more (never the whole help).
 */
function usageLine(message: string, id: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const plain = message.replace(/\u001b\[[0-9;]*m/g, '')
  let lines = plain
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^See more help with --help$/.test(l))
  if (lines.length > 1 && /^The following errors? occurred:$/.test(lines[0] as string)) lines = lines.slice(1)
  // `Missing 1 required arg:` / `name  tenant name (…)` / `Note: … flags allow multiple values …`:
  // the argument and what it is, not oclif's advice on flag order.
  const missing = /^(Missing \d+ required args?):$/.exec(lines[0] ?? '')
  if (missing) {
    const args = lines
      .slice(1)
      .filter((l) => !/^(Note|Alternatively)\b/.test(l))
      .map((l) => l.replace(/^(\S+)\s{2,}(.+)$/, '<$1> ($2)'))
    lines = [`${missing[1]}: ${args.join(', ')}`]
  }
  const command = id ? `karpctl ${id.replace(/:/g, ' ')}` : 'karpctl'
  return `${lines.join('; ')} (see \`${command} --help\`)`
}
