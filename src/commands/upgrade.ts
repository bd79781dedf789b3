import { Flags } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../base-command.js'
import { TIMEOUT_BOUNDS } from '../desired/flags.js'
import { ExitCode, InputError } from '../errors.js'

export default class Upgrade extends BaseCommand<typeof Upgrade> {
  static override summary =
    'Upgrade an installed Karpenter 1.x: IAM first, then the CRDs, then the controller with your values.'
  static override description = `Works on any Karpenter 1.x install with a Helm release — karpctl's, the getting-started CloudFormation stack's, Terraform's, eksctl's — discovered as doctor discovers it. One plan, in this order:

1. Preconditions, before any change: both versions are 1.x and the target is not older; from 1.0.x to 1.1 or later, no CRD still stores v1beta1 (and how to check nothing still writes it); the cluster's Kubernetes version is supported by the target; the release is deployed (a failed one: run doctor --fix first).
2. IAM, before anything else: the controller role gets every grant the target needs while keeping every grant the running version needs, at every write (all puts first, deletes last). On the role karpctl created, karpctl's own inline controller policies are rewritten to the target's reference policies as an install of the target makes them, the older template's policies deleted last; what only the old version needs is kept apart in KarpctlUpgradeCarry-<cluster> and deleted once the new controller runs; teardown deletes the role with all of them. On a role karpctl did not make, its own policies are never rewritten: what it lacks is added as one inline policy KarpctlUpgrade-<minor>, scoped as the template scopes it and recorded on the role as a doctor --fix repair is; teardown keeps it while the upgraded release stays (the running controller needs it) and gives it back when the install goes. Statements only the old version needed are left there and named. Where a CloudFormation stack (the getting-started one, or eksctl's) holds the policies or the role, the step blocks with the stack's way.
3. The CRDs: the karpenter-crd release upgraded (CRDs applied another way are handed to it first, recorded on karpctl's own install; from 1.0.x, the 1.0.x conversion webhook Helm's adoption would keep is removed).
4. The controller: its release upgraded with your own values (the newest revision's), keys the target chart removed taken out, every annotation, label and toleration value a string.
5. The tcp/8443 rule karpctl recorded adding for the 1.0.x webhooks is removed once the target has none (one you added is named, never removed); then it waits for the controller and the EC2NodeClasses, and runs doctor.

Re-running is a no-op; a run stopped at any step is finished by running it again.

Exit codes: 0 upgraded and doctor is clean (or --dry-run), 1 doctor finds a failing check after the upgrade, 2 karpctl could not plan or apply (a blocked precondition included: the message says what to do).`

  static override examples = [
    {
      description: 'Show what an upgrade to the newest version karpctl knows would do',
      command:
        '<%= config.bin %> <%= command.id %> --cluster demo --region us-west-2 --dry-run --show-policies',
    },
    {
      description: 'Upgrade to 1.14.1 from local charts, without asking',
      command: '<%= config.bin %> <%= command.id %> --to 1.14.1 --chart-dir ./charts --yes',
    },
  ]

  static override enableJsonFlag = true

  static override flags = {
    to: Flags.string({
      summary: 'The Karpenter version to upgrade to (default: the newest karpctl knows).',
      helpGroup: 'KARPENTER',
    }),
    'chart-dir': Flags.string({
      summary:
        'A folder holding karpenter-crd/ and karpenter/ charts of the target, instead of oci://public.ecr.aws/karpenter.',
      helpGroup: 'KARPENTER',
    }),
    yes: Flags.boolean({ char: 'y', summary: 'Apply without asking.', helpGroup: 'APPLY' }),
    'dry-run': Flags.boolean({ summary: 'Print the plan and change nothing.', helpGroup: 'APPLY' }),
    'wait-for-lock': waitForLockFlag('APPLY'),
    'show-policies': Flags.boolean({
      summary: 'Print the IAM documents and the Helm values (redacted) of the plan.',
      helpGroup: 'APPLY',
    }),
    timeout: Flags.integer({
      summary: 'Seconds to wait for the controller and the EC2NodeClasses to become ready (default 300).',
      ...TIMEOUT_BOUNDS,
      default: 300,
      helpGroup: 'APPLY',
    }),
  }

