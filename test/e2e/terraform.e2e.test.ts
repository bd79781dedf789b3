// Issue 18, "How it is proven": an install karpctl did not make, shaped like terraform-aws-eks's
// `karpenter` module (bed/terraform-seed.ts) — controller role and its one managed policy
// `KarpenterController-<suffix>`, queue `Karpenter-demo`, five rules `Karpenter<Name>-<suffix>`, node role
// `KarpenterNodeRole-demo`, Terraform's tags, no CloudFormation — then the guide's helm install with
// settings.interruptionQueue=Karpenter-demo. karpctl on it: doctor is clean; install --adopt plans no
// second controller role, queue or rule set; install --adopt then teardown leaves the full inventory as
// Terraform and helm made it; teardown says the queue and the role are not karpctl's and names
// `terraform destroy`.
// Every bed runs the real Karpenter 1.14.1 controller (`realControllerBed`): the Deployment's
// availability, the guide's EC2NodeClass and NodePool Ready are Karpenter's own, asserted beside doctor's
// clean report; install --adopt's rollout, tenant add's class and teardown's finalizers run against it.
import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import {
  DeleteRuleCommand,
  DescribeRuleCommand,
  ListTargetsByRuleCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge'
import {
  GetPolicyVersionCommand,
  GetRoleCommand,
  ListAttachedRolePoliciesCommand,
  ListInstanceProfilesCommand,
} from '@aws-sdk/client-iam'
import {
  awsClients,
  checkLines,
  fullInventory,
  installOn,
  inventoryDiff,
  karpctlOn,
  realControllerBed,
  parseJsonOut,
  planNote,
  renderCloudFormation,
  seedTerraformInstall,
  shown,
  teardownOn,
  TERRAFORM_RULES,
  TERRAFORM_TARGET_ID,
  type SeededBed,
  type DoctorJson,
  type PlanJson,
  type TerraformInstall,
} from './bed/index.js'
import { EC2NODECLASSES, NODEPOOLS, conditionOf, unresolved } from './bed/karpenter-objects.js'

type Fresh = SeededBed<TerraformInstall>
/** A bed with the module's resources and the guide's helm install, on the real controller. */
const terraformBed = () => realControllerBed((bed) => seedTerraformInstall(bed, { markAvailable: false }))

/** The part of the full inventory the module's Terraform state holds: what `terraform plan` compares. */
const terraformScope = (seed: TerraformInstall) => (inv: Record<string, unknown>) => {
  const pick = (key: string, names: string[]) => {
    const m = (inv[key] ?? {}) as Record<string, unknown>
    return Object.fromEntries(names.map((n) => [n, m[n]]))
  }
  return {
    roles: pick('roles', [seed.controllerRoleName, seed.nodeRoleName]),
    policies: pick('policies', [seed.controllerPolicyArn]),
    queues: pick('queues', [seed.queueName]),
    queueAttributes: pick('queueAttributes', [seed.queueName]),
    rules: pick('rules', seed.ruleNames),
    ruleTags: pick('ruleTags', seed.ruleNames),
  }
}

/** Instance profiles Karpenter made (its path) for this cluster that were not there in `before`. */
async function karpenterProfilesLeft(f: Fresh, before: Record<string, unknown>) {
  const had = new Set((before.instanceProfiles as string[]).map((p) => p.split(':')[0]))
  const all = await awsClients(f.bed).iam.send(new ListInstanceProfilesCommand({}))
  return (all.InstanceProfiles ?? []).filter(
    (p) =>
      (p.Path ?? '').startsWith(`/karpenter/${f.seed.region}/${f.seed.clusterName}/`) &&
      !had.has(p.InstanceProfileName!),
  )
}

const json = (s: string | undefined) => JSON.parse(decodeURIComponent(s ?? '')) as unknown

describe(
  'an install karpctl did not make: terraform-aws-eks’s karpenter module, the guide’s helm',
  { timeout: 30 * 60_000 },
  () => {
    describe('read-only: doctor, install --dry-run --adopt, teardown --dry-run', () => {
      let f: Fresh
      before(async () => {
        f = await terraformBed()
      })
      after(async () => {
        await f?.stop()
      })

      test('the seed is the module’s shape: names with Terraform’s suffix, IRSA trust, one policy, five rules on Karpenter-demo, no stack', async () => {
        const { seed } = f
        const aws = awsClients(f.bed)
        const suffix = /^\d{18}[0-9a-f]{8}$/
        assert.match(seed.controllerRoleName.replace(/^KarpenterController-/, ''), suffix)
        assert.equal(seed.queueName, 'Karpenter-demo')
        assert.equal(seed.nodeRoleName, 'KarpenterNodeRole-demo')
        const role = await aws.iam.send(new GetRoleCommand({ RoleName: seed.controllerRoleName }))
        const trust = json(role.Role!.AssumeRolePolicyDocument) as {
          Statement: { Action: unknown; Principal: Record<string, string>; Condition?: unknown }[]
        }
        const host = seed.oidcIssuer.replace(/^https:\/\//, '')
        const irsa = trust.Statement.find((s) => s.Action === 'sts:AssumeRoleWithWebIdentity')
        assert.deepEqual(irsa?.Principal, { Federated: seed.oidcProviderArn })
        assert.deepEqual(irsa?.Condition, {
          StringEquals: {
            [`${host}:sub`]: 'system:serviceaccount:kube-system:karpenter',
            [`${host}:aud`]: 'sts.amazonaws.com',
          },
        })
        assert.deepEqual(Object.fromEntries((role.Role!.Tags ?? []).map((t) => [t.Key, t.Value])), {
          'terraform-aws-modules': 'karpenter',
          Terraform: 'true',
          Environment: 'dev',
        })
        const attached = await aws.iam.send(
          new ListAttachedRolePoliciesCommand({ RoleName: seed.controllerRoleName }),
        )
        assert.deepEqual(
          (attached.AttachedPolicies ?? []).map((p) => p.PolicyArn),
          [seed.controllerPolicyArn],
        )
        assert.match(seed.controllerPolicyArn, /:policy\/KarpenterController-\d{18}[0-9a-f]{8}$/)
        const doc = json(
          (
            await aws.iam.send(
              new GetPolicyVersionCommand({ PolicyArn: seed.controllerPolicyArn, VersionId: 'v1' }),
            )
          ).PolicyVersion!.Document,
        ) as { Statement: unknown[] }
        const reference = renderCloudFormation(f.seed, undefined, { queueName: 'Karpenter-demo' })
        assert.deepEqual(
          doc.Statement,
          reference.controllerPolicies.flatMap(
            (p) => (JSON.parse(p.document) as { Statement: unknown[] }).Statement,
          ),
          'the reference statements, scoped as the template scopes them, in one document',
        )
        assert.ok(JSON.stringify(doc).includes(`:sqs:${seed.region}:${seed.accountId}:Karpenter-demo"`))
        assert.equal(seed.rules.length, 5)
        for (const { ruleName, spec } of seed.rules) {
          assert.match(ruleName, new RegExp(`^Karpenter${spec.name}-\\d{18}[0-9a-f]{8}$`))
          assert.ok(ruleName.length <= 64, ruleName)
          const d = await aws.events.send(new DescribeRuleCommand({ Name: ruleName }))
          // The module's pattern, checked against the reference template's rule of the same event.
          const ref = reference.rules.find((r) => r.logicalId === spec.templateLogicalId)!
          assert.deepEqual(JSON.parse(d.EventPattern!), JSON.parse(ref.eventPattern), ruleName)
          assert.equal(d.State, 'ENABLED')
          const targets = await aws.events.send(new ListTargetsByRuleCommand({ Rule: ruleName }))
          assert.deepEqual(
            (targets.Targets ?? []).map((x) => `${x.Id}=${x.Arn}`),
            [`${TERRAFORM_TARGET_ID}=${seed.queueArn}`],
          )
        }
        assert.deepEqual(
          TERRAFORM_RULES.map((r) => r.templateLogicalId).sort(),
          reference.rules.map((r) => r.logicalId).sort(),
          'one rule per rule of the reference template',
        )
        const inv = await fullInventory(f.bed, seed.net)
        assert.deepEqual(inv.stacks, {}, 'no CloudFormation stack')
        const sa = await f.bed.kube.get('/api/v1/namespaces/kube-system/serviceaccounts/karpenter')
        assert.equal(sa?.metadata?.annotations?.['eks.amazonaws.com/role-arn'], seed.controllerRoleArn)
      })

      test('doctor: no failing check, exit 0 — beside Karpenter resolving the guide’s class and pool', async (t) => {
        // Karpenter's own word on the module's node role and the guide's selectors: every condition True.
        const nc = await f.bed.kube.get(`${EC2NODECLASSES}/default`)
        assert.deepEqual(unresolved(nc), [])
        assert.ok(nc?.status?.instanceProfile, JSON.stringify(nc?.status))
        const np = await f.bed.kube.get(`${NODEPOOLS}/default`)
        assert.equal(conditionOf(np, 'Ready')?.status, 'True', JSON.stringify(np?.status))
        const r = await karpctlOn(f.bed, ['doctor', '--json'])
        const report = parseJsonOut<DoctorJson>(r, 'doctor')
        const lines = checkLines(report)
        t.diagnostic(lines)
        assert.deepEqual(
          report.checks.filter((c) => c.status === 'fail').map((c) => c.id),
          [],
          lines,
        )
        assert.equal(r.code, 0, shown(r))
        for (const id of [
          'discovery-tags',
          'irsa-trust-policy',
          'passrole-node-role',
          'controller-policy',
          'node-role',
          'interruption-queue',
          'interruption-rules',
          'helm-release',
          'nodeclass-ready',
        ]) {
          assert.equal(report.checks.find((c) => c.id === id)?.status, 'pass', `${id}:\n${lines}`)
        }
      })

      test('install --dry-run without --adopt: blocked before any change, naming --adopt; the module’s role, queue and rules are not what blocks', async (t) => {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await installOn(f.bed, ['--dry-run', '--yes', '--json'])
        const j = parseJsonOut<PlanJson>(r, 'install --dry-run')
        t.diagnostic(shown(r))
        assert.equal(r.code, 2, shown(r))
        assert.equal(j.error?.code, 'BLOCKED')
        assert.match(j.error?.message ?? '', /pass --adopt/)
        for (const name of [
          f.seed.controllerRoleName,
          f.seed.controllerPolicyArn,
          f.seed.queueName,
          ...f.seed.ruleNames,
        ])
          assert.ok(!(j.error?.message ?? '').includes(name), `${name} does not block`)
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a blocked dry run changes nothing')
      })

      test('install --dry-run --adopt: no second controller role, no second queue, no second rule set; nothing changed', async (t) => {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await installOn(f.bed, ['--dry-run', '--adopt', '--yes', '--json'])
        const j = parseJsonOut<PlanJson>(r, 'install --dry-run --adopt')
        assert.ok(!j.error, `no plan (exit ${r.code}): ${j.error?.code}: ${j.error?.message}`)
        t.diagnostic(
          j.plan.steps
            .map((s) => `${s.action.padEnd(9)} ${s.address} ${s.kind} ${s.name} ${s.note ?? ''}`)
            .join('\n'),
        )
        assert.deepEqual(
          j.plan.steps
            .filter(
              (s) =>
                s.action === 'create' &&
                ((s.kind === 'IAM role' && s.address === 'iam-role.controller') ||
                  s.kind === 'SQS queue' ||
                  s.kind === 'EventBridge rule'),
            )
            .map((s) => `${s.kind} ${s.name}`),
          [],
          'the module’s controller role, queue and rules are the install’s: nothing like them is created',
        )
        assert.equal(r.code, 0, shown(r))
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a dry run changes nothing')
      })

      /** teardown --dry-run's plan; the inventory is unchanged by it. */
      async function teardownPlan(t: TestContext) {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await karpctlOn(f.bed, ['teardown', '--dry-run', '--json'])
        const plan = parseJsonOut<PlanJson>(r, 'teardown --dry-run').plan
        t.diagnostic(
          plan.steps.map((s) => `${s.action.padEnd(9)} ${s.kind} ${s.name} ${s.note ?? ''}`).join('\n'),
        )
        assert.equal(r.code, 0, shown(r))
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a dry run changes nothing')
        return plan
      }
      /** The step of the plan that keeps `name`: not karpctl's, and `terraform destroy` named. */
      function assertKeptForTerraform(plan: PlanJson['plan'], kind: string, name: string) {
        const s = plan.steps.find((x) => x.kind === kind && x.name === name)
        assert.ok(s, `the plan shows ${kind} ${name}`)
        assert.equal(s.action, 'unchanged', `${kind} ${name} is kept`)
        assert.match(s.note ?? '', /karpctl did not make/, `${kind} ${name}: ${s.note}`)
        assert.match(s.note ?? '', /terraform destroy/, `${kind} ${name}: ${s.note}`)
      }

      test('teardown --dry-run: deletes nothing; the queue and the five rules are not karpctl’s, `terraform destroy` named', async (t) => {
        const plan = await teardownPlan(t)
        assert.deepEqual(
          plan.steps.filter((s) => s.action !== 'unchanged').map((s) => `${s.action} ${s.kind} ${s.name}`),
          [],
        )
        assertKeptForTerraform(plan, 'SQS queue', f.seed.queueName)
        for (const rule of f.seed.ruleNames) assertKeptForTerraform(plan, 'EventBridge rule', rule)
      })

      test('teardown --dry-run: the controller role is not karpctl’s, `terraform destroy` named', async (t) => {
        const plan = await teardownPlan(t)
        assertKeptForTerraform(plan, 'IAM role', f.seed.controllerRoleName)
      })
    })

    test('install --adopt, then teardown: the full inventory exactly as Terraform and helm made it', async (t) => {
      const f = await terraformBed()
      t.after(() => f.stop())
      const before = await fullInventory(f.bed, f.seed.net)
      const i = await installOn(f.bed, ['--adopt', '--yes'])
      t.diagnostic(shown(i))
      // Terraform manages these resources, their tags included: a change karpctl made to them (an
      // adoption mark) is what the next `terraform plan` reverts.
      const mid = await fullInventory(f.bed, f.seed.net)
      const scope = terraformScope(f.seed)
      assert.deepEqual(
        scope(mid),
        scope(before),
        `install --adopt changed what Terraform manages:\n${inventoryDiff(scope(before), scope(mid)).join('\n')}`,
      )
      // Teardown runs whatever install did: it must give back a half-done adoption too.
      const d = await teardownOn(f.bed)
      t.diagnostic(shown(d))
      const after = await fullInventory(f.bed, f.seed.net)
      const diff = inventoryDiff(before, after)
      t.diagnostic(`inventory after teardown, against the seed:\n${diff.join('\n') || '(same)'}`)
      assert.equal(i.code, 0, shown(i))
      assert.equal(d.code, 0, shown(d))
      assert.deepEqual(after, before, diff.join('\n'))
      // What the real teardown printed of the module's queue: kept, as another tool's.
      assert.match(planNote(d.stdout, `SQS queue ${f.seed.queueName}`) ?? '', /terraform destroy/, shown(d))
    })

    // Issue 35, item 1: terraform-aws-eks's modules/karpenter makes four rules (`local.events`: health,
    // spot, rebalance, state change); the capacity-reservation one only matters where a NodePool allows
    // `reserved` or an EC2NodeClass selects reservations (aws/karpenter-provider-aws PR #9019).
    test('the module’s four rules (no capacity-reservation rule, no reservation in use): doctor clean; --fix --yes makes no write', async (t) => {
      const f = await terraformBed()
      t.after(() => f.stop())
      const fifth = f.seed.rules.find((r) => r.spec.name === 'CapacityReservation')!.ruleName
      const aws = awsClients(f.bed)
      await aws.events.send(new RemoveTargetsCommand({ Rule: fifth, Ids: [TERRAFORM_TARGET_ID] }))
      await aws.events.send(new DeleteRuleCommand({ Name: fifth }))
      const before = await fullInventory(f.bed, f.seed.net)
      const r = await karpctlOn(f.bed, ['doctor', '--json'])
      const report = parseJsonOut<DoctorJson>(r, 'doctor')
      const lines = checkLines(report)
      t.diagnostic(lines)
      assert.equal(report.checks.find((c) => c.id === 'interruption-rules')?.status, 'pass', lines)
      assert.deepEqual(
        report.checks.filter((c) => c.status === 'fail').map((c) => c.id),
        [],
        lines,
      )
      assert.equal(r.code, 0, shown(r))
      const fix = await karpctlOn(f.bed, ['doctor', '--fix', '--yes'])
      t.diagnostic(shown(fix))
      const after = await fullInventory(f.bed, f.seed.net)
      assert.deepEqual(after, before, inventoryDiff(before, after).join('\n'))
    })

    test('tenant add acme, then teardown: the module’s role keeps only the one policy Terraform attached, the inventory as before', async (t) => {
      const f = await terraformBed()
      t.after(() => f.stop())
      const before = await fullInventory(f.bed, f.seed.net)
      const add = await karpctlOn(f.bed, ['tenant', 'add', 'acme', '--yes', '--timeout', '30'])
      t.diagnostic(shown(add))
      assert.equal(add.code, 0, shown(add))
      const mid = (await fullInventory(f.bed, f.seed.net)).roles as Record<string, { inline: string[] }>
      t.diagnostic(
        `${f.seed.controllerRoleName} inline policies after tenant add: ${JSON.stringify(mid[f.seed.controllerRoleName]?.inline)}`,
      )
      assert.ok(mid['KarpenterNodeRole-demo-acme'], 'the tenant’s node role was made')
      const d = await teardownOn(f.bed)
      t.diagnostic(shown(d))
      assert.equal(d.code, 0, shown(d))
      const after = await fullInventory(f.bed, f.seed.net)
      // Karpenter made an instance profile for acme's EC2NodeClass (path /karpenter/<region>/<cluster>/
      // <class uid>/). Its finalizer deletes it with the class, but not under ISOLATED_VPC, which the bed
      // must set (v1.14.1 pkg/controllers/nodeclass/controller.go, cleanupManagedInstanceProfiles): that
      // one is left here, and only empty — teardown took the tenant's role out of it to delete the role.
      const left = await karpenterProfilesLeft(f, before)
      t.diagnostic(`left by ISOLATED_VPC: ${left.map((p) => `${p.Path}${p.InstanceProfileName}`).join(', ')}`)
      assert.ok(left.length <= 1, JSON.stringify(left))
      for (const p of left) assert.deepEqual(p.Roles ?? [], [], `${p.InstanceProfileName} holds no role`)
      const names = new Set(left.map((p) => `${p.InstanceProfileName}: `))
      const kept = {
        ...after,
        instanceProfiles: (after.instanceProfiles as string[]).filter((p) => !names.has(p)),
      }
      assert.deepEqual(kept, before, inventoryDiff(before, kept).join('\n'))
    })
  },
)
