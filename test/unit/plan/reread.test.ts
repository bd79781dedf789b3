// A re-read of what karpctl wrote is *unchanged*, however the service hands it back (IAM URL-encodes
// documents, reorders keys and answers a one-element list with its element), and a spec that differs
// in one field is an *update* naming that field and only that one: a re-run is a no-op, and a drift is
// shown for what it is.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { eventRule } from '../../../src/plan/resources/event-rule.js'
import { iamRole } from '../../../src/plan/resources/iam-role.js'
import { inlinePolicy } from '../../../src/plan/resources/inline-policy.js'
import { kubeObject, type KubeObject } from '../../../src/plan/resources/kube-object.js'
import { sqsQueue } from '../../../src/plan/resources/sqs-queue.js'
import type { ApplyEnv, Resource, Verdict } from '../../../src/plan/types.js'
import { queuePolicy, QUEUE_ATTRIBUTES } from '../../../src/desired/interruption.js'
import { ownershipTags } from '../../../src/desired/ownership.js'
import { nodeTrust } from '../../../src/desired/trust.js'
import { fakeAccount, type FakeAccount } from '../../helpers/fake-aws-state.js'

const OWN = ownershipTags('demo')
const TAGS = { ...OWN, team: 'platform' }
const ACCOUNT = '123456789012'
const QUEUE_ARN = `arn:aws:sqs:us-west-2:${ACCOUNT}:demo`
const RULE_ARN = `arn:aws:events:us-west-2:${ACCOUNT}:rule/Karpenter-demo-SpotInterruption`
const PATTERN = { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] }

/** A document as a service hands it back: keys in another order, one-element lists as their element. */
function reserialized(v: unknown, collapse = true): unknown {
  if (Array.isArray(v)) {
    const items = v.map((x) => reserialized(x, collapse))
    return collapse && items.length === 1 ? items[0] : items
  }
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reserialized(x, collapse)]),
    )
  return v
}

const inlineDoc: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    { Sid: 'Describe', Effect: 'Allow', Action: ['ec2:DescribeImages'], Resource: '*' },
    { Sid: 'Pass', Effect: 'Allow', Action: 'iam:PassRole', Resource: [`arn:aws:iam::${ACCOUNT}:role/n`] },
  ],
}
const MANAGED = [
  'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
  'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
]

const role = iamRole({
  address: 'iam-role.node',
  name: 'KarpenterNodeRole-demo',
  arn: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`,
  description: 'd',
  trust: nodeTrust('aws'),
  managed: MANAGED.map((arn) => ({ arn })),
  inline: [{ name: 'Extra', document: inlineDoc }],
  tags: TAGS,
  ownership: OWN,
  adopt: false,
  notOursHint: 'h',
})

const grant = inlinePolicy({
  address: 'iam-policy.grant',
  roleName: 'KarpenterNodeRole-demo',
  roleArn: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`,
  policyName: 'Extra',
  document: inlineDoc,
  dependsOn: [],
})

const queue = sqsQueue({
  name: 'demo',
  arn: QUEUE_ARN,
  attributes: { ...QUEUE_ATTRIBUTES },
  policy: queuePolicy(QUEUE_ARN),
  tags: TAGS,
  ownership: OWN,
  adopt: false,
})

const rule: Resource = {
  ...eventRule({
    key: 'SpotInterruptionRule',
    name: 'Karpenter-demo-SpotInterruption',
    arn: RULE_ARN,
    eventPattern: PATTERN,
    queueArn: QUEUE_ARN,
    targetId: 'KarpenterInterruptionQueueTarget',
    tags: TAGS,
    ownership: OWN,
    adopt: false,
  }),
  // Planned alone here: its queue is the plan's other step.
  dependsOn: [],
}

/** The account after karpctl wrote exactly what the resources above want, as the services store it. */
function written(): FakeAccount {
  return {
    roles: {
      'KarpenterNodeRole-demo': {
        trust: reserialized(nodeTrust('aws')),
        tags: { ...TAGS, 'added-by-someone': 'x' },
        attached: [...MANAGED].reverse(),
        inline: { Extra: reserialized(inlineDoc) },
      },
    },
    queues: {
      demo: {
        arn: QUEUE_ARN,
        attributes: {
          MessageRetentionPeriod: '300',
          SqsManagedSseEnabled: 'true',
          Policy: JSON.stringify(reserialized(queuePolicy(QUEUE_ARN))),
        },
        tags: { ...TAGS },
      },
    },
    rules: {
      'Karpenter-demo-SpotInterruption': {
        arn: RULE_ARN,
        state: 'ENABLED',
        // EventBridge keeps a pattern's lists: only the key order differs.
        pattern: reserialized(PATTERN, false),
        targets: [
          { Id: 'other', Arn: 'arn:aws:lambda:us-west-2:1:function:f' },
          { Id: 'KarpenterInterruptionQueueTarget', Arn: QUEUE_ARN },
        ],
        tags: { ...TAGS },
      },
    },
  }
}

async function verdictOf(r: Resource, account: FakeAccount, env?: ApplyEnv): Promise<Verdict> {
  const step = (await buildPlan('t', [r], env ?? fakeAccount(account).env)).steps[0]
  assert.ok(step)
  return step.verdict
}

