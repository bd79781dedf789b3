import { Flags, ux } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../base-command.js'
import { TIMEOUT_BOUNDS, validateCpuLimit } from '../desired/flags.js'
import { ExitCode } from '../errors.js'

export default class Install extends BaseCommand<typeof Install> {
  static override summary =
    'Install Karpenter on an EKS cluster: IAM, identity, interruption queue, tags, access, Helm, a default NodePool.'
  static override description = `Asks for what the flags do not give, plans every resource against what exists (create / update / unchanged), checks with IAM's policy simulator that you may make each change, applies the plan in dependency order (independent steps concurrently, with retries where AWS is eventually consistent), then waits for the controller and runs doctor on the result.

Re-running is safe: an installed cluster shows everything unchanged and makes no write call; an install that stopped half-way (Ctrl-C, a crash, throttling) is finished by running the same command again. Resources karpctl creates carry the tags karpctl.io/managed-by=karpctl and karpctl.io/cluster=<cluster>; changes to resources it does not own (discovery tags, aws-auth entries, the 8443 rule, a scaled-down cluster-autoscaler, what --adopt adds) are recorded on those resources, so teardown undoes exactly them. Beside an install karpctl did not make (the getting-started stack, Terraform, eksctl), its controller role, queue and rules are used by their real names and never created twice.

Exit codes: 0 installed and doctor is clean (or --dry-run), 1 doctor finds a failing check after install, 2 karpctl could not plan or apply (the message says what to fix; re-run to resume).`

  static override examples = [
    {
      description: 'Interactive wizard on the cluster of the current EKS kube context',
      command: '<%= config.bin %> <%= command.id %>',
    },
    {
      description: 'Show the plan only',
      command:
        '<%= config.bin %> <%= command.id %> --cluster demo --region us-west-2 --dry-run --show-policies',
    },
    {
      description: 'Non-interactive, with IRSA and aws-auth',
      command:
        '<%= config.bin %> <%= command.id %> --cluster demo --identity irsa --node-access aws-auth --yes',
    },
    {
      description: 'A spot-only default NodePool on Graviton',
      command:
        '<%= config.bin %> <%= command.id %> --cluster demo --capacity-types spot --architectures arm64 --yes',
    },
  ]

  static override enableJsonFlag = true

