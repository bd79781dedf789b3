// Who owns a resource, asked of CloudFormation on the wire (query protocol, XML answers; "not owned" is
// a ValidationError): the getting-started install's stacks are found for resources that carry no
// aws:cloudformation:* tag, each id is asked once per run, and a denied read is unknown, not "not owned".
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import nock from 'nock'
import { createRunContext } from '../../src/context/run-context.js'
import { doctor } from '../../src/doctor/doctor.js'
import { fixSet } from '../../src/fix/fixes.js'
import { runFix } from '../../src/fix/run.js'
import {
  collectOwners,
  describeOwner,
  ownedIds,
  ownerCommand,
  stackOwner,
} from '../../src/facts/collect-owners.js'
import { ACCOUNT, CONTROLLER_ROLE, NODE_ROLE, OIDC_ARN, REGION } from '../helpers/facts.js'
import {
  EKSCTL_STACK,
  GETTING_STARTED_STACK,
  HOSTS,
  startMockCluster,
  stackId,
  useGettingStartedStacks,
  type MockCluster,
  type MockOptions,
} from '../helpers/mock-cluster.js'

function mock(t: TestContext, options: MockOptions = {}): MockCluster {
  const m = startMockCluster(options)
  t.after(() => m.stop())
  return m
}

const QUEUE_URL = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/demo`
const policyArn = (name: string) => `arn:aws:iam::${ACCOUNT}:policy/${name}`

test('getting-started install: the stacks that own the role, policies, queue and rules are named, each id read once', async (t) => {
  const m = mock(t, { mutate: useGettingStartedStacks })
  const { facts } = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  const cfn = facts.cloudformation
  assert.ok(cfn)
  const owner = (id: string) => {
    const r = cfn.owners[id]
    assert.ok(r?.ok, `${id}: ${JSON.stringify(r)}`)
    return r.value
  }
  assert.equal(owner(CONTROLLER_ROLE)?.stackName, EKSCTL_STACK)
  assert.equal(owner(CONTROLLER_ROLE)?.resourceType, 'AWS::IAM::Role')
  assert.equal(owner(CONTROLLER_ROLE)?.stackId, stackId(EKSCTL_STACK))
  assert.equal(owner(NODE_ROLE)?.stackName, GETTING_STARTED_STACK)
  assert.deepEqual(owner(policyArn('KarpenterControllerNodeLifecyclePolicy-demo')), {
    stackName: GETTING_STARTED_STACK,
    stackId: stackId(GETTING_STARTED_STACK),
    logicalId: 'NodeLifecyclePolicy',
    resourceType: 'AWS::IAM::ManagedPolicy',
    resourceStatus: 'CREATE_COMPLETE',
  })
  assert.equal(owner(QUEUE_URL)?.logicalId, 'KarpenterInterruptionQueue')
  for (const rule of m.state.rules) assert.equal(owner(rule.name)?.resourceType, 'AWS::Events::Rule')
  // The OIDC provider (IRSA) was asked about too, and no stack declares it.
  assert.equal(owner(OIDC_ARN), null)
  // The stack's resources come with the answers: its managed policies are known without another read.
  const stack = cfn.stacks[GETTING_STARTED_STACK] ?? []
  assert.equal(stack.filter((r) => r.resourceType === 'AWS::IAM::ManagedPolicy').length, 6)
  // 1 role + 6 policies + 1 node role + 1 queue + 5 rules + 1 OIDC provider, no repeat, none missing.
  assert.equal(m.count('cloudformation:DescribeStackResources'), 15)
  assert.deepEqual(Object.keys(cfn.owners).sort(), ownedIds(facts).sort())
  assert.deepEqual(m.duplicates(), [])
  assert.deepEqual(m.unexpected(), [])
  assert.ok(m.isDone(), m.pending().join('\n'))
})

test('the healthy karpctl-made install: every resource asked about is owned by no stack (null, not a failure)', async (t) => {
  const m = mock(t)
  const { facts } = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  const owners = facts.cloudformation?.owners ?? {}
  assert.ok(Object.keys(owners).length >= 10, Object.keys(owners).join(', '))
  for (const [id, r] of Object.entries(owners)) assert.deepEqual(r, { ok: true, value: null }, id)
  // AWS managed policies (the node role's) are AWS's: never asked about.
  assert.ok(!Object.keys(owners).some((id) => id.startsWith('arn:aws:iam::aws:')))
  assert.deepEqual(facts.cloudformation?.stacks, {})
  // Asked piece by piece as the reads answered: exactly the ids ownedIds names on the whole snapshot.
  assert.deepEqual(Object.keys(owners).sort(), ownedIds(facts).sort())
})

test('DescribeStackResources denied: the owner is unknown (a failed read), never "not owned"', async (t) => {
  const m = mock(t, {
    mutate: useGettingStartedStacks,
    faults: [{ op: 'cloudformation:DescribeStackResources', error: 'denied', times: Infinity }],
  })
  const { facts } = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  const r = facts.cloudformation?.owners[CONTROLLER_ROLE]
  assert.ok(r && !r.ok)
  assert.equal(r.error.kind, 'denied')
  assert.equal(r.error.code, 'AccessDenied')
  assert.match(r.error.read, /cloudformation:DescribeStackResources KarpenterControllerRole-demo/)
})

test('the finder: one read per id per run, null for no stack, a retained resource is no longer owned, a big stack still owns what it did not list', async (t) => {
  const m = mock(t, {
    expectations: false,
    mutate: (s) => {
      useGettingStartedStacks(s)
      // Removed from the template with DeletionPolicy Retain: CloudFormation still lists it.
      s.stacks.push({
        name: 'big-stack',
        resources: Array.from({ length: 120 }, (_, i) => ({
          logicalId: `Rule${i}`,
          physicalId: `big-rule-${i}`,
          type: 'AWS::Events::Rule',
        })),
      })
      s.stacks.push({
        name: 'old-karpenter',
        resources: [
          { logicalId: 'Queue', physicalId: 'kept-queue', type: 'AWS::SQS::Queue', status: 'DELETE_SKIPPED' },
        ],
      })
    },
  })
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  t.after(() => ctx.aws.destroy())
  const [a, b] = await Promise.all([
    stackOwner(ctx.aws, CONTROLLER_ROLE),
    stackOwner(ctx.aws, CONTROLLER_ROLE),
  ])
  assert.equal(a?.stackName, EKSCTL_STACK)
  assert.deepEqual(a, b)
  assert.equal((await describeOwner(ctx.aws, CONTROLLER_ROLE))?.resources.length, 1)
  assert.equal(m.count('cloudformation:DescribeStackResources'), 1)
  assert.equal(await stackOwner(ctx.aws, 'NotAnyStacksRole'), null)
  // Past the first 100 resources the answer lists: still that stack's (the logical id is not said).
  const big = await describeOwner(ctx.aws, 'big-rule-110')
  assert.equal(big?.owner.stackName, 'big-stack')
  assert.equal(big?.owner.logicalId, '')
  assert.equal(big?.resources.length, 100)
  assert.equal(await stackOwner(ctx.aws, 'kept-queue'), null)
  assert.equal(
    ownerCommand(a!),
    `kept: made by CloudFormation stack ${EKSCTL_STACK}, eksctl's: remove it with eksctl (\`aws cloudformation delete-stack --stack-name ${EKSCTL_STACK}\`)`,
  )
})

