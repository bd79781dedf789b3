// The ownership model's conditions, one at a time (issue 18): the marks that make a resource karpctl's,
// the records that continue over numbered tag keys, what an adopted role gains and gives back, an adopted
// queue's policy statements, and another tool's resource used as it is. Each assertion fails when the
// condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { QueueFacts } from '../../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import {
  ADDED_INLINE,
  ADOPTED_SID,
  adoptedChanges,
  adoptedTrust,
  adoptionRecord,
  giveBack,
  givenBackTrust,
  inlineGaps,
  missingTrust,
  nothingToGiveBack,
  type AdoptedRoleState,
  type AdoptedRoleWant,
} from '../../../src/plan/resources/adopted-role.js'
import { ATTACHED_POLICIES } from '../../../src/plan/resources/attached-policies.js'
import { inUse } from '../../../src/plan/resources/in-use.js'
import {
  ADDED_POLICY,
  adoptedQueueChanges,
  applyAdoptedQueue,
  queuePolicyStatements,
  statementsToAdd,
  withoutAddedStatements,
} from '../../../src/plan/resources/queue-policy.js'
import type { ApplyEnv } from '../../../src/plan/types.js'
import { referenceQueueStatements, withReferenceStatements } from '../../../src/desired/interruption.js'
import {
  ADOPTED_BY,
  adoptionTags,
  REPAIRED_STATEMENTS,
  OWNERSHIP,
  ownershipOf,
  ownershipTags,
  readRecord,
  recordKeys,
  recordTags,
  USED_AS_IT_IS,
} from '../../../src/desired/ownership.js'
import { recordingEnv } from '../../helpers/recording-env.js'

// --- desired/ownership.ts ---

test('the marks: created is managed-by karpctl for this cluster; adopted is adopted-by this cluster', () => {
  assert.deepEqual(OWNERSHIP, { managedBy: 'karpctl.io/managed-by', cluster: 'karpctl.io/cluster' })
  assert.equal(ADOPTED_BY, 'karpctl.io/adopted-by')
  assert.deepEqual(ownershipTags('demo'), {
    'karpctl.io/managed-by': 'karpctl',
    'karpctl.io/cluster': 'demo',
  })
  assert.deepEqual(adoptionTags('demo'), { 'karpctl.io/adopted-by': 'demo' })
  assert.match(USED_AS_IT_IS, /^not karpctl's: already what karpctl needs, so used as it is/)
  // The cluster mark alone (no managed-by) is not karpctl's; managed-by another tool neither.
  assert.equal(ownershipOf({ 'karpctl.io/cluster': 'demo' }, 'demo'), 'foreign')
  assert.equal(
    ownershipOf({ 'karpctl.io/managed-by': 'terraform', 'karpctl.io/cluster': 'demo' }, 'demo'),
    'foreign',
  )
  // Created marks of another cluster with this cluster's adoption mark: adopted, not created.
  assert.equal(ownershipOf({ ...ownershipTags('other'), [ADOPTED_BY]: 'demo' }, 'demo'), 'adopted')
})

test('a record fills a tag value to exactly 256 characters before it continues in <key>-2, <key>-3', () => {
  const a = 'a'.repeat(100)
  // 100 + 1 + 155 = 256: one value.
  assert.deepEqual(recordTags('k', [a, 'b'.repeat(155)]), { k: `${a} ${'b'.repeat(155)}` })
  // 100 + 1 + 156 = 257: two.
  assert.deepEqual(recordTags('k', [a, 'b'.repeat(156)]), { k: a, 'k-2': 'b'.repeat(156) })
  // Three values, numbered in order; a name longer than a tag is never put after another.
  const three = recordTags('k', ['x'.repeat(200), 'y'.repeat(200), 'z'])
  assert.deepEqual(three, { k: 'x'.repeat(200), 'k-2': `${'y'.repeat(200)} z` })
  const four = recordTags('k', ['x'.repeat(200), 'y'.repeat(200), 'w'.repeat(200)])
  assert.deepEqual(Object.keys(four), ['k', 'k-2', 'k-3'])
  assert.deepEqual(readRecord(four, 'k'), ['x'.repeat(200), 'y'.repeat(200), 'w'.repeat(200)])
  assert.deepEqual(recordKeys(four, 'k'), ['k', 'k-2', 'k-3'])
  // A single name is its own value, with no leading separator.
  assert.deepEqual(recordTags('k', ['only']), { k: 'only' })
})

test('a record is read over consecutive keys only, ignoring empty names; absent tags read as none', () => {
  const tags = { k: 'a  b ', 'k-2': 'c', 'k-4': 'lost', other: 'x' }
  assert.deepEqual(readRecord(tags, 'k'), ['a', 'b', 'c'])
  assert.deepEqual(recordKeys(tags, 'k'), ['k', 'k-2'])
  assert.deepEqual(readRecord(undefined, 'k'), [])
  assert.deepEqual(recordKeys(undefined, 'k'), [])
  assert.deepEqual(recordKeys({ 'k-2': 'a' }, 'k'), [])
  assert.deepEqual(readRecord({ 'k-2': 'a' }, 'k'), [])
  // An empty first value still leads to the next key.
  assert.deepEqual(readRecord({ k: '', 'k-2': 'c' }, 'k'), ['c'])
  assert.deepEqual(recordKeys({ k: '', 'k-2': 'c' }, 'k'), ['k', 'k-2'])
})

// --- plan/resources/adopted-role.ts ---

const FED = { Federated: 'arn:aws:iam::1:oidc-provider/x' }
const own: PolicyStatement = {
  Sid: 'Own',
  Effect: 'Allow',
  Principal: FED,
  Action: 'sts:AssumeRoleWithWebIdentity',
}
const pods: PolicyStatement = {
  Effect: 'Allow',
  Principal: { Service: 'pods.eks.amazonaws.com' },
  Action: ['sts:AssumeRole', 'sts:TagSession'],
}
const doc = (action: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: action, Resource: '*' }],
})
const trust = (...Statement: PolicyDocument['Statement']): PolicyDocument => ({
  Version: '2012-10-17',
  Statement,
})

