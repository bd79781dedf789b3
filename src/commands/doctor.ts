import { performance } from 'node:perf_hooks'
import { Flags, ux } from '@oclif/core'
import { BaseCommand, waitForLockFlag } from '../base-command.js'
import { ExitCode, InputError, KarpctlError, oneLine } from '../errors.js'

export default class Doctor extends BaseCommand<typeof Doctor> {
  static override summary = 'Find every known Karpenter misconfiguration and print the fix.'
  static override description = `Collects facts about one EKS cluster (EKS, IAM, EC2, SQS, EventBridge, the Karpenter Helm release and objects) in one concurrent pass, then runs the check catalog on them. Works on any Karpenter install: names are discovered from the Helm release, the ServiceAccount and the EC2NodeClasses.

A read that fails (permission, throttling, an API the endpoint lacks) makes the checks that needed it "unknown", never "passed".

Exit codes:
  0  judged clean: no error-severity check failed or is unknown
  1  an error-severity check failed
  2  karpctl could not run (bad input, credentials, an unreachable API); or could not tell: no error check failed but one or more is unknown (the report is printed, then one line naming them and why); or --save-snapshot failed (the report is still printed)

A snapshot is input: it must be a regular file of at most 64 MiB, nest at most 64 levels, be version karpctl.facts/v1 and match schema/facts.schema.json, or it is refused naming the JSON path that is wrong.`

  static override examples = [
    {
      description: 'Check the cluster of the current EKS kube context',
      command: '<%= config.bin %> <%= command.id %>',
    },
    {
      description: 'Check a named cluster',
      command: '<%= config.bin %> <%= command.id %> --cluster demo --region us-west-2',
    },
    {
      description: 'Judge a saved snapshot, no network',
      command: '<%= config.bin %> <%= command.id %> --snapshot examples/shared-cluster-broken.json',
    },
    {
      description: 'Save a snapshot (secrets redacted) to share',
      command: '<%= config.bin %> <%= command.id %> --cluster demo --save-snapshot demo.json',
    },
    {
      description: 'Lint values and Terraform before installing',
      command: '<%= config.bin %> <%= command.id %> --values values.yaml --terraform ./infra',
    },
    {
      description: 'Every cluster of two regions, one table',
      command: '<%= config.bin %> <%= command.id %> --all-clusters --regions us-east-1,eu-west-1',
    },
    {
      description: 'Every cluster of three accounts, through a role assumed in each',
      command:
        '<%= config.bin %> <%= command.id %> --all-clusters --regions all --role-name KarpctlDoctor --accounts 111122223333,444455556666,777788889999',
    },
    {
      description: 'Every cluster of every active account of the organization (from its management account)',
      command:
        '<%= config.bin %> <%= command.id %> --all-clusters --regions all --role-name KarpctlDoctor --organization',
    },
    {
      description: 'Only two checks, as SARIF',
      command:
        '<%= config.bin %> <%= command.id %> --only irsa-trust-policy,passrole-node-role --output sarif',
    },
  ]

  static override enableJsonFlag = true

