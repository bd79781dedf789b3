// karpctl install against real servers nobody here wrote: moto for AWS, a real kube-apiserver + etcd,
// the real helm binary, the real Karpenter 1.14.1 charts and the real Karpenter 1.14.1 controller
// (`startBed({ karpenter: true })`: it runs as the installed Deployment says, and kube-scheduler binds
// pods). An EKS cluster as it is before Karpenter (untagged subnets, a managed node group in aws-auth)
// gets a full install; doctor must then be clean because Karpenter itself resolved the EC2NodeClass and
// marked the NodePool Ready. The bed plays only the kubelet (bed/kubelet.ts).
import assert from 'node:assert/strict'
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { CreateRoleCommand } from '@aws-sdk/client-iam'
import { parse, stringify } from 'yaml'
import { catalog } from '../../src/checks/catalog.js'
import {
  awsClients,
  bareClusterBed,
  CLUSTER_NAME,
  karpenterFixtures,
  inventory,
  REGION,
  REPO_ROOT,
  runKarpctl,
  type Bed,
} from './bed/index.js'
import {
  EC2NODECLASSES,
  instanceIdOf,
  isTrue,
  karpenterInstances,
  NODECLAIMS,
  NODEPOOLS,
  tagOf,
  unresolved,
  waitForCondition,
} from './bed/karpenter-objects.js'

const CHARTS = () => join(karpenterFixtures(), 'v1.14.1', 'charts')
const BIN = join(REPO_ROOT, 'bin', 'run.js')

/**
 * A bed of its own per scenario (each compares its end state with a clean install's), with the real
 * controller, which keeps running across every kill and re-run: it follows the Deployment.
 */
const freshCluster = (t: { after: (fn: () => Promise<void>) => void }) =>
  bareClusterBed(t, { karpenter: true })
type Fresh = Awaited<ReturnType<typeof freshCluster>>

