import { Args, Flags } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../../base-command.js'
import * as v from '../../desired/flags.js'
import { ExitCode, InputError } from '../../errors.js'

const CAPACITY = ['on-demand', 'spot', 'reserved']

export default class TenantAdd extends BaseCommand<typeof TenantAdd> {
  static override summary =
    'Give one customer of the cluster its own capacity: node role, EC2NodeClass, tainted NodePool.'
  static override description = `Creates (or updates to match the flags) the tenant's node IAM role KarpenterNodeRole-<cluster>-<tenant> with the node policies and the tenant's own policies, its cluster access (as the install does it: access entry or aws-auth), an iam:PassRole grant for it on the controller role, an EC2NodeClass <tenant> tagged for cost allocation, and a NodePool <tenant> that taints its nodes karpctl.io/tenant=<tenant>:NoSchedule and labels them. Then prints what the tenant's workloads need and runs doctor's tenant checks.

Each run states the tenant's whole desired state: running it again with the same flags changes nothing; with other flags it shows and applies the update, and what is no longer asked for is removed and shown in the plan as "→ (removed)" — a --policy-arn detached from the tenant's role, a --tag untagged, a --weight or --memory-limit taken off the NodePool. Only what an earlier tenant add set is removed: policies and tags someone else put on the role stay.`

  static override examples = [
    {
      description: 'A tenant with its own S3 policy, spot only, 64 cores',
      command:
        '<%= config.bin %> <%= command.id %> acme --policy-arn arn:aws:iam::123456789012:policy/acme-s3 --capacity-types spot --cpu-limit 64 --yes',
    },
    {
      description: 'Cost allocation tags and a tenant-specific subnet tag',
      command:
        '<%= config.bin %> <%= command.id %> globex --tag cost-center=4711 --subnet-tag network/tier=private-globex --dry-run',
    },
  ]

  static override args = {
    name: Args.string({ description: 'tenant name (DNS label, at most 40 characters)', required: true }),
  }
  static override enableJsonFlag = true

  static override flags = {
    'policy-arn': Flags.string({
      summary: 'An IAM policy of the tenant for its nodes (repeatable).',
      multiple: true,
      helpGroup: 'TENANT',
    }),
    tag: Flags.string({
      summary: "A cost-allocation tag k=v on the tenant's instances and role (repeatable).",
      multiple: true,
      helpGroup: 'TENANT',
    }),
    'subnet-tag': Flags.string({
      summary: 'Launch only in subnets that also carry this tag k=v.',
      helpGroup: 'TENANT',
    }),
    'capacity-types': Flags.string({
      summary: 'Capacity types (default on-demand,spot).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODEPOOL',
    }),
    'instance-categories': Flags.string({
      summary: 'Instance categories, e.g. c,m,r (default c,m,r).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODEPOOL',
    }),
    'instance-families': Flags.string({
      summary: 'Instance families, e.g. m7g,c7g.',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODEPOOL',
    }),
    architectures: Flags.string({
      summary: 'Architectures (default amd64).',
      multiple: true,
      delimiter: ',',
      options: ['amd64', 'arm64'],
      helpGroup: 'NODEPOOL',
    }),
    zones: Flags.string({
      summary: 'Availability zones.',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODEPOOL',
    }),
    'cpu-limit': Flags.integer({ summary: 'CPU limit in cores (default 100).', helpGroup: 'NODEPOOL' }),
    'memory-limit': Flags.string({ summary: 'Memory limit, e.g. 400Gi.', helpGroup: 'NODEPOOL' }),
    'consolidation-policy': Flags.string({
      summary: 'Disruption: WhenEmptyOrUnderutilized (default) or WhenEmpty.',
      options: ['WhenEmptyOrUnderutilized', 'WhenEmpty'],
      helpGroup: 'NODEPOOL',
    }),
    'consolidate-after': Flags.string({
      summary: 'Disruption: wait this long before consolidating (default 1m).',
      helpGroup: 'NODEPOOL',
    }),
    weight: Flags.integer({ summary: 'NodePool weight (1-100).', helpGroup: 'NODEPOOL' }),
    yes: Flags.boolean({ char: 'y', summary: 'Apply without asking.', helpGroup: 'APPLY' }),
    'dry-run': Flags.boolean({ summary: 'Print the plan and change nothing.', helpGroup: 'APPLY' }),
    'wait-for-lock': waitForLockFlag('APPLY'),
    timeout: Flags.integer({
      summary: "Seconds to wait for the tenant's EC2NodeClass to become Ready (default 120).",
      ...v.TIMEOUT_BOUNDS,
      default: 120,
      helpGroup: 'APPLY',
    }),
  }