const want = (over: Partial<AdoptedRoleWant> = {}): AdoptedRoleWant => ({
  name: 'demo-karpenter',
  clusterName: 'demo',
  trust: trust({ ...own, Sid: undefined }, pods),
  managed: [
    { arn: 'arn:aws:iam::aws:policy/A' },
    { arn: 'arn:aws:iam::aws:policy/B', orElse: 'arn:aws:iam::aws:policy/BFallback' },
  ],
  inline: [
    { name: 'Karpctl1', document: doc('ec2:One') },
    { name: 'Karpctl2', document: doc('ec2:Two') },
  ],
  ...over,
})
const state = (over: Partial<AdoptedRoleState> = {}): AdoptedRoleState => ({
  trust: trust(own),
  attached: [],
  inline: {},
  tags: {},
  ...over,
})

test('missingTrust compares statements without their Sids; adoptedTrust adds the missing ones after, numbered', () => {
  assert.deepEqual(missingTrust(trust(own), trust({ ...own, Sid: 'Other' }, pods)), [pods])
  assert.deepEqual(missingTrust(trust(own, pods), trust(pods, own)), [])
  const more = { ...pods, Action: 'sts:AssumeRole' }
  const t = adoptedTrust(trust(own), trust(pods, more))
  assert.deepEqual(t, trust(own, { ...pods, Sid: 'KarpctlAdopted0' }, { ...more, Sid: 'KarpctlAdopted1' }))
  assert.equal(ADOPTED_SID, 'KarpctlAdopted')
  // The role's own header is kept.
  assert.equal(adoptedTrust({ ...trust(own), Id: 'mine' }, trust(pods)).Id, 'mine')
})

test("givenBackTrust removes exactly karpctl's Sid-marked statements; null when there are none", () => {
  const added = { ...pods, Sid: 'KarpctlAdopted0' }
  assert.deepEqual(givenBackTrust({ ...trust(own, added), Id: 'mine' }), { ...trust(own), Id: 'mine' })
  assert.equal(givenBackTrust(trust(own)), null)
  // A statement without a Sid, or one whose Sid merely contains the prefix, is the role's own.
  assert.equal(givenBackTrust(trust(pods, { ...own, Sid: 'MyKarpctlAdopted' })), null)
})

