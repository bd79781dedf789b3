// Teardown's resources against an adversarial account: look-alikes without karpctl's marks, another
// cluster's leftovers, tags that were there before karpctl. Each resource must prove karpctl's part.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { helmReleaseAbsent } from '../../../src/plan/resources/helm-release-absent.js'
import { oidcProviderAbsent } from '../../../src/plan/resources/oidc-provider-absent.js'
import { orphanSweep } from '../../../src/plan/resources/orphan-sweep.js'
import { ownerHint } from '../../../src/plan/resources/absent.js'
import { queueAbsent } from '../../../src/plan/resources/sqs-queue-absent.js'
import { recordedTagsRestore } from '../../../src/plan/resources/recorded-tags.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import { helmReleaseSecret } from '../../helpers/mock-cluster.js'
import { onePage } from '../../helpers/pager.js'

const OWN = { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'demo' }
const tags = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }))

/** AWS answers by operation; every write is recorded. */
function fakeEnv(answers: Record<string, (input: Record<string, unknown>) => unknown>) {
  const writes: [string, unknown][] = []
  const answer = async (_s: string, op: string, input: Record<string, unknown> = {}) => {
    const a = answers[op]
    if (!a) throw Object.assign(new Error(`${op} not found`), { name: 'NoSuchEntity' })
    return a(input)
  }
  const env = {
    aws: {
      call: answer,
      write: async (_s: string, op: string, input: unknown) => {
        writes.push([op, input])
        return {}
      },
      all: onePage(answer),
    },
    kube: { get: async () => null },
    helm: async () => ({ uninstall: async (r: string) => writes.push(['helm uninstall', r]) }),
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
  return { env, writes }
}

async function planOf(r: Resource, env: ApplyEnv) {
  return (await buildPlan('t', [r], env)).steps[0]!
}

test('recorded tags: only the keys karpctl recorded adding come off; tags that were there before stay', async () => {
  const { env, writes } = fakeEnv({
    DescribeSubnets: () => ({
      Subnets: [
        {
          SubnetId: 'subnet-a',
          Tags: tags({
            'karpenter.sh/discovery': 'demo',
            'karpctl.io/added-tags': 'karpenter.sh/discovery',
            Name: 'a',
          }),
        },
      ],
    }),
    DescribeSecurityGroups: () => ({ SecurityGroups: [] }),
  })
  const r = recordedTagsRestore({ clusterName: 'demo', dependsOn: [] })
  const step = await planOf(r, env)
  assert.deepEqual(step.verdict.changes, [
    { field: 'subnet-a karpenter.sh/discovery', from: 'demo' },
    { field: 'subnet-a karpctl.io/added-tags', from: 'karpenter.sh/discovery' },
  ])
  await applyPlan({ title: 't', steps: [step] }, env)
  assert.deepEqual(writes, [
    [
      'DeleteTags',
      {
        Resources: ['subnet-a'],
        Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: 'karpctl.io/added-tags' }],
      },
    ],
  ])
  // A subnet tagged before karpctl carries no record: the filter on the record tag never returns it.
  const none = fakeEnv({
    DescribeSubnets: () => ({ Subnets: [] }),
    DescribeSecurityGroups: () => ({ SecurityGroups: [] }),
  })
  assert.equal((await planOf(r, none.env)).verdict.action, 'unchanged')
})

