// Issue 35, C: a field corpus. Each scenario is a problem users reported (the issue cited beside it),
// built on the bed's getting-started account (seedAws: every resource made by the API, no stack, so
// every fix is a direct command) or a healthy shape another tool makes that a naive rule would flag.
// One bed, reset between scenarios (moto reset, the release, Karpenter's objects, aws-auth, nodes).
// For a break: doctor fails the check with the finding (a hit); every `$` line of every failing
// finding of that check runs as printed through `sh -c` with the real aws and kubectl (the eksctl-free
// alternative where the first way needs eksctl); then the check passes and nothing new fails. Where
// README's --fix table lists the check, the break is made again and `doctor --fix --yes` repairs it
// the same way. For a healthy shape: the check passes (or is skipped, saying why) and nothing fails.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeleteTagsCommand } from '@aws-sdk/client-ec2'
import { DisableRuleCommand, RemoveTargetsCommand } from '@aws-sdk/client-eventbridge'
import { UpdateAssumeRolePolicyCommand } from '@aws-sdk/client-iam'
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs'
import type { Finding } from '../../src/checks/types.js'
import {
  awsAuthConfigMap,
  awsClients,
  controllerTrustPolicy,
  doctorReport,
  failingChecks,
  karpctlOn,
  karpenterFixtures,
  kubernetesFor,
  parseJsonOut,
  playController,
  resetBed,
  runPrinted,
  seedAws,
  seedKubernetes,
  shown,
  startBed,
  type ChartVersion,
  type DoctorReport,
  type FixJson,
  type SeedResult,
} from './bed/index.js'
import { GITOPS_SCENARIOS } from './field-corpus/gitops.js'
import { MORE_SCENARIOS } from './field-corpus/more.js'
import { POD_IDENTITY_SCENARIOS } from './field-corpus/pod-identity.js'
import { ROUND4_SCENARIOS } from './field-corpus/round4.js'
import { SECOND_BREAKS } from './field-corpus/second-breaks.js'
import {
  allowSpot,
  capacityTypes,
  detachNodePolicy,
  deleteSpotRole,
  dropSid,
  editManagedPolicy,
  pool,
  policyWith,
  upgradeValues,
  type Ctx,
  type Scenario,
} from './field-corpus/scenario.js'

