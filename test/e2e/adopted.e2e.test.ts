// Issue 18: installs karpctl did not make. Karpenter as the getting-started guide makes it — the real
// v1.14.1 CloudFormation template deployed as stack Karpenter-demo through moto's CloudFormation, eksctl's
// OIDC provider and IRSA role `demo-karpenter` (its own stack), the guide's `helm upgrade --install` with
// the IRSA annotation, the guide's NodePool and EC2NodeClass — then karpctl on it:
// doctor is clean; install plans no second controller role, queue or rule set; install --adopt then
// teardown gives back exactly what the stacks and helm made; a tenant's PassRole grant on the adopted
// controller role goes with the tenant.
// On the real Karpenter 1.14.1 controller (issue 34): the chart's Deployment runs it, and the Deployment's
// availability, the guide's EC2NodeClass (its five conditions and the instance profile it makes for
// KarpenterNodeRole-demo) and NodePool Ready, and the tenant's class Ready are Karpenter's: the test
// writes none of them, and a pod of the guide's NodePool gets a NodeClaim Karpenter launched.
import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import { DescribeRuleCommand, ListTargetsByRuleCommand } from '@aws-sdk/client-eventbridge'
import {
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
} from '@aws-sdk/client-iam'
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs'
import {
  EC2NODECLASSES,
  NODEPOOLS,
  RESOLVED,
  conditionOf,
  instanceById,
  instanceIdOf,
  isTrue,
  pendingPod,
  tagOf,
  unresolved,
  waitForClaim,
  waitForCondition,
} from './bed/karpenter-objects.js'
import {
  awsClients,
  fullInventory,
  inventoryDiff,
  renderCloudFormation,
  seedAdoptedInstall,
  type AdoptedInstall,
  type Bed,
  waitFor,
} from './bed/index.js'
import {
  installOn,
  karpctlOn,
  parseJsonOut,
  realControllerBed,
  shown,
  teardownOn,
  type DoctorJson,
  type PlanJson,
  type SeededBed,
} from './bed/cli.js'

const karpctl = karpctlOn
const install = installOn
const teardown = (bed: Bed) => teardownOn(bed)
const out = shown
const parseJson = parseJsonOut
type InstallJson = PlanJson
type Fresh = SeededBed<AdoptedInstall>
const adoptedBed = () => realControllerBed((bed) => seedAdoptedInstall(bed, { markAvailable: false }))

