// Issue 18, "How it is proven": `doctor --fix` on the getting-started bed (bed/adopted-seed.ts: the real
// template as stack Karpenter-demo, eksctl's IRSA role demo-karpenter in its own stack) changes nothing
// CloudFormation would see as drift beyond what it prints. Two breaks a person makes by hand — one of
// the stack's managed policies detached from demo-karpenter, the target removed from one of the stack's
// rules — then `doctor --fix --yes`: the stack's resources are as the breaks left them (no inline policy
// on demo-karpenter, no target added by karpctl), and doctor lists both as manual, naming the stack and
// printing the re-attach command; that command's effect through the SDK makes controller-policy pass.
// On the real Karpenter 1.14.1 controller (issue 34): the Deployment's availability, the EC2NodeClass and
// NodePool Ready and the instance profile of the guide's class are Karpenter's, not the test's; neither
// break is one Karpenter reports on (moto enforces no IAM, and no interruption arrives), so what the
// controller proves here is that doctor's clean report at the end is judged on its own status, and that
// the instance profile it made is part of what `doctor --fix` must leave alone.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PutTargetsCommand, RemoveTargetsCommand } from '@aws-sdk/client-eventbridge'
import { AttachRolePolicyCommand, DetachRolePolicyCommand } from '@aws-sdk/client-iam'
import {
  awsClients,
  CHARTS_1_14_1,
  checkLines,
  fullInventory,
  inventoryDiff,
  irsaStackName,
  karpctlOn,
  parseJsonOut,
  realControllerBed,
  seedAdoptedInstall,
  shown,
  type AdoptedInstall,
  type DoctorJson,
  type FixJson,
} from './bed/index.js'

/** The part of the full inventory that the stacks declare: what CloudFormation's drift detection sees. */
function stackScope(inv: Record<string, unknown>, seed: AdoptedInstall): Record<string, unknown> {
  const pick = (key: string, names: string[]) => {
    const m = (inv[key] ?? {}) as Record<string, unknown>
    return Object.fromEntries(names.map((n) => [n, m[n]]))
  }
  const roles = [seed.controllerRoleName, seed.nodeRoleName]
  return {
    roles: pick('roles', roles),
    policies: pick('policies', seed.controllerPolicyArns),
    queues: pick('queues', [seed.queueName]),
    queueAttributes: pick('queueAttributes', [seed.queueName]),
    rules: pick('rules', seed.ruleNames),
    ruleTags: pick('ruleTags', seed.ruleNames),
    stacks: inv.stacks,
  }
}

const status = (r: DoctorJson, id: string) => r.checks.find((c) => c.id === id)?.status