test('a queue and a release without karpctl marks are kept, and the plan says whose they are', async () => {
  const { env } = fakeEnv({
    GetQueueUrl: () => ({ QueueUrl: 'https://sqs/1/demo' }),
    ListQueueTags: () => ({ Tags: { 'aws:cloudformation:stack-name': 'Karpenter-demo' } }),
  })
  const q = await planOf(queueAbsent({ name: 'demo', ownership: OWN, dependsOn: [] }), env)
  assert.equal(q.verdict.action, 'unchanged')
  assert.equal(
    q.verdict.note,
    'kept: made by CloudFormation stack Karpenter-demo (`aws cloudformation delete-stack --stack-name Karpenter-demo`)',
  )
  assert.match(ownerHint({}), /remove it with the tool that made it \(e.g. `terraform destroy`\)/)
  const owned = fakeEnv({ GetQueueUrl: () => ({ QueueUrl: 'u' }), ListQueueTags: () => ({ Tags: OWN }) })
  assert.equal(
    (await planOf(queueAbsent({ name: 'demo', ownership: OWN, dependsOn: [] }), owned.env)).verdict.action,
    'delete',
  )

  const release = (labels: Record<string, string>) => {
    const sec = helmReleaseSecret()
    sec.metadata.labels = { ...sec.metadata.labels, ...labels }
    return { items: [sec] }
  }
  const rel = helmReleaseAbsent({
    address: 'helm.karpenter',
    release: 'karpenter',
    namespace: 'kube-system',
    labels: { 'karpctl.io/managed-by': 'karpctl' },
    dependsOn: [],
  })
  const withKube = (list: unknown) =>
    ({ ...fakeEnv({}).env, kube: { get: async () => list } }) as unknown as ApplyEnv
  const foreignRelease = await planOf(rel, withKube(release({})))
  assert.deepEqual(
    [foreignRelease.verdict.action, foreignRelease.verdict.note],
    ['unchanged', 'kept: installed without karpctl (`helm uninstall karpenter -n kube-system`)'],
  )
  assert.equal(
    (await planOf(rel, withKube(release({ 'karpctl.io/managed-by': 'karpctl' })))).verdict.action,
    'delete',
  )
})

test('the OIDC provider karpctl made is kept while a role karpctl does not remove trusts it', async () => {
  const arn = 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/X'
  const trust = encodeURIComponent(JSON.stringify({ Statement: [{ Principal: { Federated: arn } }] }))
  const roles = (names: string[]) => () => ({
    Roles: names.map((RoleName) => ({ RoleName, AssumeRolePolicyDocument: trust })),
  })
  const r = oidcProviderAbsent({
    arn,
    ownership: OWN,
    keepRoles: ['KarpenterControllerRole-demo'],
    dependsOn: [],
  })
  const shared = fakeEnv({
    ListOpenIDConnectProviderTags: () => ({ Tags: tags(OWN) }),
    ListRoles: roles(['KarpenterControllerRole-demo', 'app-irsa']),
  })
  assert.deepEqual(
    [(await planOf(r, shared.env)).verdict.action, (await planOf(r, shared.env)).verdict.note],
    ['unchanged', 'kept: still trusted by app-irsa'],
  )
  const alone = fakeEnv({
    ListOpenIDConnectProviderTags: () => ({ Tags: tags(OWN) }),
    ListRoles: roles(['KarpenterControllerRole-demo']),
  })
  assert.equal((await planOf(r, alone.env)).verdict.action, 'delete')
  const foreign = fakeEnv({ ListOpenIDConnectProviderTags: () => ({ Tags: [] }), ListRoles: roles([]) })
  assert.equal((await planOf(r, foreign.env)).verdict.note, 'kept: karpctl did not make it')
})

test("Karpenter's orphans: listed always, deleted only with --sweep, another cluster's instance profiles ignored", async () => {
  const answers = {
    DescribeInstances: () => ({ Reservations: [{ Instances: [{ InstanceId: 'i-1' }] }] }),
    DescribeLaunchTemplates: () => ({ LaunchTemplates: [{ LaunchTemplateId: 'lt-1' }] }),
    ListInstanceProfiles: () => ({
      InstanceProfiles: [
        { InstanceProfileName: 'demo_123', Roles: [{ RoleName: 'KarpenterNodeRole-demo' }] },
        { InstanceProfileName: 'demo_456', Roles: [] },
        { InstanceProfileName: 'other_1', Roles: [] },
      ],
    }),
    ListInstanceProfileTags: (i: Record<string, unknown>) => ({
      Tags:
        i.InstanceProfileName === 'demo_123'
          ? tags({ 'kubernetes.io/cluster/demo': 'owned', 'karpenter.k8s.aws/ec2nodeclass': 'default' })
          : tags({ 'kubernetes.io/cluster/demo-2': 'owned' }),
    }),
  }
  const listed = fakeEnv(answers)
  const step = await planOf(orphanSweep({ clusterName: 'demo', sweep: false, dependsOn: [] }), listed.env)
  assert.equal(step.verdict.action, 'unchanged')
  assert.match(step.verdict.note ?? '', /3 found: pass --sweep to delete them \(i-1, lt-1, demo_123\)/)
  const swept = fakeEnv(answers)
  const s2 = await planOf(orphanSweep({ clusterName: 'demo', sweep: true, dependsOn: [] }), swept.env)
  assert.equal(s2.verdict.action, 'delete')
  await applyPlan({ title: 't', steps: [s2] }, swept.env)
  assert.deepEqual(
    swept.writes.map(([op, i]) => `${op} ${JSON.stringify(i)}`),
    [
      'TerminateInstances {"InstanceIds":["i-1"]}',
      'DeleteLaunchTemplate {"LaunchTemplateId":"lt-1"}',
      'RemoveRoleFromInstanceProfile {"InstanceProfileName":"demo_123","RoleName":"KarpenterNodeRole-demo"}',
      'DeleteInstanceProfile {"InstanceProfileName":"demo_123"}',
    ],
  )
})