describe(
  'an install karpctl did not make: getting-started stacks, eksctl IRSA, the guide’s helm',
  { timeout: 30 * 60_000 },
  () => {
    describe('read-only: doctor, teardown --dry-run, install --dry-run', () => {
      let f: Fresh
      before(async () => {
        f = await adoptedBed()
      })
      after(async () => {
        await f?.stop()
      })

      test('the seed is the guide’s install: stacks complete, demo-karpenter trusts the OIDC provider, the chart annotated', async () => {
        const { seed } = f
        const iam = awsClients(f.bed).iam
        assert.equal(seed.karpenterStack.status, 'CREATE_COMPLETE')
        assert.equal(seed.karpenterStack.resources.length, 13, 'the template less AWS::SQS::QueuePolicy')
        assert.equal(seed.irsaStack.physical.Role1, 'demo-karpenter')
        assert.equal(seed.ruleNames.length, 5)
        const role = await iam.send(new GetRoleCommand({ RoleName: 'demo-karpenter' }))
        const trust = JSON.parse(decodeURIComponent(role.Role!.AssumeRolePolicyDocument!)) as {
          Statement: {
            Principal: { Federated: string }
            Condition: { StringEquals: Record<string, string> }
          }[]
        }
        const host = seed.oidcIssuer.replace(/^https:\/\//, '')
        assert.equal(trust.Statement[0]!.Principal.Federated, seed.oidcProviderArn)
        assert.deepEqual(trust.Statement[0]!.Condition.StringEquals, {
          [`${host}:aud`]: 'sts.amazonaws.com',
          [`${host}:sub`]: 'system:serviceaccount:kube-system:karpenter',
        })
        const attached = await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'demo-karpenter' }))
        assert.deepEqual(
          (attached.AttachedPolicies ?? []).map((p) => p.PolicyArn).sort(),
          [...seed.controllerPolicyArns].sort(),
        )
        const sa = await f.bed.kube.get('/api/v1/namespaces/kube-system/serviceaccounts/karpenter')
        assert.equal(sa?.metadata?.annotations?.['eks.amazonaws.com/role-arn'], seed.controllerRoleArn)
      })

      test('moto’s CloudFormation (with the workarounds) made exactly the documents the template says', async () => {
        // renderCloudFormation() is seed.ts' own reading of the same template, independent of moto.
        const tpl = renderCloudFormation(f.seed)
        const aws = awsClients(f.bed)
        const json = (s: string | undefined) => JSON.parse(decodeURIComponent(s ?? '')) as unknown
        for (const p of tpl.controllerPolicies) {
          const arn = `arn:aws:iam::${f.seed.accountId}:policy/${p.name}`
          assert.ok(f.seed.controllerPolicyArns.includes(arn), arn)
          const meta = await aws.iam.send(new GetPolicyCommand({ PolicyArn: arn }))
          const v = await aws.iam.send(
            new GetPolicyVersionCommand({ PolicyArn: arn, VersionId: meta.Policy!.DefaultVersionId! }),
          )
          assert.deepEqual(json(v.PolicyVersion!.Document), JSON.parse(p.document), p.name)
        }
        const node = await aws.iam.send(new GetRoleCommand({ RoleName: tpl.nodeRoleName }))
        assert.deepEqual(json(node.Role!.AssumeRolePolicyDocument), JSON.parse(tpl.nodeRoleTrustPolicy))
        const nodeAttached = await aws.iam.send(
          new ListAttachedRolePoliciesCommand({ RoleName: tpl.nodeRoleName }),
        )
        assert.deepEqual(
          (nodeAttached.AttachedPolicies ?? []).map((p) => p.PolicyArn).sort(),
          [...tpl.nodeRoleManagedPolicyArns].sort(),
        )
        const q = await aws.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: f.seed.queueUrl,
            AttributeNames: ['MessageRetentionPeriod', 'SqsManagedSseEnabled', 'Policy'],
          }),
        )
        assert.deepEqual(
          { ...q.Attributes, Policy: JSON.parse(q.Attributes!.Policy!) as unknown },
          { ...tpl.queueAttributes, Policy: JSON.parse(tpl.queuePolicy) as unknown },
        )
        for (const r of tpl.rules) {
          const name = f.seed.karpenterStack.physical[r.logicalId]!
          assert.match(name, new RegExp(`^Karpenter-demo-${r.logicalId}-[A-Z0-9]{12}$`))
          const d = await aws.events.send(new DescribeRuleCommand({ Name: name }))
          assert.deepEqual(JSON.parse(d.EventPattern!), JSON.parse(r.eventPattern), r.logicalId)
          assert.equal(d.State, 'ENABLED')
          const targets = await aws.events.send(new ListTargetsByRuleCommand({ Rule: name }))
          assert.deepEqual(
            (targets.Targets ?? []).map((x) => `${x.Id}=${x.Arn}`),
            [`${r.targetId}=${f.seed.queueArn}`],
          )
        }
      })

      test('doctor: no failing check, exit 0, beside Karpenter’s own conditions on the guide’s class and pool', async (t) => {
        const nc = await f.bed.kube.get(`${EC2NODECLASSES}/default`)
        assert.deepEqual(unresolved(nc), [], `Karpenter resolved the guide’s class (${RESOLVED.join(', ')})`)
        const pool = await f.bed.kube.get(`${NODEPOOLS}/default`)
        assert.equal(conditionOf(pool, 'Ready')?.status, 'True', JSON.stringify(pool?.status))
        // al2023@v20240807, as the guide pins it: resolved by Karpenter through SSM to an image of moto's.
        assert.ok((nc?.status?.amis ?? []).length > 0, JSON.stringify(nc?.status))
        assert.match(String(nc?.status?.instanceProfile ?? ''), /^demo_\d+$/, JSON.stringify(nc?.status))
        const r = await karpctl(f.bed, ['doctor', '--json'])
        const report = parseJson<DoctorJson>(r, 'doctor')
        const lines = report.checks
          .map((c) => `${c.status.padEnd(7)} ${c.id}: ${c.findings.map((x) => x.message).join(' | ')}`)
          .join('\n')
        t.diagnostic(lines)
        assert.deepEqual(
          report.checks.filter((c) => c.status === 'fail').map((c) => c.id),
          [],
          lines,
        )
        assert.equal(r.code, 0, out(r))
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

      test('teardown --dry-run: deletes nothing of an install karpctl did not make; changes nothing', async (t) => {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await karpctl(f.bed, ['teardown', '--dry-run', '--json'])
        const plan = parseJson<InstallJson>(r, 'teardown --dry-run').plan
        t.diagnostic(
          plan.steps.map((s) => `${s.action.padEnd(9)} ${s.kind} ${s.name} ${s.note ?? ''}`).join('\n'),
        )
        assert.equal(r.code, 0, out(r))
        assert.deepEqual(
          plan.steps.filter((s) => s.action !== 'unchanged').map((s) => `${s.action} ${s.kind} ${s.name}`),
          [],
        )
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a dry run changes nothing')
      })

      test('teardown --dry-run names the owners: stack Karpenter-demo (node role, queue, rules) and eksctl’s stack (demo-karpenter)', async (t) => {
        const r = await karpctl(f.bed, ['teardown', '--dry-run'])
        t.diagnostic(out(r))
        assert.equal(r.code, 0, out(r))
        for (const shown of [
          `IAM role ${f.seed.controllerRoleName}`,
          `IAM role ${f.seed.nodeRoleName}`,
          `SQS queue ${f.seed.queueName}`,
          ...f.seed.ruleNames.map((n) => `EventBridge rule ${n}`),
        ]) {
          assert.ok(r.stdout.includes(shown), `the plan shows ${shown}`)
        }
        assert.match(r.stdout, /\bKarpenter-demo\b(?!-)/, 'names the stack Karpenter-demo')
        assert.match(r.stdout, /\beksctl-demo-addon-iamserviceaccount-kube-system-karpenter\b/)
      })

      /** The install plan of a dry run must take the stack's role, queue and rules as the install's. */
      async function assertNoSecondInstall(t: TestContext, extra: string[]) {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await install(f.bed, ['--dry-run', '--yes', '--json', ...extra])
        const j = parseJson<InstallJson & { error?: { code: string; message: string } }>(
          r,
          'install --dry-run',
        )
        assert.ok(!j.error, `no plan (exit ${r.code}): ${j.error?.code}: ${j.error?.message}`)
        const creates = j.plan.steps.filter((s) => s.action === 'create')
        t.diagnostic(
          j.plan.steps.map((s) => `${s.action.padEnd(9)} ${s.address} ${s.kind} ${s.name}`).join('\n'),
        )
        assert.deepEqual(
          creates
            .filter(
              (s) =>
                (s.kind === 'IAM role' && s.address === 'iam-role.controller') ||
                s.kind === 'SQS queue' ||
                s.kind === 'EventBridge rule',
            )
            .map((s) => `${s.kind} ${s.name}`),
          [],
          'the stack’s controller role, queue and rules are the install’s: nothing like them is created',
        )
        assert.equal(r.code, 0, out(r))
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a dry run changes nothing')
      }

      test('install --dry-run without --adopt: blocked before any change, naming --adopt; the stack’s role, queue and rules are not what blocks', async (t) => {
        const before = await fullInventory(f.bed, f.seed.net)
        const r = await install(f.bed, ['--dry-run', '--yes', '--json'])
        const j = parseJson<{ error?: { code: string; message: string } }>(r, 'install --dry-run')
        t.diagnostic(out(r))
        assert.equal(r.code, 2, out(r))
        assert.equal(j.error?.code, 'BLOCKED')
        assert.match(j.error?.message ?? '', /pass --adopt/)
        // Used as they are (already what Karpenter needs): never a reason to block.
        for (const name of [f.seed.controllerRoleName, `SQS queue ${f.seed.queueName}:`, ...f.seed.ruleNames])
          assert.ok(!(j.error?.message ?? '').includes(name), `${name} does not block`)
        assert.deepEqual(await fullInventory(f.bed, f.seed.net), before, 'a blocked dry run changes nothing')
      })

      test('install --dry-run --adopt: no second controller role, no second queue, no second rule set; nothing changed', (t) =>
        assertNoSecondInstall(t, ['--adopt']))

      // Last in this describe: it launches an instance, which the inventories above must not see.
      test('what doctor passed, Karpenter launches on: a pod of the guide’s NodePool gets a NodeClaim, its instance in moto with the guide’s AMI and Karpenter’s tags', async () => {
        await f.bed.kube.create(
          pendingPod('guide-app', { 'karpenter.sh/nodepool': 'default' }, { keepNode: true }),
        )
        const claim = await waitForClaim(
          f.bed,
          'a NodeClaim of the guide’s NodePool, launched',
          'default',
          (c) => isTrue(c, 'Launched'),
        )
        const nc = await f.bed.kube.get(`${EC2NODECLASSES}/default`)
        const inst = await instanceById(f.bed, instanceIdOf(claim))
        assert.ok(inst, `instance of ${claim.metadata.name}`)
        assert.equal(tagOf(inst, 'karpenter.sh/nodepool'), 'default')
        assert.equal(tagOf(inst, 'karpenter.k8s.aws/ec2nodeclass'), 'default')
        // Karpenter tags the instance with its NodeClaim once the node registered (the bed's kubelet).
        await waitFor(
          `instance ${inst.InstanceId} tagged karpenter.sh/nodeclaim=${claim.metadata.name} by Karpenter`,
          async () =>
            tagOf((await instanceById(f.bed, inst.InstanceId))!, 'karpenter.sh/nodeclaim') ===
            claim.metadata.name,
          { timeoutMs: 120_000, intervalMs: 1000 },
        )
        assert.ok(
          (nc?.status?.amis ?? []).some((a: { id: string }) => a.id === inst.ImageId),
          `${inst.ImageId} is one of the class's AMIs (al2023@v20240807): ${JSON.stringify(nc?.status?.amis)}`,
        )
      })
    })

    test('install --adopt, then teardown: the full inventory exactly as the stacks and helm made it', async (t) => {
      const f = await adoptedBed()
      t.after(() => f.stop())
      const before = await fullInventory(f.bed, f.seed.net)
      const i = await install(f.bed, ['--adopt', '--yes'])
      t.diagnostic(out(i))
      // Teardown runs whatever install did: it must give back a half-done adoption too.
      const d = await teardown(f.bed)
      t.diagnostic(out(d))
      const after = await fullInventory(f.bed, f.seed.net)
      const diff = inventoryDiff(before, after)
      t.diagnostic(`inventory after teardown, against the seed:\n${diff.join('\n') || '(same)'}`)
      assert.equal(i.code, 0, out(i))
      assert.equal(d.code, 0, out(d))
      assert.deepEqual(after, before, diff.join('\n'))
    })

    test('tenant add acme, then teardown: no KarpctlTenantPassRole-acme left on demo-karpenter', async (t) => {
      const f = await adoptedBed()
      t.after(() => f.stop())
      const iam = awsClients(f.bed).iam
      const inline = async () =>
        (
          (await iam.send(new ListRolePoliciesCommand({ RoleName: 'demo-karpenter' }))).PolicyNames ?? []
        ).sort()
      const attached = async () =>
        (
          (await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'demo-karpenter' })))
            .AttachedPolicies ?? []
        )
          .map((p) => p.PolicyArn)
          .sort()
      const beforeInline = await inline()
      const beforeAttached = await attached()
      const add = await karpctl(f.bed, ['tenant', 'add', 'acme', '--yes', '--timeout', '90'])
      t.diagnostic(out(add))
      assert.equal(add.code, 0, out(add))
      // The tenant's class Ready by Karpenter, with the instance profile it made for the tenant's role.
      const nc = await waitForCondition(f.bed, `${EC2NODECLASSES}/acme`, 'Ready', { status: 'True' })
      assert.equal(nc.spec?.role, 'KarpenterNodeRole-demo-acme', JSON.stringify(nc.spec))
      assert.ok(nc.status?.instanceProfile, JSON.stringify(nc.status))
      t.diagnostic(`demo-karpenter inline policies after tenant add: ${JSON.stringify(await inline())}`)
      await iam.send(new GetRoleCommand({ RoleName: 'KarpenterNodeRole-demo-acme' }))
      const d = await teardown(f.bed)
      t.diagnostic(out(d))
      assert.equal(d.code, 0, out(d))
      assert.ok(
        !(await inline()).includes('KarpctlTenantPassRole-acme'),
        'the tenant’s PassRole grant is gone',
      )
      assert.deepEqual(await inline(), beforeInline, 'demo-karpenter’s inline policies as eksctl left them')
      assert.deepEqual(
        await attached(),
        beforeAttached,
        'demo-karpenter’s attached policies as eksctl left them',
      )
    })
  },
)
