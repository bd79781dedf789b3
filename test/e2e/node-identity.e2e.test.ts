// What nodes launch as, on the real bed (issue 21, items 4 and 8): an EC2NodeClass whose
// spec.instanceProfile is missing or holds no role is node-role's failure, saying what the profile
// holds; tenants sharing the default node role are tenant-isolation's, and its printed fix (the way
// without eksctl, run exactly as printed) gives them their own roles AND lets the controller pass
// them, so no passrole-node-role failure follows. Each finding's fix is manual for --fix, saying why.
// On the real Karpenter 1.14.1 controller (`startBed({ karpenter: true })`): every EC2NodeClass and
// NodePool here is marked Ready by Karpenter itself, before and after each printed fix.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import {
  DeleteInstanceProfileCommand,
  DeleteRolePolicyCommand,
  GetInstanceProfileCommand,
  GetRolePolicyCommand,
  RemoveRoleFromInstanceProfileCommand,
} from '@aws-sdk/client-iam'
import type { Finding } from '../../src/checks/types.js'
import {
  awsClients,
  CLUSTER_NAME,
  defaultEC2NodeClass,
  defaultNodePool,
  doctorReport,
  failingChecks,
  karpctlOn,
  parseJsonOut,
  passes,
  runPrinted,
  seedAws,
  seedKubernetes,
  startBed,
  type AwsClients,
  type Bed,
  type DoctorReport,
  type FixJson,
  type KubeObject,
  type SeedResult,
} from './bed/index.js'
import { EC2NODECLASSES, NODEPOOLS, waitForCondition } from './bed/karpenter-objects.js'

const TENANT_KEY = 'karpctl.io/tenant'
const PROFILE = `KarpenterNodeInstanceProfile-${CLUSTER_NAME}-profiled`

const statusOf = (r: Pick<DoctorReport, 'checks'> | FixJson, id: string) =>
  r.checks.find((c) => c.id === id)?.status