test('recorded tags: a repair’s record goes only with the install it repaired; a record whose discovery tag is gone is still found, another cluster’s never', async () => {
  const subnets = [
    {
      SubnetId: 'subnet-repaired',
      Tags: tags({ 'karpenter.sh/discovery': 'demo', 'karpctl.io/repaired-tags': 'karpenter.sh/discovery' }),
    },
    {
      SubnetId: 'subnet-orphan',
      VpcId: 'vpc-1',
      Tags: tags({ 'karpctl.io/added-tags': 'karpenter.sh/discovery' }),
    },
    // Its discovery tag gone, in another VPC: not this cluster's record.
    {
      SubnetId: 'subnet-elsewhere',
      VpcId: 'vpc-2',
      Tags: tags({ 'karpctl.io/added-tags': 'karpenter.sh/discovery' }),
    },
    {
      SubnetId: 'subnet-other',
      Tags: tags({ 'karpenter.sh/discovery': 'other', 'karpctl.io/added-tags': 'karpenter.sh/discovery' }),
    },
  ]
  const filtersSeen: unknown[] = []
  const env = () =>
    fakeEnv({
      DescribeSubnets: (i) => {
        filtersSeen.push(i.Filters)
        const keys = ((i.Filters as { Name: string; Values: string[] }[])[0]?.Values ?? []) as string[]
        return { Subnets: subnets.filter((s) => s.Tags.some((t) => keys.includes(t.Key))) }
      },
      DescribeSecurityGroups: () => ({ SecurityGroups: [] }),
    })
  const kept = env()
  const step = await planOf(
    recordedTagsRestore({ clusterName: 'demo', vpcId: 'vpc-1', dependsOn: [] }),
    kept.env,
  )
  // Its discovery tag already gone: only the record comes off.
  assert.deepEqual(step.verdict.changes, [
    { field: 'subnet-orphan karpctl.io/added-tags', from: 'karpenter.sh/discovery' },
  ])
  assert.deepEqual(filtersSeen, [
    [
      { Name: 'tag-key', Values: ['karpctl.io/added-tags'] },
      { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
    ],
    [
      { Name: 'tag-key', Values: ['karpctl.io/added-tags'] },
      { Name: 'vpc-id', Values: ['vpc-1'] },
    ],
  ])
  const gone = env()
  const all = recordedTagsRestore({ clusterName: 'demo', vpcId: 'vpc-1', repairs: true, dependsOn: [] })
  const s2 = await planOf(all, gone.env)
  assert.deepEqual(s2.verdict.changes.map((c) => c.field).sort(), [
    'subnet-orphan karpctl.io/added-tags',
    'subnet-repaired karpctl.io/repaired-tags',
    'subnet-repaired karpenter.sh/discovery',
  ])
  await applyPlan({ title: 't', steps: [s2] }, gone.env)
  assert.deepEqual(
    [...gone.writes].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [
      [
        'DeleteTags',
        {
          Resources: ['subnet-repaired'],
          Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: 'karpctl.io/repaired-tags' }],
        },
      ],
      [
        'DeleteTags',
        {
          Resources: ['subnet-orphan'],
          Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: 'karpctl.io/added-tags' }],
        },
      ],
    ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  )
})
