// Flags every cluster-facing command shares, and the one place errors become a one-line message
// and an exit code (the stack only with --debug).
import { Command, Flags, type Interfaces } from '@oclif/core'
import { ExitCode, InputError, KarpctlError } from './errors.js'

const REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/

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
    debug: Flags.boolean({ summary: 'Print stack traces and every API call.', helpGroup: 'GLOBAL' }),
  }

  protected flags!: Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>

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
  }

  protected validateRegion(region: string): string {
    if (!REGION.test(region)) {
      throw new InputError(
        `"${region}" is not an AWS region (e.g. us-west-2): fix --region or AWS_REGION`,
        'INVALID_REGION',
      )
    }
    return region
  }

  /** Cluster, region, profile and kube context of a live run, from the flags and the environment. */
  protected async liveOptions() {
    const { resolveTarget } = await import('./context/target.js')
    const target = resolveTarget({ ...this.flags, region: this.flags.region ?? undefined })
    return {
      clusterName: target.clusterName,
      region: this.validateRegion(target.region),
      profile: this.flags.profile ?? process.env.AWS_PROFILE,
      kubeContext: this.flags['kube-context'],
      karpctlVersion: this.config.version,
    }
  }

  protected override async catch(
    err: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    // oclif's own exits (help, --version, parse errors) keep oclif's handling.
    if (!(err instanceof KarpctlError)) {
      if (err.oclif || (this.argv.includes('--debug') && !(err instanceof KarpctlError)))
        return super.catch(err)
      const message = err.message.split('\n')[0]
      this.logToStderr(`Error: karpctl could not run: ${message} (run again with --debug for details)`)
      process.exitCode = ExitCode.cannotRun
      return
    }
    if (this.jsonEnabled()) {
      this.logJson({ error: { code: err.code, message: err.message } })
    } else {
      this.logToStderr(`Error: ${err.message}`)
      if (this.argv.includes('--debug')) this.logToStderr(err.stack ?? '')
    }
    process.exitCode = err.exitCode
  }
}