  static override flags = {
    snapshot: Flags.string({
      summary: 'Judge a saved snapshot instead of a live cluster (no network).',
      helpGroup: 'INPUT',
    }),
    'save-snapshot': Flags.string({
      summary: 'Write the collected facts (secrets redacted) to this file.',
      helpGroup: 'INPUT',
    }),
    values: Flags.string({
      summary: 'Lint Helm values files before install (no cluster needed).',
      multiple: true,
      helpGroup: 'INPUT',
    }),
    terraform: Flags.string({
      summary: 'Lint helm_release blocks in this Terraform directory (no cluster needed).',
      helpGroup: 'INPUT',
    }),
    only: Flags.string({
      summary: 'Run only these check ids (comma-separated or repeated).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'CHECKS',
    }),
    skip: Flags.string({
      summary: 'Skip these check ids.',
      multiple: true,
      delimiter: ',',
      helpGroup: 'CHECKS',
    }),
    'all-clusters': Flags.boolean({
      summary:
        'Every EKS cluster the credentials can see (ListClusters per region), one table; --timeout then bounds each cluster.',
      helpGroup: 'FLEET',
    }),
    regions: Flags.string({
      summary: 'With --all-clusters: the regions to look in, or `all` (default: --region / AWS_REGION).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'FLEET',
    }),
    profiles: Flags.string({
      summary:
        'With --all-clusters: AWS profiles to look with, each its own identity (default: the default chain).',
      multiple: true,
      delimiter: ',',
      helpGroup: 'FLEET',
    }),
    'role-name': Flags.string({
      summary: 'With --accounts or --organization: the role to assume in each account (sts:AssumeRole).',
      helpGroup: 'FLEET',
    }),
    organization: Flags.boolean({
      summary:
        "With --role-name: every active account of the caller's organization (organizations:ListAccounts, from the management account or a delegated administrator).",
      dependsOn: ['role-name'],
      exclusive: ['accounts'],
      helpGroup: 'FLEET',
    }),
    accounts: Flags.string({
      summary: 'With --role-name: the account ids to look in.',
      multiple: true,
      delimiter: ',',
      dependsOn: ['role-name'],
      helpGroup: 'FLEET',
    }),
    concurrency: Flags.integer({
      summary: 'With --all-clusters: clusters doctored at once (default 8).',
      min: 1,
      max: 64,
      helpGroup: 'FLEET',
    }),
    'kubeconfig-contexts': Flags.boolean({
      summary:
        'With --all-clusters: reach a cluster through the kubeconfig context named by its ARN when there is one (a tunnel to a private endpoint), else with an EKS token.',
      helpGroup: 'FLEET',
    }),
    serve: Flags.boolean({
      summary:
        'Run doctor every --interval in this process: Prometheus metrics on /metrics, /healthz, and each finding as a Kubernetes Event on its object (the karpctl-doctor chart runs this).',
      helpGroup: 'SERVE',
    }),
    interval: Flags.string({
      summary: 'With --serve: the time between the end of one run and the start of the next (default 5m).',
      helpGroup: 'SERVE',
    }),
    listen: Flags.string({
      summary:
        'With --serve: the address of /metrics and /healthz (default 127.0.0.1:9464; :9464 for every interface).',
      helpGroup: 'SERVE',
    }),
    events: Flags.boolean({
      summary: 'With --serve: post each finding as a Kubernetes Event (--no-events: metrics only).',
      allowNo: true,
      default: true,
      helpGroup: 'SERVE',
    }),
    'print-iam-policy': Flags.boolean({
      summary:
        "Print the read-only IAM policy doctor's reads need (for IRSA, Pod Identity or a fleet role) and exit.",
      helpGroup: 'SERVE',
    }),
    list: Flags.boolean({ summary: 'List every check id with its title and exit.', helpGroup: 'CHECKS' }),
    output: Flags.string({
      char: 'o',
      summary: 'Report format.',
      options: ['human', 'sarif', 'junit', 'markdown'],
      default: 'human',
      helpGroup: 'OUTPUT',
    }),
    verbose: Flags.boolean({ char: 'v', summary: 'Also print each passing finding.', helpGroup: 'OUTPUT' }),
    fix: Flags.boolean({
      summary:
        'Repair what is safe to automate (one plan, confirmed), list the rest as manual, and check again.',
      helpGroup: 'FIX',
    }),
    yes: Flags.boolean({ char: 'y', summary: 'With --fix: apply without asking.', helpGroup: 'FIX' }),
    'dry-run': Flags.boolean({ summary: 'With --fix: print the plan and change nothing.', helpGroup: 'FIX' }),
    'wait-for-lock': waitForLockFlag('FIX'),
    'chart-dir': Flags.string({
      summary:
        'With --fix: a folder holding the karpenter/ chart of the installed version, for repairs made through Helm (default: oci://public.ecr.aws/karpenter).',
      helpGroup: 'FIX',
    }),
  }