const FIRST: Scenario[] = [
  {
    check: 'discovery-tags',
    title: 'subnets without karpenter.sh/discovery',
    source: 'aws/karpenter-provider-aws#1558, eksctl-io/eksctl#4806',
    breakIt: async ({ aws, seed }) => {
      await aws.ec2.send(
        new DeleteTagsCommand({ Resources: seed.subnetIds, Tags: [{ Key: 'karpenter.sh/discovery' }] }),
      )
    },
    expect: /subnet/i,
    fixable: true,
  },
  {
    check: 'discovery-tags',
    title: 'security groups without karpenter.sh/discovery ("Failed to resolve security groups")',
    source: 'aws/karpenter-provider-aws#6650',
    breakIt: async ({ aws, seed }) => {
      await aws.ec2.send(
        new DeleteTagsCommand({
          Resources: [seed.clusterSecurityGroupId, seed.nodeSecurityGroupId],
          Tags: [{ Key: 'karpenter.sh/discovery' }],
        }),
      )
    },
    expect: /security group/i,
    fixable: true,
  },
  {
    check: 'passrole-node-role',
    title: 'no iam:PassRole on the node role ("not authorized to perform: iam:PassRole")',
    source: 'aws/karpenter-provider-aws#6036, #6298, #5444',
    breakIt: async ({ aws, seed }) =>
      editManagedPolicy(aws, policyWith(seed, 'IAMIntegration'), dropSid('AllowPassingInstanceRole')),
    expect: /may not pass KarpenterNodeRole-demo to EC2/,
    fixable: true,
  },
  {
    check: 'controller-policy',
    title: 'the interruption queue statement missing from the controller policy',
    source: 'aws/karpenter-provider-aws#3185, kubernetes-sigs/karpenter#1799',
    breakIt: async ({ aws, seed }) =>
      // the statement left with GetQueueUrl only: the controller finds the queue and cannot read it
      editManagedPolicy(aws, policyWith(seed, 'Interruption'), (doc) => {
        for (const st of doc.Statement as { Sid?: string; Action?: unknown }[])
          if (st.Sid === 'AllowInterruptionQueueActions') st.Action = ['sqs:GetQueueUrl']
      }),
    expect: /lacks \d+ action\(s\).*sqs:/,
    fixable: true,
  },
  {
    check: 'irsa-trust-policy',
    title: 'the trust names another namespace (WebIdentityErr: not authorized to AssumeRoleWithWebIdentity)',
    source: 'aws/karpenter-provider-aws#1313, #1666, #1421',
    breakIt: async ({ aws, seed }) => {
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
    },
    expect: /system:serviceaccount:karpenter:karpenter/,
    fixable: true,
  },
  {
    check: 'spot-service-linked-role',
    title: 'spot allowed, no AWSServiceRoleForEC2Spot (AuthFailure.ServiceLinkedRoleCreationNotPermitted)',
    source: 'eksctl-io/eksctl#6064, terraform-aws-modules/terraform-aws-eks#2565',
    breakIt: async ({ bed, aws, seed }) => {
      await allowSpot(bed)
      await deleteSpotRole(aws, seed)
    },
    expect: /no EC2 Spot service-linked role/,
    fixable: true,
  },
  {
    check: 'interruption-rules',
    title: 'a rule disabled: spot warnings never reach the queue',
    source: 'aws/karpenter-provider-aws#7209',
    breakIt: async ({ aws, seed }) => {
      await aws.events.send(new DisableRuleCommand({ Name: seed.ruleNames[1]! }))
    },
    expect: /disabled|DISABLED/,
    fixable: true,
  },
  {
    check: 'interruption-rules',
    title: 'a rule without its queue target (events go nowhere)',
    source: 'aws/karpenter-provider-aws#5536, #7209',
    breakIt: async ({ aws, seed }) => {
      const rule = seed.ruleNames[0]!
      const { ListTargetsByRuleCommand } = await import('@aws-sdk/client-eventbridge')
      const t = await aws.events.send(new ListTargetsByRuleCommand({ Rule: rule }))
      await aws.events.send(
        new RemoveTargetsCommand({ Rule: rule, Ids: (t.Targets ?? []).map((x) => x.Id!) }),
      )
    },
    expect: /queue/,
    fixable: true,
  },
  {
    check: 'interruption-queue',
    title: 'a queue policy EventBridge may not send through',
    source: 'aws/karpenter-provider-aws#7209 (events not delivered to the queue)',
    breakIt: async ({ aws, seed }) => {
      await aws.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: seed.queueUrl,
          Attributes: {
            Policy: JSON.stringify({
              Version: '2012-10-17',
              Statement: [
                // written for an SNS topic's fan-out: EventBridge is not among the senders
                {
                  Sid: 'SnsWrite',
                  Effect: 'Allow',
                  Principal: { Service: 'sns.amazonaws.com' },
                  Action: 'sqs:SendMessage',
                  Resource: seed.queueArn,
                },
              ],
            }),
          },
        }),
      )
    },
    expect: /events\.amazonaws\.com/,
    fixable: true,
    // The printed line was right: aws CLI v1 sent it to https://us-west-2.queue.amazonaws.com (its sqs
    // endpoint customization beats AWS_ENDPOINT_URL), while the same call through the SDK (the break
    // above) reached moto; runPrinted now points the CLI at the bed (bed/printed.ts, onBed).
  },
  {
    check: 'node-role',
    title: 'the worker node policy detached from the node role (nodes never register)',
    source: 'aws/karpenter-provider-aws#6303',
    breakIt: detachNodePolicy('AmazonEKSWorkerNodePolicy'),
    expect: /AmazonEKSWorkerNodePolicy/,
    fixable: true,
  },
  {
    check: 'node-role',
    title: 'aws-auth without the node role ("Unauthorized" from the kubelet)',
    source: 'aws/karpenter-provider-aws#3218, #1225',
    breakIt: async ({ bed, seed }) => {
      // another mapping stays (a node group's), as on a cluster with managed node groups
      await bed.kube.apply(awsAuthConfigMap([`arn:aws:iam::${seed.accountId}:role/eksctl-demo-ng`]))
    },
    expect: /no cluster access|aws-auth/,
    fixable: true,
  },
  {
    check: 'node-role',
    title: 'aws-auth username system:node:{{SessionName}} (the Node authorizer refuses it)',
    source: 'aws/karpenter-provider-aws#7508',
    breakIt: async ({ bed, seed }) => {
      await bed.kube.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'aws-auth', namespace: 'kube-system' },
        data: {
          mapRoles: `- rolearn: ${seed.nodeRoleArn}\n  username: system:node:{{SessionName}}\n  groups:\n  - system:bootstrappers\n  - system:nodes\n`,
        },
      })
    },
    expect: /SessionName|username/,
  },
  {
    check: 'nodeclass-ready',
    title: 'a NodePool frozen with limits cpu: 0',
    source: 'kubernetes-sigs/karpenter NodePool limits (a freeze never lifted; issue 35 item 10)',
    breakIt: async ({ bed }) => {
      await bed.kube.mergePatch(pool, { spec: { limits: { cpu: '0' } } })
    },
    expect: /limits/,
  },
  // Healthy shapes another tool makes, which a naive rule would flag.
  {
    check: 'interruption-queue',
    title: 'no interruption queue and no spot (eksctl karpenter: block, withSpotInterruptionQueue false)',
    source: 'eksctl-io/eksctl pkg/cfn/builder/karpenter.go',
    shape: async ({ bed }) => {
      await capacityTypes(bed, ['on-demand'])
      await upgradeValues(bed, ['--set', 'settings.interruptionQueue='])
    },
    expect: /no NodePool allows spot/,
  },
  {
    check: 'spot-service-linked-role',
    title: 'no spot service-linked role where no NodePool allows spot',
    source: 'terraform-aws-modules/terraform-aws-eks#2670 (the role is a one-time account step)',
    shape: async ({ aws, seed }) => {
      await deleteSpotRole(aws, seed)
    },
    expect: /no NodePool allows spot/,
  },
  {
    check: 'node-role',
    title: 'a node role with an IAM path, mapped in aws-auth by its path-less ARN',
    source: 'terraform-aws-modules/terraform-aws-eks#893, kubernetes-sigs/aws-iam-authenticator#153',
    shape: async () => {
      // the seed's node role has path "/"; aws-auth maps its path-less ARN: the shape is the seed's own
    },
    expect: /aws-auth maps/,
  },
  {
    check: 'controller-policy',
    title: 'no ec2:DescribePlacementGroups where no EC2NodeClass selects a placement group',
    source: 'eksctl-io/eksctl pkg/cfn/builder/karpenter.go; terraform-aws-eks v20 policy.tf',
    shape: async ({ aws, seed }) => {
      await editManagedPolicy(aws, policyWith(seed, 'ResourceDiscovery'), (doc) => {
        for (const s of doc.Statement as { Action?: string | string[] }[])
          if (Array.isArray(s.Action)) s.Action = s.Action.filter((a) => a !== 'ec2:DescribePlacementGroups')
      })
    },
    expect: /grants all \d+ actions/,
  },
]