  static override flags = {
    'karpenter-version': Flags.string({
      summary: 'Karpenter chart version (1.0.x – 1.14.x).',
      helpGroup: 'KARPENTER',
    }),
    namespace: Flags.string({
      char: 'n',
      summary: 'Namespace of the controller (default kube-system).',
      helpGroup: 'KARPENTER',
    }),
    identity: Flags.string({
      summary: 'Controller identity (default: pod-identity when its agent add-on runs, else irsa).',
      options: ['pod-identity', 'irsa'],
      helpGroup: 'KARPENTER',
    }),
    'node-role': Flags.string({
      summary:
        '"create" (KarpenterNodeRole-<cluster>, default) or an existing role name/ARN that already joins nodes.',
      helpGroup: 'NODES',
    }),
    'node-access': Flags.string({
      summary:
        'How new nodes join (default: access-entry when the authentication mode allows, else aws-auth).',
      options: ['access-entry', 'aws-auth'],
      helpGroup: 'NODES',
    }),
    interruption: Flags.boolean({
      summary: 'Interruption handling: SQS queue + EventBridge rules (default on; --no-interruption).',
      allowNo: true,
      helpGroup: 'KARPENTER',
    }),
    'capacity-types': Flags.string({
      summary: 'Default NodePool capacity types (default on-demand,spot).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODES',
    }),
    'instance-categories': Flags.string({
      summary: 'Default NodePool instance categories (default c,m,r).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODES',
    }),
    architectures: Flags.string({
      summary: 'Default NodePool architectures (default amd64).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODES',
    }),
    'cpu-limit': Flags.integer({
      summary: 'Default NodePool CPU limit in cores (default 1000).',
      helpGroup: 'NODES',
    }),
    values: Flags.string({
      summary: "An extra Helm values file, merged over karpctl's.",
      helpGroup: 'KARPENTER',
    }),
    'chart-dir': Flags.string({
      summary:
        'A folder holding karpenter-crd/ and karpenter/ charts, instead of oci://public.ecr.aws/karpenter.',
      helpGroup: 'KARPENTER',
    }),
    'subnet-ids': Flags.string({
      summary: "Subnets to tag for discovery (default: the cluster's private subnets).",
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODES',
    }),
    'security-group-ids': Flags.string({
      summary: 'Security groups to tag for discovery (default: the cluster security group).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'NODES',
    }),
    'scale-down-cluster-autoscaler': Flags.boolean({
      summary: 'Scale a running cluster-autoscaler to 0 (its replicas are recorded for teardown).',
      allowNo: true,
      helpGroup: 'KARPENTER',
    }),
    adopt: Flags.boolean({
      summary:
        'Adopt what karpctl did not make where it must change it: only recorded additions, given back by teardown, never deleted.',
      helpGroup: 'APPLY',
    }),
    yes: Flags.boolean({
      char: 'y',
      summary: 'Take the defaults for every question and apply without asking.',
      helpGroup: 'APPLY',
    }),
    'dry-run': Flags.boolean({ summary: 'Print the plan and change nothing.', helpGroup: 'APPLY' }),
    'wait-for-lock': waitForLockFlag('APPLY'),
    'show-policies': Flags.boolean({
      summary: 'Print the IAM documents, the Helm values (redacted) and the Kubernetes objects of the plan.',
      helpGroup: 'APPLY',
    }),
    'smoke-test': Flags.boolean({
      summary:
        'After the install, run a pod only the default NodePool can take and report the time to a ready node.',
      helpGroup: 'APPLY',
    }),
    timeout: Flags.integer({
      summary: 'Seconds to wait for the controller and the EC2NodeClass to become ready (default 300).',
      ...TIMEOUT_BOUNDS,
      default: 300,
      helpGroup: 'APPLY',
    }),
  }

