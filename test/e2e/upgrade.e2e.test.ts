// karpctl upgrade on the real bed: a webhook-era 1.0.14 install (karpctl's own, from the 1.0.14 charts
// in ../shared/fixtures) moved to 1.14.1 — IAM first, then the CRDs, then the controller — and doctor
// clean after; the same command again writes nothing.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { dirname } from 'node:path'
import { describe, test } from 'node:test'
import { GetRolePolicyCommand, ListRolePoliciesCommand } from '@aws-sdk/client-iam'
import {
  awsClients,
  CLUSTER_NAME,
  karpenterChartDir,
  playController,
  REGION,
  runKarpctl,
  seedBareCluster,
  startBed,
  type Bed,
} from './bed/index.js'

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
const run = (bed: Bed, args: string[]) =>
  runKarpctl(bed, [...args, ...target(bed), '--timeout', '120'], { env: envOf(bed), timeoutMs: 600_000 })

interface UpgradeJson {
  from: string
  to: string
  plan: { summary: Record<string, number>; steps: { address: string; action: string; blocked?: string }[] }
  removableActions: string[]
  doctor?: {
    summary: Record<'pass' | 'fail' | 'warn' | 'unknown' | 'skipped', number>
    checks: { id: string; status: string }[]
  }
}

const releases = (bed: Bed) =>
  JSON.parse(
    execFileSync(bed.helmBin, ['list', '--all-namespaces', '--output', 'json'], {
      env: bed.childEnv(envOf(bed)),
      encoding: 'utf8',
    }),
  ) as { name: string; chart: string; status: string }[]

describe(
  'karpctl upgrade on moto, a real apiserver, real helm and the real charts',
  { timeout: 30 * 60_000 },
  () => {
    test('1.0.14 (webhooks) → 1.14.1: IAM delta, CRDs and controller upgraded, doctor clean; again: nothing to do', async (t) => {
      const bed = await startBed()
      // EKS 1.31: the newest Kubernetes both 1.0.14 and 1.14.1 support.
      const seed = await seedBareCluster(bed, { kubernetesVersion: '1.31' })
      const stopController = playController(bed, seed.net)
      t.after(async () => {
        await stopController()
        await bed.stop()
      })
      const installed = await run(bed, [
        'install',
        '--chart-dir',
        charts('1.0.14'),
        '--karpenter-version',
        '1.0.14',
        '--yes',
        '--json',
      ])
      t.diagnostic(
        `install 1.0.14: exit ${installed.code}\n${installed.stderr.slice(-1500)}\n${installed.stdout.slice(-1500)}`,
      )
      assert.ok(installed.code === 0, installed.stderr)
      assert.deepEqual(
        releases(bed)
          .map((r) => r.chart)
          .sort(),
        ['karpenter-1.0.14', 'karpenter-crd-1.0.14'],
      )

      const dry = await run(bed, ['upgrade', '--chart-dir', charts('1.14.1'), '--dry-run', '--json'])
      assert.equal(dry.code, 0, dry.stderr)
      const plan = JSON.parse(dry.stdout) as UpgradeJson
      assert.equal(plan.from, '1.0.14')
      assert.equal(plan.to, '1.14.1')
      assert.deepEqual(
        plan.plan.steps.filter((s) => s.blocked),
        [],
        'nothing blocks',
      )
      assert.deepEqual(
        releases(bed)
          .map((r) => r.chart)
          .sort(),
        ['karpenter-1.0.14', 'karpenter-crd-1.0.14'],
        '--dry-run changes nothing',
      )

      const up = await run(bed, ['upgrade', '--chart-dir', charts('1.14.1'), '--yes', '--json'])
      t.diagnostic(`upgrade: exit ${up.code}\n${up.stderr.slice(-3000)}`)
      assert.equal(up.code, 0, `${up.stderr}\n${up.stdout.slice(-3000)}`)
      const done = JSON.parse(up.stdout) as UpgradeJson
      assert.equal(
        done.doctor?.summary.fail,
        0,
        JSON.stringify(done.doctor?.checks.filter((c) => c.status === 'fail')),
      )
      assert.deepEqual(
        releases(bed)
          .map((r) => `${r.chart} ${r.status}`)
          .sort(),
        ['karpenter-1.14.1 deployed', 'karpenter-crd-1.14.1 deployed'],
      )
      // IAM first: the statements 1.14.1 adds, on the controller role karpctl made.
      const iam = awsClients(bed).iam
      const names = (
        await iam.send(new ListRolePoliciesCommand({ RoleName: `KarpenterControllerRole-${CLUSTER_NAME}` }))
      ).PolicyNames
      assert.ok(names?.includes('KarpctlUpgrade-1.14'), String(names))
      const added = await iam.send(
        new GetRolePolicyCommand({
          RoleName: `KarpenterControllerRole-${CLUSTER_NAME}`,
          PolicyName: 'KarpctlUpgrade-1.14',
        }),
      )
      const doc = decodeURIComponent(added.PolicyDocument ?? '')
      for (const action of [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeInstanceStatus',
        'iam:ListInstanceProfiles',
      ])
        assert.ok(doc.includes(action), `${action} in ${doc}`)

      const again = await run(bed, ['upgrade', '--chart-dir', charts('1.14.1'), '--yes', '--json'])
      assert.equal(again.code, 0, again.stderr)
      const second = JSON.parse(again.stdout) as UpgradeJson
      assert.deepEqual(
        second.plan.steps.filter((s) => s.action !== 'unchanged').map((s) => `${s.address} ${s.action}`),
        [],
        'a second run changes nothing',
      )
    })
  },
)