  async run(): Promise<unknown> {
    const started = performance.now()
    const { flags } = this
    const { catalog } = await import('../checks/catalog.js')
    if (flags['print-iam-policy']) {
      const { doctorIamPolicy } = await import('../desired/doctor-reads.js')
      if (this.jsonEnabled()) return doctorIamPolicy()
      this.log(JSON.stringify(doctorIamPolicy(), null, 2))
      return
    }
    if (flags.list) {
      if (this.jsonEnabled()) return catalog.map((c) => c.meta)
      const width = Math.max(...catalog.map((c) => c.meta.id.length))
      for (const c of catalog)
        this.log(`${c.meta.id.padEnd(width)}  ${c.meta.severity.padEnd(7)}  ${c.meta.title}`)
      return
    }
    const { renderHuman } = await import('../report/human.js')
    const { useColor } = await import('../report/style.js')
    const { couldNotTell, hasErrorFailure, selectChecks, UnknownCheckIdError } =
      await import('../checks/run.js')

    // An unknown check id is a usage error: report it before any network work.
    try {
      selectChecks(catalog, flags.only, flags.skip)
    } catch (err) {
      if (err instanceof UnknownCheckIdError)
        throw new InputError(`${err.message}: see \`karpctl doctor --list\``, 'UNKNOWN_CHECK')
      throw err
    }
    if (flags['all-clusters']) return this.fleet()
    if (flags.serve) return this.serve()
    for (const f of ['interval', 'listen'] as const)
      if (flags[f] !== undefined)
        throw new InputError(`--${f} goes with --serve: add it, or drop --${f}`, 'INVALID_INPUT')
    if (!flags.events)
      throw new InputError('--no-events goes with --serve: add it, or drop --no-events', 'INVALID_INPUT')
    for (const f of ['regions', 'profiles', 'accounts', 'concurrency', 'kubeconfig-contexts'] as const)
      if (flags[f] !== undefined && flags[f] !== false)
        throw new InputError(`--${f} goes with --all-clusters: add it, or drop --${f}`, 'INVALID_INPUT')
    if (flags.fix) return this.fix(flags.only, flags.skip)
    const lintOnly = (flags.values?.length || flags.terraform) && !flags.cluster && !flags.snapshot
    let results
    let facts = null
    let apiCalls: string[] = []
    let saveError: KarpctlError | undefined
    {
      if (lintOnly) {
        const { lintLocal } = await import('../doctor/local-lint.js')
        results = await lintLocal(flags.values ?? [], flags.terraform)
      } else {
        const { doctor } = await import('../doctor/doctor.js')
        const live = flags.snapshot ? undefined : await this.liveOptions()
        const spinner = !flags.snapshot && !this.jsonEnabled() && process.stderr.isTTY
        if (spinner) ux.action.start('Collecting facts', 'starting', { stdout: false })
        const outcome = await doctor({
          snapshot: flags.snapshot,
          saveSnapshot: flags['save-snapshot'],
          only: flags.only,
          skip: flags.skip,
          live,
          onProgress: spinner ? (n) => (ux.action.status = `${n} API reads`) : undefined,
        })
        if (spinner) ux.action.stop(`${outcome.calls?.length ?? 0} API reads`)
        facts = outcome.facts
        results = outcome.results
        apiCalls = outcome.calls ?? []
        saveError = outcome.saveError
        if (flags.values?.length || flags.terraform) {
          const { lintLocal } = await import('../doctor/local-lint.js')
          results = [...results, ...(await lintLocal(flags.values ?? [], flags.terraform))]
        }
        if (flags.debug && outcome.calls) for (const c of outcome.calls) this.logToStderr(`call ${c}`)
      }
    }

    if (hasErrorFailure(results)) process.exitCode = ExitCode.findings
    // What ends the run with exit 2 after the report is printed: a snapshot that could not be saved,
    // or a run that could not tell (an error check unknown: exit 0 would claim the cluster clean).
    const untold = couldNotTell(results)
    const ending = saveError ?? (untold ? new KarpctlError(untold, 'COULD_NOT_TELL') : undefined)
    if (ending) process.exitCode = ExitCode.cannotRun
    if (this.jsonEnabled()) {
      const { jsonReport } = await import('../report/machine.js')
      const report = jsonReport(results, facts, {
        karpctlVersion: this.config.version,
        generatedAt: new Date(),
        source: lintOnly ? 'lint' : flags.snapshot ? 'snapshot' : 'live',
        calls: apiCalls,
        wallTimeMs: Math.round(performance.now() - started),
      })
      return ending ? { ...report, error: { code: ending.code, message: oneLine(ending.message) } } : report
    }
    const m = await import('../report/machine.js')
    switch (flags.output) {
      case 'sarif':
        this.log(m.sarifReport(results, catalog, this.config.version))
        break
      case 'junit':
        this.log(m.junitReport(results, facts, this.config.version))
        break
      case 'markdown':
        this.log(m.markdownReport(results, facts))
        break
      default:
        this.log(renderHuman(results, facts, { color: useColor(process.stdout), verbose: flags.verbose }))
    }
    if (ending) throw ending
    return undefined
  }