const SCENARIOS = [
  ...FIRST,
  ...MORE_SCENARIOS,
  ...ROUND4_SCENARIOS,
  ...POD_IDENTITY_SCENARIOS,
  ...GITOPS_SCENARIOS,
  ...SECOND_BREAKS,
]

/** The findings of check `id` with `status` (a warning-severity check warns where others fail). */
const failingOf = (report: DoctorReport, id: string, status: 'fail' | 'warn'): Finding[] =>
  (report.checks.find((c) => c.id === id)?.findings ?? []).filter((f) => f.status === status)
const lines = (report: DoctorReport) =>
  report.checks
    .map((c) => `${c.status.padEnd(7)} ${c.id}: ${c.findings.map((f) => f.message).join(' | ')}`)
    .join('\n')
/** A printed fix as a user without eksctl runs it: the eksctl-free alternative when the first way needs eksctl. */
const runnable = (f: Finding): string[] => {
  const cmds = f.fix?.commands ?? []
  return cmds.some((c) => /^eksctl\b/.test(c)) ? (f.fix?.alternative?.commands ?? []) : cmds
}

/** The check passes after a fix; or still warns where the scenario says why that warning is true. */
function assertRepaired(
  s: Scenario,
  checks: { id: string; status: string; findings: { message: string }[] }[],
  shownAs: string,
) {
  const check = checks.find((x) => x.id === s.check)
  if (!s.afterFix) return assert.equal(check?.status, 'pass', shownAs)
  assert.equal(check?.status, 'warn', shownAs)
  assert.match(check!.findings.map((f) => f.message).join(' | '), s.afterFix.warn, shownAs)
}

/** Counts, printed at the end for the README and the closing note. */
const tally = { scenarios: 0, hits: 0, printed: 0, printedWorked: 0, fixRepairs: 0, healthy: 0 }
const covered = { breaks: new Map<string, number>(), healthy: new Set<string>() }
/** The JSON summary line: the counts and how many checks meet the method's bar (two breaks, a healthy shape). */
const summary = () => ({
  ...tally,
  checksBroken: covered.breaks.size,
  checksTwoBreaks: [...covered.breaks.values()].filter((n) => n >= 2).length,
  checksHealthy: covered.healthy.size,
})