test("inlineGaps: karpctl's differing policy is put again; the role's own of that name blocks; an equal one is left", () => {
  const w = want()
  assert.deepEqual(inlineGaps(w, state()), { put: ['Karpctl1', 'Karpctl2'], blocked: [] })
  assert.deepEqual(inlineGaps(w, state({ inline: { Karpctl1: doc('ec2:One') } })), {
    put: ['Karpctl2'],
    blocked: [],
  })
  assert.deepEqual(inlineGaps(w, state({ inline: { Karpctl1: doc('ec2:Other') } })), {
    put: ['Karpctl2'],
    blocked: ['Karpctl1'],
  })
  assert.deepEqual(
    inlineGaps(w, state({ inline: { Karpctl1: doc('ec2:Other') }, tags: { [ADDED_INLINE]: 'Karpctl1' } })),
    { put: ['Karpctl1', 'Karpctl2'], blocked: [] },
  )
})

test('adoptedChanges: each missing statement, policy and inline policy, then the mark when it is not there', () => {
  const c = adoptedChanges(
    want(),
    state({ inline: { Karpctl2: doc('ec2:Old') }, tags: { [ADDED_INLINE]: 'Karpctl2' } }),
  )
  const mark = { field: `tags.${ADOPTED_BY}`, from: undefined, to: 'demo' }
  assert.deepEqual(c, [
    { field: 'trust statement', to: pods },
    { field: 'attached policy', to: 'A' },
    { field: 'attached policy', to: 'B' },
    { field: 'inline policy', to: 'Karpctl1' },
    // karpctl's own inline policy that differs: each value it changes, old → new.
    { field: 'inline policy Karpctl2.Statement.0.Action', from: 'ec2:Old', to: 'ec2:Two' },
    mark,
  ])
  // A statement without a principal is shown whole too.
  const noPrincipal: PolicyStatement = { Effect: 'Allow', Action: 'sts:TagSession' }
  assert.deepEqual(adoptedChanges(want({ trust: trust(noPrincipal), managed: [], inline: [] }), state()), [
    { field: 'trust statement', to: noPrincipal },
    mark,
  ])
  // The fallback attached counts as the policy; the mark already there is not added again.
  const done = state({
    trust: trust(own, pods),
    attached: ['arn:aws:iam::aws:policy/A', 'arn:aws:iam::aws:policy/BFallback'],
    inline: { Karpctl1: doc('ec2:One') },
    tags: { [ADOPTED_BY]: 'demo' },
  })
  assert.deepEqual(adoptedChanges(want(), done), [{ field: 'inline policy', to: 'Karpctl2' }])
  // Nothing to change: no mark either (the role is used as it is).
  assert.deepEqual(adoptedChanges(want({ inline: [want().inline[0]!] }), { ...done, tags: {} }), [])
  // Another cluster's mark is replaced by this one's.
  assert.deepEqual(
    adoptedChanges(want({ managed: [], inline: [] }), state({ tags: { [ADOPTED_BY]: 'other' } })),
    [
      { field: 'trust statement', to: pods },
      { field: `tags.${ADOPTED_BY}`, from: 'other', to: 'demo' },
    ],
  )
})

test('adoptionRecord: the mark, and the records extended with what is about to be attached or put', () => {
  assert.deepEqual(adoptionRecord(want(), state()), {
    [ADOPTED_BY]: 'demo',
    [ATTACHED_POLICIES]: 'A B BFallback',
    [ADDED_INLINE]: 'Karpctl1 Karpctl2',
  })
  const cur = state({
    attached: ['arn:aws:iam::aws:policy/A'],
    inline: { Karpctl1: doc('ec2:One') },
    tags: { [ATTACHED_POLICIES]: 'A', [ADDED_INLINE]: 'Karpctl1' },
  })
  assert.deepEqual(adoptionRecord(want(), cur), {
    [ADOPTED_BY]: 'demo',
    [ATTACHED_POLICIES]: 'A B BFallback',
    [ADDED_INLINE]: 'Karpctl1 Karpctl2',
  })
  // Nothing new and no earlier record: only the mark.
  assert.deepEqual(adoptionRecord(want({ managed: [], inline: [] }), state()), { [ADOPTED_BY]: 'demo' })
})

