// karpctl upgrade on the real bed: a webhook-era 1.0.14 install moved to 1.14.1 — IAM first, then the
// CRDs, then the controller — and doctor clean after; the same command again writes nothing. Then what
// issue 23 asks of it on real servers: a run killed half-way (alone, and together with its helm) is
// finished by running it again; an install karpctl did not make is upgraded as an adoption that
// teardown gives back; each blocked precondition stops it before any write; the 8443 rule karpctl
// recorded is revoked, a user's is only named.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { dirname, join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import {
  AttachRolePolicyCommand,
  CreatePolicyCommand,
  DetachRolePolicyCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
} from '@aws-sdk/client-iam'
import { DescribeSecurityGroupsCommand } from '@aws-sdk/client-ec2'
import type { PolicyDocument } from '../../src/policy/types.js'
import type { EvaluationRequest } from '../../src/policy/evaluate.js'
import { describeRequest, needsOf, unmet } from '../../src/iam/needs.js'
import { referencePolicies } from '../../src/desired/reference-policy.js'
import {
  ACCOUNT_ID,
  awsClients,
  CLUSTER_NAME,
  failingIn,
  passes,
  runPrinted,
  helm,
  karpenterChartDir,
  bareClusterBed,
  playController,
  REGION,
  REPO_ROOT,
  runKarpctl,
  seedAws,
  seedKubernetes,
  startBed,
  type Bed,
  type KubeObject,
  type Network,
  KARPENTER_VERSION,
  seedBareCluster,
  waitFor,
  fullInventory,
  inventory,
  helmChild,
  helmsAt,
  killPoint,
  leftovers,
  spawnWatched,
  type Watched,
} from './bed/index.js'
import {
  EC2NODECLASSES,
  isTrue,
  NODECLAIMS,
  NODEPOOLS,
  pendingPod,
  unresolved,
  waitForCondition,
} from './bed/karpenter-objects.js'