test('an endpoint without CloudFormation (HTML 404): the finder throws, the fact is unsupported, not "not owned"', async (t) => {
  const m = mock(t, { expectations: false })
  // Only this endpoint, as an emulator that does not serve the API answers (the mock's credentials stay).
  nock.cleanAll()
  nock(HOSTS.cloudformation).persist().post('/').reply(404, '<html><body>Not Found</body></html>', {
    'content-type': 'text/html',
  })
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  t.after(() => ctx.aws.destroy())
  await assert.rejects(stackOwner(ctx.aws, CONTROLLER_ROLE))
  const { owners } = await collectOwners(ctx.aws, [CONTROLLER_ROLE])
  const r = owners[CONTROLLER_ROLE]
  assert.ok(r && !r.ok)
  assert.equal(r.error.kind, 'unsupported')
})

test('an endpoint that ignores PhysicalResourceId (moto 5.2: "Stack with id None does not exist"): unsupported, not "not owned"', async (t) => {
  const m = mock(t, {
    expectations: false,
    faults: [
      {
        op: 'cloudformation:DescribeStackResources',
        error: { status: 400, code: 'ValidationError', message: 'Stack with id None does not exist' },
        times: Infinity,
      },
    ],
  })
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  t.after(() => ctx.aws.destroy())
  const r = (await collectOwners(ctx.aws, [CONTROLLER_ROLE])).owners[CONTROLLER_ROLE]
  assert.ok(r && !r.ok)
  assert.equal(r.error.kind, 'unsupported')
  assert.match(r.error.message, /Stack with id None does not exist/)
})

