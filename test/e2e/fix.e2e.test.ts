// karpctl doctor --fix on the real bed, on a getting-started install karpctl did not make: three things
// broken at once (untagged subnets, an IRSA :sub naming another namespace, PassRole removed from the
// controller policy) → one plan → --fix --yes → doctor exits 0; --fix again and --fix on a healthy
// cluster make no write call; a fix that needs a human is listed as manual and left failing.
// Every describe runs the real Karpenter 1.14.1 controller (`startBed({ karpenter: true })`): the
// Deployment's availability and the EC2NodeClass/NodePool conditions are Karpenter's, never the test's.
// Where Karpenter reports on what doctor judges (the untagged subnets, the queue it is given), its
// condition or log line is asserted beside doctor's verdict, and after the fix Karpenter's Ready.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import {
  CreateSubnetCommand,
  CreateVpcCommand,
  DeleteTagsCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
} from '@aws-sdk/client-ec2'
import {
  DescribeRuleCommand,
  DisableRuleCommand,
  ListRulesCommand,
  ListTagsForResourceCommand,
  ListTargetsByRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge'
import {
  AttachRolePolicyCommand,
  CreatePolicyCommand,
  CreatePolicyVersionCommand,
  CreateRoleCommand,
  DeleteOpenIDConnectProviderCommand,
  DeleteRolePermissionsBoundaryCommand,
  DeleteRolePolicyCommand,
  DetachRolePolicyCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  PutRolePermissionsBoundaryCommand,
  PutRolePolicyCommand,
  UpdateAssumeRolePolicyCommand,
} from '@aws-sdk/client-iam'
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs'
import {
  awsAuthConfigMap,
  awsClients,
  CLUSTER_NAME,
  controllerTrustPolicy,
  defaultEC2NodeClass,
  defaultNodePool,
  karpenterFixtures,
  gettingStartedValues,
  withoutIrsaAnnotation,
  helm,
  karpenterChartDir,
  REGION,
  runKarpctl,
  seedAws,
  seedKubernetes,
  startBed,
  waitFor,
  type AwsClients,
  type Bed,
  type SeedResult,
} from './bed/index.js'
import {
  conditionOf,
  EC2NODECLASSES,
  NODEPOOLS,
  readyByKarpenter,
  waitForCondition,
  waitForLog,
} from './bed/karpenter-objects.js'
import { failingIn as failingInBed, passes as passesOn, runPrinted as replay } from './bed/printed.js'

interface FixJson {
  fix: {
    outcome: { kind: string; result?: { applied: string[]; failed?: { address: string }[] } }
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
  runKarpctl(bed, [...args, ...target(bed)], {
    // The bed's helm, for the repairs made through Helm.
    env: { NO_COLOR: '1', PATH: `${bed.binDir}:${process.env.PATH}` },
    timeoutMs: 300_000,
  })
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
    // (--fix on a healthy cluster: the first test of the next describe, on its healthy bed.)
    test('three breaks, one plan, fixed; again: no write call', async (t) => {
      const bed = await startBed({ karpenter: true })
      t.after(() => bed.stop())
      const seed = await seedAws(bed)
      // Broken before Karpenter first resolves the class, so that its first word is already
      // SubnetsNotFound (broken later, it would notice only on its next subnet refresh, 1 min).
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
      const passing = await policyWith(aws, seed, 'AllowPassingInstanceRole')
      await passing.replace({
        ...passing.doc,
        Statement: passing.doc.Statement.filter((s) => s.Sid !== 'AllowPassingInstanceRole'),
      })
      await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
      await bed.karpenter!.controller.ready()
      const CLASS = `${EC2NODECLASSES}/default`
      await waitForCondition(bed, CLASS, 'SubnetsReady', { status: 'False', reason: 'SubnetsNotFound' })
      const broken = await fixJson(bed, ['--dry-run'])
      assert.equal(broken.code, 1)
      // doctor's verdict beside Karpenter's: the tags, and the class Karpenter left not Ready.
      const failing = broken.j.checks.filter((c) => c.status === 'fail').map((c) => c.id)
      assert.deepEqual(
        failing.sort(),
        ['discovery-tags', 'irsa-trust-policy', 'nodeclass-ready', 'passrole-node-role'],
        broken.stdout,
      )

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
      assert.deepEqual(fixed.j.fix.outcome.result?.applied.sort(), [
        'ec2-tags.discovery',
        'iam-policy.passrole-fix',
        'iam-trust.controller',
      ])
      // --fix waits (up to 120 s) for what its repairs should make Karpenter do: here the real controller
      // re-reads the retagged subnets on its next refresh (1 min) and marks the class Ready itself.
      assert.equal(
        fixed.code,
        0,
        `${fixed.stderr}\n${JSON.stringify(fixed.j.checks.filter((c) => c.status === 'fail'))}`,
      )
      assert.equal(fixed.j.summary.fail, 0)
      t.diagnostic(`--fix --yes: ${fixed.durationMs} ms wall, ${fixed.j.fix.writes} write calls`)
      const nc = await bed.kube.get(CLASS)
      assert.equal(conditionOf(nc, 'SubnetsReady')?.status, 'True', JSON.stringify(nc?.status?.conditions))
      assert.equal(conditionOf(nc, 'Ready')?.status, 'True', JSON.stringify(nc?.status?.conditions))
      const after = await karpctl(bed, ['doctor', '--json'])
      assert.equal(after.code, 0, `doctor exits 0 after the fix\n${after.stdout}`)

      const again = await fixJson(bed, ['--yes'])
      assert.equal(again.code, 0)
      assert.equal(again.j.fix.writes, 0, 'running --fix twice applies nothing the second time')
    })
  },
)

const CHARTS = () => join(karpenterFixtures(), 'v1.14.1', 'charts')

/** The controller policy document of the seeded policy holding `sid`, and a way to replace it. */
async function policyWith(aws: AwsClients, seed: SeedResult, sid: string) {
  for (const arn of Object.values(seed.controllerPolicyArns)) {
    const cur = await aws.iam.send(new GetPolicyCommand({ PolicyArn: arn }))
    const ver = await aws.iam.send(
      new GetPolicyVersionCommand({ PolicyArn: arn, VersionId: cur.Policy!.DefaultVersionId }),
    )
    const doc = JSON.parse(decodeURIComponent(ver.PolicyVersion!.Document!)) as {
      Statement: { Sid?: string }[]
    }
    if (doc.Statement.some((s) => s.Sid === sid))
      return {
        doc,
        replace: (d: object) =>
          aws.iam.send(
            new CreatePolicyVersionCommand({
              PolicyArn: arn,
              PolicyDocument: JSON.stringify(d),
              SetAsDefault: true,
            }),
          ),
      }
  }
  throw new Error(`no seeded controller policy holds ${sid}`)
}

/**
 * Every broken scenario of the doctor e2e suite that has an automatic fix, one after the other on one
 * bed: break it, `doctor --fix --yes`, then the check passes, doctor exits 0, what was changed on a
 * resource karpctl did not make is recorded on it, and a second --fix makes no write call.
 */
describe('doctor --fix repairs each broken scenario of the doctor suite', { timeout: 30 * 60_000 }, () => {
  let bed: Bed
  let seed: SeedResult
  let aws: AwsClients
  before(async () => {
    bed = await startBed({ karpenter: true })
    seed = await seedAws(bed)
    aws = awsClients(bed)
    await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
    await readyByKarpenter(bed)
  })
  after(() => bed?.stop())

  const upgrade = (...extra: string[]) =>
    helm(bed, [
      'upgrade',
      'karpenter',
      karpenterChartDir('1.14.1'),
      '--namespace',
      'kube-system',
      '--reuse-values',
      ...extra,
    ])
  const status = (j: FixJson, id: string) => j.checks.find((c) => c.id === id)?.status
  const DEPLOYMENT = '/apis/apps/v1/namespaces/kube-system/deployments/karpenter'
  /** The Deployment's generation and the pid of the real controller running it. */
  const running = async () => ({
    generation: (await bed.kube.get(DEPLOYMENT))?.metadata.generation as number,
    pid: bed.karpenter!.controller.proc?.pid,
  })
  /** Waits until the controller process that ran `was` is replaced by one of a new rollout, Ready. */
  async function restarted(was: { pid?: number }) {
    await waitFor(
      'the real controller restarted on the new rollout',
      async () => {
        const pid = bed.karpenter!.controller.proc?.pid
        return pid !== undefined && pid !== was.pid
      },
      { timeoutMs: 120_000, intervalMs: 300 },
    )
    await bed.karpenter!.controller.ready()
  }
  /** --fix --yes: the repair applied, the check passes, doctor exits 0; --fix again writes nothing. */
  async function fixed(t: { diagnostic: (s: string) => void }, checkId: string, extra: string[] = []) {
    const r = await fixJson(bed, ['--yes', ...extra])
    assert.ok(r.j.checks, `no report (exit ${r.code}): ${r.stdout}\n${r.stderr}`)
    const failed = r.j.checks.filter((c) => c.status === 'fail').map((c) => c.id)
    assert.equal(r.code, 0, `exit ${r.code}; failing: ${failed.join(', ')}\n${r.stderr}`)
    assert.equal(status(r.j, checkId), 'pass')
    assert.equal(r.j.fix.outcome.kind, 'applied')
    t.diagnostic(`${checkId}: ${r.durationMs} ms wall, ${r.j.fix.writes} write calls`)
    const again = await fixJson(bed, ['--yes', ...extra])
    assert.equal(again.code, 0, again.stderr)
    assert.equal(again.j.fix.writes, 0, 'a second --fix makes no write call')
    return r
  }

  test('a healthy cluster (every condition True by Karpenter): --fix --yes makes no write call', async () => {
    const healthy = await fixJson(bed, ['--yes'])
    assert.equal(healthy.code, 0, healthy.stderr)
    assert.equal(healthy.j.fix.writes, 0, 'a healthy cluster gets no write call')
    assert.equal(healthy.j.fix.outcome.kind, 'nothing')
  })

  test('a boolean toleration value (a failed Helm revision): one new revision with the string, the user values kept', async (t) => {
    const toleration =
      'tolerations[0].key=dedicated,tolerations[0].operator=Equal,tolerations[0].effect=NoSchedule'
    const was = await running()
    await assert.rejects(upgrade('--set', `${toleration},tolerations[0].value=true`), /cannot unmarshal bool/)
    // The failed revision never reached the Deployment: the real controller runs on, the same process.
    await bed.karpenter!.controller.ready()
    assert.deepEqual(await running(), was, 'a failed Helm revision leaves the running controller alone')
    const broken = await fixJson(bed, ['--dry-run', '--chart-dir', CHARTS()])
    assert.equal(broken.j.fix.outcome.kind, 'dry-run')
    assert.deepEqual(
      broken.j.fix.plan.steps.map((s) => [s.address, s.action]),
      [['helm.karpenter.repair', 'update']],
    )
    const r = await fixed(t, 'toleration-value-types', ['--chart-dir', CHARTS()])
    assert.equal(status(r.j, 'helm-release'), 'pass', 'the new revision deployed')
    // The repaired revision rolled the Deployment, and the real controller of that rollout is Ready.
    await restarted(was)
    const d = (await bed.kube.get(DEPLOYMENT))!
    assert.deepEqual(
      d.spec.template.spec.tolerations.find((x: { key: string }) => x.key === 'dedicated'),
      {
        key: 'dedicated',
        operator: 'Equal',
        value: 'true',
        effect: 'NoSchedule',
      },
    )
    const values = JSON.parse(
      (await helm(bed, ['get', 'values', 'karpenter', '-n', 'kube-system', '-o', 'json'])).stdout,
    )
    assert.equal(values.settings.clusterName, CLUSTER_NAME, 'the user values are kept')
    const secrets = await bed.kube.list('/api/v1/namespaces/kube-system/secrets', 'owner=helm,name=karpenter')
    assert.ok(
      secrets.some((x) => x.metadata.labels?.['karpctl.io/repaired'] === 'doctor-fix'),
      'the revision karpctl made says so',
    )
  })

  test('the STS annotation missing on a ServiceAccount Helm no longer manages: annotated, recorded, the controller restarted', async (t) => {
    const sa = '/api/v1/namespaces/kube-system/serviceaccounts/karpenter'
    // The values declare the annotation (as the doctor suite's --set-string fix leaves them); then the
    // platform team takes the ServiceAccount over without it.
    await upgrade(
      '--set-string',
      'serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints=true',
    )
    await bed.kube.mergePatch(sa, {
      metadata: {
        annotations: { 'eks.amazonaws.com/sts-regional-endpoints': null, 'helm.sh/resource-policy': 'keep' },
      },
    })
    await upgrade('--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=karpenter')
    await bed.karpenter!.controller.ready()
    const was = await running()
    await fixed(t, 'sts-regional-annotation')
    // The restart doctor made is a rollout the real controller follows: a new process, Ready.
    await restarted(was)
    assert.ok((await running()).generation > was.generation)
    const live = (await bed.kube.get(sa))!
    assert.equal(live.metadata.annotations['eks.amazonaws.com/sts-regional-endpoints'], 'true')
    assert.equal(
      live.metadata.annotations['karpctl.io/added-annotations'],
      'eks.amazonaws.com/sts-regional-endpoints',
    )
    assert.equal(live.metadata.annotations['karpctl.io/restart-pending'], undefined)
    const d = (await bed.kube.get(DEPLOYMENT))!
    assert.ok(d.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'], 'rolled')
    await upgrade('--set', 'serviceAccount.create=true')
  })

  test('a node role without the worker-node and ECR policies: the two attached and recorded on the role', async (t) => {
    const attached = async () =>
      (
        await aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: seed.nodeRoleName }))
      ).AttachedPolicies!.map((p) => p.PolicyName)
    const before = await attached()
    for (const p of (await aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: seed.nodeRoleName })))
      .AttachedPolicies!)
      if (/WorkerNode|ContainerRegistry/.test(p.PolicyName!))
        await aws.iam.send(
          new DetachRolePolicyCommand({ RoleName: seed.nodeRoleName, PolicyArn: p.PolicyArn }),
        )
    await fixed(t, 'node-role')
    assert.deepEqual((await attached()).sort(), before.sort())
    const role = await aws.iam.send(new GetRoleCommand({ RoleName: seed.nodeRoleName }))
    const tag = role.Role!.Tags?.find((x) => x.Key === 'karpctl.io/repaired-policies')?.Value ?? ''
    assert.match(tag, /AmazonEKSWorkerNodePolicy/)
    assert.match(tag, /AmazonEC2ContainerRegistry/)
  })

  test('a controller policy without a reference statement: the statement added as one inline policy', async (t) => {
    const { doc, replace } = await policyWith(aws, seed, 'AllowRegionalReadActions')
    await replace({ ...doc, Statement: doc.Statement.filter((s) => s.Sid !== 'AllowRegionalReadActions') })
    await fixed(t, 'controller-policy')
    const inline = await aws.iam.send(new ListRolePoliciesCommand({ RoleName: seed.controllerRoleName }))
    assert.ok(inline.PolicyNames!.includes(`KarpenterControllerMissing-${CLUSTER_NAME}`))
  })

  test("PassRole for a second node role: the fix's grant names both, so the first keeps it when the reference statement goes", async (t) => {
    // A second EC2NodeClass with a node role of its own, healthy but for PassRole (its policies and
    // cluster access as the first role's), which the reference statement does not name.
    const second = `KarpenterNodeRole-${CLUSTER_NAME}-second`
    const trust = await aws.iam.send(new GetRoleCommand({ RoleName: seed.nodeRoleName }))
    const role = await aws.iam.send(
      new CreateRoleCommand({
        RoleName: second,
        AssumeRolePolicyDocument: decodeURIComponent(trust.Role!.AssumeRolePolicyDocument!),
      }),
    )
    for (const p of (await aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: seed.nodeRoleName })))
      .AttachedPolicies!)
      await aws.iam.send(new AttachRolePolicyCommand({ RoleName: second, PolicyArn: p.PolicyArn }))
    await bed.kube.apply(awsAuthConfigMap([seed.nodeRoleArn, role.Role!.Arn!]))
    await bed.kube.apply(defaultEC2NodeClass({ name: 'second', role: second }))
    // Karpenter makes the second class's instance profile (of the second role) and marks it Ready.
    const secondClass = await waitForCondition(bed, `${EC2NODECLASSES}/second`, 'Ready', { status: 'True' })
    assert.ok(secondClass.status?.instanceProfile, JSON.stringify(secondClass.status))

    const r = await fixed(t, 'passrole-node-role')
    assert.deepEqual(
      r.j.fix.plan.steps.map((x) => [x.address, x.action]),
      [['iam-policy.passrole-fix', 'create']],
    )
    const grant = await aws.iam.send(
      new GetRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: 'KarpctlPassNodeRoles' }),
    )
    const doc = JSON.parse(decodeURIComponent(grant.PolicyDocument!)) as {
      Statement: { Resource: string[] }[]
    }
    assert.deepEqual(doc.Statement[0]!.Resource, [seed.nodeRoleArn, role.Role!.Arn!].sort())

    // Before, the grant named only the role that failed: without the reference statement, the first
    // role failed, and the next --fix's grant (of it alone) took PassRole from the second.
    const { doc: reference, replace } = await policyWith(aws, seed, 'AllowPassingInstanceRole')
    await replace({
      ...reference,
      Statement: reference.Statement.filter((x) => x.Sid !== 'AllowPassingInstanceRole'),
    })
    const after = await fixJson(bed, ['--dry-run'])
    assert.equal(status(after.j, 'passrole-node-role'), 'pass', 'both roles still passable')
    assert.equal(after.code, 0, after.stderr)

    // The cluster as the other tests expect it: one EC2NodeClass, one node role mapped.
    await replace(reference)
    await bed.kube.delete('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/second')
    await bed.kube.apply(awsAuthConfigMap([seed.nodeRoleArn]))
    await aws.iam.send(
      new DeleteRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: 'KarpctlPassNodeRoles' }),
    )
  })

  test('an explicit Deny on a controller action: manual, left failing, and the reason said; nothing written', async () => {
    await aws.iam.send(
      new PutRolePolicyCommand({
        RoleName: seed.controllerRoleName,
        PolicyName: 'SecurityTeamDeny',
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Deny', Action: 'ec2:CreateFleet', Resource: '*' }],
        }),
      }),
    )
    const r = await fixJson(bed, ['--yes'])
    assert.equal(r.code, 1)
    assert.equal(r.j.fix.writes, 0)
    const m = r.j.fix.manual.find((x) => x.check === 'controller-policy')
    assert.ok(m, JSON.stringify(r.j.fix.manual))
    assert.match(m.why, /explicit Deny/)
    assert.equal(status(r.j, 'controller-policy'), 'fail')
    await aws.iam.send(
      new DeleteRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyName: 'SecurityTeamDeny' }),
    )
  })

  test("a queue whose policy lets no EventBridge send: the reference statements added beside the queue's own", async (t) => {
    await aws.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: seed.queueUrl,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'Mine',
                Effect: 'Allow',
                Principal: { AWS: seed.accountId },
                Action: 'sqs:*',
                Resource: seed.queueArn,
              },
            ],
          }),
        },
      }),
    )
    await fixed(t, 'interruption-queue')
    const a = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: seed.queueUrl, AttributeNames: ['Policy'] }),
    )
    const sids = (JSON.parse(a.Attributes!.Policy!) as { Statement: { Sid?: string }[] }).Statement.map(
      (s) => s.Sid,
    )
    assert.ok(sids.includes('Mine'), 'its own statement is kept')
    assert.ok(sids.includes('DenyHTTP'))
    const tags = await aws.sqs.send(new ListQueueTagsCommand({ QueueUrl: seed.queueUrl }))
    assert.ok(tags.Tags?.['karpctl.io/repaired-policy-statements'])
  })

  test('the rules sending to an old queue (the capacity-reservation one is not needed here: no reservation in use, issue 35): re-targeted in place, the old target removed, no rule added', async (t) => {
    const needed = seed.ruleNames.filter((n) => !/CapacityReservation/.test(n))
    await aws.sqs.send(new CreateQueueCommand({ QueueName: `${CLUSTER_NAME}-old` }))
    const oldArn = `arn:aws:sqs:${REGION}:${seed.accountId}:${CLUSTER_NAME}-old`
    for (const rule of needed) {
      await aws.events.send(new PutTargetsCommand({ Rule: rule, Targets: [{ Id: 'OldQueue', Arn: oldArn }] }))
      await aws.events.send(
        new RemoveTargetsCommand({ Rule: rule, Ids: ['KarpenterInterruptionQueueTarget'] }),
      )
    }
    const count = async () => (await aws.events.send(new ListRulesCommand({}))).Rules?.length
    const rulesBefore = await count()
    await fixed(t, 'interruption-rules')
    assert.equal(await count(), rulesBefore, 'no rule added')
    for (const rule of needed) {
      const targets = (await aws.events.send(new ListTargetsByRuleCommand({ Rule: rule }))).Targets!
      assert.deepEqual(
        targets.map((x) => x.Arn),
        [seed.queueArn],
        rule,
      )
      const arn = (await aws.events.send(new DescribeRuleCommand({ Name: rule }))).Arn!
      const tags = (await aws.events.send(new ListTagsForResourceCommand({ ResourceARN: arn }))).Tags ?? []
      assert.equal(tags.find((x) => x.Key === 'karpctl.io/retargeted-from')?.Value, oldArn)
    }
  })

  test('a disabled rule that still targets the queue: enabled in place, its state recorded first', async (t) => {
    const rule = seed.ruleNames[0]!
    await aws.events.send(new DisableRuleCommand({ Name: rule }))
    await fixed(t, 'interruption-rules')
    const r = await aws.events.send(new DescribeRuleCommand({ Name: rule }))
    assert.equal(r.State, 'ENABLED')
    const tags = (await aws.events.send(new ListTagsForResourceCommand({ ResourceARN: r.Arn! }))).Tags ?? []
    // Added to what an earlier repair on this bed recorded (the old queue), never overwriting it.
    const record = tags.find((x) => x.Key === 'karpctl.io/retargeted-from')?.Value ?? ''
    assert.ok(record.split(' ').includes('DISABLED'), record)
  })

  test("the queue's ARN in settings.interruptionQueue: its name set in a new Helm revision", async (t) => {
    const was = await running()
    await upgrade('--set-string', `settings.interruptionQueue=${seed.queueArn}`)
    // Karpenter agrees with doctor: given the ARN as INTERRUPTION_QUEUE, it finds no queue of that name.
    await restarted(was)
    const said = await waitForLog(
      bed,
      'Karpenter logs that it finds no queue named by the ARN',
      (l) => l.level === 'ERROR' && /QueueDoesNotExist|NonExistentQueue/.test(JSON.stringify(l)),
    )
    t.diagnostic(`Karpenter: ${String(said.message ?? said.msg)}: ${String(said.error).slice(0, 200)}`)
    const withArn = await running()
    await fixed(t, 'interruption-queue', ['--chart-dir', CHARTS()])
    await restarted(withArn)
    const values = JSON.parse(
      (await helm(bed, ['get', 'values', 'karpenter', '-n', 'kube-system', '-o', 'json'])).stdout,
    ) as { settings: { interruptionQueue: string } }
    assert.equal(values.settings.interruptionQueue, seed.queueName)
  })

  test('an IRSA trust with StringLike :sub = system:serviceaccount:*:*: narrowed to the running ServiceAccount', async (t) => {
    const host = seed.oidcIssuer.replace(/^https:\/\//, '')
    await aws.iam.send(
      new UpdateAssumeRolePolicyCommand({
        RoleName: seed.controllerRoleName,
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { Federated: seed.oidcProviderArn },
              Action: 'sts:AssumeRoleWithWebIdentity',
              Condition: {
                StringLike: { [`${host}:sub`]: 'system:serviceaccount:*:*' },
                StringEquals: { [`${host}:aud`]: 'sts.amazonaws.com' },
              },
            },
          ],
        }),
      }),
    )
    await fixed(t, 'irsa-trust-policy')
    const role = await aws.iam.send(new GetRoleCommand({ RoleName: seed.controllerRoleName }))
    const trust = JSON.stringify(JSON.parse(decodeURIComponent(role.Role!.AssumeRolePolicyDocument!)))
    assert.doesNotMatch(trust, /StringLike/)
    assert.match(trust, /"StringEquals":\{[^}]*"system:serviceaccount:kube-system:karpenter"/)
    assert.ok(role.Role!.Tags?.some((x) => x.Key === 'karpctl.io/changed-trust'))
  })

  test('a permissions boundary without iam:PassRole: manual (an Allow cannot lift a boundary), nothing written', async () => {
    const created = await aws.iam.send(
      new CreatePolicyCommand({
        PolicyName: `KarpenterBoundary-${CLUSTER_NAME}`,
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Sid: 'Ceiling', Effect: 'Allow', NotAction: ['iam:PassRole'], Resource: '*' }],
        }),
      }),
    )
    await aws.iam.send(
      new PutRolePermissionsBoundaryCommand({
        RoleName: seed.controllerRoleName,
        PermissionsBoundary: created.Policy!.Arn!,
      }),
    )
    const r = await fixJson(bed, ['--yes'])
    assert.equal(r.code, 1)
    assert.equal(r.j.fix.writes, 0, 'no inline grant that the boundary would cancel')
    assert.equal(status(r.j, 'passrole-node-role'), 'fail')
    assert.ok(
      r.j.fix.manual.some((m) => m.check === 'passrole-node-role'),
      JSON.stringify(r.j.fix.manual),
    )
    await aws.iam.send(new DeleteRolePermissionsBoundaryCommand({ RoleName: seed.controllerRoleName }))
  })

  test('a release moved off IRSA with no Pod Identity association and no role to prove: --fix writes nothing, leaves it manual (issue 35 item 6)', async () => {
    // moto serves the Pod Identity API (bed/moto_launcher.py): no association is an answer, not a gap.
    await withoutIrsaAnnotation(bed, seed)
    const r = await fixJson(bed, ['--yes'])
    assert.equal(r.code, 1, r.stderr)
    assert.equal(r.j.fix.writes, 0)
    assert.equal(status(r.j, 'pod-identity'), 'fail')
    assert.ok(
      r.j.fix.manual.some((m) => m.check === 'pod-identity'),
      JSON.stringify(r.j.fix.manual),
    )
    await upgrade(
      '--set-string',
      `serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=${seed.controllerRoleArn}`,
    )
  })

  test('the webhook-era chart (v1.0.14) without the 8443 rule: authorized, recorded on the group', async (t) => {
    await helm(bed, ['uninstall', 'karpenter', '--namespace', 'kube-system', '--wait'])
    const file = join(bed.tmpDir, 'values-1.0.14.json')
    writeFileSync(file, JSON.stringify(gettingStartedValues(seed)))
    await helm(bed, [
      'install',
      'karpenter',
      karpenterChartDir('1.0.14'),
      '--namespace',
      'kube-system',
      '-f',
      file,
    ])
    const sg = await aws.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [seed.nodeSecurityGroupId] }))
    const rule = sg.SecurityGroups?.[0]?.IpPermissions?.find((p) => p.FromPort === 8443)
    if (rule)
      await aws.ec2.send(
        new RevokeSecurityGroupIngressCommand({ GroupId: seed.nodeSecurityGroupId, IpPermissions: [rule] }),
      )
    const r = await fixJson(bed, ['--yes', '--only', 'sg-webhook-8443'])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(status(r.j, 'sg-webhook-8443'), 'pass')
    const after = await aws.ec2.send(
      new DescribeSecurityGroupsCommand({ GroupIds: [seed.nodeSecurityGroupId] }),
    )
    const g = after.SecurityGroups![0]!
    assert.ok(
      g.IpPermissions?.some(
        (p) =>
          p.FromPort === 8443 && p.UserIdGroupPairs?.some((u) => u.GroupId === seed.clusterSecurityGroupId),
      ),
    )
    assert.ok(g.Tags?.some((x) => x.Key === 'karpctl.io/repaired-ingress-8443'))
    t.diagnostic(`8443: ${r.durationMs} ms, ${r.j.fix.writes} writes`)
    const again = await fixJson(bed, ['--yes', '--only', 'sg-webhook-8443'])
    assert.equal(again.j.fix.writes, 0)
  })
})

