// karpctl doctor --fix on the real bed, on a getting-started install karpctl did not make: three things
// broken at once (untagged subnets, an IRSA :sub naming another namespace, PassRole removed from the
// controller policy) → one plan → --fix --yes → doctor exits 0; --fix again and --fix on a healthy
// cluster make no write call; a fix that needs a human is listed as manual and left failing.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { DeleteTagsCommand } from '@aws-sdk/client-ec2'
import {
  CreatePolicyVersionCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  UpdateAssumeRolePolicyCommand,
} from '@aws-sdk/client-iam'
import {
  awsClients,
  CLUSTER_NAME,
  controllerTrustPolicy,
  REGION,
  runKarpctl,
  seedAws,
  seedKubernetes,
  startBed,
  type Bed,
} from './bed/index.js'

interface FixJson {
  fix: {
    outcome: { kind: string; result?: { applied: string[] } }
    plan: { steps: { address: string; action: string; group: string }[] }
    manual: { check: string; why: string }[]
    writes: number
  }
  summary: Record<string, number>
  checks: { id: string; status: string }[]
}

const target = (bed: Bed) => [
  '--cluster',
  CLUSTER_NAME,
  '--region',
  REGION,
  '--kube-context',
  bed.kubeContext,
]
const karpctl = (bed: Bed, args: string[]) =>
  runKarpctl(bed, [...args, ...target(bed)], { env: { NO_COLOR: '1' }, timeoutMs: 300_000 })
const fixJson = async (bed: Bed, extra: string[]) => {
  const r = await karpctl(bed, ['doctor', '--fix', '--json', ...extra])
  let j: FixJson
  try {
    j = JSON.parse(r.stdout) as FixJson
  } catch {
    throw new Error(`no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`)
  }
  return { ...r, j }
}

describe(
  'karpctl doctor --fix on moto, a real apiserver and the real Karpenter chart',
  { timeout: 20 * 60_000 },
  () => {
    test('three breaks, one plan, fixed; again and on a healthy cluster: no write call', async (t) => {
      const bed = await startBed()
      t.after(() => bed.stop())
      const seed = await seedAws(bed)
      await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1' })

      const healthy = await fixJson(bed, ['--yes'])
      assert.equal(healthy.code, 0, healthy.stderr)
      assert.equal(healthy.j.fix.writes, 0, 'a healthy cluster gets no write call')
      assert.equal(healthy.j.fix.outcome.kind, 'nothing')

      const aws = awsClients(bed)
      await aws.ec2.send(
        new DeleteTagsCommand({ Resources: seed.subnetIds, Tags: [{ Key: 'karpenter.sh/discovery' }] }),
      )
      await aws.iam.send(
        new UpdateAssumeRolePolicyCommand({
          RoleName: seed.controllerRoleName,
          PolicyDocument: controllerTrustPolicy(
            seed.oidcProviderArn,
            seed.oidcIssuer,
            'system:serviceaccount:karpenter:karpenter',
          ),
        }),
      )
      const arn = seed.controllerPolicyArns[`KarpenterControllerIAMIntegrationPolicy-${CLUSTER_NAME}`]!
      const cur = await aws.iam.send(new GetPolicyCommand({ PolicyArn: arn }))
      const ver = await aws.iam.send(
        new GetPolicyVersionCommand({ PolicyArn: arn, VersionId: cur.Policy!.DefaultVersionId }),
      )
      const doc = JSON.parse(decodeURIComponent(ver.PolicyVersion!.Document!)) as {
        Statement: { Sid?: string }[]
      }
      doc.Statement = doc.Statement.filter((s) => s.Sid !== 'AllowPassingInstanceRole')
      await aws.iam.send(
        new CreatePolicyVersionCommand({
          PolicyArn: arn,
          PolicyDocument: JSON.stringify(doc),
          SetAsDefault: true,
        }),
      )

      const broken = await karpctl(bed, ['doctor', '--json'])
      assert.equal(broken.code, 1)

      // Without a terminal and without --yes: the plan, exit 1, nothing changed.
      const asked = await karpctl(bed, ['doctor', '--fix'])
      assert.equal(asked.code, 1)
      assert.match(
        asked.stdout,
        /fix: discovery-tags\n {2}~ update {4}discovery tags karpenter.sh\/discovery=demo/,
      )
      assert.match(
        asked.stdout,
        /fix: irsa-trust-policy\n {2}~ update {4}IAM role trust KarpenterControllerRole-demo/,
      )
      assert.match(
        asked.stdout,
        /fix: passrole-node-role\n {2}\+ create {4}IAM inline policy KarpenterControllerRole-demo\/KarpctlPassNodeRoles/,
      )
      assert.match(asked.stdout, /Not applied: pass --yes/)
      assert.equal((await karpctl(bed, ['doctor', '--json'])).code, 1, 'still broken')

      const fixed = await fixJson(bed, ['--yes'])
      assert.equal(
        fixed.code,
        0,
        `${fixed.stderr}\n${JSON.stringify(fixed.j.checks.filter((c) => c.status === 'fail'))}`,
      )
      assert.deepEqual(fixed.j.fix.outcome.result?.applied.sort(), [
        'ec2-tags.discovery',
        'iam-policy.passrole-fix',
        'iam-trust.controller',
      ])
      assert.equal(fixed.j.summary.fail, 0)
      t.diagnostic(`--fix --yes: ${fixed.durationMs} ms wall, ${fixed.j.fix.writes} write calls`)
      const after = await karpctl(bed, ['doctor', '--json'])
      assert.equal(after.code, 0, 'doctor exits 0 after the fix')

      const again = await fixJson(bed, ['--yes'])
      assert.equal(again.code, 0)
      assert.equal(again.j.fix.writes, 0, 'running --fix twice applies nothing the second time')
    })
  },
)