const envOf = (bed: Bed) => ({ NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` })
const target = (bed: Bed) => [
  '--cluster',
  CLUSTER_NAME,
  '--region',
  REGION,
  '--kube-context',
  bed.kubeContext,
]

function install(bed: Bed, extra: string[] = []) {
  return runKarpctl(bed, ['install', ...target(bed), '--chart-dir', CHARTS(), '--timeout', '60', ...extra], {
    env: envOf(bed),
    timeoutMs: 300_000,
  })
}

interface KubeconfigDoc {
  clusters: { name: string; cluster: { server: string } }[]
  contexts: { name: string; context: { cluster: string; user: string } }[]
  users: { name: string }[]
  'current-context': string
}

interface InstallJson {
  plan: {
    summary: Record<string, number>
    steps: { address: string; action: string; note?: string }[]
    kubeContext?: { context: string; server: string; match: string; eksEndpoint?: string }
  }
  apply?: { applied: string[]; failed: unknown[] }
  doctor: {
    summary: Record<'pass' | 'fail' | 'warn' | 'unknown' | 'skipped', number>
    checks: { id: string; status: string }[]
  }
  calls: { total: number; writes: number }
}

/** IDs moto and the bed pick at random, replaced so two installs on two beds compare equal. */
function normalise(inv: unknown, f: Fresh): string {
  // Sorted keys: moto lists roles and rules in creation order, which a resumed install changes.
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v
  let s = JSON.stringify(inv)
  const ids = [
    ...f.seed.net.subnetIds,
    f.seed.net.clusterSecurityGroupId,
    f.seed.net.nodeSecurityGroupId,
    f.seed.oidcIssuer.replace(/^https:\/\//, ''),
  ]
  ids.forEach((id, i) => (s = s.split(id).join(`<id${i}>`)))
  return JSON.stringify(sorted(JSON.parse(s)))
}

describe(
  'karpctl install on moto, a real apiserver, real helm and the real Karpenter chart',
  { timeout: 30 * 60_000 },
  () => {
    let clean: { inv: string; first: InstallJson }

    test('install from nothing → doctor clean; again → all unchanged, zero write calls', async (t) => {
      const f = await freshCluster(t)
      // The current context is another API server: blocked before any change, with the way out.
      const before = normalise(await inventory(f.bed, f.seed.net), f)
      const elsewhere = join(f.bed.tmpDir, 'kubeconfig-elsewhere')
      const kc = parse(readFileSync(f.bed.kubeconfigPath, 'utf8')) as KubeconfigDoc
      kc.clusters.push({ name: 'elsewhere', cluster: { server: 'https://127.0.0.1:9' } })
      kc.contexts.push({ name: 'elsewhere', context: { cluster: 'elsewhere', user: kc.users[0]!.name } })
      kc['current-context'] = 'elsewhere'
      writeFileSync(elsewhere, stringify(kc))
      const wrong = await runKarpctl(
        f.bed,
        ['install', '--cluster', CLUSTER_NAME, '--region', REGION, '--chart-dir', CHARTS(), '--yes'],
        { env: { ...envOf(f.bed), KUBECONFIG: elsewhere }, timeoutMs: 120_000 },
      )
      assert.equal(wrong.code, 2, wrong.stderr)
      assert.match(
        wrong.stderr,
        /kube context "elsewhere" points at https:\/\/127\.0\.0\.1:9, not at EKS cluster demo \(https:\/\/.+eks\.amazonaws\.com\/?\): run aws eks update-kubeconfig --name demo, or pass --kube-context naming the context that reaches it — nothing was changed/,
      )
      assert.equal(normalise(await inventory(f.bed, f.seed.net), f), before, 'nothing changed')

      const dry = await install(f.bed, ['--dry-run', '--json'])
      assert.equal(dry.code, 0, dry.stderr)
      const dryPlan = JSON.parse(dry.stdout) as InstallJson
      // --kube-context names the bed's API server, which is not the endpoint moto makes up: the plan says so.
      assert.deepEqual(dryPlan.plan.kubeContext && { ...dryPlan.plan.kubeContext, eksEndpoint: '…' }, {
        context: f.bed.kubeContext,
        server: f.bed.kubeServer,
        match: 'chosen',
        eksEndpoint: '…',
      })
      const dryHuman = await install(f.bed, ['--dry-run'])
      assert.match(
        dryHuman.stdout,
        new RegExp(
          `^kube context: ${f.bed.kubeContext.replace(/[/.]/g, '\\$&')} \\(.+named by --kube-context`,
          'm',
        ),
      )
      // Only the CRD handover, which finds no CRD on a fresh cluster, is unchanged.
      assert.deepEqual(
        dryPlan.plan.steps.filter((s) => s.action === 'unchanged').map((s) => s.address),
        ['crd-handover.karpenter-crd'],
      )
      assert.ok(!('apply' in dryPlan), 'dry run applies nothing')

      const r = await install(f.bed, ['--yes', '--json'])
      t.diagnostic(r.stderr)
      assert.equal(r.code, 0, `exit ${r.code}\n${r.stderr}\n${r.stdout.slice(0, 4000)}`)
      const first = JSON.parse(r.stdout) as InstallJson
      assert.deepEqual(first.apply?.failed, [])
      assert.equal(first.doctor.summary.fail, 0, JSON.stringify(first.doctor.checks))
      for (const id of [
        'irsa-trust-policy',
        'passrole-node-role',
        'controller-policy',
        'node-role',
        'interruption-queue',
        'interruption-rules',
        'discovery-tags',
        'helm-release',
        'nodeclass-ready',
        'sts-regional-annotation',
        'toleration-value-types',
      ])
        assert.equal(first.doctor.checks.find((c) => c.id === id)?.status, 'pass', id)
      assert.match(r.stderr, /✔ created IAM role KarpenterControllerRole-demo/)
      // doctor's nodeclass-ready pass stands on what Karpenter wrote, not on the bed: the class's five
      // conditions and the NodePool's Ready.
      const nc = await f.bed.kube.get(`${EC2NODECLASSES}/default`)
      assert.ok(isTrue(nc, 'Ready'), JSON.stringify(nc?.status?.conditions))
      assert.deepEqual(unresolved(nc), [])
      await waitForCondition(f.bed, `${NODEPOOLS}/default`, 'Ready', { status: 'True' })

      const again = await install(f.bed, ['--yes', '--json'])
      assert.equal(again.code, 0, again.stderr)
      const second = JSON.parse(again.stdout) as InstallJson
      assert.deepEqual(second.plan.summary, {
        create: 0,
        update: 0,
        unchanged: first.plan.steps.length,
        delete: 0,
      })
      assert.equal(second.calls.writes, 0)
      t.diagnostic(`no-op re-run: ${second.calls.total} API calls (AWS + Kubernetes), 0 writes`)
      clean = { inv: normalise(await inventory(f.bed, f.seed.net), f), first }

      // The human plan of the re-run, as a user sees it.
      const human = await install(f.bed, ['--yes'])
      assert.match(human.stdout, /= unchanged IAM role KarpenterControllerRole-demo/)
      assert.match(human.stdout, /Plan: 0 to create, 0 to update, 17 unchanged\./)
      assert.match(human.stdout, /Nothing to change/)
      assert.match(human.stdout, new RegExp(`${catalog.length} checks: \\d+ passed, 0 failed`))

      // The smoke test: a pod only the default NodePool can take gets a NodeClaim and runs, then goes.
      const smoke = await install(f.bed, ['--yes', '--json', '--smoke-test'])
      assert.equal(smoke.code, 0, `${smoke.stderr}\n${smoke.stdout.slice(-2000)}`)
      const s = (
        JSON.parse(smoke.stdout) as { smokeTest: { ok: boolean; nodeClaim: string; message: string } }
      ).smokeTest
      assert.ok(s.ok, s.message)
      assert.match(
        s.message,
        /smoke test passed: NodeClaim default-\w+ launched after [\d.]+ s, pod running on default-\w+ after [\d.]+ s \(time to a ready node\)/,
      )
      assert.deepEqual(
        await f.bed.kube
          .list('/api/v1/pods', 'karpctl.io/smoke-test=true')
          .then((l) => l.filter((p) => !p.metadata.deletionTimestamp)),
        [],
        'the workload is deleted',
      )
      // Karpenter launched that NodeClaim: an instance in moto carrying its tags.
      const claim = await f.bed.kube.get(`${NODECLAIMS}/${s.nodeClaim}`)
      assert.ok(
        claim && isTrue(claim, 'Launched'),
        `NodeClaim ${s.nodeClaim}: ${JSON.stringify(claim?.status)}`,
      )
      const id = instanceIdOf(claim)
      const inst = (await karpenterInstances(f.bed)).find((i) => i.InstanceId === id)
      assert.ok(inst, `instance ${id} of NodeClaim ${s.nodeClaim} in moto`)
      assert.equal(tagOf(inst, 'karpenter.sh/nodeclaim'), s.nodeClaim)
      assert.equal(tagOf(inst, 'karpenter.sh/nodepool'), 'default')
      t.diagnostic(`${s.message}; NodeClaim ${s.nodeClaim} → instance ${id} (${inst.InstanceType})`)
    })

    test('killed half-way (SIGKILL after the 1st, 6th and 12th finished step) → the same command again → the end state of a clean install', async (t) => {
      assert.ok(clean, 'needs the clean install of the previous test')
      const f = await freshCluster(t)
      // Each kill point on the same cluster, taken back to nothing by teardown in between.
      for (const at of [1, 6, 12]) {
        const killed = await new Promise<{ done: number; stderr: string }>((resolve) => {
          const child = spawn(
            process.execPath,
            [BIN, 'install', ...target(f.bed), '--chart-dir', CHARTS(), '--yes'],
            {
              env: f.bed.childEnv(envOf(f.bed)),
              stdio: ['ignore', 'ignore', 'pipe'],
            },
          )
          let stderr = ''
          let done = 0
          child.stderr.on('data', (c: Buffer) => {
            stderr += c.toString()
            done = (stderr.match(/^✔ /gm) ?? []).length
            if (done >= at) child.kill('SIGKILL')
          })
          child.on('close', () => resolve({ done, stderr }))
        })
        t.diagnostic(`killed after ${at}:\n${killed.stderr}`)
        assert.ok(killed.done >= at && !/Applied/.test(killed.stderr), `killed mid-apply after step ${at}`)

        const resumed = await install(f.bed, ['--yes', '--json'])
        assert.equal(resumed.code, 0, resumed.stderr)
        const r = JSON.parse(resumed.stdout) as InstallJson
        assert.ok(
          r.plan.steps.some((s) => s.action === 'unchanged' && s.address !== 'crd-handover.karpenter-crd'),
          'what the killed run made is kept',
        )
        assert.ok((r.apply?.applied.length ?? 0) < clean.first.plan.steps.length, 'only the rest is applied')
        assert.deepEqual(
          JSON.parse(normalise(await inventory(f.bed, f.seed.net), f)),
          JSON.parse(clean.inv),
          `same end state as a clean install (killed after ${at})`,
        )
        const down = await runKarpctl(f.bed, ['teardown', ...target(f.bed), '--confirm', CLUSTER_NAME], {
          env: envOf(f.bed),
          timeoutMs: 300_000,
        })
        assert.equal(down.code, 0, down.stderr)
      }
    })

    test('SIGINT mid-install and SIGTERM mid-teardown: exit 130 / 143, one line naming what was applied, no values file left; SIGKILL of karpctl and helm inside the karpenter-crd step: the pending release is recovered; each re-run ends as a clean install', async (t) => {
      assert.ok(clean, 'needs the clean install of the previous test')
      const f = await freshCluster(t)
      const tmp = join(f.bed.tmpDir, 'signal-tmp')
      mkdirSync(tmp, { recursive: true })
      /** Runs karpctl with `args` and sends `signal` once `after` steps have finished (✔ lines). */
      const stopped = (args: string[], signal: NodeJS.Signals, after: number) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [BIN, ...args], {
            env: f.bed.childEnv({ ...envOf(f.bed), TMPDIR: tmp }),
            stdio: ['ignore', 'ignore', 'pipe'],
          })
          let stderr = ''
          let sent = false
          child.stderr.on('data', (c: Buffer) => {
            stderr += c.toString()
            if (!sent && (stderr.match(/^✔ /gm) ?? []).length >= after) {
              sent = true
              child.kill(signal)
            }
          })
          child.on('close', (code) => resolve({ code, stderr }))
        })
      const cleanStop = (r: { code: number | null; stderr: string }, signal: string, code: number) => {
        assert.equal(r.code, code, r.stderr)
        assert.match(r.stderr, new RegExp(`interrupted \\(${signal}\\)`))
        assert.match(r.stderr, /run the same command again to finish/)
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace')
        assert.deepEqual(
          readdirSync(tmp).filter((n) => n.startsWith('karpctl-')),
          [],
          'no temporary file is left',
        )
      }
      const teardownArgs = ['teardown', ...target(f.bed), '--confirm', CLUSTER_NAME]
      const converges = async (what: string, stopTeardown = false) => {
        const resumed = await install(f.bed, ['--yes', '--json'])
        assert.equal(resumed.code, 0, `${what}: ${resumed.stderr}`)
        assert.deepEqual(
          JSON.parse(normalise(await inventory(f.bed, f.seed.net), f)),
          JSON.parse(clean.inv),
          `${what}: same end state as a clean install`,
        )
        if (stopTeardown) {
          // SIGTERM (a CI job cancelled) after teardown's 3rd finished step; the same command finishes.
          const term = await stopped(teardownArgs, 'SIGTERM', 3)
          t.diagnostic(`teardown SIGTERM:\n${term.stderr}`)
          cleanStop(term, 'SIGTERM', 143)
        }
        const down = await runKarpctl(f.bed, teardownArgs, { env: envOf(f.bed), timeoutMs: 300_000 })
        assert.equal(down.code, 0, down.stderr)
        return JSON.parse(resumed.stdout) as InstallJson
      }

      // 1. Ctrl-C after the 4th finished step: the running steps end, no new one starts.
      const interrupted = await stopped(
        ['install', ...target(f.bed), '--chart-dir', CHARTS(), '--yes'],
        'SIGINT',
        4,
      )
      t.diagnostic(`SIGINT:\n${interrupted.stderr}`)
      cleanStop(interrupted, 'SIGINT', 130)
      await converges('after SIGINT', true)

      // 2. karpctl and its helm killed together while helm installs karpenter-crd (as a closed
      // terminal or an OOM kill would): the release may be left pending-install with no helm alive.
      const marker = join(tmp, 'crd-helm-started')
      const wrapper = join(tmp, 'helm-wrapper.sh')
      writeFileSync(
        wrapper,
        `#!/bin/sh\ncase " $* " in *" upgrade "*karpenter-crd*) : > ${JSON.stringify(marker)} ;; esac\nexec ${JSON.stringify(f.bed.helmBin)} "$@"\n`,
        { mode: 0o755 },
      )
      const child = spawn(
        process.execPath,
        [BIN, 'install', ...target(f.bed), '--chart-dir', CHARTS(), '--yes'],
        {
          env: f.bed.childEnv({ ...envOf(f.bed), KARPCTL_HELM: wrapper }),
          stdio: 'ignore',
          detached: true,
        },
      )
      const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
      while (!existsSync(marker)) {
        assert.equal(child.exitCode, null, 'install ended before helm installed karpenter-crd')
        await new Promise((r) => setTimeout(r, 50))
      }
      // Killed the moment helm has recorded its release as pending (its Secret), before it finishes.
      for (let i = 0; i < 500 && child.exitCode === null; i++) {
        const pending = await f.bed.kube.list(
          '/api/v1/namespaces/kube-system/secrets',
          'owner=helm,name=karpenter-crd,status=pending-install',
        )
        if (pending.length > 0) break
        await new Promise((r) => setTimeout(r, 10))
      }
      process.kill(-child.pid!, 'SIGKILL')
      await closed
      const status = execFileSync(
        f.bed.helmBin,
        ['list', '--all', '--namespace', 'kube-system', '--filter', '^karpenter-crd$', '--output', 'json'],
        { env: f.bed.childEnv(envOf(f.bed)), encoding: 'utf8' },
      )
      const left = (JSON.parse(status) as { status: string }[])[0]?.status ?? 'absent'
      t.diagnostic(`karpenter-crd after the kill: ${left}`)
      const resumed = await converges('after SIGKILL inside the karpenter-crd step')
      if (left.startsWith('pending-')) {
        const crd = resumed.plan.steps.find((s) => s.address.endsWith('karpenter-crd') && s.note)
        assert.match(String(crd?.note), /left pending-\w+ by a stopped/, 'the re-run plans the recovery')
      }
    })

    test('a KarpenterNodeRole-demo that karpctl did not make stops the install before any change (exit 2), --node-role reuses it', async (t) => {
      const f = await freshCluster(t)
      await awsClients(f.bed).iam.send(
        new CreateRoleCommand({
          RoleName: 'KarpenterNodeRole-demo',
          AssumeRolePolicyDocument: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
            ],
          }),
        }),
      )
      const before = normalise(await inventory(f.bed, f.seed.net), f)
      const r = await install(f.bed, ['--yes'])
      assert.equal(r.code, 2)
      assert.match(
        r.stderr,
        /^Error: IAM role KarpenterNodeRole-demo: exists and was not made by karpctl \(no karpctl.io\/managed-by tag\): pass --node-role KarpenterNodeRole-demo to reuse it as it is, or --adopt to take it over\n$/,
      )
      assert.equal(normalise(await inventory(f.bed, f.seed.net), f), before, 'nothing changed')

      const noTty = await install(f.bed, ['--node-role', 'KarpenterNodeRole-demo'])
      assert.equal(noTty.code, 2)
      assert.match(noTty.stderr, /the plan changes the cluster: pass --yes to apply it without a terminal/)
    })

    test('the wizard in a real terminal (tmux): every question answered with Enter, the plan confirmed, doctor clean', async (t) => {
      const f = await freshCluster(t)
      const session = `karpctl-e2e-${process.pid}`
      t.after(async () => {
        try {
          execFileSync('tmux', ['kill-session', '-t', session], { stdio: 'ignore' })
        } catch {
          // already gone
        }
      })
      const env = f.bed.childEnv(envOf(f.bed))
      const exports = [
        'AWS_ENDPOINT_URL',
        'AWS_ACCESS_KEY_ID',
        'AWS_SECRET_ACCESS_KEY',
        'AWS_REGION',
        'AWS_CONFIG_FILE',
        'AWS_SHARED_CREDENTIALS_FILE',
        'KUBECONFIG',
        'PATH',
        'NO_COLOR',
        'HOME',
        'HELM_CACHE_HOME',
        'HELM_CONFIG_HOME',
        'HELM_DATA_HOME',
      ]
        .filter((k) => env[k] !== undefined)
        .map((k) => `${k}=${JSON.stringify(env[k])}`)
        .join(' ')
      // No --cluster/--region: they come from the EKS-style context name, as after `aws eks update-kubeconfig`;
      // --kube-context names it because its server (the bed's) is not the endpoint moto makes up.
      const cmd = `env ${exports} ${process.execPath} ${BIN} install --kube-context ${f.bed.kubeContext} --chart-dir ${CHARTS()} --timeout 60; echo "EXIT=$?"; sleep 600`
      execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '180', '-y', '60', cmd])
      const screen = () =>
        execFileSync('tmux', ['capture-pane', '-p', '-J', '-t', session, '-S', '-2000'], { encoding: 'utf8' })
      const waitFor = async (re: RegExp, ms = 60_000) => {
        const t0 = Date.now()
        for (;;) {
          const s = screen()
          if (re.test(s)) return s
          if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${re} on screen:\n${s}`)
          await new Promise((r) => setTimeout(r, 200))
        }
      }
      const keys = (...k: string[]) => execFileSync('tmux', ['send-keys', '-t', session, ...k])
      for (const q of [
        /Karpenter version/,
        /Namespace for the controller/,
        /Controller identity/,
        /How nodes get cluster access/,
        /Handle spot interruptions/,
        /capacity types/,
        /instance categories/,
        /architectures/,
      ]) {
        const before = screen()
        await waitFor(q)
        assert.ok(before !== undefined)
        keys('Enter')
        await waitFor(new RegExp(`${q.source}.*\\S+\\s*$`, 'm')).catch(() => undefined)
      }
      // A chosen CPU limit (kept by every later run), and a values file checked as it is typed.
      await waitFor(/CPU limit/)
      keys('200', 'Enter')
      await waitFor(/Extra Helm values file/)
      keys('/nonexistent/values.yaml', 'Enter')
      await waitFor(/values file "\/nonexistent\/values\.yaml" does not exist: check the path/)
      for (let i = 0; i < 30; i++) keys('BSpace')
      keys('Enter')
      const same = await waitFor(/The same install without questions:\n\s+\S+/)
      assert.match(
        same.replace(/\n\s*/g, ' '),
        /install --cluster demo --region us-west-2 --kube-context \S+ --karpenter-version 1\.14\.1 --namespace kube-system --identity \S+ --node-role create --node-access \S+ --interruption --capacity-types on-demand,spot --instance-categories c,m,r --architectures amd64 --cpu-limit 200 --chart-dir \S+ --yes/,
      )
      await waitFor(/Apply \d+ change\(s\) to cluster demo\?/)
      const plan = screen()
      assert.match(plan, /^kube context: arn:aws:eks:\S+:cluster\/demo \(.+named by --kube-context/m)
      assert.match(plan, /\+ create {4}IAM role KarpenterControllerRole-demo/)
      assert.match(plan, /Plan: 14 to create, 2 to update, 1 unchanged\./)
      keys('y', 'Enter')
      const end = await waitFor(/EXIT=\d+/, 240_000)
      t.diagnostic(end)
      assert.match(end, /✔ created Helm release kube-system\/karpenter/)
      // Every check of the catalog, as the tmux pane shows the end of the report.
      assert.match(end, new RegExp(`${catalog.length} checks: \\d+ passed, 0 failed`))
      assert.match(end, /EXIT=0/)
      assert.match(
        end,
        /Next steps:\n\s+prove a node launches: +\S+ install --cluster demo --region us-west-2 --kube-context \S+ --yes --smoke-test/,
      )

      // The wizard's answers are the next run's defaults: `install --yes` keeps the CPU limit of 200.
      const again = await install(f.bed, ['--yes', '--json'])
      assert.equal(again.code, 0, again.stderr)
      const re = JSON.parse(again.stdout) as InstallJson
      assert.equal(re.plan.steps.find((st) => st.address === 'kube.nodepool.default')?.action, 'unchanged')
      const np = (await f.bed.kube.get('/apis/karpenter.sh/v1/nodepools/default')) as {
        spec: { limits: { cpu: string } }
      }
      assert.equal(np.spec.limits.cpu, '200')
    })
  },
)