  async run(): Promise<unknown> {
    const { flags } = this
    const { karpenterVersionProblem } = await import('../desired/flags.js')
    const { DEFAULT_KARPENTER_VERSION } = await import('../checks/lib/compat.js')
    const { checkChartDir, chartDirVersion } = await import('../plan/resources/helm-release.js')
    // The flags a plan is made of, before anything is read.
    // Judged as given: stripped first, `vv1.14.1` would pass as v1.14.1.
    const problem = karpenterVersionProblem(flags.to ?? DEFAULT_KARPENTER_VERSION)
    let target = (flags.to ?? DEFAULT_KARPENTER_VERSION).replace(/^v/, '')
    if (problem) throw new InputError(`--to: ${problem}`, 'INVALID_INPUT')
    if (flags['chart-dir'] !== undefined) {
      checkChartDir(flags['chart-dir'], ['karpenter-crd', 'karpenter'])
      const held = chartDirVersion(`${flags['chart-dir']}/karpenter`)
      if (flags.to && held !== target)
        throw new InputError(
          `--chart-dir holds Karpenter ${held}, not --to ${target}: give the folder of ${target}, or leave --to out`,
          'INVALID_CHART_DIR',
        )
      target = held
    }

    const json = this.jsonEnabled()
    const interactive = !flags.yes && !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter = interactive ? await (await import('../context/prompter.js')).terminalPrompter() : null
    const { useColor } = await import('../report/style.js')
    const color = useColor(process.stdout)
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))

    const { upgradeContext } = await import('../upgrade/context.js')
    const { releaseRecords, releaseOf, upgradePlan } = await import('../upgrade/upgrade.js')
    const { buildPlan } = await import('../plan/plan.js')
    const { applyEnv, requireTools } = await import('../plan/env.js')
    const { renderPlan, planJson } = await import('../plan/render.js')
    const { runPlan } = await import('../plan/session.js')

    const u = await upgradeContext(await this.liveOptions())
    try {
      const release = releaseOf(u.facts)
      const env = await applyEnv(u.ctx, { clusterName: u.facts.meta.clusterName })
      const up = upgradePlan(u.facts, {
        target,
        chartDir: flags['chart-dir'],
        ...(await releaseRecords(u.ctx.kube, release)),
      })
      const plan = await buildPlan(up.title, up.resources, env)
      if (!json) this.log(renderPlan(plan, { color, showDocuments: flags['show-policies'] }))
      const report: Record<string, unknown> = {
        from: up.installed,
        to: target,
        plan: planJson(plan),
        removableActions: up.removableActions,
        removableIngress: up.removableIngress,
      }
      // The calls the upgrade itself made (doctor's own are in its report), as install reports them.
      const withCalls = (r: Record<string, unknown>) => ({
        ...r,
        calls: {
          total: u.ctx.log.calls.length,
          writes: u.ctx.log.writes.length,
          byService: u.ctx.log.byService(),
        },
      })
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
          aws: u.ctx.aws,
          callerArn: u.callerArn,
          question: (n) => `Apply ${n} change(s) to upgrade Karpenter to ${target}?`,
          beforeApply: () => requireTools(plan, env),
        },
      )
      if (out.kind === 'dry-run') return json ? withCalls(report) : undefined
      if (out.kind === 'declined') {
        say('Nothing changed.')
        return undefined
      }
      if (out.kind === 'applied') {
        report.apply = out.result
        say(`Applied ${out.result.applied.length} change(s).`)
      } else say(`Nothing to change: Karpenter ${target} is installed as planned.`)
      if (up.removableActions.length)
        say(
          `Left on ${u.facts.iam.controllerRoleName}: ${up.removableActions.join(', ')} (needed by ${up.installed} only); remove them once ${target} runs well.`,
        )
      for (const c of up.removableIngress)
        say(`The 1.0.x webhooks needed a tcp/8443 rule karpctl did not add; ${target} has none: ${c}`)

      // Bounded: the controller available, then every EC2NodeClass Ready under the new version.
      const { controllerAvailable, nodeClassReady, waitFor } = await import('../plan/waits.js')
      const { controllerDeploymentName, controllerNamespace } = await import('../checks/lib/install.js')
      const classes = u.facts.kube.nodeClasses.ok ? u.facts.kube.nodeClasses.value : []
      const pending = await waitFor(
        u.ctx.kube,
        [
          controllerAvailable(controllerNamespace(u.facts), controllerDeploymentName(u.facts)),
          ...classes.map((c) => nodeClassReady(c.metadata.name)),
        ],
        {
          timeoutMs: flags.timeout * 1000,
          sleep: env.sleep,
          onReady: (label, ms) => progress(`✔ ${label}${ms > 0 ? ` (${(ms / 1000).toFixed(1)} s)` : ''}`),
        },
      )
      for (const p of pending) progress(`! ${p}: not yet after ${flags.timeout} s (doctor says why)`)
      // doctor judges the controller role against the release's version: the target's template now.
      const { doctor } = await import('../doctor/doctor.js')
      const outcome = await doctor({ live: { ...u.ctx.options, retryMode: undefined } })
      const { hasErrorFailure } = await import('../checks/run.js')
      if (hasErrorFailure(outcome.results)) process.exitCode = ExitCode.findings
      if (json) {
        const { jsonReport } = await import('../report/machine.js')
        return withCalls({ ...report, doctor: jsonReport(outcome.results, outcome.facts) })
      }
      const { renderHuman } = await import('../report/human.js')
      this.log('')
      this.log(renderHuman(outcome.results, outcome.facts, { color }))
      return undefined
    } finally {
      u.ctx.aws.destroy()
    }
  }
}