  /** doctor --all-clusters: the fleet use case lives in src/fleet/; this renders it. */
  private async fleet(): Promise<unknown> {
    const started = performance.now()
    const { flags } = this
    for (const f of ['snapshot', 'save-snapshot', 'fix', 'values', 'terraform', 'kube-context'] as const)
      if (flags[f] !== undefined && flags[f] !== false)
        throw new InputError(
          `--${f} is for one cluster: it cannot be combined with --all-clusters`,
          'INVALID_INPUT',
        )
    if (flags.output === 'junit')
      throw new InputError(
        '--output junit is for one cluster: use sarif, markdown or --json with --all-clusters',
        'INVALID_INPUT',
      )
    const given = flags.regions ?? []
    const fallback = flags.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION
    const all = given.includes('all')
    if (all && given.length > 1)
      throw new InputError('--regions all lists every region: give it alone', 'INVALID_REGION')
    const regions = all
      ? 'all'
      : [
          ...new Set(
            (given.length ? given : fallback ? [fallback] : []).map((r) => this.validateRegion(r.trim())),
          ),
        ]
    if (regions !== 'all' && regions.length === 0)
      throw new InputError(
        'which regions? pass --regions r1,r2 (or all), --region or AWS_REGION',
        'MISSING_REGION',
      )
    if (flags['role-name']) (await import('../desired/flags.js')).validateRoleName(flags['role-name'])
    if (flags['role-name'] && !flags.accounts?.length && !flags.organization)
      throw new InputError(
        '--role-name needs the accounts to assume it in: add --accounts ID,… or --organization',
        'INVALID_INPUT',
      )
    for (const a of flags.accounts ?? [])
      if (!/^\d{12}$/.test(a))
        throw new InputError(
          `--accounts: ${JSON.stringify(a)} is not a 12-digit AWS account id`,
          'INVALID_INPUT',
        )
    const home = fallback
      ? this.validateRegion(fallback)
      : regions === 'all'
        ? 'us-east-1'
        : (regions[0] as string)
    const { fleetDoctor } = await import('../fleet/fleet.js')
    const r = await import('../report/fleet.js')
    const { useColor } = await import('../report/style.js')
    const progress = !this.jsonEnabled() && process.stderr.isTTY
    const outcome = await fleetDoctor({
      scope: {
        regions,
        profiles: flags.profiles ?? (flags.profile ? [flags.profile] : []),
        roleName: flags['role-name'],
        accounts: flags.accounts ?? [],
        organization: flags.organization,
      },
      home,
      only: flags.only,
      skip: flags.skip,
      karpctlVersion: this.config.version,
      concurrency: flags.concurrency,
      clusterTimeoutS: flags.timeout,
      useKubeContexts: flags['kubeconfig-contexts'],
      onDiscovered: progress ? (n) => this.progress(`${n} cluster(s) found`) : undefined,
      onCluster: progress
        ? (o, done, total) =>
            this.progress(
              `[${done}/${total}] ${r.clusterLabel(o)}: ${r.verdict(o)} (${(o.wallTimeMs / 1000).toFixed(1)} s, ${o.calls} calls)`,
            )
        : undefined,
    })
    if (flags.debug) for (const c of outcome.calls) this.logToStderr(`call ${c}`)
    process.exitCode = outcome.exitCode
    if (this.jsonEnabled())
      return r.fleetJson(outcome, {
        karpctlVersion: this.config.version,
        generatedAt: new Date(),
        wallTimeMs: Math.round(performance.now() - started),
      })
    if (flags.output === 'sarif') {
      const { catalog } = await import('../checks/catalog.js')
      this.log(r.fleetSarif(outcome, catalog, this.config.version))
    } else if (flags.output === 'markdown') this.log(r.fleetMarkdown(outcome))
    else this.log(r.renderFleet(outcome, { color: useColor(process.stdout) }))
    return undefined
  }