test(
  'doctor --fix on the getting-started stacks: a detached stack policy and a rule without its target are printed as manual, nothing the stacks declare is changed',
  { timeout: 20 * 60_000 },
  async (t) => {
    const f = await realControllerBed((b) => seedAdoptedInstall(b, { markAvailable: false }))
    t.after(() => f.stop())
    const { bed, seed } = f
    const aws = awsClients(bed)
    const healthy = await fullInventory(bed, seed.net)
    // The guide's class names a role: Karpenter made its instance profile (held in the inventory).
    const profiles = healthy.instanceProfiles as string[]
    assert.ok(
      profiles.some((p) => p.endsWith(`: ${seed.nodeRoleName}`)),
      `Karpenter's instance profile for ${seed.nodeRoleName}: ${JSON.stringify(profiles)}`,
    )

    // The breaks: NodeLifecyclePolicy (the stack's, declared on demo-karpenter by eksctl's stack)
    // detached; the stack's SpotInterruptionRule without its target.
    const policyArn = seed.karpenterStack.physical.NodeLifecyclePolicy!
    assert.match(policyArn, /:policy\/KarpenterControllerNodeLifecyclePolicy-demo$/)
    await aws.iam.send(
      new DetachRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyArn: policyArn }),
    )
    const ruleName = seed.karpenterStack.physical.SpotInterruptionRule!
    await aws.events.send(
      new RemoveTargetsCommand({ Rule: ruleName, Ids: ['KarpenterInterruptionQueueTarget'] }),
    )
    const broken = await fullInventory(bed, seed.net)
    assert.notDeepEqual(stackScope(broken, seed), stackScope(healthy, seed), 'the breaks are visible')

    const attach = `aws iam attach-role-policy --role-name ${seed.controllerRoleName} --policy-arn ${policyArn}`
    const stacks = [`Karpenter-${seed.clusterName}`, irsaStackName(seed.clusterName)]
    const namesStack = (s: string) => stacks.some((n) => new RegExp(`\\b${n}\\b(?!-)`).test(s))

    // As a person runs it: the plan and the manual list printed, then applied.
    const human = await karpctlOn(bed, ['doctor', '--fix', '--yes', '--chart-dir', CHARTS_1_14_1()])
    t.diagnostic(shown(human))
    assert.ok(human.stdout.includes(attach), `prints ${attach}\n${shown(human)}`)
    assert.ok(namesStack(human.stdout), `names the stack\n${shown(human)}`)
    assert.equal(human.code, 1, 'left failing: both breaks need a human')
    const afterHuman = await fullInventory(bed, seed.net)
    assert.deepEqual(
      stackScope(afterHuman, seed),
      stackScope(broken, seed),
      inventoryDiff(stackScope(broken, seed), stackScope(afterHuman, seed)).join('\n'),
    )

    // The same as data.
    const r = await karpctlOn(bed, ['doctor', '--fix', '--yes', '--json', '--chart-dir', CHARTS_1_14_1()])
    const j = parseJsonOut<FixJson>(r, 'doctor --fix --json')
    t.diagnostic(checkLines(j))
    t.diagnostic(
      `plan: ${JSON.stringify(j.fix.plan.steps)}\nmanual: ${JSON.stringify(j.fix.manual, null, 2)}\nwrites: ${j.fix.writes}`,
    )
    assert.equal(r.code, 1, shown(r))
    assert.equal(status(j, 'controller-policy'), 'fail')
    assert.equal(status(j, 'interruption-rules'), 'fail')
    assert.deepEqual(
      j.fix.plan.steps
        .filter((s) => /controller-policy|interruption-rules/.test(s.group))
        .map((s) => `${s.action} ${s.address}`),
      [],
      'no automatic repair of the stacks’ role or rule',
    )
    const policyManual = j.fix.manual.filter((m) => m.check === 'controller-policy')
    assert.equal(policyManual.length, 1, JSON.stringify(j.fix.manual))
    assert.ok(policyManual[0]!.commands.includes(attach), JSON.stringify(policyManual[0]!.commands))
    assert.ok(
      namesStack(`${policyManual[0]!.message} ${policyManual[0]!.why}`),
      `names the stack: ${JSON.stringify(policyManual[0])}`,
    )
    // The re-attach restores what eksctl's stack declares (ManagedPolicyArns): the manual item must not
    // call that direct command drift, nor send the user to add the actions to the stack.
    await t.test('the manual item of the detached policy says re-attaching is not drift', () => {
      const m = policyManual[0]!
      assert.doesNotMatch(
        `${m.message} ${m.why}`,
        /a direct change is drift|add them there/,
        JSON.stringify(m),
      )
      assert.match(m.why, /re-attach/, JSON.stringify(m))
    })
    const ruleManual = j.fix.manual.filter((m) => m.check === 'interruption-rules')
    assert.equal(ruleManual.length, 1, JSON.stringify(j.fix.manual))
    assert.ok(ruleManual[0]!.message.includes(ruleName), ruleManual[0]!.message)
    assert.match(`${ruleManual[0]!.message} ${ruleManual[0]!.why}`, /\bKarpenter-demo\b(?!-)/)
    const afterJson = await fullInventory(bed, seed.net)
    const diff = inventoryDiff(stackScope(broken, seed), stackScope(afterJson, seed))
    assert.deepEqual(stackScope(afterJson, seed), stackScope(broken, seed), diff.join('\n'))
    const roles = afterJson.roles as Record<string, { inline: string[] }>
    assert.deepEqual(roles[seed.controllerRoleName]!.inline, [], 'no inline policy on demo-karpenter')

    // The printed command's effect, through the SDK: controller-policy passes again.
    await aws.iam.send(
      new AttachRolePolicyCommand({ RoleName: seed.controllerRoleName, PolicyArn: policyArn }),
    )
    const reattached = parseJsonOut<DoctorJson>(await karpctlOn(bed, ['doctor', '--json']), 'doctor')
    assert.equal(status(reattached, 'controller-policy'), 'pass', checkLines(reattached))
    assert.equal(status(reattached, 'interruption-rules'), 'fail', 'the rule is still without its target')

    // The rule's target as the template declares it: doctor exits 0, the account as the stacks made it.
    await aws.events.send(
      new PutTargetsCommand({
        Rule: ruleName,
        Targets: [{ Id: 'KarpenterInterruptionQueueTarget', Arn: seed.queueArn }],
      }),
    )
    const restored = await karpctlOn(bed, ['doctor', '--json'])
    assert.equal(restored.code, 0, checkLines(parseJsonOut<DoctorJson>(restored, 'doctor')))
    const end = await fullInventory(bed, seed.net)
    assert.deepEqual(end, healthy, inventoryDiff(healthy, end).join('\n'))
  },
)
