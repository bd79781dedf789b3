import { Args, Flags } from '@oclif/core'
import { BaseCommand } from '../base-command.js'
import { ExitCode, InputError, type KarpctlError, oneLine, quote } from '../errors.js'
import type { NodeSelector } from '../why/node/types.js'
import type { WhySelector } from '../why/types.js'
import type { WithManifests } from '../why/with-file.js'

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

export default class Why extends BaseCommand<typeof Why> {
  static override summary =
    'Explain why a pod is still Pending, or what Karpenter will do with a node (and why a node never joined).'
  static override description = `For each pod, every NodePool in the order Karpenter tries them (weight): ✖ with the first rule that rules it out — EC2NodeClass not Ready (doctor's verdict), a taint the pod does not tolerate, requirements with no value in common or a custom label the NodePool does not define ("does not have known values"), no subnet in the zone the pod (or its volume) needs, spec.limits reached, no instance type EC2 offers there that the requirements allow or that has room for the pod and the DaemonSets after Karpenter's reserved resources, vmMemoryOverheadPercent and maxPods — and the change that makes it fit; ✔ with the instance types that have room. Pods Karpenter ignores (not Pending, bound, DaemonSet, another scheduler, an unbound Immediate volume, already nominated) are said to be ignored. Karpenter's own events about the pod are shown.

Not judged yet: GPUs and other extended resources of instance types (such a pod gets "?"), ephemeral storage, required topology spread, host ports and the controller's log. Without EC2's instance types (a read failed) a NodePool no other rule rules out is "?", never ✔.

Nodes (node/NAME, nodeclaim/NAME, --nodes): the disruption methods in the order Karpenter's disruption controller runs them — interruption, expiration (expireAfter and when it falls), emptiness, drift (which hash, requirement or AMI moved) and consolidation (consolidationPolicy, consolidateAfter and when the node became consolidatable, whether its pods fit on the other nodes) — then what blocks it: not initialized, a pending pod nominated to it, karpenter.sh/do-not-disrupt on the node or a pod, a PodDisruptionBudget that allows no eviction, a NodePool disruption budget at 0 now (its schedule and when the window closes); each with the kubectl command that lets it go or keeps it. A node being removed, or gone, gets why in one line. A NodeClaim that launched and never registered gets doctor's node-role, nodeclass-ready and discovery-tags verdicts and the kubelet/nodeadm errors of its boot log (ec2:GetConsoleOutput), with the 15-minute registration timeout; one that failed to launch gets its error mapped to doctor's checks. --with FILE judges pods or nodes as if the NodePools and EC2NodeClasses in FILE were applied.

Exit codes:
  0  every pod asked about has a NodePool that can take it, or is one Karpenter ignores (or none is Pending);
     for nodes: nothing blocks a node asked about and every one joined
  1  at least one pod has no NodePool that can take it; a node is blocked, never joined or failed to launch
  2  could not tell (a NodePool not ruled out but not shown to fit; a node not found and no event about it; a read failed), or karpctl could not run`

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
    {
      description: 'What Karpenter will do with one node, and what blocks it',
      command: '<%= config.bin %> <%= command.id %> node/ip-10-0-12-34.us-west-2.compute.internal',
    },
    {
      description: 'Why a NodeClaim launched but never joined',
      command: '<%= config.bin %> <%= command.id %> nodeclaim/default-x7k2p',
    },
    {
      description: 'Every node of one NodePool: what disrupts next, what is blocked',
      command: '<%= config.bin %> <%= command.id %> --nodes -l karpenter.sh/nodepool=default',
    },
    {
      description: 'Before applying a NodePool change: which nodes would drift or consolidate',
      command: '<%= config.bin %> <%= command.id %> --nodes --with nodepool.yaml',
    },
  ]

  static override enableJsonFlag = true

  static override args = {
    target: Args.string({
      description: 'POD, pod/NAME, deployment/NAME, statefulset/NAME, job/NAME, node/NAME or nodeclaim/NAME',
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
    nodes: Flags.boolean({
      summary: 'Every Karpenter node: what disrupts next, what is blocked, what never joined.',
      helpGroup: 'NODES',
    }),
    selector: Flags.string({
      char: 'l',
      summary: 'With --nodes: only nodes with these labels (k=v, k!=v, k, !k; comma-separated).',
      helpGroup: 'NODES',
    }),
    with: Flags.string({
      summary: 'Judge as if the NodePool / EC2NodeClass manifests in this YAML file were applied.',
      helpGroup: 'INPUT',
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
    const node = this.nodeSelector(args.target)
    if (flags.snapshot && (args.target || flags['all-pending'] || flags.nodes))
      throw new InputError(
        '--snapshot judges what it was saved for: drop the pod or node argument, --all-pending and --nodes',
        'INVALID_INPUT',
      )
    if (flags.selector && !flags.nodes) throw new InputError('-l goes with --nodes', 'INVALID_INPUT')
    let snapshotData: unknown
    if (flags.snapshot) {
      const { readWhyJson } = await import('../why/snapshot.js')
      snapshotData = await readWhyJson(flags.snapshot)
    }
    // The --with file is read before any network work: a bad one is a usage error, not a wasted collection.
    const { loadWith } = await import('../why/with-file.js')
    const manifests = flags.with ? await loadWith(flags.with) : undefined
    const { isNodeFacts } = await import('../why/node/snapshot.js')
    if (node || (flags.snapshot && isNodeFacts(snapshotData)))
      return this.runNodes(node, snapshotData, manifests)
    const selector = flags.snapshot ? undefined : this.selector(args.target)
    const { why, exitCodeOf } = await import('../why/why.js')
    const outcome = await why({
      snapshot: flags.snapshot,
      ...(snapshotData !== undefined ? { snapshotData } : {}),
      ...(manifests ? { with: manifests } : {}),
      saveSnapshot: flags['save-snapshot'],
      selector,
      live: flags.snapshot ? undefined : await this.liveOptions(),
    })
    const { renderWhy } = await import('../why/render.js')
    return this.finish(outcome, exitCodeOf(outcome.report), (color) => renderWhy(outcome.report, color))
  }

  /** Exit code, --debug calls, JSON or text; a failed --save-snapshot ends the run after the report. */
  private async finish<R extends object>(
    outcome: { report: R; calls?: string[]; saveError?: KarpctlError },
    exitCode: number,
    render: (color: boolean) => string,
  ): Promise<unknown> {
    if (this.flags.debug && outcome.calls) for (const c of outcome.calls) this.logToStderr(`call ${c}`)
    process.exitCode = exitCode
    const ending = outcome.saveError
    if (ending) process.exitCode = ExitCode.cannotRun
    if (this.jsonEnabled())
      return ending
        ? { ...outcome.report, error: { code: ending.code, message: oneLine(ending.message) } }
        : outcome.report
    const { useColor } = await import('../report/style.js')
    this.log(render(useColor(process.stdout)))
    if (ending) throw ending
    return undefined
  }

  /** node/NAME, nodeclaim/NAME or --nodes: which nodes, validated before any read; undefined for pods. */
  private nodeSelector(target: string | undefined): NodeSelector | undefined {
    const { flags } = this
    const m = /^(node|nodes|no|nodeclaim|nodeclaims)\/(.*)$/.exec(target ?? '')
    if (flags.nodes) {
      if (target || flags['all-pending'])
        throw new InputError('pass node/NAME, a pod, or --nodes: not both', 'INVALID_INPUT')
      return { kind: 'nodes', ...(flags.selector ? { labelSelector: flags.selector } : {}) }
    }
    if (!m) return undefined
    if (flags['all-pending'] || flags.namespace || flags['all-namespaces'])
      throw new InputError('-n, -A and --all-pending are for pods: a node has no namespace', 'INVALID_INPUT')
    const name = m[2] ?? ''
    if (!NAME.test(name))
      throw new InputError(
        `${quote(target ?? '')} is not a node or NodeClaim name (node/NAME, nodeclaim/NAME)`,
        'INVALID_INPUT',
      )
    return { kind: m[1]?.startsWith('nodeclaim') ? 'nodeclaim' : 'node', name }
  }

  private async runNodes(
    selector: NodeSelector | undefined,
    snapshotData: unknown,
    manifests: WithManifests | undefined,
  ): Promise<unknown> {
    const { flags } = this
    const { whyNodes, nodeExitCode } = await import('../why/node/why-node.js')
    const outcome = await whyNodes({
      ...(flags.snapshot ? { snapshot: { path: flags.snapshot, data: snapshotData } } : {}),
      ...(flags['save-snapshot'] ? { saveSnapshot: flags['save-snapshot'] } : {}),
      ...(manifests ? { with: manifests } : {}),
      ...(selector ? { selector } : {}),
      ...(flags.snapshot ? {} : { live: await this.liveOptions() }),
    })
    const { renderNodes } = await import('../why/node/render.js')
    const many = outcome.facts.meta.selector.kind === 'nodes'
    return this.finish(outcome, nodeExitCode(outcome.report), (color) =>
      renderNodes(outcome.report, color, many),
    )
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
        'which pod or node? pass POD, deployment/NAME, statefulset/NAME, job/NAME, --all-pending, node/NAME, nodeclaim/NAME or --nodes (see `karpctl why --help`)',
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