test("giveBack: only recorded policies that are attached, recorded inline policies that exist, karpctl's statements, every record key", () => {
  const cur = state({
    trust: trust(own, { ...pods, Sid: 'KarpctlAdopted0' }),
    attached: ['arn:aws:iam::aws:policy/A', 'arn:aws:iam::aws:policy/Own'],
    inline: { Karpctl1: doc('ec2:One'), Own: doc('ec2:Own') },
    tags: {
      [ADOPTED_BY]: 'demo',
      [ATTACHED_POLICIES]: 'A B',
      [`${ATTACHED_POLICIES}-2`]: 'C',
      [ADDED_INLINE]: 'Karpctl1 Karpctl2',
      team: 'x',
    },
  })
  const g = giveBack(cur)
  assert.deepEqual(g, {
    detach: ['arn:aws:iam::aws:policy/A'],
    deleteInline: ['Karpctl1'],
    trust: trust(own),
    untag: [ADOPTED_BY, ATTACHED_POLICIES, `${ATTACHED_POLICIES}-2`, ADDED_INLINE],
  })
  assert.equal(nothingToGiveBack(g), false)
  const none = giveBack(state({ attached: ['arn:aws:iam::aws:policy/A'], inline: { Own: doc('x') } }))
  assert.deepEqual(none, { detach: [], deleteInline: [], trust: null, untag: [] })
  assert.equal(nothingToGiveBack(none), true)
})

test('nothingToGiveBack is false when any one part is left', () => {
  const empty = { detach: [], deleteInline: [], trust: null, untag: [] }
  assert.equal(nothingToGiveBack(empty), true)
  assert.equal(nothingToGiveBack({ ...empty, detach: ['a'] }), false)
  assert.equal(nothingToGiveBack({ ...empty, deleteInline: ['a'] }), false)
  assert.equal(nothingToGiveBack({ ...empty, untag: ['a'] }), false)
  assert.equal(nothingToGiveBack({ ...empty, trust: trust(own) }), false)
  // The parts are counted, never set against each other.
  assert.equal(nothingToGiveBack({ ...empty, detach: ['a'], deleteInline: ['b'] }), false)
  assert.equal(nothingToGiveBack({ ...empty, detach: ['a'], untag: ['b'] }), false)
  // Only the mark left (the records already gone): still something to give back.
  assert.deepEqual(giveBack(state({ tags: { [ADOPTED_BY]: 'other' } })).untag, [ADOPTED_BY])
})

// --- plan/resources/queue-policy.ts ---

const Q_ARN = 'arn:aws:sqs:us-west-2:1:demo'
const [SEND, DENY] = referenceQueueStatements(Q_ARN) as [
  PolicyDocument['Statement'][0],
  PolicyDocument['Statement'][0],
]
const mine: PolicyStatement = {
  Sid: 'Mine',
  Effect: 'Allow',
  Principal: { AWS: 'arn:aws:iam::1:root' },
  Action: 'sqs:*',
  Resource: Q_ARN,
}
const queueOf = (policy: PolicyDocument | null): QueueFacts => ({
  name: 'demo',
  url: 'https://sqs.us-west-2.amazonaws.com/1/demo',
  arn: Q_ARN,
  policy,
})
const policy = (...Statement: PolicyDocument['Statement']): PolicyDocument => ({
  Version: '2012-10-17',
  Statement,
})

test('statementsToAdd: always the send grant; DenyHTTP only when no statement has that Sid', () => {
  assert.deepEqual(statementsToAdd(null), ['send', 'DenyHTTP'])
  assert.deepEqual(statementsToAdd(policy(mine)), ['send', 'DenyHTTP'])
  assert.deepEqual(statementsToAdd(policy(mine, { ...mine, Sid: 'DenyHTTP' })), ['send'])
  assert.equal(ADDED_POLICY, 'karpctl.io/added-policy-statements')
})

test('withoutAddedStatements takes out only the recorded statements equal to the reference ones', () => {
  const added = withReferenceStatements(policy(mine), Q_ARN)
  assert.deepEqual(withoutAddedStatements(added, Q_ARN, ['send', 'DenyHTTP']), policy(mine))
  assert.deepEqual(withoutAddedStatements(added, Q_ARN, ['send']), policy(mine, DENY))
  assert.deepEqual(withoutAddedStatements(added, Q_ARN, ['DenyHTTP']), policy(mine, SEND))
  assert.equal(withoutAddedStatements(added, Q_ARN, []), null)
  assert.equal(withoutAddedStatements(null, Q_ARN, ['send']), null)
  // An owner's edit of the grant is kept: nothing equal to the reference is left to remove.
  const edited = policy(mine, { ...SEND, Resource: '*' })
  assert.equal(withoutAddedStatements(edited, Q_ARN, ['send', 'DenyHTTP']), null)
  // The header is kept.
  assert.deepEqual(withoutAddedStatements({ ...policy(SEND), Id: 'own' }, Q_ARN, ['send']), {
    Version: '2012-10-17',
    Id: 'own',
    Statement: [],
  })
})