  async run(): Promise<unknown> {
    const { flags } = this
    const { useColor } = await import('../report/style.js')
    const { resolveInstallTarget } = await import('../install/target.js')
    const { createRunContext } = await import('../context/run-context.js')
    const { discover } = await import('../install/discover.js')
    const { installChoices } = await import('../install/wizard.js')
    const { planInstall, specOf } = await import('../install/install.js')
    const { loadExtraValues } = await import('../install/values-file.js')
    const { applyEnv, requireTools } = await import('../plan/env.js')
    const { renderPlan, planJson } = await import('../plan/render.js')

    // The flags a plan is made of, checked before anything is asked or read (the wizard checks the rest).
    if (flags['cpu-limit'] !== undefined) validateCpuLimit(flags['cpu-limit'])
    if (flags['chart-dir'] !== undefined) {
      const { checkChartDir } = await import('../plan/resources/helm-release.js')
      checkChartDir(flags['chart-dir'], ['karpenter-crd', 'karpenter'])
    }

    const json = this.jsonEnabled()
    const interactive = !flags.yes && !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter = interactive ? await (await import('../context/prompter.js')).terminalPrompter() : null
    const color = useColor(process.stdout)
    // Progress goes to stderr even with --json (oclif mutes its own log helpers then): stdout stays data.
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))

    const target = await resolveInstallTarget(this.flags, prompter)
    const ctx = await createRunContext({
      clusterName: target.clusterName,
      region: this.validateRegion(target.region),
      profile: flags.profile ?? process.env.AWS_PROFILE,
      kubeContext: flags['kube-context'],
      karpctlVersion: this.config.version,
      retryMode: 'adaptive',
    })
    try {
      const spin = !json && process.stderr.isTTY
      if (spin) ux.action.start(`Reading cluster ${target.clusterName}`, undefined, { stdout: false })
      // Before anything is read from Kubernetes or asked: answers for the wrong cluster would be wasted,
      // and nothing may be changed there.
      const env = await applyEnv(ctx, { clusterName: target.clusterName })
      const d = await discover(ctx)
      if (spin) ux.action.stop()
      if (d.clusterAutoscalers.length && flags['scale-down-cluster-autoscaler'] === undefined && !prompter)
        say(
          `note: cluster-autoscaler runs (${d.clusterAutoscalers.map((a) => `${a.namespace}/${a.name}`).join(', ')}); pass --scale-down-cluster-autoscaler to scale it to 0 so it does not fight Karpenter`,
        )
      const choices = await installChoices({ ...flags, values: flags.values }, d, { prompter })
      if (prompter) {
        const { equivalentCommand } = await import('../install/command-line.js')
        say(
          `The same install without questions:\n  ${equivalentCommand(
            this.config.bin,
            { ...target, profile: flags.profile, kubeContext: flags['kube-context'] },
            choices,
            flags,
          )}`,
        )
      }
      const spec = specOf(choices, ctx, d)
      const extraValues = await loadExtraValues(spec.extraValuesFile)
      if (spin) ux.action.start('Planning', undefined, { stdout: false })
      const plan = await planInstall(spec, extraValues, env, d)
      if (spin) ux.action.stop()
      if (!json) this.log(renderPlan(plan, { color, showDocuments: flags['show-policies'] }))
      const report: Record<string, unknown> = { plan: planJson(plan) }
      const { runPlan } = await import('../plan/session.js')
      const applied = await runPlan(
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
          aws: ctx.aws,
          callerArn: d.callerArn,
          question: (n) => `Apply ${n} change(s) to cluster ${spec.clusterName}?`,
          beforeApply: () => requireTools(plan, env),
        },
      )
      if (applied.kind === 'dry-run') return json ? report : undefined
      if (applied.kind === 'declined') {
        say('Nothing changed.')
        return undefined
      }
      if (applied.kind === 'applied') {
        report.apply = applied.result
        say(`Applied ${applied.result.applied.length} change(s).`)
      } else say('Nothing to change: Karpenter is installed as planned.')

      const { installWaits, waitFor } = await import('../plan/waits.js')
      const pending = await waitFor(ctx.kube, installWaits(spec.namespace, 'default'), {
        timeoutMs: flags.timeout * 1000,
        sleep: env.sleep,
        onReady: (label, ms) => progress(`✔ ${label}${ms > 0 ? ` (${(ms / 1000).toFixed(1)} s)` : ''}`),
      })
      for (const p of pending) progress(`! ${p}: not yet after ${flags.timeout} s (doctor says why)`)
      const { doctor } = await import('../doctor/doctor.js')
      const outcome = await doctor({ live: { ...ctx.options, retryMode: undefined } })
      const { hasErrorFailure } = await import('../checks/run.js')
      if (hasErrorFailure(outcome.results)) process.exitCode = ExitCode.findings
      if (flags['smoke-test']) {
        const { smokeTest } = await import('../install/smoke.js')
        const smoke = await smokeTest(ctx.kube, {
          nodePool: 'default',
          timeoutMs: flags.timeout * 1000,
          sleep: env.sleep,
          progress,
        })
        report.smokeTest = smoke
        progress(`${smoke.ok ? '✔' : '✖'} ${smoke.message}`)
        if (!smoke.ok) process.exitCode = ExitCode.findings
      }
      if (json) {
        const { jsonReport } = await import('../report/machine.js')
        report.doctor = jsonReport(outcome.results, outcome.facts)
        report.calls = {
          total: ctx.log.calls.length,
          writes: ctx.log.writes.length,
          byService: ctx.log.byService(),
        }
        return report
      }
      const { renderHuman } = await import('../report/human.js')
      this.log('')
      this.log(renderHuman(outcome.results, outcome.facts, { color }))
      if (!hasErrorFailure(outcome.results)) {
        const { nextSteps } = await import('../install/next-steps.js')
        this.log('')
        for (const line of nextSteps(
          this.config.bin,
          { ...target, kubeContext: flags['kube-context'] },
          { smokeTested: Boolean(flags['smoke-test']), nodePool: 'default' },
        ))
          this.log(line)
      }
      return undefined
    } finally {
      ctx.aws.destroy()
    }
  }
}
