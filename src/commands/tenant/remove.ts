import { Args, Flags } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../../base-command.js'
import { TIMEOUT_BOUNDS } from '../../desired/flags.js'
import { InputError } from '../../errors.js'

export default class TenantRemove extends BaseCommand<typeof TenantRemove> {
  static override summary =
    "Remove one tenant's capacity: NodePool first (waiting for its nodes to drain), then its EC2NodeClass, access, PassRole grant and role."
  static override description = `Deletes only what carries this tenant's karpctl marks (labels, tags, the aws-auth record): another tenant's resources, and anything karpctl did not make, are kept and the plan says so. Karpenter drains and terminates the tenant's nodes when its NodePool goes; the command waits for them (bounded by --timeout). A remove that stopped half-way is finished by running it again.`

  static override examples = [
    {
      description: 'Remove tenant acme (asks to type its name)',
      command: '<%= config.bin %> <%= command.id %> acme',
    },
    { description: 'Without a terminal', command: '<%= config.bin %> <%= command.id %> acme --confirm acme' },
  ]

  static override args = { name: Args.string({ description: 'tenant name', required: true }) }
  static override enableJsonFlag = true
  static override flags = {
    confirm: Flags.string({
      summary: 'The tenant name again, to confirm without a terminal.',
      helpGroup: 'APPLY',
    }),
    timeout: Flags.integer({
      summary: "Seconds to wait for the tenant's nodes to drain (default 900).",
      ...TIMEOUT_BOUNDS,
      default: 900,
      helpGroup: 'APPLY',
    }),
    'dry-run': Flags.boolean({ summary: 'Print the plan and change nothing.', helpGroup: 'APPLY' }),
    'wait-for-lock': waitForLockFlag('APPLY'),
  }

  async run(): Promise<unknown> {
    const { args, flags } = await this.parse(TenantRemove)
    const { validateTenantName } = await import('../../desired/tenant.js')
    const tenant = validateTenantName(args.name)
    if (flags.confirm !== undefined && flags.confirm !== tenant)
      throw new InputError(
        `--confirm ${flags.confirm} does not match tenant ${tenant}: nothing was removed`,
        'CONFIRMATION_MISMATCH',
      )
    const json = this.jsonEnabled()
    const interactive = !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter =
      interactive && flags.confirm === undefined
        ? await (await import('../../context/prompter.js')).terminalPrompter()
        : null
    const { useColor } = await import('../../report/style.js')
    const { tenantContext } = await import('../../tenant/command.js')
    const { tenantRemoveResources } = await import('../../plan/tenant-removal.js')
    const { buildPlan } = await import('../../plan/plan.js')
    const { renderPlan, planJson } = await import('../../plan/render.js')
    const { runPlan } = await import('../../plan/session.js')
    const { applyEnv } = await import('../../plan/env.js')
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))

    const t = await tenantContext(await this.liveOptions(), true)
    try {
      // The same clients and sleep as every plan; no tenant step runs helm, so it is never looked up.
      const env = await applyEnv(t.ctx, { clusterName: t.install.clusterName })
      const plan = await buildPlan(
        `karpctl tenant remove ${tenant} — cluster ${t.install.clusterName}`,
        tenantRemoveResources(t.install, tenant, flags.timeout * 1000),
        env,
      )
      if (!json) this.log(renderPlan(plan, { color: useColor(process.stdout) }))
      const out = await runPlan(
        plan,
        env,
        {
          prompter,
          yes: flags.confirm === tenant,
          dryRun: flags['dry-run'],
          waitForLock: flags['wait-for-lock'],
          color: useColor(process.stderr),
          say,
          progress,
        },
        {
          aws: t.ctx.aws,
          question: () => '',
          confirmFlag: `--confirm ${tenant}`,
          confirm: async () =>
            (await prompter!.input({ message: `Type the tenant name (${tenant}) to remove it` })) === tenant,
        },
      )
      const report: Record<string, unknown> = { tenant, plan: planJson(plan) }
      if (out.kind === 'declined') say('The name did not match: nothing was removed.')
      if (out.kind === 'nothing') say(`Nothing left of tenant ${tenant}.`)
      if (out.kind === 'applied') {
        report.apply = out.result
        say(`Tenant ${tenant} removed (${out.result.applied.length} step(s)).`)
      }
      return json ? report : undefined
    } finally {
      t.ctx.aws.destroy()
    }
  }
}
