import { Flags } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../base-command.js'
import { TIMEOUT_BOUNDS } from '../desired/flags.js'
import { InputError } from '../errors.js'

export default class Teardown extends BaseCommand<typeof Teardown> {
  static override summary =
    "Remove what karpctl made for a cluster, in safe order, give back what it changed, and sweep Karpenter's orphans."
  static override description = `Prints the plan first: every resource to delete or restore, and what is kept and why (resources karpctl cannot prove it made — no ownership tags, no record — with the command their own tool removes them with). Then, after you type the cluster name (or --confirm): tenants and the default NodePool (waiting for Karpenter to terminate their nodes), the Helm releases (the CRDs unless --keep-crds), the interruption queue and rules, the Pod Identity association, the roles and the access karpctl added, the OIDC provider karpctl made (unless another role trusts it), the discovery tags, 8443 rule and aws-auth entries it recorded adding, a cluster-autoscaler's replicas; with --sweep, instances, launch templates and instance profiles Karpenter tagged for this cluster.

The spot service-linked role is account-wide and always kept. A teardown that stopped half-way is finished by running it again; on a cluster with nothing of karpctl's left it says so and exits 0.`

  static override examples = [
    {
      description: 'See what would go',
      command: '<%= config.bin %> <%= command.id %> --cluster demo --dry-run',
    },
    {
      description: 'Without a terminal, sweeping orphans too',
      command: '<%= config.bin %> <%= command.id %> --cluster demo --confirm demo --sweep',
    },
  ]

  static override enableJsonFlag = true
  static override flags = {
    confirm: Flags.string({
      summary: 'The cluster name again, to confirm without a terminal.',
      helpGroup: 'APPLY',
    }),
    'keep-crds': Flags.boolean({
      summary: "Keep Karpenter's CRDs (and so every NodePool/EC2NodeClass karpctl did not make).",
      helpGroup: 'APPLY',
    }),
    sweep: Flags.boolean({
      summary:
        'Also delete instances, launch templates and instance profiles Karpenter tagged for this cluster.',
      helpGroup: 'APPLY',
    }),
    timeout: Flags.integer({
      summary: 'Seconds to wait for nodes to drain (default 900).',
      ...TIMEOUT_BOUNDS,
      default: 900,
      helpGroup: 'APPLY',
    }),
    'dry-run': Flags.boolean({ summary: 'Print the plan and change nothing.', helpGroup: 'APPLY' }),
    'wait-for-lock': waitForLockFlag('APPLY'),
  }

  async run(): Promise<unknown> {
    const { flags } = this
    const options = await this.liveOptions()
    const cluster = options.clusterName
    if (flags.confirm !== undefined && flags.confirm !== cluster)
      throw new InputError(
        `--confirm ${flags.confirm} does not match cluster ${cluster}: nothing was removed`,
        'CONFIRMATION_MISMATCH',
      )
    const json = this.jsonEnabled()
    const interactive = !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter =
      interactive && flags.confirm === undefined
        ? await (await import('../context/prompter.js')).terminalPrompter()
        : null
    const { useColor } = await import('../report/style.js')
    const { createRunContext } = await import('../context/run-context.js')
    const { collect } = await import('../facts/collect.js')
    const { teardownResources } = await import('../teardown/teardown.js')
    const { buildPlan } = await import('../plan/plan.js')
    const { renderPlan, planJson } = await import('../plan/render.js')
    const { runPlan } = await import('../plan/session.js')
    const { applyEnv } = await import('../plan/env.js')
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))

    const ctx = await createRunContext({ ...options, retryMode: 'adaptive' })
    try {
      // The kube context is proven to be the cluster's before anything is read from it.
      const env = await applyEnv(ctx, { clusterName: cluster })
      const facts = await collect(ctx)
      const resources = await teardownResources(ctx, facts, {
        keepCrds: flags['keep-crds'],
        sweep: flags.sweep,
        timeoutMs: flags.timeout * 1000,
      })
      const plan = await buildPlan(
        `karpctl teardown — cluster ${cluster} (${options.region}, account ${facts.meta.accountId})`,
        resources,
        env,
      )
      if (!json) this.log(renderPlan(plan, { color: useColor(process.stdout) }))
      const out = await runPlan(
        plan,
        env,
        {
          prompter,
          yes: flags.confirm === cluster,
          dryRun: flags['dry-run'],
          waitForLock: flags['wait-for-lock'],
          color: useColor(process.stderr),
          say,
          progress,
        },
        {
          aws: ctx.aws,
          question: () => '',
          confirmFlag: `--confirm ${cluster}`,
          confirm: async () =>
            (await prompter!.input({
              message: `Type the cluster name (${cluster}) to tear karpctl's Karpenter down`,
            })) === cluster,
          beforeApply: async () => {
            if (
              plan.steps.some(
                (s) => s.verdict.action !== 'unchanged' && s.resource.address.startsWith('helm.'),
              )
            )
              await env.helm()
          },
        },
      )
      const report: Record<string, unknown> = { plan: planJson(plan) }
      if (out.kind === 'declined') say('The name did not match: nothing was removed.')
      if (out.kind === 'nothing') say(`Nothing of karpctl's is left on cluster ${cluster}.`)
      if (out.kind === 'applied') {
        report.apply = out.result
        say(`Teardown of cluster ${cluster} done (${out.result.applied.length} step(s)).`)
      }
      return json ? report : undefined
    } finally {
      ctx.aws.destroy()
    }
  }
}
