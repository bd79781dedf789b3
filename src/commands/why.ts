import { Args, Flags } from '@oclif/core'
import { BaseCommand } from '../base-command.js'
import { ExitCode, InputError, oneLine, quote } from '../errors.js'
import type { WhySelector } from '../why/types.js'

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

export default class Why extends BaseCommand<typeof Why> {
  static override summary =
    'Explain why a pod is still Pending: what every NodePool says about it, and the fix.'
  static override description = `For each pod, every NodePool in the order Karpenter tries them (weight): ✖ with the first rule that rules it out — EC2NodeClass not Ready (doctor's verdict), a taint the pod does not tolerate, requirements with no value in common or a custom label the NodePool does not define ("does not have known values"), no subnet in the zone the pod (or its volume) needs, spec.limits reached, no instance type EC2 offers there that the requirements allow or that has room for the pod and the DaemonSets after Karpenter's reserved resources, vmMemoryOverheadPercent and maxPods — and the change that makes it fit; ✔ with the instance types that have room. Pods Karpenter ignores (not Pending, bound, DaemonSet, another scheduler, an unbound Immediate volume, already nominated) are said to be ignored. Karpenter's own events about the pod are shown.

Not judged yet: GPUs and other extended resources of instance types (such a pod gets "?"), ephemeral storage, required topology spread, host ports and the controller's log. Without EC2's instance types (a read failed) a NodePool no other rule rules out is "?", never ✔.

Exit codes:
  0  every pod asked about has a NodePool that can take it, or is one Karpenter ignores (or none is Pending)
  1  at least one pod has no NodePool that can take it
  2  could not tell (a NodePool not ruled out but not shown to fit; a read failed), or karpctl could not run`

  static override examples = [
    { description: 'One pod', command: '<%= config.bin %> <%= command.id %> web-7d9f-abcde -n shop' },
    {
      description: 'The pending pods of a Deployment',
      command: '<%= config.bin %> <%= command.id %> deployment/web -n shop',
    },
    {
      description: 'Every pending pod, as data',
      command: '<%= config.bin %> <%= command.id %> --all-pending -A --json',
    },
    {
      description: 'Judge a saved snapshot, no network',
      command: '<%= config.bin %> <%= command.id %> --snapshot why.json',
    },
  ]

  static override enableJsonFlag = true

  static override args = {
    target: Args.string({
      description: 'POD, pod/NAME, deployment/NAME, statefulset/NAME or job/NAME',
      required: false,
    }),
  }

  static override flags = {
    namespace: Flags.string({
      char: 'n',
      summary: 'Namespace of the pod or workload (default: default).',
      helpGroup: 'PODS',
    }),
    'all-pending': Flags.boolean({
      summary: 'Every Pending pod (in -n, or with -A in every namespace).',
      helpGroup: 'PODS',
    }),
    'all-namespaces': Flags.boolean({
      char: 'A',
      summary: 'With --all-pending: every namespace.',
      helpGroup: 'PODS',
    }),
    snapshot: Flags.string({
      summary: 'Judge a saved why snapshot instead of a live cluster (no network).',
      helpGroup: 'INPUT',
    }),
    'save-snapshot': Flags.string({
      summary: 'Write the collected facts (secrets redacted) to this file.',
      helpGroup: 'INPUT',
    }),
  }

  async run(): Promise<unknown> {
    const { flags } = this
    const { args } = await this.parse(Why)
    if (flags.snapshot && (args.target || flags['all-pending']))
      throw new InputError(
        '--snapshot judges the pods it was saved for: drop the pod argument and --all-pending',
        'INVALID_INPUT',
      )
    const selector = flags.snapshot ? undefined : this.selector(args.target)
    const { why, exitCodeOf } = await import('../why/why.js')
    const outcome = await why({
      snapshot: flags.snapshot,
      saveSnapshot: flags['save-snapshot'],
      selector,
      live: flags.snapshot ? undefined : await this.liveOptions(),
    })
    if (flags.debug && outcome.calls) for (const c of outcome.calls) this.logToStderr(`call ${c}`)
    process.exitCode = exitCodeOf(outcome.report)
    const ending = outcome.saveError
    if (ending) process.exitCode = ExitCode.cannotRun
    if (this.jsonEnabled())
      return ending
        ? { ...outcome.report, error: { code: ending.code, message: oneLine(ending.message) } }
        : outcome.report
    const { renderWhy } = await import('../why/render.js')
    const { useColor } = await import('../report/style.js')
    this.log(renderWhy(outcome.report, useColor(process.stdout)))
    if (ending) throw ending
    return undefined
  }

  /** Which pods: validated before any read, one line naming what is wrong. */
  private selector(target: string | undefined): WhySelector {
    const { flags } = this
    const ns = flags.namespace ?? 'default'
    if (!NAMESPACE.test(ns)) throw new InputError(`-n ${quote(ns)} is not a namespace name`, 'INVALID_INPUT')
    if (flags['all-pending']) {
      if (target) throw new InputError('pass a pod or workload, or --all-pending, not both', 'INVALID_INPUT')
      return { kind: 'all-pending', ...(flags['all-namespaces'] ? {} : { namespace: ns }) }
    }
    if (flags['all-namespaces']) throw new InputError('-A goes with --all-pending', 'INVALID_INPUT')
    if (!target)
      throw new InputError(
        'which pod? pass POD, deployment/NAME, statefulset/NAME, job/NAME or --all-pending (see `karpctl why --help`)',
        'INVALID_INPUT',
      )
    const m = /^(?:(pod|pods|po|deployment|deploy|statefulset|sts|job)\/)?(.+)$/.exec(target)
    const kind =
      ({ pods: 'pod', po: 'pod', deploy: 'deployment', sts: 'statefulset' } as Record<string, string>)[
        m?.[1] ?? ''
      ] ??
      m?.[1] ??
      'pod'
    const name = m?.[2] ?? ''
    if (!NAME.test(name))
      throw new InputError(
        `${quote(target)} is not a pod or workload name (POD, deployment/NAME, statefulset/NAME, job/NAME)`,
        'INVALID_INPUT',
      )
    return { kind: kind as 'pod' | 'deployment' | 'statefulset' | 'job', namespace: ns, name }
  }
}