const BIN = join(REPO_ROOT, 'bin', 'run.js')
const ROLE = `KarpenterControllerRole-${CLUSTER_NAME}`
const charts = (version: '1.0.14' | '1.14.1') => dirname(karpenterChartDir(version))
const envOf = (bed: Bed) => ({ NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` })
const target = (bed: Bed) => [
  '--cluster',
  CLUSTER_NAME,
  '--region',
  REGION,
  '--kube-context',
  bed.kubeContext,
]
const run = (bed: Bed, args: string[], env: Record<string, string> = {}) =>
  runKarpctl(bed, [...args, ...target(bed), '--timeout', '120'], {
    env: { ...envOf(bed), ...env },
    timeoutMs: 600_000,
  })
const UPGRADE = ['upgrade', '--chart-dir', charts('1.14.1'), '--yes']
const upgradeArgv = (bed: Bed) => [BIN, ...UPGRADE, ...target(bed), '--timeout', '120']

interface UpgradeJson {
  from: string
  to: string
  plan: {
    summary: Record<string, number>
    steps: { address: string; action: string; blocked?: string; note?: string }[]
  }
  removableActions: string[]
  removableIngress: string[]
  calls?: { total: number; writes: number; byService: Record<string, number> }
  doctor?: {
    summary: Record<'pass' | 'fail' | 'warn' | 'unknown' | 'skipped', number>
    checks: { id: string; status: string }[]
  }
}

const releases = (bed: Bed) =>
  JSON.parse(
    execFileSync(bed.helmBin, ['list', '--all', '--all-namespaces', '--output', 'json'], {
      env: bed.childEnv(envOf(bed)),
      encoding: 'utf8',
    }),
  ) as { name: string; chart: string; status: string; revision: string }[]
const releaseLines = (bed: Bed) =>
  releases(bed)
    .map((r) => `${r.chart} ${r.status}`)
    .sort()
const UPGRADED = ['karpenter-1.14.1 deployed', 'karpenter-crd-1.14.1 deployed']
const NODECLASS = `${EC2NODECLASSES}/default`
const NODEPOOL = `${NODEPOOLS}/default`

const inlinePolicies = async (bed: Bed) =>
  (await awsClients(bed).iam.send(new ListRolePoliciesCommand({ RoleName: ROLE }))).PolicyNames ?? []

/** karpctl's own controller role after the upgrade: 1.14.1's reference policies, as install names them. */
const TARGET_POLICIES = [
  'EKSIntegrationPolicy',
  'IAMIntegrationPolicy',
  'InterruptionPolicy',
  'NodeLifecyclePolicy',
  'ResourceDiscoveryPolicy',
  'ZonalShiftPolicy',
].map((k) => `KarpenterController${k}-${CLUSTER_NAME}`)

/** The release's newest revision's labels (its Helm Secret's). */
async function releaseLabels(bed: Bed, name: string): Promise<Record<string, string>> {
  const secrets = await bed.kube.list('/api/v1/namespaces/kube-system/secrets', `owner=helm,name=${name}`)
  const newest = secrets.sort(
    (a, b) => Number(b.metadata.labels?.version) - Number(a.metadata.labels?.version),
  )[0]
  return (newest?.metadata.labels ?? {}) as Record<string, string>
}

/** The 8443 ingress from the cluster group on the node group, and karpctl's record of adding it. */
async function webhookRule(bed: Bed, net: Network) {
  const g = (
    await awsClients(bed).ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [net.nodeSecurityGroupId] }))
  ).SecurityGroups![0]!
  return {
    present: (g.IpPermissions ?? []).some(
      (p) =>
        p.FromPort === 8443 &&
        (p.UserIdGroupPairs ?? []).some((u) => u.GroupId === net.clusterSecurityGroupId),
    ),
    recorded: (g.Tags ?? []).some((t) => t.Key === 'karpctl.io/added-ingress-8443'),
  }
}

/** What a blocked run must not have touched: every release (chart, status, revision) and the role's inline policies. */
const written = async (bed: Bed) =>
  JSON.stringify({
    releases: releases(bed)
      .map((r) => `${r.name} ${r.chart} ${r.status} ${r.revision}`)
      .sort(),
    inline: (await inlinePolicies(bed).catch(() => [])).sort(),
  })

function doctorClean(r: UpgradeJson) {
  assert.equal(r.doctor?.summary.fail, 0, JSON.stringify(r.doctor?.checks.filter((c) => c.status === 'fail')))
}

function changed(r: UpgradeJson) {
  return r.plan.steps.filter((s) => s.action !== 'unchanged').map((s) => `${s.address} ${s.action}`)
}

/** karpctl's install of 1.0.14, with the node security group among its groups (install opens 8443). */
const install10 = (bed: Bed, net: Network) =>
  run(bed, [
    'install',
    '--chart-dir',
    charts('1.0.14'),
    '--karpenter-version',
    '1.0.14',
    '--security-group-ids',
    `${net.clusterSecurityGroupId},${net.nodeSecurityGroupId}`,
    '--yes',
    '--json',
  ])

/**
 * A karpctl-made 1.0.14 install on a fresh EKS 1.31 bed, with the node security group among its
 * groups, so install opens (and records) the 8443 rule the 1.0.x webhooks need.
 */
async function karpctlInstall(t: TestContext) {
  // EKS 1.31: the newest Kubernetes both 1.0.14 and 1.14.1 support.
  const { bed, seed } = await bareClusterBed(t, { kubernetesVersion: '1.31' })
  const installed = await install10(bed, seed.net)
  assert.ok(installed.code === 0, `install 1.0.14: ${installed.stderr}`)
  assert.deepEqual(releaseLines(bed), ['karpenter-1.0.14 deployed', 'karpenter-crd-1.0.14 deployed'])
  return { bed, net: seed.net }
}

/** The same upgrade again must converge: both releases at 1.14.1, doctor clean; once more: nothing to do. */
async function converges(bed: Bed, what: string, env: Record<string, string> = {}) {
  const resumed = await run(bed, [...UPGRADE, '--json'], env)
  assert.equal(resumed.code, 0, `${what}: ${resumed.stderr}\n${resumed.stdout.slice(-2000)}`)
  const r = JSON.parse(resumed.stdout) as UpgradeJson
  doctorClean(r)
  assert.deepEqual(releaseLines(bed), UPGRADED, what)
  assert.deepEqual((await inlinePolicies(bed)).sort(), TARGET_POLICIES, what)
  const third = await run(bed, [...UPGRADE, '--json'], env)
  assert.equal(third.code, 0, third.stderr)
  assert.deepEqual(
    changed(JSON.parse(third.stdout) as UpgradeJson),
    [],
    `${what}: the next run changes nothing`,
  )
  return r
}

/** Every request the controller of `version` needs, as karpctl's install fills its reference policies. */
const needsOfVersion = (version: string, nodeRoleArn: string, queueArn: string) =>
  needsOf(
    referencePolicies(version, {
      partition: 'aws',
      region: REGION,
      accountId: ACCOUNT_ID,
      clusterName: CLUSTER_NAME,
      nodeRoleArns: [nodeRoleArn],
      queueArn,
    }).map((p) => p.document),
    ACCOUNT_ID,
  )

/** The controller role's inline policies as IAM holds them now (a policy deleted between list and get is skipped). */
async function roleDocuments(bed: Bed): Promise<Map<string, PolicyDocument>> {
  const iam = awsClients(bed).iam
  const out = new Map<string, PolicyDocument>()
  for (const PolicyName of await inlinePolicies(bed)) {
    const got = await iam.send(new GetRolePolicyCommand({ RoleName: ROLE, PolicyName })).catch(() => null)
    if (got?.PolicyDocument)
      out.set(PolicyName, JSON.parse(decodeURIComponent(got.PolicyDocument)) as PolicyDocument)
  }
  return out
}

/**
 * One state the role was in: the documents read between two listings that agree, or undefined. A
 * read that straddles a write mixes two states (a list from before a policy was put, a document from
 * after the old one was narrowed because it was put) — a gap the role never had: stop 44's CI saw one.
 */
async function roleState(bed: Bed): Promise<Map<string, PolicyDocument> | undefined> {
  const before = (await inlinePolicies(bed)).sort().join(',')
  const docs = await roleDocuments(bed)
  const after = (await inlinePolicies(bed)).sort().join(',')
  return before === after && [...docs.keys()].sort().join(',') === after ? docs : undefined
}

/**
 * Samples the role while an upgrade runs, as fast as IAM answers: each distinct state (every write
 * leaves one) is judged with karpctl's evaluator against the needs met before the upgrade began.
 * `onState` sees each new state's policy names (to inject a fault at one).
 */
function sampleRole(bed: Bed, watched: EvaluationRequest[], onState?: (names: string[]) => void) {
  let stop = false
  const states: string[] = []
  const missing: string[] = []
  const done = (async () => {
    while (!stop) {
      const docs = await roleState(bed)
      if (!docs) continue
      const key = JSON.stringify([...docs].sort())
      if (states.at(-1) !== key) {
        states.push(key)
        onState?.([...docs.keys()])
        for (const r of unmet([...docs.values()], watched))
          missing.push(
            `${describeRequest(r)} (state ${states.length}: ${[...docs.keys()].sort().join(', ')})`,
          )
      }
    }
  })()
  return {
    stop: async () => {
      stop = true
      await done
      return { states: states.length, missing: [...new Set(missing)] }
    },
  }
}

describe(
  'karpctl upgrade on moto, a real apiserver, real helm and the real charts',
  { timeout: 30 * 60_000 },
  () => {
    test('1.0.14 (webhooks) → 1.14.1: IAM delta, CRDs and controller upgraded, the recorded 8443 rule revoked, doctor clean; again: nothing to do, no write', async (t) => {
      const { bed, net } = await karpctlInstall(t)
      assert.deepEqual(await webhookRule(bed, net), { present: true, recorded: true }, 'install opened 8443')

      const dry = await run(bed, [...UPGRADE, '--dry-run', '--json'])
      assert.equal(dry.code, 0, dry.stderr)
      const plan = JSON.parse(dry.stdout) as UpgradeJson
      assert.equal(plan.from, '1.0.14')
      assert.equal(plan.to, '1.14.1')
      assert.deepEqual(
        plan.plan.steps.filter((s) => s.blocked),
        [],
        'nothing blocks',
      )
      assert.equal(plan.calls?.writes, 0, '--dry-run writes nothing')
      assert.deepEqual(
        releaseLines(bed),
        ['karpenter-1.0.14 deployed', 'karpenter-crd-1.0.14 deployed'],
        '--dry-run changes nothing',
      )

      const up = await run(bed, [...UPGRADE, '--json'])
      t.diagnostic(`upgrade: exit ${up.code}\n${up.stderr.slice(-3000)}`)
      assert.equal(up.code, 0, `${up.stderr}\n${up.stdout.slice(-3000)}`)
      const done = JSON.parse(up.stdout) as UpgradeJson
      doctorClean(done)
      assert.deepEqual(releaseLines(bed), UPGRADED)
      assert.deepEqual(changed(done), [
        'iam-role.controller update',
        // karpctl's 1.0.14 CRDs carry the 1.0.x conversion webhook: the hand-over removes it first.
        'crd-handover.karpenter-crd update',
        'helm.karpenter-crd update',
        'helm.karpenter update',
        // What only 1.0.14 granted, kept apart for the old controller, goes once the new one runs.
        'iam-inline-policy.upgrade-carry delete',
        'ec2-ingress.webhook-8443 update',
      ])
      assert.deepEqual(
        await webhookRule(bed, net),
        { present: false, recorded: false },
        'the 8443 rule install recorded adding is revoked, its record with it',
      )
      // IAM first: karpctl's own inline controller policies are 1.14.1's (1.0's one policy gone, no
      // separate KarpctlUpgrade-* policy), on the controller role karpctl made.
      assert.deepEqual((await inlinePolicies(bed)).sort(), TARGET_POLICIES)
      const docs = await Promise.all(
        TARGET_POLICIES.map((PolicyName) =>
          awsClients(bed).iam.send(new GetRolePolicyCommand({ RoleName: ROLE, PolicyName })),
        ),
      )
      const doc = docs.map((d) => decodeURIComponent(d.PolicyDocument ?? '')).join('\n')
      for (const action of [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeInstanceStatus',
        'iam:ListInstanceProfiles',
      ])
        assert.ok(doc.includes(action), `${action} in ${doc}`)

      const again = await run(bed, [...UPGRADE, '--json'])
      assert.equal(again.code, 0, again.stderr)
      const second = JSON.parse(again.stdout) as UpgradeJson
      assert.deepEqual(changed(second), [], 'a second run changes nothing')
      assert.equal(second.calls?.writes, 0, 'a second run writes nothing')
      t.diagnostic(`no-op upgrade calls: ${JSON.stringify(second.calls)}`)
    })

    test(`1.0.14 → 1.14.1 ends with the REAL ${KARPENTER_VERSION} controller Ready on the upgraded IAM: /readyz, the EC2NodeClass Ready by Karpenter, a NodeClaim launched`, async (t) => {
      // The bed builds only 1.14.1: the 1.0.14 controller is played until the upgrade rolls the
      // Deployment to 1.14.1; from there the real controller follows it, with the Deployment's env.
      const bed = await startBed({ karpenter: true })
      const seed = await seedBareCluster(bed, { kubernetesVersion: '1.31', authenticationMode: 'CONFIG_MAP' })
      const stopPlayed = playController(bed, seed.net, 'kube-system', KARPENTER_VERSION)
      t.after(async () => {
        await stopPlayed()
        await bed.stop()
      })
      const installed = await install10(bed, seed.net)
      assert.equal(installed.code, 0, `install 1.0.14: ${installed.stderr}`)
      assert.equal(bed.karpenter!.controller.proc, undefined, 'no real controller for a 1.0.14 image')
      const up = await run(bed, [...UPGRADE, '--json'])
      assert.equal(up.code, 0, `${up.stderr}\n${up.stdout.slice(-3000)}`)
      doctorClean(JSON.parse(up.stdout) as UpgradeJson)
      assert.deepEqual(releaseLines(bed), UPGRADED)
      await bed.karpenter!.controller.ready()
      // What the played 1.0.14 controller wrote goes; what follows is the real controller's own.
      for (const path of [NODECLASS, NODEPOOL])
        await bed.kube.mergePatch(path, { status: { conditions: null, amis: null } }, 'status')
      const nc = await waitForCondition(bed, NODECLASS, 'Ready', { status: 'True' })
      await waitForCondition(bed, NODEPOOL, 'Ready', { status: 'True' })
      assert.deepEqual(unresolved(nc), [])
      // The upgraded role grants every request 1.14.1's controller makes (karpctl's evaluator: moto
      // enforces no IAM, so this is how "on the upgraded IAM" is judged), and nothing of 1.0's is left.
      assert.deepEqual((await inlinePolicies(bed)).sort(), TARGET_POLICIES)
      const docs = [...(await roleDocuments(bed)).values()]
      const text = JSON.stringify(docs)
      const nodeRoleArn = /arn:aws:iam::\d+:role\/KarpenterNodeRole-[\w-]+/.exec(text)?.[0] ?? ''
      const queueArn = /arn:aws:sqs:[\w-]+:\d+:[\w-]+/.exec(text)?.[0] ?? ''
      assert.ok(nodeRoleArn && queueArn, text)
      assert.deepEqual(
        unmet(docs, needsOfVersion(KARPENTER_VERSION, nodeRoleArn, queueArn)).map(describeRequest),
        [],
      )
      // …and the controller launches: a pending pod gets a NodeClaim of the default NodePool.
      await bed.kube.create(pendingPod('after-upgrade', { 'karpenter.sh/nodepool': 'default' }))
      let node = ''
      await waitFor(
        'pod after-upgrade bound to a node the real controller launched',
        async () =>
          !!(node =
            (await bed.kube.get('/api/v1/namespaces/default/pods/after-upgrade'))?.spec?.nodeName ?? ''),
        { timeoutMs: 180_000, intervalMs: 1000, proc: bed.procs.karpenter },
      )
      const claim = await bed.kube.get(`${NODECLAIMS}/${node}`)
      assert.ok(isTrue(claim, 'Launched'), JSON.stringify(claim?.status?.conditions))
      t.diagnostic(
        `real controller ${KARPENTER_VERSION} after upgrade: EC2NodeClass Ready (AMIs ${JSON.stringify((nc.status.amis as KubeObject[]).map((a) => a.id))}, profile ${String(nc.status.instanceProfile)}); NodeClaim ${node} → ${String(claim?.status?.providerID)}`,
      )
    })

    test("the controller role sampled through the upgrade: no grant 1.0.14's or 1.14.1's controller needs is ever missing; a kill right after the first delete leaves no gap and converges", async (t) => {
      // Issue 33: the old order deleted KarpenterControllerPolicy-<c> before the last puts, leaving the
      // running 1.0.14 controller without 11 actions (seen in 2 of 3 sampled runs).
      const { bed } = await karpctlInstall(t)
      const start = await roleDocuments(bed)
      const text = JSON.stringify([...start.values()])
      const nodeRoleArn = /arn:aws:iam::\d+:role\/KarpenterNodeRole-[\w-]+/.exec(text)?.[0] ?? ''
      const queueArn = /arn:aws:sqs:[\w-]+:\d+:[\w-]+/.exec(text)?.[0] ?? ''
      assert.ok(nodeRoleArn && queueArn, text)
      const both = [
        ...needsOfVersion('1.0.14', nodeRoleArn, queueArn),
        ...needsOfVersion('1.14.1', nodeRoleArn, queueArn),
      ]
      const watched = both.filter((r) => unmet([...start.values()], [r]).length === 0)
      t.diagnostic(`${watched.length} of ${both.length} needs met before the upgrade, watched`)

      // A fault right after the first delete: the run is killed as soon as a sampled state lacks the old policy.
      let child: ReturnType<typeof spawn> | undefined
      let killedAt: string[] | undefined
      const sampler = sampleRole(bed, watched, (names) => {
        if (!killedAt && child && !names.includes(`KarpenterControllerPolicy-${CLUSTER_NAME}`)) {
          killedAt = names
          child.kill('SIGKILL')
        }
      })
      const closed = await new Promise<number | null>((resolve) => {
        child = spawn(process.execPath, upgradeArgv(bed), { env: bed.childEnv(envOf(bed)), stdio: 'ignore' })
        child.on('close', (code) => resolve(code))
      })
      const first = await sampler.stop()
      t.diagnostic(
        `killed after the first delete (exit ${closed}); ${first.states} role states sampled; then: ${killedAt?.join(', ')}`,
      )
      assert.ok(killedAt, 'the run was killed after the first delete')
      assert.deepEqual(first.missing, [], 'no need met before the upgrade went missing')
      for (const p of TARGET_POLICIES) assert.ok(killedAt.includes(p), `${p} was put before the first delete`)

      // The same command again, sampled too: it never takes a 1.14.1 grant away (all were put before the
      // first delete); what only 1.0.14 needed goes with the carry once the new controller runs.
      const target114 = needsOfVersion('1.14.1', nodeRoleArn, queueArn)
      assert.deepEqual(unmet([...(await roleDocuments(bed)).values()], target114).map(describeRequest), [])
      const again = sampleRole(bed, target114)
      const r = await converges(bed, 'after a kill right after the first delete')
      const second = await again.stop()
      assert.deepEqual(second.missing, [], 'the re-run never took a 1.14.1 grant away')
      // The carry is gone once the new controller runs: only 1.14.1's needs must hold now.
      const end = await roleDocuments(bed)
      assert.deepEqual(
        unmet([...end.values()], needsOfVersion('1.14.1', nodeRoleArn, queueArn)).map(describeRequest),
        [],
      )
      assert.equal(r.doctor?.summary.fail, 0)
    })

    test('teardown after upgrade, five times in a row on one bed: exit 0 each, the EC2NodeClass waited for before the controller goes', async (t) => {
      // Issue 33: once in five runs the release was removed before the EC2NodeClass's finalizer was
      // lifted, `helm uninstall karpenter-crd --wait` hung five minutes and teardown exited 2.
      const { bed, net } = await karpctlInstall(t)
      for (let i = 1; i <= 5; i++) {
        if (i > 1) {
          const again = await install10(bed, net)
          assert.equal(again.code, 0, `install ${i}: ${again.stderr}`)
        }
        const up = await run(bed, [...UPGRADE, '--json'])
        assert.equal(up.code, 0, `upgrade ${i}: ${up.stderr.slice(-2000)}`)
        const t0 = Date.now()
        const down = await run(bed, ['teardown', '--confirm', CLUSTER_NAME])
        t.diagnostic(`round ${i}: teardown exit ${down.code} in ${Date.now() - t0} ms`)
        assert.equal(down.code, 0, `teardown ${i}: ${down.stderr.slice(-3000)}`)
        const order = down.stderr
          .split('\n')
          .filter((l) => /EC2NodeClass default|Helm release \S*karpenter\b/.test(l) && /^✔ /.test(l))
        t.diagnostic(order.join('\n'))
        assert.deepEqual(releaseLines(bed), [], `round ${i}: no release left`)
        // The CRDs went with the karpenter-crd release, so every EC2NodeClass with them: gone, not stuck.
        assert.equal(
          await bed.kube.get(
            '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ec2nodeclasses.karpenter.k8s.aws',
          ),
          undefined,
          `round ${i}: the EC2NodeClass CRD (and so every EC2NodeClass) is gone`,
        )
      }
    })

    test('SIGKILL after the 2nd finished step → the same command again converges; a third run changes nothing', async (t) => {
      const { bed } = await karpctlInstall(t)
      const killed = await new Promise<{ done: number; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, upgradeArgv(bed), {
          env: bed.childEnv(envOf(bed)),
          stdio: ['ignore', 'ignore', 'pipe'],
        })
        let stderr = ''
        let done = 0
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString()
          done = (stderr.match(/^✔ /gm) ?? []).length
          if (done >= 2) child.kill('SIGKILL')
        })
        child.on('close', () => resolve({ done, stderr }))
      })
      t.diagnostic(`killed:\n${killed.stderr}`)
      assert.ok(killed.done >= 2 && !/Applied/.test(killed.stderr), 'killed mid-apply after step 2')
      const r = await converges(bed, 'after SIGKILL')
      assert.ok(
        r.plan.steps.some((s) => s.address === 'iam-role.controller' && s.action === 'unchanged'),
        'what the killed run added is kept',
      )
    })

    // The recovery rolls back without --wait (the bed has no kube-controller-manager to finish a
    // rollout), and a helm is judged "still at it" by karpctl's marker in its environment, so a parallel
    // run's helm at another cluster's `karpenter` release does not block this one.
    test('SIGKILL of karpctl and its helm while the karpenter release upgrades: the re-run recovers the release and converges', async (t) => {
      const { bed } = await karpctlInstall(t)
      const marker = join(bed.tmpDir, 'karpenter-helm-started')
      const wrapper = join(bed.tmpDir, 'helm-wrapper.sh')
      writeFileSync(
        wrapper,
        `#!/bin/sh\ncase " $* " in *" upgrade "*" karpenter "*) : > ${JSON.stringify(marker)} ;; esac\nexec ${JSON.stringify(bed.helmBin)} "$@"\n`,
        { mode: 0o755 },
      )
      const child = spawn(process.execPath, upgradeArgv(bed), {
        env: bed.childEnv({ ...envOf(bed), KARPCTL_HELM: wrapper }),
        stdio: 'ignore',
        detached: true,
      })
      const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
      while (!existsSync(marker)) {
        assert.equal(child.exitCode, null, 'upgrade ended before helm upgraded karpenter')
        await new Promise((r) => setTimeout(r, 50))
      }
      // Killed once helm has written its pending revision (its release Secret), before it finishes: what
      // a closed terminal or an OOM kill leaves, and what the re-run must recover.
      const pending = () =>
        bed.kube.list(
          '/api/v1/namespaces/kube-system/secrets',
          'owner=helm,name=karpenter,status=pending-upgrade',
        )
      while ((await pending()).length === 0) {
        assert.equal(child.exitCode, null, 'helm finished before its pending revision was seen')
        await new Promise((r) => setTimeout(r, 20))
      }
      process.kill(-child.pid!, 'SIGKILL')
      await closed
      const left = releases(bed).find((r) => r.name === 'karpenter')
      t.diagnostic(`karpenter after the kill: ${left?.chart} ${left?.status}`)
      assert.match(String(left?.status), /^pending-upgrade$/, 'the kill left the release pending')
      const r = await converges(bed, 'after SIGKILL inside the karpenter step')
      const step = r.plan.steps.find((s) => s.address === 'helm.karpenter')
      assert.match(String(step?.note), /left pending-\w+ by a stopped/, 'the re-run plans the recovery')
    })

    test('an install karpctl did not make (helm of the 1.0.14 chart, the 1.0.14 policies as the user’s managed policies, the user’s 8443 rule): upgraded as an adoption', async (t) => {
      const bed = await startBed()
      const seed = await seedAws(bed, { kubernetesVersion: '1.31' })
      const stopController = playController(bed, seed)
      t.after(async () => {
        await stopController()
        await bed.stop()
      })
      // The role carries 1.0.14's reference policies, as the user made them: managed, untagged.
      const iam = awsClients(bed).iam
      for (const arn of Object.values(seed.controllerPolicyArns))
        await iam.send(new DetachRolePolicyCommand({ RoleName: ROLE, PolicyArn: arn }))
      const own: string[] = []
      for (const p of referencePolicies('1.0.14', {
        partition: 'aws',
        region: REGION,
        accountId: ACCOUNT_ID,
        clusterName: CLUSTER_NAME,
        nodeRoleArns: [seed.nodeRoleArn],
        queueArn: seed.queueArn,
      })) {
        const created = await iam.send(
          new CreatePolicyCommand({
            PolicyName: `user-${p.key}`,
            PolicyDocument: JSON.stringify(p.document),
          }),
        )
        own.push(created.Policy!.Arn!)
        await iam.send(new AttachRolePolicyCommand({ RoleName: ROLE, PolicyArn: created.Policy!.Arn! }))
      }
      await seedKubernetes(bed, { chartVersion: '1.0.14', aws: seed })
      const attached = async () =>
        ((await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: ROLE }))).AttachedPolicies ?? [])
          .map((a) => a.PolicyArn)
          .sort()
      const ownBefore = await attached()
      assert.deepEqual(await webhookRule(bed, seed), { present: true, recorded: false })

      const up = await run(bed, [...UPGRADE, '--json'])
      t.diagnostic(`upgrade: exit ${up.code}\n${up.stderr.slice(-3000)}`)
      assert.equal(up.code, 0, `${up.stderr}\n${up.stdout.slice(-3000)}`)
      const r = JSON.parse(up.stdout) as UpgradeJson
      doctorClean(r)
      assert.deepEqual(releaseLines(bed), UPGRADED)
      assert.ok((await inlinePolicies(bed)).includes('KarpctlUpgrade-1.14'))
      const tags = Object.fromEntries(
        ((await iam.send(new GetRoleCommand({ RoleName: ROLE }))).Role?.Tags ?? []).map((x) => [
          x.Key,
          x.Value,
        ]),
      )
      // Recorded as a repair is (what the upgraded controller needs), never as an adoption.
      assert.equal(tags['karpctl.io/adopted-by'], undefined, JSON.stringify(tags))
      assert.equal(tags['karpctl.io/repaired-inline-policies'], 'KarpctlUpgrade-1.14', JSON.stringify(tags))
      assert.deepEqual(await attached(), ownBefore, "the user's own policies are untouched")
      assert.deepEqual(
        await webhookRule(bed, seed),
        { present: true, recorded: false },
        "the user's 8443 rule is kept",
      )
      assert.ok(
        r.removableIngress.some((c) => c.includes(`--group-id ${seed.nodeSecurityGroupId}`)),
        `the user's 8443 rule is named: ${JSON.stringify(r.removableIngress)}`,
      )
      // Both releases' new revisions say they are karpctl's upgrade, with no rollback point.
      for (const name of ['karpenter', 'karpenter-crd']) {
        const labels = await releaseLabels(bed, name)
        assert.equal(labels['karpctl.io/upgraded-to'], '1.14.1', `${name}: ${JSON.stringify(labels)}`)
        assert.equal(
          labels['karpctl.io/adopted-from-revision'],
          undefined,
          `${name}: ${JSON.stringify(labels)}`,
        )
        assert.equal(labels['karpctl.io/managed-by'], undefined, `${name}: never karpctl's created mark`)
      }
      const crdMarks = async () =>
        (await bed.kube.list('/apis/apiextensions.k8s.io/v1/customresourcedefinitions'))
          .filter((c) => /karpenter/.test(c.metadata.name))
          .map((c) => {
            const a = (c.metadata.annotations ?? {}) as Record<string, string>
            return `${c.metadata.name} ${a['meta.helm.sh/release-name']} ${Object.keys(a)
              .filter((k) => k.startsWith('karpctl.io/'))
              .join(',')}`
          })
          .sort()
      const handed = await crdMarks()
      assert.ok(
        handed.every((l) => / karpenter-crd $/.test(l)),
        `the CRDs are the karpenter-crd release's, with no karpctl record: ${JSON.stringify(handed)}`,
      )

      // Issue 33: the three CRDs the 1.0.14 chart's crds/ folder made end equal to the 1.14.1 chart's —
      // no conversion webhook left to kube-system/karpenter:8443 (Helm's adoption alone keeps it).
      for (const name of [
        'nodepools.karpenter.sh',
        'nodeclaims.karpenter.sh',
        'ec2nodeclasses.karpenter.k8s.aws',
      ]) {
        const live = (await bed.kube.get(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        )) as unknown as {
          spec: Record<string, unknown> & { versions: unknown[]; conversion?: unknown }
        }
        const file = join(
          charts('1.14.1'),
          'karpenter-crd',
          'templates',
          `${name.split('.').slice(1).join('.')}_${name.split('.')[0]}.yaml`,
        )
        const chart = parseYaml(
          readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => !l.includes('{{'))
            .join('\n'),
        ) as { spec: Record<string, unknown> & { versions: unknown[] } }
        assert.deepEqual(live.spec.conversion, { strategy: 'None' }, `${name}: no conversion webhook`)
        for (const key of ['group', 'names', 'scope', 'versions'])
          assert.deepEqual(live.spec[key], chart.spec[key], `${name}: spec.${key} equals the 1.14.1 chart's`)
      }

      // doctor's crd-conversion-webhook on a webhook left behind (as the old hand-over left it), and its
      // printed fix replayed as a user pastes it.
      await bed.kube.mergePatch(
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.karpenter.sh',
        {
          spec: {
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: ['v1beta1', 'v1'],
                clientConfig: { service: { name: 'karpenter', namespace: 'kube-system', port: 8443 } },
              },
            },
          },
        },
      )
      const [left] = await failingIn(bed, 'crd-conversion-webhook')
      t.diagnostic(`${left?.message}\n${left?.fix?.commands?.join('\n')}`)
      assert.match(String(left?.message), /serves no port 8443/)
      await runPrinted(bed, bed.tmpDir, left?.fix?.commands ?? [])
      await passes(bed, 'crd-conversion-webhook')

      // Teardown afterwards keeps the upgrade: both releases stay at 1.14.1, deployed, only karpctl's
      // labels come off; no CRD handover is given back; the role keeps what the upgraded controller
      // needs, recorded, until the install goes.
      const down = await runKarpctl(bed, ['teardown', ...target(bed), '--confirm', CLUSTER_NAME, '--json'], {
        env: envOf(bed),
        timeoutMs: 600_000,
      })
      t.diagnostic(`teardown: exit ${down.code}\n${down.stderr.slice(-3000)}`)
      assert.equal(down.code, 0, `${down.stderr}\n${down.stdout.slice(-3000)}`)
      const steps = (JSON.parse(down.stdout) as UpgradeJson).plan.steps
      const stepOf = (a: string) => steps.find((x) => x.address === a)
      assert.match(
        String(stepOf('helm.karpenter')?.note),
        /upgraded by karpctl to 1\.14\.1 .*only karpctl's labels come off/,
      )
      assert.equal(
        stepOf('kube.crds.restore')?.action,
        'unchanged',
        'no CRD handover recorded, none given back',
      )
      assert.deepEqual(releaseLines(bed), UPGRADED, 'teardown keeps the upgraded releases')
      for (const name of ['karpenter', 'karpenter-crd'])
        assert.deepEqual(
          Object.keys(await releaseLabels(bed, name)).filter((k) => k.startsWith('karpctl.io/')),
          [],
          `${name}: karpctl's labels are off`,
        )
      assert.deepEqual(await crdMarks(), handed, "the CRDs stay the karpenter-crd release's")
      assert.ok(
        (await inlinePolicies(bed)).includes('KarpctlUpgrade-1.14'),
        'the addition the running 1.14.1 controller needs is kept while it runs',
      )
      assert.deepEqual(await attached(), ownBefore, "the user's own policies are untouched")
      const kept = (await iam.send(new GetRoleCommand({ RoleName: ROLE }))).Role?.Tags ?? []
      assert.deepEqual(
        kept.filter((x) => x.Key?.startsWith('karpctl.io/')).map((x) => `${x.Key}=${x.Value}`),
        ['karpctl.io/repaired-inline-policies=KarpctlUpgrade-1.14'],
        'the role is kept with the record of the addition, for the teardown after the install goes',
      )
    })

    test('blocked preconditions stop the upgrade before any write (exit 2, the way out): v1beta1 still stored, a failed release', async (t) => {
      const { bed } = await karpctlInstall(t)
      const before = await written(bed)

      // A CRD that still lists v1beta1 in status.storedVersions.
      const crd = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.karpenter.sh'
      await bed.kube.mergePatch(crd, { status: { storedVersions: ['v1beta1', 'v1'] } }, 'status')
      const stored = await run(bed, [...UPGRADE])
      assert.equal(stored.code, 2, stored.stderr)
      assert.match(stored.stdout + stored.stderr, /still stored as v1beta1 in nodepools\.karpenter\.sh/)
      assert.match(stored.stdout + stored.stderr, /storedVersions/)
      assert.equal(await written(bed), before, 'a blocked upgrade writes nothing')
      await bed.kube.mergePatch(crd, { status: { storedVersions: ['v1'] } }, 'status')

      // A release whose last upgrade the API server refused: a boolean toleration value.
      const broken = await helm(bed, [
        'upgrade',
        'karpenter',
        karpenterChartDir('1.0.14'),
        '--namespace',
        'kube-system',
        '--reuse-values',
        '--set',
        'tolerations[0].key=dedicated',
        '--set',
        'tolerations[0].value=true',
      ]).catch((e: unknown) => e)
      t.diagnostic(`broken helm upgrade: ${String(broken).slice(0, 500)}`)
      assert.ok(releaseLines(bed).includes('karpenter-1.0.14 failed'), JSON.stringify(releaseLines(bed)))
      const failedBefore = await written(bed)
      const failed = await run(bed, [...UPGRADE])
      assert.equal(failed.code, 2, failed.stderr)
      assert.match(
        failed.stdout + failed.stderr,
        /is failed \(chart 1\.0\.14\): run `karpctl doctor --fix` first/,
      )
      assert.equal(await written(bed), failedBefore, 'a blocked upgrade writes nothing')
    })

    test('an EKS Kubernetes version older than the target supports: exit 2, nothing written', async (t) => {
      const bed = await startBed()
      const seed = await seedAws(bed, { kubernetesVersion: '1.24' })
      t.after(() => bed.stop())
      await seedKubernetes(bed, { chartVersion: '1.0.14', aws: seed, nodePool: false })
      const before = await written(bed)
      const r = await run(bed, [...UPGRADE])
      assert.equal(r.code, 2, r.stderr)
      assert.match(
        r.stdout + r.stderr,
        /Kubernetes 1\.24 is older than Karpenter 1\.14\.1 supports \(1\.25 – /,
      )
      assert.equal(await written(bed), before, 'a blocked upgrade writes nothing')
    })

    // Issue 36.3 on the bed: SIGKILL of upgrade (3 points), tenant add (2) and teardown (2), each at a
    // point seen on the servers or in the process table; each re-run of the same command ends where an
    // uninterrupted run ends (the inventory compared), nothing else is touched, no helm of the cluster
    // is left running and no karpctl temporary or `.tmp` file is left.
    test('SIGKILL of upgrade (in IAM, while helm runs, between releases), tenant add (2 points) and teardown (2 points): each re-run converges to the uninterrupted end state, no helm or file left', async (t) => {
      const { bed, seed } = await bareClusterBed(t, { kubernetesVersion: '1.31' })
      const net = seed.net
      const tmp = join(bed.tmpDir, 'kill-tmp')
      const cache = join(bed.tmpDir, 'kill-cache')
      mkdirSync(tmp, { recursive: true })
      mkdirSync(cache, { recursive: true })
      const env = { TMPDIR: tmp, XDG_CACHE_HOME: cache }
      const start = (args: string[]) =>
        spawnWatched(
          BIN,
          [...args, ...target(bed), '--timeout', '120'],
          bed.childEnv({ ...envOf(bed), ...env }),
        )
      const clean = async (what: string) => {
        assert.deepEqual(helmsAt(bed), [], `${what}: no helm left at the cluster`)
        assert.deepEqual(leftovers(tmp, cache), [], `${what}: no karpctl temporary or .tmp file left`)
      }
      const ok = async (args: string[], what: string) => {
        const r = await run(bed, args, env)
        assert.equal(r.code, 0, `${what}: ${r.stderr.slice(-3000)}`)
        return r
      }
      const preInstall = await inventory(bed, net)
      const reinstall = async () => {
        const r = await install10(bed, net)
        assert.equal(r.code, 0, `install 1.0.14: ${r.stderr}`)
      }
      const points: string[] = []
      const killed = async (w: Watched, what: string) => {
        w.kill()
        const c = await w.closed
        points.push(`${what}: ${(c.stderr.match(/^✔ /gm) ?? []).length} steps done`)
        t.diagnostic(`killed ${what}:\n${c.stderr}`)
        assert.equal(c.signal, 'SIGKILL', `${what}: killed before it ended`)
      }

      // The uninterrupted upgrade's end state: the reference.
      await reinstall()
      await converges(bed, 'uninterrupted', env)
      const upgraded = await fullInventory(bed, net)
      const upgradeKilledAt = async (what: string, point: (w: Watched) => Promise<unknown>) => {
        await ok(['teardown', '--confirm', CLUSTER_NAME], `teardown before ${what}`)
        await reinstall()
        const w = start(UPGRADE)
        await point(w)
        await killed(w, what)
        await converges(bed, `after SIGKILL ${what}`, env)
        assert.deepEqual(await fullInventory(bed, net), upgraded, `${what}: the uninterrupted end state`)
        await clean(what)
      }
      await upgradeKilledAt('upgrade during the IAM step (its first new policy put)', (w) =>
        killPoint(w, 'a new inline policy', async () =>
          (await inlinePolicies(bed)).some((p) => TARGET_POLICIES.includes(p)),
        ),
      )
      // karpctl alone: its helm goes on, orphaned; the re-run waits for it (or rolls its pending revision back).
      await upgradeKilledAt('upgrade while its helm upgrades karpenter-crd', (w) =>
        killPoint(w, 'helm upgrade karpenter-crd running', () =>
          helmChild(w.pid, 'upgrade', 'karpenter-crd'),
        ),
      )
      await upgradeKilledAt('upgrade between the two releases', (w) =>
        killPoint(w, 'karpenter-crd upgraded, karpenter not yet', () =>
          /^✔ .*Helm release kube-system\/karpenter-crd\b/m.test(w.stderr()),
        ),
      )

      // tenant add on the upgraded install: the uninterrupted tenant, then two kills, each removed between.
      const TENANT = ['tenant', 'add', 'acme', '--yes']
      await ok(TENANT, 'tenant add')
      const withTenant = await fullInventory(bed, net)
      const tenantRole = `KarpenterNodeRole-${CLUSTER_NAME}-acme`
      const tenantKilledAt = async (what: string, point: (w: Watched) => Promise<unknown>) => {
        await ok(['tenant', 'remove', 'acme', '--confirm', 'acme'], `tenant remove before ${what}`)
        assert.deepEqual(await fullInventory(bed, net), upgraded, 'tenant remove gives back the install')
        const w = start(TENANT)
        await point(w)
        await killed(w, what)
        await ok(TENANT, `tenant add after SIGKILL ${what}`)
        assert.deepEqual(await fullInventory(bed, net), withTenant, `${what}: the uninterrupted end state`)
        await clean(what)
      }
      await tenantKilledAt('tenant add once its node role exists', (w) =>
        killPoint(w, 'the tenant role', () =>
          awsClients(bed)
            .iam.send(new GetRoleCommand({ RoleName: tenantRole }))
            .then(
              () => true,
              () => false,
            ),
        ),
      )
      await tenantKilledAt('tenant add once its EC2NodeClass exists', (w) =>
        killPoint(
          w,
          'the EC2NodeClass acme',
          async () => (await bed.kube.get(`${EC2NODECLASSES}/acme`)) !== undefined,
        ),
      )

      // teardown, twice killed: the re-run gives back the pre-install inventory.
      const teardownKilledAt = async (what: string, point: (w: Watched) => Promise<unknown>) => {
        const w = start(['teardown', '--confirm', CLUSTER_NAME])
        await point(w)
        await killed(w, what)
        await ok(['teardown', '--confirm', CLUSTER_NAME], `teardown after SIGKILL ${what}`)
        assert.deepEqual(await inventory(bed, net), preInstall, `${what}: the pre-install inventory`)
        assert.deepEqual(releaseLines(bed), [], `${what}: no release left`)
        await clean(what)
      }
      await teardownKilledAt('teardown once the tenant NodePool is gone', (w) =>
        killPoint(
          w,
          'NodePool acme gone',
          async () => (await bed.kube.get(`${NODEPOOLS}/acme`)) === undefined,
        ),
      )
      await reinstall()
      await teardownKilledAt('teardown while its helm uninstalls karpenter', (w) =>
        killPoint(w, 'helm uninstall karpenter running', () => helmChild(w.pid, 'uninstall', 'karpenter')),
      )
      t.diagnostic(points.join('\n'))
    })
  },
)