describe(
  'node identity: instance profiles and tenant roles, fixes replayed as printed',
  { timeout: 20 * 60_000 },
  () => {
    let bed: Bed
    let seed: SeedResult
    let aws: AwsClients
    let dir: string
    before(async () => {
      bed = await startBed({ karpenter: true })
      // CONFIG_MAP: moto has no access-entry API (as karpenter.e2e); the tenant fix's access step is aws-auth's.
      seed = await seedAws(bed, { authenticationMode: 'CONFIG_MAP' })
      aws = awsClients(bed)
      // The chart's Deployment runs the real controller; the default class and pool are Karpenter's to mark.
      await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
      await bed.karpenter!.controller.ready()
      await readyByKarpenter('default')
      dir = mkdtempSync(join(tmpdir(), 'karpctl-printed-'))
    })
    after(() => {
      if (dir) rmSync(dir, { recursive: true, force: true })
      return bed?.stop()
    })

    /** Waits until Karpenter marks EC2NodeClass and NodePool `name` Ready. */
    async function readyByKarpenter(name: string) {
      await waitForCondition(bed, `${EC2NODECLASSES}/${name}`, 'Ready', { status: 'True' })
      await waitForCondition(bed, `${NODEPOOLS}/${name}`, 'Ready', { status: 'True' })
    }

    /**
     * An EC2NodeClass and its NodePool (marked for `tenant` as karpctl marks them, if given), once
     * Karpenter marked both Ready. A spec.instanceProfile that does not exist still goes Ready: v1.14.1
     * does not look the profile up (doctor-karpenter.e2e shows the launch that then fails).
     */
    async function nodeClassWithPool(name: string, spec: Record<string, string>, tenant?: string) {
      const nc = defaultEC2NodeClass({ name }) as KubeObject & { spec: Record<string, unknown> }
      delete nc.spec.role
      Object.assign(nc.spec, spec)
      await bed.kube.apply(nc)
      const np = defaultNodePool({ name, nodeClassName: name }) as KubeObject & NodePoolShape
      if (tenant) {
        np.metadata.labels = { [TENANT_KEY]: tenant }
        np.spec.template.metadata = { labels: { [TENANT_KEY]: tenant } }
        np.spec.template.spec.taints = [{ key: TENANT_KEY, value: tenant, effect: 'NoSchedule' }]
      }
      await bed.kube.apply(np)
      await readyByKarpenter(name)
    }
    async function removeNodeClassWithPool(name: string) {
      await bed.kube.delete(`${NODEPOOLS}/${name}`)
      await bed.kube.delete(`${EC2NODECLASSES}/${name}`)
    }

    /** `doctor --fix --yes`: the finding is listed as manual with the reason it carries, and nothing is written. */
    async function manualForFix(check: string, finding: Finding) {
      const r = await karpctlOn(bed, ['doctor', '--fix', '--yes', '--json'])
      const j = parseJsonOut<FixJson>(r, 'doctor --fix --yes --json')
      assert.equal(r.code, 1, r.stderr)
      assert.equal(j.fix.writes, 0, 'a manual fix is never applied')
      assert.equal(statusOf(j, check), 'fail')
      const m = j.fix.manual.find((x) => x.check === check && x.message === finding.message)
      assert.ok(m, JSON.stringify(j.fix.manual))
      assert.equal(m.why, finding.evidence?.manualBecause)
      assert.deepEqual(m.commands, finding.fix?.commands)
    }

    /** The failing finding of `check` that `pick` picks, and only `check` fails: the report before the fix. */
    async function onlyFailure(check: string, pick: (f: Finding) => boolean) {
      const report = await doctorReport(bed)
      const failing = report.checks.filter((c) => c.status === 'fail')
      assert.deepEqual(failingChecks(report), [check], JSON.stringify(failing))
      const f = failing[0]!.findings.find((x) => x.status === 'fail' && pick(x))
      assert.ok(f, JSON.stringify(failing[0]!.findings))
      return f
    }

    /** After the replay: the check passes and nothing fails, nothing new and nothing else. */
    async function fixedByReplay(check: string) {
      const report = await passes(bed, check)
      assert.deepEqual(failingChecks(report), [])
      return report
    }

    test('an instance profile that does not exist: node-role fails naming it; the printed create + add fixes it', async () => {
      await nodeClassWithPool('profiled', { instanceProfile: PROFILE })
      const f = await onlyFailure('node-role', (x) => x.code === 'instance-profile-missing')
      assert.equal(f.subject, PROFILE)
      assert.equal(
        f.message,
        `instance profile ${PROFILE} used by EC2NodeClass/profiled does not exist: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)`,
      )
      assert.equal(f.evidence?.role, seed.nodeRoleName, 'the role the other EC2NodeClass uses')
      await manualForFix('node-role', f)

      await runPrinted(bed, dir, f.fix!.commands!)
      const report = await fixedByReplay('node-role')
      const p = await aws.iam.send(new GetInstanceProfileCommand({ InstanceProfileName: PROFILE }))
      assert.deepEqual(
        p.InstanceProfile!.Roles!.map((r) => r.RoleName),
        [seed.nodeRoleName],
      )
      // Judged through the profile now, as the role it holds.
      const messages = report.checks.find((c) => c.id === 'node-role')!.findings.map((x) => x.message)
      assert.ok(
        messages.some((m) =>
          m.includes(`EC2NodeClass default, profiled (through instance profile ${PROFILE})`),
        ),
        messages.join('\n'),
      )
      assert.equal(statusOf(report, 'passrole-node-role'), 'pass')
    })

    test('an instance profile that holds no role: node-role says so; the printed add fixes it', async () => {
      await aws.iam.send(
        new RemoveRoleFromInstanceProfileCommand({
          InstanceProfileName: PROFILE,
          RoleName: seed.nodeRoleName,
        }),
      )
      const f = await onlyFailure('node-role', (x) => x.code === 'instance-profile-empty')
      assert.equal(
        f.message,
        `instance profile ${PROFILE} used by EC2NodeClass/profiled holds no role: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)`,
      )
      assert.deepEqual(f.fix!.commands, [
        `aws iam add-role-to-instance-profile --instance-profile-name ${PROFILE} --role-name ${seed.nodeRoleName}`,
      ])
      await manualForFix('node-role', f)

      await runPrinted(bed, dir, f.fix!.commands!)
      await fixedByReplay('node-role')

      // The other way it prints: spec.role instead of the profile, in one patch the API server's CEL rule
      // (exactly one of role and instanceProfile) accepts.
      await aws.iam.send(
        new RemoveRoleFromInstanceProfileCommand({
          InstanceProfileName: PROFILE,
          RoleName: seed.nodeRoleName,
        }),
      )
      const again = await onlyFailure('node-role', (x) => x.code === 'instance-profile-empty')
      await runPrinted(bed, dir, again.fix!.alternative!.commands)
      await fixedByReplay('node-role')
      const nc = await bed.kube.get<{ spec: { role?: string; instanceProfile?: string } }>(
        `${EC2NODECLASSES}/profiled`,
      )
      assert.deepEqual([nc?.spec.role, nc?.spec.instanceProfile], [seed.nodeRoleName, undefined])

      // The profile is empty again and no class uses it any more.
      await removeNodeClassWithPool('profiled')
      await aws.iam.send(new DeleteInstanceProfileCommand({ InstanceProfileName: PROFILE }))
    })

    test('two tenants on the default node role: the fix without eksctl, as printed, gives each its own role the controller may pass; without that grant, --fix repairs passrole-node-role', async (t) => {
      for (const tenant of ['acme', 'globex'])
        await nodeClassWithPool(tenant, { role: seed.nodeRoleName }, tenant)
      const f = await onlyFailure('tenant-isolation', (x) => x.subject === seed.nodeRoleName)
      assert.equal(
        f.message,
        `tenants acme, globex share node role ${seed.nodeRoleName}: each tenant's nodes get every other tenant's IAM permissions`,
      )
      // The cluster is CONFIG_MAP (seeded so): the access step is aws-auth's,
      // with eksctl, and the same steps with kubectl alone beside them.
      const alt = f.fix!.alternative!
      assert.equal(alt.label, 'without eksctl (aws and kubectl only)')
      assert.ok(alt.commands.every((c) => !c.includes('eksctl')))
      const notAccess = (c: string) => !c.startsWith('eksctl ') && !c.includes('aws-auth')
      assert.deepEqual(
        f.fix!.commands!.filter(notAccess),
        alt.commands.filter(notAccess),
        'both ways make the same roles, grant and patches',
      )
      await manualForFix('tenant-isolation', f)

      await runPrinted(bed, dir, alt.commands)
      const report = await fixedByReplay('tenant-isolation')
      assert.equal(statusOf(report, 'passrole-node-role'), 'pass', 'the controller may pass the new roles')
      const nodeRole = report.checks.find((c) => c.id === 'node-role')!
      for (const tenant of ['acme', 'globex']) {
        const role = `KarpenterNodeRole-${CLUSTER_NAME}-${tenant}`
        const nc = await bed.kube.get<{ spec: { role: string } }>(`${EC2NODECLASSES}/${tenant}`)
        assert.equal(nc?.spec.role, role)
        // node-role judged each new role (nothing fails: trust and policies hold); its access is the
        // aws-auth mapping the kubectl lines made.
        assert.ok(
          nodeRole.findings.some(
            (x) => x.status === 'pass' && x.message.startsWith(`aws-auth maps ${role} to `),
          ),
          JSON.stringify(nodeRole.findings),
        )
      }

      // The grant is what keeps passrole-node-role passing: without it, the tenants' roles cannot be
      // passed, and --fix (automatic, per the README table) writes that grant back.
      const grant = await aws.iam.send(
        new GetRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: 'KarpctlPassNodeRoles' }),
      )
      await aws.iam.send(
        new DeleteRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyName: 'KarpctlPassNodeRoles',
        }),
      )
      assert.deepEqual(failingChecks(await doctorReport(bed)), ['passrole-node-role'])
      const r = await karpctlOn(bed, ['doctor', '--fix', '--yes', '--json'])
      const j = parseJsonOut<FixJson>(r, 'doctor --fix --yes --json')
      assert.equal(r.code, 0, r.stderr)
      assert.equal(statusOf(j, 'passrole-node-role'), 'pass')
      assert.deepEqual(j.fix.outcome.result?.applied, ['iam-policy.passrole-fix'])
      t.diagnostic(`passrole-node-role --fix: ${r.durationMs} ms wall, ${j.fix.writes} write calls`)
      const rewritten = await aws.iam.send(
        new GetRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: 'KarpctlPassNodeRoles' }),
      )
      assert.deepEqual(
        JSON.parse(decodeURIComponent(rewritten.PolicyDocument!)),
        JSON.parse(decodeURIComponent(grant.PolicyDocument!)),
        "--fix's grant is the one the printed fix wrote",
      )
    })
  },
)

interface NodePoolShape {
  metadata: { labels?: Record<string, string> }
  spec: {
    template: {
      metadata?: { labels: Record<string, string> }
      spec: { taints?: { key: string; value: string; effect: string }[] }
    }
  }
}