describe('field corpus: what users reported, on the bed', { timeout: 60 * 60_000 }, () => {
  let c: Ctx
  let healthyFailing: string[]
  let stopController: (() => Promise<void>) | undefined
  before(async () => {
    // The patched moto (bed/moto_launcher.py): KMS calls by key ARN, as doctor prints them.
    const bed = await startBed({ patchedMoto: true })
    c = { bed, aws: awsClients(bed), seed: undefined as unknown as SeedResult }
  })
  after(async () => {
    await stopController?.()
    await c?.bed.stop()
    process.stdout.write(`# field corpus: ${JSON.stringify(summary())}\n`)
  })

  // The 1.14.1 CRDs are kept between 1.14.1 scenarios; a 1.0.14 scenario gets that chart's CRDs, always
  // fresh (its printed fix may have upgraded them), and the next 1.14.1 scenario gets 1.14.1's again.
  let lastChart: ChartVersion = '1.14.1'
  async function fresh(chart: ChartVersion = '1.14.1') {
    await stopController?.()
    await resetBed(c.bed, { keepCrds: chart === '1.14.1' && lastChart === '1.14.1' })
    lastChart = chart
    // aws-auth, as the getting-started cluster of these reports (moto has no access-entry API)
    // EKS at the newest Kubernetes the chart supports (1.0.x: 1.31), as that version's guide made it
    c.seed = await seedAws(c.bed, {
      authenticationMode: 'CONFIG_MAP',
      kubernetesVersion: kubernetesFor(chart),
    })
    await seedKubernetes(c.bed, { aws: c.seed, chartVersion: chart })
    stopController = playController(c.bed, {
      vpcId: c.seed.vpcId,
      subnetIds: c.seed.subnetIds,
      availabilityZones: c.seed.availabilityZones,
      clusterSecurityGroupId: c.seed.clusterSecurityGroupId,
      nodeSecurityGroupId: c.seed.nodeSecurityGroupId,
    })
    healthyFailing = failingChecks(await doctorReport(c.bed))
  }

  for (const s of SCENARIOS) {
    test(`${s.check}: ${s.title} (${s.source})`, { todo: s.todo }, async (t) => {
      tally.scenarios++
      await fresh(s.chart)
      try {
        await play(s, t)
      } finally {
        await s.cleanup?.(c)
      }
    })
  }

  async function play(s: Scenario, t: { diagnostic: (m: string) => void }) {
    const status = s.status ?? 'fail'
    assert.deepEqual(healthyFailing, [], 'the seed is healthy')
    if (s.shape) {
      await s.shape(c)
      const report = await doctorReport(c.bed)
      t.diagnostic(lines(report))
      const check = report.checks.find((x) => x.id === s.check)!
      assert.ok(['pass', 'skipped'].includes(check.status), `${s.check}: ${check.status}\n${lines(report)}`)
      assert.match(check.findings.map((f) => f.message).join(' | '), s.expect)
      assert.deepEqual(failingChecks(report), [], lines(report))
      tally.healthy++
      covered.healthy.add(s.check)
      return
    }
    await s.breakIt!(c)
    const broken = await doctorReport(c.bed)
    const failing = failingOf(broken, s.check, status)
    t.diagnostic(lines(broken))
    assert.ok(failing.length > 0, `${s.check} does not ${status}:\n${lines(broken)}`)
    assert.match(failing.map((f) => f.message).join(' | '), s.expect)
    tally.hits++
    covered.breaks.set(s.check, (covered.breaks.get(s.check) ?? 0) + 1)
    const commands = failing.flatMap(runnable)
    t.diagnostic(`printed: ${commands.map((x) => `$ ${x}`).join('\n')}`)
    assert.ok(commands.length > 0, `no printed fix: ${JSON.stringify(failing)}`)
    assert.ok(
      commands.every((x) => !/<[a-z-]+>/.test(x)),
      `a placeholder in ${commands.join('\n')}`,
    )
    tally.printed += commands.length
    await runPrinted(c.bed, mkdtempSync(join(c.bed.tmpDir, 'fix-')), commands)
    const fixed = await doctorReport(c.bed)
    assertRepaired(s, fixed.checks, lines(fixed))
    assert.deepEqual(failingChecks(fixed), [], `nothing new fails:\n${lines(fixed)}`)
    tally.printedWorked += commands.length
    if (!s.fixable) return
    // From the healthy seed again: a printed fix may have made the first break moot (a grant added
    // elsewhere), and a repair is counted only where the check fails before it.
    await fresh(s.chart)
    await s.breakIt!(c)
    assert.ok(failingOf(await doctorReport(c.bed), s.check, status).length > 0, `${s.check}: broken again`)
    // The chart from the fixtures: a Helm repair must not pull oci://public.ecr.aws from the bed.
    const charts = join(karpenterFixtures(), 'v1.14.1', 'charts')
    const r = await karpctlOn(c.bed, ['doctor', '--fix', '--yes', '--json', '--chart-dir', charts])
    const repaired = parseJsonOut<FixJson>(r, 'doctor --fix --yes')
    assert.ok(repaired.fix, shown(r))
    t.diagnostic(`--fix --yes: ${repaired.fix.writes} writes`)
    assertRepaired(s, repaired.checks, shown(r))
    assert.deepEqual(
      repaired.checks.filter((x) => x.status === 'fail').map((x) => x.id),
      [],
      shown(r),
    )
    tally.fixRepairs++
  }
})