  /** doctor --serve: the loop, the server and the Events live in src/doctor/serve.ts. */
  private async serve(): Promise<unknown> {
    const { flags } = this
    for (const f of ['snapshot', 'save-snapshot', 'fix', 'values', 'terraform', 'json'] as const)
      if (flags[f] !== undefined && flags[f] !== false)
        throw new InputError(`--${f} cannot be combined with --serve`, 'INVALID_INPUT')
    if (flags.output !== 'human')
      throw new InputError('--output cannot be combined with --serve: it serves /metrics', 'INVALID_INPUT')
    const { parseInterval, parseListen } = await import('../desired/flags.js')
    const intervalMs = parseInterval(flags.interval ?? '5m')
    const listen = parseListen(flags.listen ?? '127.0.0.1:9464')
    const { serve } = await import('../doctor/serve.js')
    const { DEFAULT_RUN_TIMEOUT_S } = await import('../base-command.js')
    await serve({
      live: await this.liveOptions(),
      only: flags.only,
      skip: flags.skip,
      intervalMs,
      listen,
      events: flags.events,
      runTimeoutMs: (flags.timeout ?? DEFAULT_RUN_TIMEOUT_S) * 1000,
      log: (line) => this.progress(`${new Date().toISOString()} ${line}`),
    })
    // Stopped by a signal: keep-alive sockets to AWS and the API server must not hold the exit.
    setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref()
    return undefined
  }

  /** doctor --fix: the repair use case lives in src/fix/; this renders it. */
  private async fix(only?: string[], skip?: string[]): Promise<unknown> {
    const { flags } = this
    if (flags.snapshot)
      throw new InputError(
        '--fix repairs a live cluster: it cannot be combined with --snapshot',
        'INVALID_INPUT',
      )
    const { useColor } = await import('../report/style.js')
    const { runFix } = await import('../fix/run.js')
    const json = this.jsonEnabled()
    const interactive = !flags.yes && !json && Boolean(process.stdin.isTTY && process.stdout.isTTY)
    const prompter = interactive ? await (await import('../context/prompter.js')).terminalPrompter() : null
    const progress = (s: string) => this.progress(s)
    const say = (s: string) => (json ? progress(s) : this.log(s))
    const chartDir = flags['chart-dir']
    if (chartDir) (await import('../plan/resources/helm-release.js')).checkChartDir(chartDir, ['karpenter'])
    const r = await runFix({
      live: await this.liveOptions(),
      only,
      skip,
      chartDir,
      yes: flags.yes,
      dryRun: flags['dry-run'],
      waitForLock: flags['wait-for-lock'],
      prompter,
      color: useColor(process.stdout),
      say,
      progress,
    })
    const { couldNotTell, hasErrorFailure } = await import('../checks/run.js')
    // The same exit policy as doctor's: 0 only when every error check was judged clean after the fix.
    const untold = r.outcome.kind === 'needs-confirmation' ? null : couldNotTell(r.results)
    if (r.outcome.kind === 'needs-confirmation') {
      say(r.rendered)
      say('Not applied: pass --yes to apply these fixes without a terminal (or --dry-run to only plan).')
      process.exitCode = ExitCode.findings
    } else if (hasErrorFailure(r.results)) process.exitCode = ExitCode.findings
    else if (untold) process.exitCode = ExitCode.cannotRun
    const { jsonReport } = await import('../report/machine.js')
    if (json)
      return {
        fix: { outcome: r.outcome, plan: r.plan, manual: r.manual, writes: r.writes },
        ...jsonReport(r.results, r.facts),
        ...(untold ? { error: { code: 'COULD_NOT_TELL', message: untold } } : {}),
      }
    if (r.outcome.kind === 'applied') {
      const { renderHuman } = await import('../report/human.js')
      this.log(`\nApplied ${r.outcome.result.applied.length} fix(es). doctor again:\n`)
      this.log(renderHuman(r.results, r.facts, { color: useColor(process.stdout) }))
    } else if (r.outcome.kind === 'nothing') this.log('Nothing to apply.')
    if (untold) this.progress(untold)
    return undefined
  }
}