test("adoptedQueueChanges: the policy when it does not let both senders send, then this cluster's mark", () => {
  // The statements it gains, each whole (its own kept: no change), then the tags recording them.
  const fields = (c: { field: string }[]) => c.map((x) => x.field)
  const records = [`tags.${ADOPTED_BY}`, `tags.${ADDED_POLICY}`]
  const fresh = adoptedQueueChanges({ queue: queueOf(null), tags: {} }, 'demo')
  assert.deepEqual(fields(fresh), [
    'Policy.Version',
    'Policy.Id',
    'Policy.Statement.0',
    'Policy.Statement.DenyHTTP',
    ...records,
  ])
  assert.deepEqual(fresh[2], { field: 'Policy.Statement.0', from: undefined, to: SEND })
  assert.deepEqual(fresh[3], { field: 'Policy.Statement.DenyHTTP', from: undefined, to: DENY })
  assert.deepEqual(fresh.at(-1), { field: `tags.${ADDED_POLICY}`, from: undefined, to: 'send,DenyHTTP' })
  assert.deepEqual(fields(adoptedQueueChanges({ queue: queueOf(policy(mine)), tags: {} }, 'demo')), [
    'Policy.Statement.1',
    'Policy.Statement.DenyHTTP',
    ...records,
  ])
  // Already marked by this cluster: the policy and its record only; by another: marked again.
  const marked = (by: string) =>
    adoptedQueueChanges({ queue: queueOf(null), tags: { [ADOPTED_BY]: by } }, 'demo')
  assert.deepEqual(fields(marked('demo')).slice(-1), [`tags.${ADDED_POLICY}`])
  assert.deepEqual(marked('x').at(-2), { field: `tags.${ADOPTED_BY}`, from: 'x', to: 'demo' })
  // Both senders allowed: nothing, and no mark.
  assert.deepEqual(adoptedQueueChanges({ queue: queueOf(policy(SEND)), tags: {} }, 'demo'), [])
  // Only one of the two senders: not enough.
  const eventsOnly = { ...SEND, Principal: { Service: 'events.amazonaws.com' } }
  assert.deepEqual(adoptedQueueChanges({ queue: queueOf(policy(eventsOnly)), tags: {} }, 'demo')[0], {
    field: 'Policy.Statement.1',
    from: undefined,
    to: SEND,
  })
})