  async run(): Promise<unknown> {
    const { args, flags } = await this.parse(TenantAdd)
    const { validateTenantName, workloadSnippet } = await import('../../desired/tenant.js')
    const tenant = validateTenantName(args.name)
    for (const arn of flags['policy-arn'] ?? []) v.validatePolicyArn(arn)
    for (const c of flags['capacity-types'] ?? [])
      if (!CAPACITY.includes(c))
        throw new InputError(
          `--capacity-types must be one of ${CAPACITY.join(', ')} (got "${c}")`,
          'INVALID_INPUT',
        )
    if (flags.weight !== undefined && (flags.weight < 1 || flags.weight > 100))
      throw new InputError('--weight must be between 1 and 100', 'INVALID_INPUT')
    if (flags['cpu-limit'] !== undefined) v.validateCpuLimit(flags['cpu-limit'])
    if (flags['memory-limit'] !== undefined) v.validateQuantity(flags['memory-limit'], '--memory-limit')
    if (flags['consolidate-after'] !== undefined)
      v.validateDuration(flags['consolidate-after'], '--consolidate-after')
    if (flags['instance-families']) v.validateInstanceFamilies(flags['instance-families'])
    if (flags['instance-categories']) v.validateInstanceCategories(flags['instance-categories'])
    const tags = (flags.tag ?? []).map((t) => v.parseTag(t))
    const subnetTag = flags['subnet-tag']
      ? v.parseSelectorTag(flags['subnet-tag'], '--subnet-tag')
      : undefined
    // The zones' shape now; whether the region has them, once AWS can be asked (below).
    const options = await this.liveOptions()
    if (flags.zones) v.validateZones(flags.zones, options.region)

    const json = this.jsonEnabled()
    const interactive = !flags.yes && !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter = interactive ? await (await import('../../context/prompter.js')).terminalPrompter() : null
    const ask = async <T>(given: T | undefined, fallback: T, q: () => Promise<T>) =>
      given !== undefined ? given : prompter ? q() : fallback
    const capacityTypes = await ask(flags['capacity-types'], ['on-demand', 'spot'], () =>
      prompter!.checkbox({
        message: `${tenant}: capacity types`,
        choices: CAPACITY.map((c) => ({ name: c, value: c, checked: c !== 'reserved' })),
      }),
    )
    // An answer is held to the flag's bounds too.
    const cpuLimit = v.validateCpuLimit(
      await ask(flags['cpu-limit'], 100, async () =>
        Number(
          await prompter!.input({
            message: `${tenant}: CPU limit (cores)`,
            default: '100',
            validate: (s) => (/^\d+$/.test(s) && Number(s) > 0 ? true : 'a positive whole number'),
          }),
        ),
      ),
    )

    const { useColor } = await import('../../report/style.js')
    const { regionZones, tenantContext } = await import('../../tenant/command.js')
    const { tenantAddResources, tenantChecks } = await import('../../tenant/tenant.js')
    const { buildPlan } = await import('../../plan/plan.js')
    const { renderPlan, planJson } = await import('../../plan/render.js')
    const { runPlan } = await import('../../plan/session.js')
    const { applyEnv } = await import('../../plan/env.js')
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))
    const color = useColor(process.stdout)

    const t = await tenantContext(options, true)
    try {
      if (flags.zones) v.validateZones(flags.zones, options.region, await regionZones(t.ctx.aws))
      const spec = {
        clusterName: t.install.clusterName,
        region: t.ctx.options.region,
        accountId: t.install.accountId,
        partition: t.install.partition,
        tenant,
        policyArns: flags['policy-arn'] ?? [],
        subnetTag: subnetTag ? { key: subnetTag[0], value: subnetTag[1] } : undefined,
        tags: Object.fromEntries(tags),
        nodePool: {
          capacityTypes,
          instanceCategories:
            flags['instance-categories'] ?? (flags['instance-families'] ? undefined : ['c', 'm', 'r']),
          instanceFamilies: flags['instance-families'],
          architectures: flags.architectures ?? ['amd64'],
          zones: flags.zones,
          cpuLimit,
          memoryLimit: flags['memory-limit'],
          consolidationPolicy: (flags['consolidation-policy'] ?? 'WhenEmptyOrUnderutilized') as
            'WhenEmptyOrUnderutilized' | 'WhenEmpty',
          consolidateAfter: flags['consolidate-after'] ?? '1m',
          weight: flags.weight,
        },
        access: t.install.access,
        controllerRoleName: t.install.controllerRoleName,
        base: t.install.base,
      }
      // The same clients and sleep as every plan; no tenant step runs helm, so it is never looked up.
      const env = await applyEnv(t.ctx, { clusterName: t.install.clusterName })
      const plan = await buildPlan(
        `karpctl tenant add ${tenant} — cluster ${spec.clusterName} (account ${spec.accountId}), nodes via ${spec.access}`,
        tenantAddResources(spec),
        env,
      )
      if (!json) this.log(renderPlan(plan, { color }))
      const out = await runPlan(
        plan,
        env,
        {
          prompter,
          yes: flags.yes,
          dryRun: flags['dry-run'],
          waitForLock: flags['wait-for-lock'],
          color: useColor(process.stderr),
          say,
          progress,
        },
        {
          aws: t.ctx.aws,
          callerArn: t.callerArn,
          question: (n) => `Apply ${n} change(s) for tenant ${tenant}?`,
        },
      )
      const report: Record<string, unknown> = { tenant, plan: planJson(plan) }
      if (out.kind === 'dry-run' || out.kind === 'declined') return json ? report : undefined
      if (out.kind === 'applied') report.apply = out.result
      say(
        out.kind === 'applied'
          ? `Applied ${out.result.applied.length} change(s).`
          : `Nothing to change: tenant ${tenant} is as planned.`,
      )

      // Karpenter resolves the new EC2NodeClass (subnets, security groups, AMIs) and marks it Ready.
      const { nodeClassReady, waitFor } = await import('../../plan/waits.js')
      const pending = await waitFor(t.ctx.kube, [nodeClassReady(tenant)], {
        timeoutMs: flags.timeout * 1000,
        sleep: env.sleep,
        onReady: (label, ms) => progress(`✔ ${label}${ms > 0 ? ` (${(ms / 1000).toFixed(1)} s)` : ''}`),
      })
      for (const p of pending) progress(`! ${p}: not yet after ${flags.timeout} s (the checks below say why)`)
      // Judge the result with a fresh read of the cluster.
      const after = await tenantContext(await this.liveOptions())
      after.ctx.aws.destroy()
      const results = tenantChecks(after.facts)
      const { hasErrorFailure } = await import('../../checks/run.js')
      if (hasErrorFailure(results)) process.exitCode = ExitCode.findings
      if (json) {
        const { jsonReport } = await import('../../report/machine.js')
        return { ...report, workloads: workloadSnippet(tenant), doctor: jsonReport(results, after.facts) }
      }
      this.log(
        `\nWorkloads of ${tenant} run on its nodes (and only there) with, in their pod spec:\n\n${workloadSnippet(tenant).replace(/^/gm, '  ')}\n`,
      )
      const { renderHuman } = await import('../../report/human.js')
      this.log(renderHuman(results, after.facts, { color }))
      return undefined
    } finally {
      t.ctx.aws.destroy()
    }
  }
}