/** The one field an update is about: each change names it or a value inside it (`tags.team`). */
async function assertUpdate(r: Resource, account: FakeAccount, field: string) {
  const v = await verdictOf(r, account)
  assert.equal(v.action, 'update', `${r.address}: ${field}`)
  assert.equal(v.blocked, undefined)
  const fields = v.changes.map((c) => c.field)
  assert.ok(fields.length > 0, `${r.address}: ${field}`)
  for (const f of fields)
    assert.ok(f === field || f.startsWith(`${field}.`) || f.startsWith(`${field} `), `${f} is about ${field}`)
}

test('IAM role, inline policy, SQS queue, EventBridge rule: a re-read of what karpctl wrote is unchanged', async () => {
  // Kills: sameDocument comparing serialisations as they are (key order, one-element lists); the queue's
  // retention compared as a string; a tag check that wants no other tags; the rule's target looked up
  // as the first target only.
  for (const r of [role, grant, queue, rule] as Resource[])
    assert.deepEqual(await verdictOf(r, written()), { action: 'unchanged', changes: [] }, r.address)
})

test('IAM role: the trust, a managed policy, an inline policy or a tag that differs is an update of that field', async () => {
  const trust = written()
  trust.roles['KarpenterNodeRole-demo']!.trust = nodeTrust('aws-cn')
  await assertUpdate(role, trust, 'trust')
  const detached = written()
  detached.roles['KarpenterNodeRole-demo']!.attached = [MANAGED[0]!]
  await assertUpdate(role, detached, 'attached policy')
  const inline = written()
  inline.roles['KarpenterNodeRole-demo']!.inline.Extra = { ...inlineDoc, Statement: [inlineDoc.Statement[0]] }
  await assertUpdate(role, inline, 'inline policy')
  const tag = written()
  tag.roles['KarpenterNodeRole-demo']!.tags.team = 'data'
  await assertUpdate(role, tag, 'tags')
})

test('inline policy: another document is an update of the document', async () => {
  const other = written()
  other.roles['KarpenterNodeRole-demo']!.inline.Extra = {
    ...inlineDoc,
    Statement: [{ ...inlineDoc.Statement[1]!, Resource: '*' }],
  }
  await assertUpdate(grant, other, 'document')
})

test('SQS queue: the retention, the encryption, the policy or a tag that differs is an update of that field', async () => {
  const cases: [string, (q: FakeAccount['queues'][string]) => void][] = [
    ['MessageRetentionPeriod', (q) => (q.attributes.MessageRetentionPeriod = '345600')],
    ['SqsManagedSseEnabled', (q) => (q.attributes.SqsManagedSseEnabled = 'false')],
    ['Policy', (q) => (q.attributes.Policy = JSON.stringify({ ...queuePolicy(QUEUE_ARN), Statement: [] }))],
    ['tags', (q) => delete q.tags.team],
  ]
  for (const [field, change] of cases) {
    const a = written()
    change(a.queues.demo!)
    await assertUpdate(queue, a, field)
  }
})

test('EventBridge rule: the pattern, the state, the queue target or a tag that differs is an update of that field', async () => {
  const cases: [string, (r: FakeAccount['rules'][string]) => void][] = [
    [
      'event pattern',
      (r) => (r.pattern = { source: ['aws.ec2'], 'detail-type': ['EC2 Instance Rebalance Recommendation'] }),
    ],
    ['state', (r) => (r.state = 'DISABLED')],
    ['target', (r) => (r.targets = r.targets.filter((t) => t.Arn !== QUEUE_ARN))],
    ['tags', (r) => (r.tags.team = 'data')],
  ]
  for (const [field, change] of cases) {
    const a = written()
    change(a.rules['Karpenter-demo-SpotInterruption']!)
    await assertUpdate(rule, a, field)
  }
})

const nodePool: KubeObject = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } },
  spec: {
    template: { spec: { requirements: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] } },
    limits: { cpu: '1000' },
  },
}
const pool = kubeObject({
  address: 'kube.nodepool.default',
  object: nodePool,
  ownerLabel: ['app.kubernetes.io/managed-by', 'karpctl'],
  adopt: false,
  dependsOn: [],
})

/** The NodePool as the API server returns it: server fields and defaults added, keys reordered. */
function served(mutate?: (o: KubeObject & { spec: Record<string, unknown> }) => void) {
  const o = reserialized(
    {
      ...nodePool,
      metadata: { ...nodePool.metadata, uid: 'u', resourceVersion: '7', generation: 1 },
      spec: { ...nodePool.spec, disruption: { budgets: [{ nodes: '10%' }] }, weight: 0 },
      status: { conditions: [] },
    },
    false,
  ) as KubeObject & { spec: Record<string, unknown> }
  mutate?.(o)
  return { kube: { get: async () => o } } as unknown as ApplyEnv
}

test('Kubernetes object: a re-read with server fields and defaults is unchanged; one spec field is an update of it', async () => {
  // Kills: comparing the whole live object (server fields count as changes); a changed field not named.
  assert.deepEqual(await verdictOf(pool, written(), served()), { action: 'unchanged', changes: [] })
  const v = await verdictOf(
    pool,
    written(),
    served((o) => (o.spec.limits = { cpu: '10' })),
  )
  assert.deepEqual(v, {
    action: 'update',
    changes: [{ field: 'spec.limits.cpu', from: '10', to: '1000' }],
  })
})