test('applyAdoptedQueue records the mark and the statements, then writes the policy; nothing when it sends', async () => {
  const r = recordingEnv()
  await applyAdoptedQueue(r.env.aws, { queue: queueOf(policy(mine)), tags: {} }, 'demo')
  assert.deepEqual(r.awsWrites, [
    {
      op: 'TagQueue',
      input: {
        QueueUrl: 'https://sqs.us-west-2.amazonaws.com/1/demo',
        Tags: { [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send,DenyHTTP' },
      },
    },
    {
      op: 'SetQueueAttributes',
      input: {
        QueueUrl: 'https://sqs.us-west-2.amazonaws.com/1/demo',
        Attributes: { Policy: JSON.stringify(withReferenceStatements(policy(mine), Q_ARN)) },
      },
    },
  ])
  const none = recordingEnv()
  await applyAdoptedQueue(none.env.aws, { queue: queueOf(policy(SEND)), tags: {} }, 'demo')
  assert.deepEqual(none.awsWrites, [])
})

test('queuePolicyStatements (doctor --fix): blocked without the queue, unchanged when it sends, else the grant added', async () => {
  const r = queuePolicyStatements({ queueName: 'demo', queueArn: Q_ARN, group: 'g' })
  assert.equal(r.address, 'sqs-queue-policy.interruption')
  assert.equal(r.kind, 'SQS queue policy')
  assert.equal(r.name, 'demo')
  assert.equal(r.group, 'g')
  assert.deepEqual(r.dependsOn, [])
  assert.deepEqual(r.desired, { senders: ['events.amazonaws.com', 'sqs.amazonaws.com'] })
  assert.deepEqual(r.permissions, [
    { action: 'sqs:SetQueueAttributes', resource: Q_ARN },
    { action: 'sqs:TagQueue', resource: Q_ARN },
  ])
  assert.deepEqual(r.verdict(null), { action: 'update', changes: [], blocked: 'queue demo does not exist' })
  assert.deepEqual(r.verdict(queueOf(policy(SEND))), { action: 'unchanged', changes: [] })
  // A repair is recorded apart from an adoption: teardown gives it back only when the install goes.
  const note = `its statements are kept; recorded as the ${REPAIRED_STATEMENTS} tag`
  assert.deepEqual(r.verdict(queueOf(null)).note, note)
  assert.deepEqual(r.verdict(queueOf(policy(mine))), {
    action: 'update',
    changes: [
      { field: 'Policy.Statement.1', from: undefined, to: SEND },
      { field: 'Policy.Statement.DenyHTTP', from: undefined, to: DENY },
    ],
    note,
  })

  const env = recordingEnv()
  await r.apply(env.env, null)
  assert.deepEqual(env.awsWrites, [])
  const withDeny = policy(mine, DENY)
  await r.apply(env.env, queueOf(withDeny))
  assert.deepEqual(env.awsWrites, [
    { op: 'TagQueue', input: { QueueUrl: queueOf(null).url, Tags: { [REPAIRED_STATEMENTS]: 'send' } } },
    {
      op: 'SetQueueAttributes',
      input: {
        QueueUrl: queueOf(null).url,
        Attributes: { Policy: JSON.stringify(withReferenceStatements(withDeny, Q_ARN)) },
      },
    },
  ])
  // Both statements added: both recorded, comma-separated (teardown splits the record on commas).
  const both = recordingEnv()
  await r.apply(both.env, queueOf(policy(mine)))
  assert.deepEqual(both.awsWrites[0]?.input.Tags, { [REPAIRED_STATEMENTS]: 'send,DenyHTTP' })
})

test('queuePolicyStatements observes the queue by its name', async () => {
  const r = queuePolicyStatements({ queueName: 'demo', queueArn: Q_ARN, group: 'g' })
  const asked: unknown[] = []
  const env = recordingEnv({
    aws: {
      GetQueueUrl: (input) => {
        asked.push(input)
        return { QueueUrl: queueOf(null).url }
      },
      GetQueueAttributes: () => ({ Attributes: { QueueArn: Q_ARN, Policy: JSON.stringify(policy(SEND)) } }),
    },
  })
  const cur = await r.observe(env.env as ApplyEnv)
  assert.deepEqual(asked, [{ QueueName: 'demo' }])
  assert.equal(cur?.arn, Q_ARN)
  assert.deepEqual(cur?.policy, policy(SEND))
})

// --- plan/resources/in-use.ts ---

test('inUse: planned by its real name, never written; a failing check blocks with the repair', async () => {
  const w = {
    address: 'iam-role.controller',
    kind: 'IAM role',
    name: 'demo-karpenter',
    group: 'IAM',
    found: 'the controller runs as it',
    problems: [] as string[],
    repair: 'run doctor --fix',
  }
  const r = inUse(w)
  assert.equal(r.address, 'iam-role.controller')
  assert.equal(r.kind, 'IAM role')
  assert.equal(r.name, 'demo-karpenter')
  assert.equal(r.group, 'IAM')
  assert.deepEqual(r.dependsOn, [])
  assert.deepEqual(r.desired, { inUse: 'demo-karpenter' })
  assert.deepEqual(r.permissions, [])
  const env = recordingEnv()
  assert.equal(await r.observe(env.env), null)
  assert.deepEqual(r.verdict(null), {
    action: 'unchanged',
    changes: [],
    note: "in use (the controller runs as it): not karpctl's, used as it is and never changed or deleted",
  })
  await r.apply(env.env, null)
  assert.deepEqual(env.awsWrites, [])
  assert.deepEqual(inUse({ ...w, problems: ['a: x', 'b: y'] }).verdict(null), {
    action: 'update',
    changes: [],
    blocked: 'a: x; b: y: run doctor --fix',
  })
})

test("an adopted queue's and doctor --fix's writes go to SQS", async () => {
  const services: string[] = []
  const aws = {
    write: async (service: string, op: string) => {
      services.push(`${service}:${op}`)
      return {}
    },
  }
  const env = { aws } as unknown as ApplyEnv
  await applyAdoptedQueue(env.aws, { queue: queueOf(null), tags: {} }, 'demo')
  await queuePolicyStatements({ queueName: 'demo', queueArn: Q_ARN, group: 'g' }).apply(env, queueOf(null))
  assert.deepEqual(services, [
    'sqs:TagQueue',
    'sqs:SetQueueAttributes',
    'sqs:TagQueue',
    'sqs:SetQueueAttributes',
  ])
})