test("getting-started install, the lifecycle policy detached from eksctl's role: doctor prints the re-attach, --fix plans no write on the role", async (t) => {
  const lifecycle = policyArn('KarpenterControllerNodeLifecyclePolicy-demo')
  const m = mock(t, {
    mutate: (s) => {
      useGettingStartedStacks(s)
      const role = s.roles[CONTROLLER_ROLE]!
      role.attached = role.attached.filter((a) => a !== lifecycle)
    },
  })
  const outcome = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  const check = outcome.results.find((r) => r.meta.id === 'controller-policy')!
  const fail = check.findings.find((f) => f.status === 'fail')
  assert.ok(fail, check.findings.map((f) => f.message).join('\n'))
  assert.deepEqual(fail.fix?.commands, [
    `aws iam attach-role-policy --role-name ${CONTROLLER_ROLE} --policy-arn ${lifecycle}`,
  ])
  const fs = fixSet(outcome.facts, outcome.results)
  assert.ok(!fs.resources.some((r) => r.address === 'iam-policy.controller-missing'))
  const manual = fs.manual.find((x) => x.check === 'controller-policy')
  assert.match(
    manual?.why ?? '',
    new RegExp(`controller role ${CONTROLLER_ROLE} belongs to CloudFormation stack ${EKSCTL_STACK}`),
  )
  assert.deepEqual(m.duplicates(), [])
  // The detached policy is neither read nor asked about (only what is attached is): the stack's answer
  // for the other policies listed it.
  assert.deepEqual(m.unexpected(), [])
  assert.ok(m.isDone(), m.pending().join('\n'))
})

test("CloudFormation's lookups have their own bound: a busy run bound does not hold them back", async (t) => {
  // Per-operation latency applies to the expected reads (the mock's one-shot interceptors).
  const m = mock(t, { latencyByOp: { 'iam:GetRole': 600 } })
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1, concurrency: 1 }))
  t.after(() => ctx.aws.destroy())
  // Both clients built first (their cold import is not what is measured).
  await Promise.all([stackOwner(ctx.aws, 'warm-up'), ctx.aws.call('iam', 'GetRole', { RoleName: NODE_ROLE })])
  const done: string[] = []
  const iam = ctx.aws.call('iam', 'GetRole', { RoleName: CONTROLLER_ROLE }).then(() => done.push('iam'))
  // The only slot of the run's bound is taken by GetRole (600 ms) before the lookup starts.
  await new Promise((r) => setTimeout(r, 100))
  const cfn = stackOwner(ctx.aws, CONTROLLER_ROLE).then(() => done.push('cloudformation'))
  await Promise.all([iam, cfn])
  assert.deepEqual(done, ['cloudformation', 'iam'])
})

test("doctor --fix --yes on the getting-started install, ec2:CreateFleet gone from the stack's policy: no write at all, the stack update listed as manual", async (t) => {
  const m = mock(t, {
    expectations: false,
    mutate: (s) => {
      useGettingStartedStacks(s)
      const p = s.managedPolicies[policyArn('KarpenterControllerNodeLifecyclePolicy-demo')]!
      p.document = {
        ...p.document,
        Statement: p.document.Statement.map((st) =>
          Array.isArray(st.Action) ? { ...st, Action: st.Action.filter((a) => a !== 'ec2:CreateFleet') } : st,
        ),
      }
    },
  })
  const said: string[] = []
  const out = await runFix({
    live: m.runOptions({ maxAttempts: 1 }),
    yes: true,
    dryRun: false,
    prompter: null,
    color: false,
    say: (s) => said.push(s),
    progress: () => {},
  })
  assert.equal(out.writes, 0, said.join('\n'))
  const manual = out.manual.find((x) => x.check === 'controller-policy')
  assert.ok(manual, JSON.stringify(out.manual, null, 2))
  assert.match(manual.why, new RegExp(`belongs to CloudFormation stack ${EKSCTL_STACK}`))
  assert.ok(
    manual.commands.some((c) =>
      c.startsWith(`aws cloudformation update-stack --stack-name ${GETTING_STARTED_STACK} `),
    ),
  )
  assert.ok(!out.plan.steps.some((s) => s.address === 'iam-policy.controller-missing'))
})