/**
 * Fixes doctor prints and leaves to a human, run as printed: each `$` line through `sh -c` in a scratch
 * directory, with the real kubectl and aws CLIs against the bed (issue 21, items 7, 9 and 10). Each
 * scenario breaks one thing, runs the printed lines, and doctor passes that check again.
 */
// On the real Karpenter 1.14.1 controller: the EC2NodeClass and NodePools here are Karpenter's to mark
// Ready, before the break and after each printed fix.
describe('printed fixes run exactly as printed', { timeout: 20 * 60_000 }, () => {
  let bed: Bed
  let seed: SeedResult
  let aws: AwsClients
  let dir: string
  before(async () => {
    bed = await startBed({ karpenter: true })
    // CONFIG_MAP: moto has no access-entry API; the aws-auth scenario below is this cluster's access.
    seed = await seedAws(bed, { authenticationMode: 'CONFIG_MAP' })
    aws = awsClients(bed)
    await seedKubernetes(bed, { aws: seed, chartVersion: '1.14.1', markAvailable: false })
    await bed.karpenter!.controller.ready()
    await waitForCondition(bed, `${EC2NODECLASSES}/default`, 'Ready', { status: 'True' })
    await waitForCondition(bed, `${NODEPOOLS}/default`, 'Ready', { status: 'True' })
    dir = mkdtempSync(join(tmpdir(), 'karpctl-printed-'))
  })
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    return bed?.stop()
  })

  const failingIn = (id: string) => failingInBed(bed, id)
  const passes = (id: string) => passesOn(bed, id)
  const runPrinted = (commands: string[]) => replay(bed, dir, commands)

  test('a subnet of another VPC selected by id: the printed selector patch removes its term; delete-tags is not printed', async () => {
    const vpc = await aws.ec2.send(new CreateVpcCommand({ CidrBlock: '10.9.0.0/16' }))
    const other = await aws.ec2.send(
      new CreateSubnetCommand({
        VpcId: vpc.Vpc!.VpcId!,
        CidrBlock: '10.9.0.0/20',
        AvailabilityZone: `${REGION}a`,
      }),
    )
    const otherId = other.Subnet!.SubnetId!
    await bed.kube.mergePatch('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default', {
      spec: {
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER_NAME } }, { id: otherId }],
      },
    })
    const [f] = await failingIn('discovery-tags')
    assert.equal(f?.code, 'subnets-outside-vpc')
    assert.ok(!f!.fix!.commands!.some((c) => c.includes('delete-tags')), f!.fix!.commands!.join('\n'))
    await runPrinted(f!.fix!.commands!)
    await passes('discovery-tags')
    const nc = await bed.kube.get<{ spec: { subnetSelectorTerms: unknown[] } }>(
      '/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default',
    )
    assert.deepEqual(nc?.spec.subnetSelectorTerms, [{ tags: { 'karpenter.sh/discovery': CLUSTER_NAME } }])
    // Karpenter resolves the patched selector: its status.subnets no longer hold the other VPC's.
    await waitFor(
      `Karpenter drops subnet ${otherId} from EC2NodeClass default's status`,
      async () => {
        const subnets = (await bed.kube.get(`${EC2NODECLASSES}/default`))?.status?.subnets as
          { id: string }[] | undefined
        return !!subnets?.length && !subnets.some((x) => x.id === otherId)
      },
      { timeoutMs: 120_000, intervalMs: 500, proc: bed.procs.karpenter },
    )
  })

  test('a NodePool naming the wrong nodeClassRef group: the API server refuses the patch; the printed recreate fixes it', async () => {
    const wrong = defaultNodePool({ name: 'wrong-group' }) as {
      spec: { template: { spec: { nodeClassRef: { group: string } } } }
    }
    wrong.spec.template.spec.nodeClassRef.group = 'karpenter.sh'
    await bed.kube.create(wrong as Parameters<typeof bed.kube.create>[0])
    const path = '/apis/karpenter.sh/v1/nodepools/wrong-group'
    await assert.rejects(
      bed.kube.mergePatch(path, {
        spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws' } } } },
      }),
      /immutable/,
    )
    const f = (await failingIn('nodeclass-ready')).find((x) => x.code === 'nodeclassref-immutable')
    assert.ok(f, 'the finding says the NodePool must be recreated')
    await runPrinted(f.fix!.commands!)
    // Karpenter marks the recreated NodePool Ready; doctor agrees.
    await waitForCondition(bed, path, 'Ready', { status: 'True' })
    await passes('nodeclass-ready')
    const np = await bed.kube.get<{ spec: { template: { spec: { nodeClassRef: unknown } } } }>(path)
    assert.deepEqual(np?.spec.template.spec.nodeClassRef, {
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: 'default',
    })
    await bed.kube.delete(path)
  })

  test('the node role missing from aws-auth: the kubectl-only mapping (no eksctl) adds it, every other mapping and mapUsers kept', async () => {
    const other =
      '- groups:\n  - system:masters\n  rolearn: arn:aws:iam::123456789012:role/admins\n  username: admins\n'
    const users =
      '- userarn: arn:aws:iam::123456789012:user/alice\n  username: alice\n  groups:\n  - system:masters\n'
    await bed.kube.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'aws-auth', namespace: 'kube-system' },
      data: { mapRoles: other, mapUsers: users },
    })
    const f = (await failingIn('node-role')).find((x) => x.code === 'no-cluster-access')
    assert.ok(f?.fix?.alternative, JSON.stringify(f))
    assert.match(f.fix!.commands![0]!, /^eksctl create iamidentitymapping /)
    assert.ok(f.fix!.alternative.commands.every((c) => !c.includes('eksctl')))
    await runPrinted(f.fix!.alternative.commands)
    await passes('node-role')
    const cm = await bed.kube.get<{ data: Record<string, string> }>(
      '/api/v1/namespaces/kube-system/configmaps/aws-auth',
    )
    assert.equal(cm?.data.mapUsers, users, 'mapUsers untouched')
    assert.ok(cm?.data.mapRoles?.startsWith(other), cm?.data.mapRoles)
  })

  test('no OIDC provider for the issuer: the aws-only registration (no eksctl) fixes irsa-trust-policy', async () => {
    await aws.iam.send(
      new DeleteOpenIDConnectProviderCommand({ OpenIDConnectProviderArn: seed.oidcProviderArn }),
    )
    const f = (await failingIn('irsa-trust-policy')).find((x) => /no IAM OIDC provider/.test(x.message))
    assert.ok(f?.fix?.alternative, JSON.stringify(f))
    await runPrinted(f.fix!.alternative.commands)
    await passes('irsa-trust-policy')
  })
})
