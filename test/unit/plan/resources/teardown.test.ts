// Teardown's resources, call by call: what each reads (with exactly which input), what its verdict says
// for karpctl's own resource, an adopted one (its records given back) and another tool's, and exactly
// which writes its apply makes — none for what is gone or not karpctl's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RELEASE_SELECTOR } from '../../../../src/facts/collect-kube.js'
import { SCALED_FROM } from '../../../../src/desired/ownership.js'
import {
  CRD_ADOPTED_BY,
  HELM_KEEP,
  HELM_MANAGED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
  REPLACED_MARKS,
} from '../../../../src/plan/resources/crd-handover.js'
import { ADDED_TAGS, REPAIRED_TAGS } from '../../../../src/plan/resources/discovery-tags.js'
import { ADDED_TARGET, ENABLED_FROM } from '../../../../src/plan/resources/event-rule.js'
import { ADOPTED_FROM_REVISION, UPGRADED_TO } from '../../../../src/plan/resources/helm-release.js'
import { ADDED_POLICY } from '../../../../src/plan/resources/queue-policy.js'
import {
  autoscalerRestore,
  handedCrdsRestore,
  helmReleaseAbsent,
  oidcProviderAbsent,
  orphanSweep,
  podIdentityAbsent,
  queueAbsent,
  recordedIngressRestore,
  recordedTagsRestore,
  ruleAbsent,
} from '../../../../src/plan/resources/teardown.js'
import { ADDED_INGRESS, REPAIRED_INGRESS } from '../../../../src/plan/resources/webhook-ingress.js'
import type { ApplyEnv, Resource } from '../../../../src/plan/types.js'
import { referenceQueueStatements } from '../../../../src/desired/interruption.js'
import { ADOPTED_BY } from '../../../../src/desired/ownership.js'
import { helmReleaseSecret } from '../../../helpers/mock-cluster.js'

const OWN = { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': 'demo' }
const tagList = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }))
const GONE = { action: 'unchanged', changes: [], note: 'already gone' }
const FOREIGN_NOTE =
  'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)'

type Answer = (input: Record<string, unknown>) => unknown

/** The service each operation belongs to: a call to the right operation of the wrong service fails. */
const SERVICE: Record<string, string> = {
  DescribeRule: 'eventbridge',
  ListTargetsByRule: 'eventbridge',
  ListTagsForResource: 'eventbridge',
  RemoveTargets: 'eventbridge',
  DisableRule: 'eventbridge',
  DeleteRule: 'eventbridge',
  UntagResource: 'eventbridge',
  GetQueueUrl: 'sqs',
  ListQueueTags: 'sqs',
  GetQueueAttributes: 'sqs',
  DeleteQueue: 'sqs',
  SetQueueAttributes: 'sqs',
  UntagQueue: 'sqs',
  ListPodIdentityAssociations: 'eks',
  DescribePodIdentityAssociation: 'eks',
  DeletePodIdentityAssociation: 'eks',
  ListOpenIDConnectProviderTags: 'iam',
  ListRoles: 'iam',
  DeleteOpenIDConnectProvider: 'iam',
  ListInstanceProfiles: 'iam',
  ListInstanceProfileTags: 'iam',
  RemoveRoleFromInstanceProfile: 'iam',
  DeleteInstanceProfile: 'iam',
  DescribeStackResources: 'cloudformation',
  DescribeSubnets: 'ec2',
  DescribeSecurityGroups: 'ec2',
  DescribeInstances: 'ec2',
  DescribeLaunchTemplates: 'ec2',
  TerminateInstances: 'ec2',
  DeleteLaunchTemplate: 'ec2',
  DeleteTags: 'ec2',
  RevokeSecurityGroupIngress: 'ec2',
}
const serviceOf = (service: string, op: string) =>
  assert.equal(service, SERVICE[op] ?? '?', `${op} is an operation of ${SERVICE[op] ?? '?'}, not ${service}`)

/**
 * AWS answers by operation (a missing one is "not found"), Kubernetes by path; reads and writes logged.
 * `all` follows the pages as the real client does (the token named by the caller).
 */
function env(o: { aws?: Record<string, Answer>; kube?: Record<string, unknown>; helm?: unknown } = {}) {
  const reads: [string, unknown][] = []
  const writes: [string, unknown][] = []
  const kubeReads: string[] = []
  const call = async (service: string, op: string, input: Record<string, unknown> = {}) => {
    serviceOf(service, op)
    reads.push([op, input])
    const a = o.aws?.[op]
    if (!a) throw Object.assign(new Error(`${op} not found`), { name: 'NoSuchEntity' })
    return structuredClone(a(input))
  }
  const kubeGet = async (path: string) => {
    kubeReads.push(path)
    return structuredClone(o.kube?.[path] ?? null)
  }
  const e = {
    aws: {
      call,
      write: async (service: string, op: string, input: unknown) => {
        serviceOf(service, op)
        writes.push([op, structuredClone(input)])
        return {}
      },
      all: async (
        service: string,
        op: string,
        input: Record<string, unknown>,
        tokenField: string,
        page: (out: unknown) => { items?: unknown[]; next?: string },
      ) => {
        const items: unknown[] = []
        let token: string | undefined
        do {
          const p = page(await call(service, op, token ? { ...input, [tokenField]: token } : input))
          items.push(...(p.items ?? []))
          token = p.next
        } while (token)
        return items
      },
    },
    kube: {
      get: kubeGet,
      fresh: kubeGet,
      write: async (method: string, path: string, body?: unknown, contentType?: string) => {
        writes.push([
          `${method} ${path}`,
          body === undefined ? undefined : { body: structuredClone(body), contentType },
        ])
        return {}
      },
    },
    helm: async () => o.helm ?? {},
    ownershipTags: {},
    sleep: async () => {},
    now: () => new Date(0),
  } as unknown as ApplyEnv
  return { env: e, reads, writes, kubeReads }
}

/** Two pages of IAM listing `key` (Roles, InstanceProfiles), the second asked for by its Marker only. */
const twoPages =
  (key: string, first: unknown[], second: unknown[]): Answer =>
  (i) => {
    if (i.Marker === 'page-2') return { [key]: second, IsTruncated: false }
    assert.deepEqual(i, {}, 'the first page is asked for without a token')
    return { [key]: first, IsTruncated: true, Marker: 'page-2' }
  }

/**
 * Observe, verdict and apply. `always`: apply whatever the verdict (an apply must itself do nothing for
 * what is gone or not karpctl's); otherwise only a changing verdict is applied, as the executor does.
 */
async function run<S>(r: Resource<S>, e: ApplyEnv, always = true) {
  const cur = await r.observe(e)
  const verdict = r.verdict(cur)
  if (always || verdict.action !== 'unchanged') await r.apply(e, cur)
  return { cur, verdict }
}

// ---------- EventBridge rule ----------

const RULE = 'Karpenter-demo-SpotInterruption'
const RULE_ARN = `arn:aws:events:us-west-2:123456789012:rule/${RULE}`
const rule = (keptNote?: string) =>
  ruleAbsent({
    key: 'SpotInterruptionRule',
    name: RULE,
    ownership: OWN,
    dependsOn: ['helm.karpenter'],
    keptNote,
  })
const ruleAnswers = (tags: Record<string, string>, targets: string[]): Record<string, Answer> => ({
  DescribeRule: (i) => (i.Name === RULE ? { Arn: RULE_ARN } : assert.fail(`DescribeRule ${String(i.Name)}`)),
  ListTargetsByRule: (i) => {
    assert.deepEqual(i, { Rule: RULE })
    return { Targets: targets.map((Id) => ({ Id, Arn: 'q' })) }
  },
  ListTagsForResource: (i) => {
    assert.deepEqual(i, { ResourceARN: RULE_ARN })
    return { Tags: tagList(tags) }
  },
})

test('rule: its shape; gone is "already gone" and writes nothing', async () => {
  const r = rule()
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired, r.permissions],
    [
      'events-rule.SpotInterruptionRule',
      'EventBridge rule',
      RULE,
      'Interruption handling',
      ['helm.karpenter'],
      { absent: true },
      [],
    ],
  )
  const e = env()
  const { cur, verdict } = await run(r, e.env)
  assert.equal(cur, null)
  assert.deepEqual(verdict, GONE)
  assert.deepEqual(e.writes, [])
})

test("rule: karpctl's own is deleted, its targets removed first; without targets only deleted", async () => {
  const e = env({ aws: ruleAnswers(OWN, ['KarpenterInterruptionQueueTarget', 'other']) })
  const { cur, verdict } = await run(rule(), e.env)
  assert.deepEqual(cur, {
    owner: undefined,
    arn: RULE_ARN,
    targets: ['KarpenterInterruptionQueueTarget', 'other'],
    tags: OWN,
  })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [
    ['RemoveTargets', { Rule: RULE, Ids: ['KarpenterInterruptionQueueTarget', 'other'] }],
    ['DeleteRule', { Name: RULE }],
  ])
  assert.ok(
    !e.reads.some(([op]) => op === 'DescribeStackResources'),
    'no stack asked about for karpctl’s own',
  )
  const bare = env({ aws: ruleAnswers(OWN, []) })
  await run(rule(), bare.env)
  assert.deepEqual(bare.writes, [['DeleteRule', { Name: RULE }]])
})

test('rule: an adopted one loses the target karpctl added, is disabled again, and loses the records', async () => {
  const tags = {
    [ADOPTED_BY]: 'demo',
    [ADDED_TARGET]: 'karpctl-demo',
    [ENABLED_FROM]: 'DISABLED',
    'aws:cloudformation:stack-name': 'Karpenter-demo',
  }
  const e = env({ aws: ruleAnswers(tags, ['KarpenterInterruptionQueueTarget', 'karpctl-demo']) })
  const { verdict } = await run(rule(), e.env)
  assert.ok(
    e.reads.some(
      ([op, i]) =>
        op === 'DescribeStackResources' && (i as { PhysicalResourceId?: string }).PhysicalResourceId === RULE,
    ),
  )
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'target', from: 'karpctl-demo' },
      { field: 'state', from: 'ENABLED', to: 'DISABLED' },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_TARGET}`, from: 'karpctl-demo' },
      { field: `tags.${ENABLED_FROM}`, from: 'DISABLED' },
    ],
    note: "kept: made by CloudFormation stack Karpenter-demo (`aws cloudformation delete-stack --stack-name Karpenter-demo`); karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [
    ['RemoveTargets', { Rule: RULE, Ids: ['karpctl-demo'] }],
    ['DisableRule', { Name: RULE }],
    ['UntagResource', { ResourceARN: RULE_ARN, TagKeys: [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM] }],
  ])
})

test('rule: a recorded target already gone and a rule that was enabled: only the records go', async () => {
  const tags = { [ADOPTED_BY]: 'demo', [ADDED_TARGET]: 'karpctl-demo', [ENABLED_FROM]: 'ENABLED' }
  const e = env({ aws: ruleAnswers(tags, ['KarpenterInterruptionQueueTarget']) })
  const { verdict } = await run(rule('kept: the install’s own'), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'state', from: 'ENABLED', to: 'ENABLED' },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_TARGET}`, from: 'karpctl-demo' },
      { field: `tags.${ENABLED_FROM}`, from: 'ENABLED' },
    ],
    note: "kept: the install’s own; karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [
    ['UntagResource', { ResourceARN: RULE_ARN, TagKeys: [ADOPTED_BY, ADDED_TARGET, ENABLED_FROM] }],
  ])
})

test("rule: another tool's without records is kept as it is, nothing written", async () => {
  const e = env({ aws: ruleAnswers({ team: 'x' }, ['t']) })
  const { verdict } = await run(rule(), e.env)
  assert.deepEqual(verdict, { action: 'unchanged', changes: [], note: FOREIGN_NOTE })
  assert.deepEqual(e.writes, [])
})

// ---------- SQS queue ----------

const QUEUE_URL = 'https://sqs.us-west-2.amazonaws.com/123456789012/demo'
const QUEUE_ARN = 'arn:aws:sqs:us-west-2:123456789012:demo'
const queue = (keptNote?: string) => queueAbsent({ name: 'demo', ownership: OWN, dependsOn: ['x'], keptNote })
const queueAnswers = (tags: Record<string, string>, policy?: unknown): Record<string, Answer> => ({
  GetQueueUrl: (i) => {
    assert.deepEqual(i, { QueueName: 'demo' })
    return { QueueUrl: QUEUE_URL }
  },
  ListQueueTags: (i) => {
    assert.deepEqual(i, { QueueUrl: QUEUE_URL })
    return { Tags: tags }
  },
  GetQueueAttributes: (i) => {
    assert.deepEqual(i, { QueueUrl: QUEUE_URL, AttributeNames: ['QueueArn', 'Policy'] })
    return { Attributes: { QueueArn: QUEUE_ARN, ...(policy ? { Policy: JSON.stringify(policy) } : {}) } }
  },
})

test("queue: its shape; gone writes nothing; karpctl's own is deleted without reading its policy", async () => {
  const q = queue()
  assert.deepEqual(
    [q.address, q.kind, q.name, q.group, q.dependsOn, q.desired],
    ['sqs-queue.interruption', 'SQS queue', 'demo', 'Interruption handling', ['x'], { absent: true }],
  )
  const none = env()
  assert.deepEqual((await run(q, none.env)).verdict, GONE)
  assert.deepEqual(none.writes, [])
  const e = env({ aws: queueAnswers(OWN) })
  const { cur, verdict } = await run(q, e.env)
  assert.deepEqual(cur, { owner: undefined, url: QUEUE_URL, arn: '', tags: OWN, policy: null })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [['DeleteQueue', { QueueUrl: QUEUE_URL }]])
  assert.deepEqual(
    e.reads.map(([op]) => op),
    ['GetQueueUrl', 'ListQueueTags'],
  )
})

test('queue: an adopted one gets its policy back without the statements karpctl added, and loses the records', async () => {
  const [send, deny] = referenceQueueStatements(QUEUE_ARN)
  const own = {
    Sid: 'Theirs',
    Effect: 'Allow',
    Principal: { AWS: 'arn:aws:iam::1:root' },
    Action: 'sqs:*',
    Resource: QUEUE_ARN,
  }
  const tags = { [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send,DenyHTTP', team: 'x' }
  const e = env({ aws: queueAnswers(tags, { Version: '2012-10-17', Statement: [own, send, deny] }) })
  const { cur, verdict } = await run(queue(), e.env)
  assert.equal(cur?.arn, QUEUE_ARN)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'Policy.Statement.1', from: send, to: undefined },
      { field: 'Policy.Statement.DenyHTTP', from: deny, to: undefined },
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_POLICY}`, from: 'send,DenyHTTP' },
    ],
    note: `${FOREIGN_NOTE}; karpctl's recorded changes given back`,
  })
  const [set, untag] = e.writes as [[string, { QueueUrl: string; Attributes: { Policy: string } }], unknown]
  assert.equal(e.writes.length, 2)
  assert.deepEqual(
    [set[0], set[1].QueueUrl, JSON.parse(set[1].Attributes.Policy)],
    ['SetQueueAttributes', QUEUE_URL, { Version: '2012-10-17', Statement: [own] }],
  )
  assert.deepEqual(untag, ['UntagQueue', { QueueUrl: QUEUE_URL, TagKeys: [ADOPTED_BY, ADDED_POLICY] }])
})

test('queue: adopted, its added statements already gone: only the records; none recorded: kept, nothing written', async () => {
  const e = env({ aws: queueAnswers({ [ADOPTED_BY]: 'demo', [ADDED_POLICY]: 'send' }) })
  const { verdict } = await run(queue('kept: the stack’s'), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: `tags.${ADOPTED_BY}`, from: 'demo' },
      { field: `tags.${ADDED_POLICY}`, from: 'send' },
    ],
    note: "kept: the stack’s; karpctl's recorded changes given back",
  })
  assert.deepEqual(e.writes, [['UntagQueue', { QueueUrl: QUEUE_URL, TagKeys: [ADOPTED_BY, ADDED_POLICY] }]])
  const foreign = env({ aws: queueAnswers({ team: 'x' }) })
  assert.deepEqual((await run(queue(), foreign.env)).verdict, {
    action: 'unchanged',
    changes: [],
    note: FOREIGN_NOTE,
  })
  assert.deepEqual(foreign.writes, [])
})

// ---------- Pod Identity association ----------

const podIdentity = () =>
  podIdentityAbsent({
    clusterName: 'demo',
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    ownership: OWN,
    dependsOn: ['d'],
  })

test("pod identity: karpctl's association is deleted by its id; another's kept; none is gone", async () => {
  const p = podIdentity()
  assert.deepEqual(
    [p.address, p.kind, p.name, p.group, p.dependsOn],
    [
      'eks-pod-identity.controller',
      'EKS Pod Identity association',
      'kube-system/karpenter',
      'Controller identity',
      ['d'],
    ],
  )
  const answers = (tags: Record<string, string>): Record<string, Answer> => ({
    ListPodIdentityAssociations: (i) => {
      assert.deepEqual(i, { clusterName: 'demo', namespace: 'kube-system', serviceAccount: 'karpenter' })
      return { associations: [{ associationId: 'a-1' }, { associationId: 'a-2' }] }
    },
    DescribePodIdentityAssociation: (i) => {
      assert.deepEqual(i, { clusterName: 'demo', associationId: 'a-1' })
      return { association: { tags } }
    },
  })
  const own = env({ aws: answers(OWN) })
  const { cur, verdict } = await run(p, own.env)
  assert.deepEqual(cur, { id: 'a-1', tags: OWN })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(own.writes, [
    ['DeletePodIdentityAssociation', { clusterName: 'demo', associationId: 'a-1' }],
  ])

  const theirs = env({ aws: answers({ team: 'x' }) })
  assert.deepEqual((await p.observe(theirs.env)) && p.verdict(await p.observe(theirs.env)), {
    action: 'unchanged',
    changes: [],
    note: FOREIGN_NOTE,
  })
  const none = env({ aws: { ListPodIdentityAssociations: () => ({ associations: [] }) } })
  const r = await run(p, none.env)
  assert.deepEqual([r.cur, r.verdict, none.writes], [null, GONE, []])
})

test('pod identity: an endpoint without Pod Identity holds none; any other failure is thrown', async () => {
  const p = podIdentity()
  const unsupported = env({
    aws: {
      ListPodIdentityAssociations: () => {
        throw Object.assign(new Error('not implemented'), { name: 'NotImplemented' })
      },
    },
  })
  assert.equal(await p.observe(unsupported.env), null)
  const denied = env({
    aws: {
      ListPodIdentityAssociations: () => {
        throw Object.assign(new Error('no'), { name: 'AccessDeniedException' })
      },
    },
  })
  await assert.rejects(p.observe(denied.env), { name: 'AccessDeniedException' })
})

// ---------- OIDC provider ----------

test('OIDC provider: named by its host path, trust read decoded, deleted by its ARN', async () => {
  const arn = 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/X'
  const p = oidcProviderAbsent({
    arn,
    ownership: OWN,
    keepRoles: ['ctl'],
    dependsOn: ['iam-role.controller'],
  })
  assert.deepEqual(
    [p.address, p.kind, p.name, p.group],
    ['iam-oidc-provider.cluster', 'IAM OIDC provider', 'oidc.eks.us-west-2.amazonaws.com/id/X', 'IAM'],
  )
  const trust = encodeURIComponent(JSON.stringify({ Principal: { Federated: arn } }))
  const e = env({
    aws: {
      ListOpenIDConnectProviderTags: (i) => {
        assert.deepEqual(i, { OpenIDConnectProviderArn: arn })
        return { Tags: tagList(OWN) }
      },
      ListRoles: twoPages(
        'Roles',
        [{ RoleName: 'ctl', AssumeRolePolicyDocument: trust }],
        [{ RoleName: 'unrelated', AssumeRolePolicyDocument: encodeURIComponent('{"Principal":"x"}') }],
      ),
    },
  })
  const { cur, verdict } = await run(p, e.env)
  assert.deepEqual(cur, { tags: OWN, trustedBy: [] })
  assert.deepEqual(verdict, { action: 'delete', changes: [] })
  assert.deepEqual(e.writes, [['DeleteOpenIDConnectProvider', { OpenIDConnectProviderArn: arn }]])
  assert.deepEqual(p.permissions, [])
  assert.deepEqual(p.desired, { absent: true })
  const gone = env()
  const none = await run(p, gone.env, false)
  assert.deepEqual([none.cur, none.verdict, gone.writes], [null, GONE, []])
  // Trusted by a role on the second page: kept, naming it; another tool's: kept.
  const trusted = env({
    aws: {
      ListOpenIDConnectProviderTags: () => ({ Tags: tagList(OWN) }),
      ListRoles: twoPages(
        'Roles',
        [{ RoleName: 'ctl', AssumeRolePolicyDocument: trust }],
        [
          { RoleName: 'app-a', AssumeRolePolicyDocument: trust },
          { RoleName: 'app-b', AssumeRolePolicyDocument: trust },
        ],
      ),
    },
  })
  assert.deepEqual(p.verdict(await p.observe(trusted.env)), {
    action: 'unchanged',
    changes: [],
    note: 'kept: still trusted by app-a, app-b',
  })
  const foreign = env({ aws: { ListOpenIDConnectProviderTags: () => ({}), ListRoles: () => ({}) } })
  assert.deepEqual(p.verdict(await p.observe(foreign.env)), {
    action: 'unchanged',
    changes: [],
    note: 'kept: karpctl did not make it',
  })
})

// ---------- Helm releases ----------

const releaseList = (labels: Record<string, string>) => {
  const s = helmReleaseSecret()
  s.metadata.labels = { ...s.metadata.labels, ...labels }
  return { items: [s] }
}
const SECRETS = `/api/v1/namespaces/kube-system/secrets?labelSelector=${encodeURIComponent(`${RELEASE_SELECTOR},name=karpenter`)}`
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
const releaseAbsent = (handedCrdsOf?: string) =>
  helmReleaseAbsent({
    address: 'helm.karpenter',
    release: 'karpenter',
    namespace: 'kube-system',
    labels: { 'karpctl.io/managed-by': 'karpctl' },
    dependsOn: ['a'],
    handedCrdsOf,
  })
function helmLog() {
  const calls: unknown[][] = []
  return {
    calls,
    helm: {
      rollback: async (...a: unknown[]) => void calls.push(['rollback', ...a]),
      uninstall: async (...a: unknown[]) => void calls.push(['uninstall', ...a]),
    },
  }
}

test("release: karpctl's own is uninstalled with Helm; gone is gone", async () => {
  const r = releaseAbsent()
  assert.deepEqual(
    [r.kind, r.name, r.group, r.dependsOn],
    ['Helm release', 'kube-system/karpenter', 'Kubernetes', ['a']],
  )
  const h = helmLog()
  const e = env({ kube: { [SECRETS]: releaseList({ 'karpctl.io/managed-by': 'karpctl' }) }, helm: h.helm })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(cur?.handed, [])
  assert.ok(!e.kubeReads.includes(CRDS), 'no CRDs read without a handover to look for')
  assert.deepEqual(verdict, { action: 'delete', changes: [{ field: 'chart', from: cur?.chart }] })
  assert.match(cur?.chart ?? '', /^karpenter-\d+\.\d+\.\d+/)
  assert.deepEqual(h.calls, [['uninstall', 'karpenter', 'kube-system']])
  assert.deepEqual(e.writes, [])
  const none = env({ helm: h.helm })
  assert.deepEqual((await run(r, none.env, false)).verdict, GONE)
  assert.equal(h.calls.length, 1)
})

test('release: an adopted one is rolled back to the revision it had before karpctl, never uninstalled', async () => {
  const h = helmLog()
  const e = env({ kube: { [SECRETS]: releaseList({ [ADOPTED_FROM_REVISION]: '3' }) }, helm: h.helm })
  const { cur, verdict } = await run(releaseAbsent(), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [{ field: 'revision', from: cur?.revision, to: 'rollback to 3' }],
    note: 'kept: installed without karpctl; given back as it was before karpctl (revision 3, `helm uninstall karpenter -n kube-system` removes it)',
  })
  // Given back whole: teardown waits for the old revision's rollout.
  assert.deepEqual(h.calls, [
    ['rollback', { release: 'karpenter', namespace: 'kube-system', revision: 3, wait: true }],
  ])
})

test("release: one karpctl upgrade moved (installed without karpctl) is kept at its version; only karpctl's labels come off, on every revision", async () => {
  const h = helmLog()
  const upgraded = { [ADOPTED_BY]: 'demo', [UPGRADED_TO]: '1.14.1' }
  const list = releaseList(upgraded)
  const older = helmReleaseSecret({ revision: 1, status: 'superseded' })
  older.metadata.labels = { ...older.metadata.labels, [ADOPTED_BY]: 'demo' }
  const all = `/api/v1/namespaces/kube-system/secrets?labelSelector=${encodeURIComponent('owner=helm,name=karpenter')}`
  const e = env({
    kube: { [SECRETS]: list, [all]: { items: [older, ...list.items, helmReleaseSecret({ revision: 0 })] } },
    helm: h.helm,
  })
  const { verdict } = await run(releaseAbsent(), e.env)
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: `label ${ADOPTED_BY}`, from: 'demo' },
      { field: `label ${UPGRADED_TO}`, from: '1.14.1' },
    ],
    note: "kept: installed without karpctl, upgraded by karpctl to 1.14.1 as asked (kept at that version); only karpctl's labels come off (`helm uninstall karpenter -n kube-system` removes it)",
  })
  // Never rolled back nor uninstalled: each revision's Secret loses karpctl's labels, nothing else.
  assert.deepEqual(h.calls, [])
  const patch = (name: string, labels: Record<string, null>) => [
    `PATCH /api/v1/namespaces/kube-system/secrets/${name}`,
    { body: { metadata: { labels } }, contentType: 'application/merge-patch+json' },
  ]
  assert.deepEqual(e.writes, [
    patch(older.metadata.name, { [ADOPTED_BY]: null }),
    patch(list.items[0]!.metadata.name, { [ADOPTED_BY]: null, [UPGRADED_TO]: null }),
  ])
  // Once they are off: another tool's release, kept and left alone.
  const after = env({ kube: { [SECRETS]: releaseList({}) }, helm: h.helm })
  assert.equal((await run(releaseAbsent(), after.env, false)).verdict.action, 'unchanged')
})

test("release: another tool's is kept and nothing is run", async () => {
  const h = helmLog()
  const e = env({ kube: { [SECRETS]: releaseList({}) }, helm: h.helm })
  const { verdict } = await run(releaseAbsent(), e.env, false)
  assert.deepEqual(verdict, {
    action: 'unchanged',
    changes: [],
    note: 'kept: installed without karpctl (`helm uninstall karpenter -n kube-system`)',
  })
  assert.deepEqual([h.calls, e.writes], [[], []])
})

test('release holding CRDs that existed before karpctl: its own CRDs and its record deleted, the handed ones kept', async () => {
  const crd = (name: string, annotations: Record<string, string>) => ({ metadata: { name, annotations } })
  const mine = { [HELM_RELEASE_NAME]: 'karpenter', [HELM_RELEASE_NAMESPACE]: 'kube-system' }
  const crds = {
    items: [
      crd('nodepools.karpenter.sh', { ...mine, [CRD_ADOPTED_BY]: 'demo' }),
      crd('nodeclaims.karpenter.sh', { ...mine, [CRD_ADOPTED_BY]: 'other' }),
      crd('ec2nodeclasses.karpenter.k8s.aws', mine),
      crd('nodeoverlays.karpenter.sh', {
        [HELM_RELEASE_NAME]: 'karpenter',
        [HELM_RELEASE_NAMESPACE]: 'karpenter',
      }),
      crd('x.example.com', { [HELM_RELEASE_NAME]: 'other', [HELM_RELEASE_NAMESPACE]: 'kube-system' }),
      { metadata: { name: 'bare.example.com' } },
    ],
  }
  const h = helmLog()
  const e = env({
    kube: { [SECRETS]: releaseList({ 'karpctl.io/managed-by': 'karpctl' }), [CRDS]: crds },
    helm: h.helm,
  })
  const { cur, verdict } = await run(releaseAbsent('demo'), e.env)
  assert.deepEqual(cur?.handed, ['nodepools.karpenter.sh'])
  assert.deepEqual(verdict, {
    action: 'delete',
    changes: [{ field: 'chart', from: cur?.chart }],
    note: "its CRDs existed before karpctl (nodepools.karpenter.sh): the release's record is removed and they are kept, with every object of their kinds",
  })
  assert.deepEqual(h.calls, [])
  assert.deepEqual(e.writes, [
    [`DELETE ${CRDS}/ec2nodeclasses.karpenter.k8s.aws`, undefined],
    [
      `DELETE /api/v1/namespaces/kube-system/secrets?labelSelector=${encodeURIComponent('owner=helm,name=karpenter')}`,
      undefined,
    ],
  ])
})

// ---------- recorded tags ----------

test('recorded tags: the listings (per record, by discovery and in the VPC), the name, and what comes off', async () => {
  const r = recordedTagsRestore({ clusterName: 'demo', vpcId: 'vpc-1', repairs: true, dependsOn: ['z'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    ['ec2-tags.restore', 'recorded tags', `${ADDED_TAGS}, ${REPAIRED_TAGS} (cluster demo)`, 'Network', ['z']],
  )
  const subnet = (id: string, vpc: string, t: Record<string, string>) => ({
    SubnetId: id,
    VpcId: vpc,
    Tags: tagList(t),
  })
  const e = env({
    aws: {
      DescribeSubnets: () => ({
        Subnets: [
          subnet('subnet-a', 'vpc-1', {
            'karpenter.sh/discovery': 'demo',
            [ADDED_TAGS]: 'karpenter.sh/discovery,,',
          }),
          subnet('subnet-a', 'vpc-1', {
            'karpenter.sh/discovery': 'demo',
            [ADDED_TAGS]: 'karpenter.sh/discovery,,',
          }),
          subnet('subnet-b', 'vpc-1', { [REPAIRED_TAGS]: 'karpenter.sh/discovery,kubernetes.io/role/elb' }),
          subnet('subnet-c', 'vpc-2', { [ADDED_TAGS]: 'karpenter.sh/discovery' }),
          subnet('subnet-d', 'vpc-1', { 'karpenter.sh/discovery': 'other', [ADDED_TAGS]: 'x' }),
          subnet('subnet-e', 'vpc-1', { 'karpenter.sh/discovery': 'demo' }),
        ],
      }),
      DescribeSecurityGroups: () => ({
        SecurityGroups: [
          {
            GroupId: 'sg-1',
            VpcId: 'vpc-1',
            Tags: tagList({ 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'a', [REPAIRED_TAGS]: 'a,b' }),
          },
        ],
      }),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const filters = (rec: string) => [
    [
      { Name: 'tag-key', Values: [rec] },
      { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
    ],
    [
      { Name: 'tag-key', Values: [rec] },
      { Name: 'vpc-id', Values: ['vpc-1'] },
    ],
  ]
  const want = [...filters(ADDED_TAGS), ...filters(REPAIRED_TAGS)]
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeSubnets').map(([, i]) => (i as { Filters: unknown }).Filters),
    want,
  )
  assert.deepEqual(
    e.reads
      .filter(([op]) => op === 'DescribeSecurityGroups')
      .map(([, i]) => (i as { Filters: unknown }).Filters),
    want,
  )
  assert.deepEqual(cur, [
    {
      id: 'subnet-a',
      remove: ['karpenter.sh/discovery', ADDED_TAGS],
      tags: { 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'karpenter.sh/discovery,,' },
    },
    {
      id: 'subnet-b',
      remove: ['karpenter.sh/discovery', 'kubernetes.io/role/elb', REPAIRED_TAGS],
      tags: { [REPAIRED_TAGS]: 'karpenter.sh/discovery,kubernetes.io/role/elb' },
    },
    {
      id: 'sg-1',
      remove: ['a', 'b', ADDED_TAGS, REPAIRED_TAGS],
      tags: { 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'a', [REPAIRED_TAGS]: 'a,b' },
    },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'subnet-a karpenter.sh/discovery', from: 'demo' },
      { field: `subnet-a ${ADDED_TAGS}`, from: 'karpenter.sh/discovery,,' },
      { field: `subnet-b ${REPAIRED_TAGS}`, from: 'karpenter.sh/discovery,kubernetes.io/role/elb' },
      { field: `sg-1 ${ADDED_TAGS}`, from: 'a' },
      { field: `sg-1 ${REPAIRED_TAGS}`, from: 'a,b' },
    ],
  })
  assert.deepEqual(e.writes, [
    [
      'DeleteTags',
      { Resources: ['subnet-a'], Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: ADDED_TAGS }] },
    ],
    [
      'DeleteTags',
      {
        Resources: ['subnet-b'],
        Tags: [{ Key: 'karpenter.sh/discovery' }, { Key: 'kubernetes.io/role/elb' }, { Key: REPAIRED_TAGS }],
      },
    ],
    [
      'DeleteTags',
      {
        Resources: ['sg-1'],
        Tags: [{ Key: 'a' }, { Key: 'b' }, { Key: ADDED_TAGS }, { Key: REPAIRED_TAGS }],
      },
    ],
  ])
})

test('recorded tags without a VPC: only the discovery listings; a resource without a discovery tag is not found', async () => {
  const r = recordedTagsRestore({ clusterName: 'demo', dependsOn: [] })
  assert.equal(r.name, `${ADDED_TAGS} (cluster demo)`)
  const e = env({
    aws: {
      DescribeSubnets: () => ({
        Subnets: [{ SubnetId: 'subnet-b', VpcId: 'vpc-1', Tags: tagList({ [ADDED_TAGS]: 'x' }) }],
      }),
      DescribeSecurityGroups: () => ({}),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(
    e.reads.map(([op, i]) => [op, (i as { Filters: unknown }).Filters]),
    [
      [
        'DescribeSubnets',
        [
          { Name: 'tag-key', Values: [ADDED_TAGS] },
          { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
        ],
      ],
      [
        'DescribeSecurityGroups',
        [
          { Name: 'tag-key', Values: [ADDED_TAGS] },
          { Name: 'tag:karpenter.sh/discovery', Values: ['demo'] },
        ],
      ],
    ],
  )
  assert.deepEqual(
    [cur, verdict, e.writes],
    [[], { action: 'unchanged', changes: [], note: 'nothing recorded' }, []],
  )
})

// ---------- recorded 8443 rules ----------

test('recorded ingress: one listing per record (in the VPC when known), each rule revoked and its record dropped', async () => {
  const r = recordedIngressRestore({ vpcId: 'vpc-1', repairs: true, dependsOn: ['q'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    [
      'ec2-ingress.restore',
      'recorded security group rules',
      `${ADDED_INGRESS}, ${REPAIRED_INGRESS}`,
      'Network',
      ['q'],
    ],
  )
  const e = env({
    aws: {
      DescribeSecurityGroups: (i) => {
        const rec = (i.Filters as { Values: string[] }[])[0]!.Values[0]
        return {
          SecurityGroups:
            rec === ADDED_INGRESS
              ? [
                  { GroupId: 'sg-1', Tags: tagList({ [ADDED_INGRESS]: 'sg-cluster' }) },
                  { GroupId: 'sg-x', Tags: tagList({ other: 'y' }) },
                ]
              : [{ GroupId: 'sg-2', Tags: tagList({ [REPAIRED_INGRESS]: 'sg-c2' }) }],
        }
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(
    e.reads.map(([, i]) => i),
    [
      {
        Filters: [
          { Name: 'tag-key', Values: [ADDED_INGRESS] },
          { Name: 'vpc-id', Values: ['vpc-1'] },
        ],
      },
      {
        Filters: [
          { Name: 'tag-key', Values: [REPAIRED_INGRESS] },
          { Name: 'vpc-id', Values: ['vpc-1'] },
        ],
      },
    ],
  )
  assert.deepEqual(cur, [
    { groupId: 'sg-1', source: 'sg-cluster', record: ADDED_INGRESS },
    { groupId: 'sg-2', source: 'sg-c2', record: REPAIRED_INGRESS },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: 'sg-1 ingress', from: 'tcp/8443 from sg-cluster' },
      { field: 'sg-2 ingress', from: 'tcp/8443 from sg-c2' },
    ],
  })
  const revoke = (g: string, src: string) => [
    'RevokeSecurityGroupIngress',
    {
      GroupId: g,
      IpPermissions: [
        { IpProtocol: 'tcp', FromPort: 8443, ToPort: 8443, UserIdGroupPairs: [{ GroupId: src }] },
      ],
    },
  ]
  assert.deepEqual(e.writes, [
    revoke('sg-1', 'sg-cluster'),
    ['DeleteTags', { Resources: ['sg-1'], Tags: [{ Key: ADDED_INGRESS }] }],
    revoke('sg-2', 'sg-c2'),
    ['DeleteTags', { Resources: ['sg-2'], Tags: [{ Key: REPAIRED_INGRESS }] }],
  ])
  const noVpc = recordedIngressRestore({ dependsOn: [] })
  assert.equal(noVpc.name, ADDED_INGRESS)
  const e2 = env({ aws: { DescribeSecurityGroups: () => ({}) } })
  assert.deepEqual(await noVpc.observe(e2.env), [])
  assert.deepEqual(e2.reads, [
    ['DescribeSecurityGroups', { Filters: [{ Name: 'tag-key', Values: [ADDED_INGRESS] }] }],
  ])
})

// ---------- cluster-autoscaler ----------

test('autoscaler restore: only Deployments with the record, the replicas as a number, in one merge patch each', async () => {
  const r = autoscalerRestore({ dependsOn: ['h'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    [
      'kube.cluster-autoscaler.restore',
      'Deployment',
      `scaled down by karpctl (${SCALED_FROM})`,
      'Kubernetes',
      ['h'],
    ],
  )
  const e = env({
    kube: {
      '/apis/apps/v1/deployments': {
        items: [
          {
            metadata: {
              name: 'cluster-autoscaler',
              namespace: 'kube-system',
              annotations: { [SCALED_FROM]: '2' },
            },
          },
          { metadata: { name: 'app', namespace: 'default' } },
          { metadata: { name: 'other', namespace: 'default', annotations: { x: '1' } } },
        ],
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(cur, [{ namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 2 }])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [{ field: 'kube-system/cluster-autoscaler replicas', from: 0, to: 2 }],
  })
  assert.deepEqual(e.writes, [
    [
      'PATCH /apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler',
      {
        body: { metadata: { annotations: { [SCALED_FROM]: null } }, spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      },
    ],
  ])
  const none = env()
  assert.deepEqual((await run(r, none.env)).verdict, {
    action: 'unchanged',
    changes: [],
    note: 'nothing recorded',
  })
})

// ---------- Karpenter's orphans ----------

test('orphans: the three tag filters per listing, instances live only, profiles named and tagged for this cluster', async () => {
  const r = orphanSweep({ clusterName: 'demo', sweep: true, dependsOn: ['p'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired],
    [
      'sweep.karpenter-orphans',
      "Karpenter's leftovers",
      'tagged for cluster demo',
      'Sweep',
      ['p'],
      { sweep: true },
    ],
  )
  const e = env({
    aws: {
      DescribeInstances: () => ({
        Reservations: [{ Instances: [{ InstanceId: 'i-1' }, { InstanceId: 'i-2' }] }, {}],
      }),
      DescribeLaunchTemplates: () => ({ LaunchTemplates: [{ LaunchTemplateId: 'lt-1' }] }),
      ListInstanceProfiles: twoPages(
        'InstanceProfiles',
        [
          { InstanceProfileName: 'demo_1', Roles: [{ RoleName: 'r1' }, { RoleName: 'r2' }] },
          { InstanceProfileName: 'demo_2', Roles: [] },
        ],
        [{ InstanceProfileName: 'demo_3' }, { InstanceProfileName: 'xdemo_4' }],
      ),
      ListInstanceProfileTags: (i) => ({
        Tags: tagList(
          i.InstanceProfileName === 'demo_1'
            ? { 'kubernetes.io/cluster/demo': 'owned', 'karpenter.k8s.aws/ec2nodeclass': 'default' }
            : i.InstanceProfileName === 'demo_2'
              ? { 'kubernetes.io/cluster/demo': 'shared', 'karpenter.k8s.aws/ec2nodeclass': 'default' }
              : { 'kubernetes.io/cluster/demo': 'owned' },
        ),
      }),
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const byCluster = [
    [
      { Name: 'tag:eks:eks-cluster-name', Values: ['demo'] },
      { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
    ],
    [
      { Name: 'tag:kubernetes.io/cluster/demo', Values: ['owned'] },
      { Name: 'tag-key', Values: ['karpenter.sh/nodepool'] },
    ],
    [{ Name: 'tag:karpenter.k8s.aws/cluster', Values: ['demo'] }],
  ]
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeInstances').map(([, i]) => i),
    byCluster.map((f) => ({
      Filters: [...f, { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] }],
    })),
  )
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'DescribeLaunchTemplates').map(([, i]) => i),
    byCluster.map((Filters) => ({ Filters })),
  )
  assert.deepEqual(
    e.reads.filter(([op]) => op === 'ListInstanceProfileTags').map(([, i]) => i),
    [{ InstanceProfileName: 'demo_1' }, { InstanceProfileName: 'demo_2' }, { InstanceProfileName: 'demo_3' }],
  )
  assert.deepEqual(cur, {
    instances: ['i-1', 'i-2'],
    launchTemplates: ['lt-1'],
    instanceProfiles: [{ name: 'demo_1', roles: ['r1', 'r2'] }],
  })
  assert.deepEqual(verdict, {
    action: 'delete',
    changes: ['i-1', 'i-2', 'lt-1', 'demo_1'].map((from) => ({ field: 'orphan', from })),
  })
  assert.deepEqual(e.writes, [
    ['TerminateInstances', { InstanceIds: ['i-1', 'i-2'] }],
    ['DeleteLaunchTemplate', { LaunchTemplateId: 'lt-1' }],
    ['RemoveRoleFromInstanceProfile', { InstanceProfileName: 'demo_1', RoleName: 'r1' }],
    ['RemoveRoleFromInstanceProfile', { InstanceProfileName: 'demo_1', RoleName: 'r2' }],
    ['DeleteInstanceProfile', { InstanceProfileName: 'demo_1' }],
  ])
})

test('orphans: none found is unchanged; a profile-only sweep terminates no instance', async () => {
  const r = orphanSweep({ clusterName: 'demo', sweep: false, dependsOn: [] })
  const empty = env({
    aws: {
      DescribeInstances: () => ({}),
      DescribeLaunchTemplates: () => ({}),
      ListInstanceProfiles: () => ({}),
    },
  })
  const { cur, verdict } = await run(r, empty.env)
  assert.deepEqual(cur, { instances: [], launchTemplates: [], instanceProfiles: [] })
  assert.deepEqual(verdict, { action: 'unchanged', changes: [], note: 'none found' })
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'none found' })
  assert.deepEqual(empty.writes, [])
  const sweep = orphanSweep({ clusterName: 'demo', sweep: true, dependsOn: [] })
  const e = env()
  await sweep.apply(e.env, {
    instances: [],
    launchTemplates: [],
    instanceProfiles: [{ name: 'demo_9', roles: [] }],
  })
  await sweep.apply(e.env, null)
  assert.deepEqual(e.writes, [['DeleteInstanceProfile', { InstanceProfileName: 'demo_9' }]])
})

// ---------- edges: failures that are not "not found", empty answers, nothing recorded ----------

const denied = () => {
  throw Object.assign(new Error('not authorized'), { name: 'AccessDenied' })
}

test('a read that fails other than "not found" is thrown, never taken for gone', async () => {
  // Kills: orNull swallowing every error (its catch emptied or its test forced).
  await assert.rejects(rule().observe(env({ aws: { DescribeRule: denied } }).env), { name: 'AccessDenied' })
  await assert.rejects(queue().observe(env({ aws: { GetQueueUrl: denied } }).env), { name: 'AccessDenied' })
})

test('empty answers: a queue without a URL is gone; a rule without tags or targets, a queue without attributes', async () => {
  assert.equal(await queue().observe(env({ aws: { GetQueueUrl: () => ({}) } }).env), null)
  const r = env({
    aws: {
      DescribeRule: () => ({ Arn: RULE_ARN }),
      ListTargetsByRule: () => ({}),
      ListTagsForResource: () => ({}),
    },
  })
  assert.deepEqual(await rule().observe(r.env), { owner: undefined, arn: RULE_ARN, targets: [], tags: {} })
  const q = env({
    aws: {
      GetQueueUrl: () => ({ QueueUrl: QUEUE_URL }),
      ListQueueTags: () => ({ Tags: { [ADDED_POLICY]: 'send' } }),
      GetQueueAttributes: () => ({}),
    },
  })
  assert.deepEqual(await queue().observe(q.env), {
    owner: undefined,
    url: QUEUE_URL,
    arn: '',
    tags: { [ADDED_POLICY]: 'send' },
    policy: null,
  })
  const p = podIdentity()
  assert.equal(await p.observe(env({ aws: { ListPodIdentityAssociations: () => ({}) } }).env), null)
  const untagged = env({
    aws: {
      ListPodIdentityAssociations: () => ({ associations: [{ associationId: 'a-9' }] }),
      DescribePodIdentityAssociation: () => ({}),
    },
  })
  assert.deepEqual(await p.observe(untagged.env), { id: 'a-9', tags: {} })
  await p.apply(untagged.env, null)
  assert.deepEqual(untagged.writes, [])
})

test('release with a handover to look for but no CRDs listed: none handed, uninstalled', async () => {
  const h = helmLog()
  const e = env({ kube: { [SECRETS]: releaseList({ 'karpctl.io/managed-by': 'karpctl' }) }, helm: h.helm })
  const { cur } = await run(releaseAbsent('demo'), e.env)
  assert.deepEqual(cur?.handed, [])
  assert.deepEqual(e.kubeReads, [SECRETS, CRDS])
  assert.deepEqual(h.calls, [['uninstall', 'karpenter', 'kube-system']])
})

test('the restores of nothing observed (null) say "nothing recorded"', () => {
  const nothing = { action: 'unchanged', changes: [], note: 'nothing recorded' }
  assert.deepEqual(recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(recordedIngressRestore({ dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(autoscalerRestore({ dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }).verdict(null), nothing)
  assert.deepEqual(handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }).verdict([]), nothing)
})

test('the restores apply nothing for nothing observed', async () => {
  const e = env()
  for (const r of [
    recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }),
    recordedIngressRestore({ dependsOn: [] }),
    autoscalerRestore({ dependsOn: [] }),
    handedCrdsRestore({ clusterName: 'demo', dependsOn: [] }),
  ] as Resource[])
    await r.apply(e.env, null)
  assert.deepEqual(e.writes, [])
})

// ---------- handed CRDs ----------

test("handed CRDs: each of this cluster's gets Helm's marks as recorded, the record and keep policy off, in one merge patch", async () => {
  const r = handedCrdsRestore({ clusterName: 'demo', dependsOn: ['helm.karpenter-crd'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired, r.permissions],
    [
      'kube.crds.restore',
      'CRD ownership',
      `${CRD_ADOPTED_BY}=demo`,
      'Kubernetes',
      ['helm.karpenter-crd'],
      { restored: true },
      [],
    ],
  )
  const crd = (name: string, annotations: Record<string, string>) => ({ metadata: { name, annotations } })
  const e = env({
    kube: {
      [CRDS]: {
        items: [
          crd('nodepools.karpenter.sh', {
            [CRD_ADOPTED_BY]: 'demo',
            [REPLACED_MARKS]: JSON.stringify({
              labels: { [HELM_MANAGED_BY]: 'Helm' },
              annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
            }),
          }),
          crd('nodeclaims.karpenter.sh', { [CRD_ADOPTED_BY]: 'demo', [REPLACED_MARKS]: 'not json' }),
          crd('ec2nodeclasses.karpenter.k8s.aws', { [CRD_ADOPTED_BY]: 'other' }),
          { metadata: { name: 'bare.example.com' } },
        ],
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const off = {
    labels: { [HELM_MANAGED_BY]: null },
    annotations: {
      [HELM_RELEASE_NAME]: null,
      [HELM_RELEASE_NAMESPACE]: null,
      [HELM_KEEP]: null,
      [CRD_ADOPTED_BY]: null,
      [REPLACED_MARKS]: null,
    },
  }
  const restoredPool = {
    labels: { [HELM_MANAGED_BY]: 'Helm' },
    annotations: {
      ...off.annotations,
      [HELM_RELEASE_NAME]: 'karpenter-crd',
      [HELM_RELEASE_NAMESPACE]: 'karpenter',
    },
  }
  assert.deepEqual(cur, [
    {
      name: 'nodepools.karpenter.sh',
      restore: restoredPool,
      now: {
        labels: {},
        annotations: {
          [CRD_ADOPTED_BY]: 'demo',
          [REPLACED_MARKS]: JSON.stringify({
            labels: { [HELM_MANAGED_BY]: 'Helm' },
            annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
          }),
        },
      },
    },
    {
      name: 'nodeclaims.karpenter.sh',
      restore: off,
      now: { labels: {}, annotations: { [CRD_ADOPTED_BY]: 'demo', [REPLACED_MARKS]: 'not json' } },
    },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: `nodepools.karpenter.sh.labels.${HELM_MANAGED_BY}`, from: undefined, to: 'Helm' },
      { field: `nodepools.karpenter.sh.annotations.${CRD_ADOPTED_BY}`, from: 'demo', to: undefined },
      {
        field: `nodepools.karpenter.sh.annotations.${REPLACED_MARKS}`,
        from: JSON.stringify({
          labels: { [HELM_MANAGED_BY]: 'Helm' },
          annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
        }),
        to: undefined,
      },
      {
        field: `nodepools.karpenter.sh.annotations.${HELM_RELEASE_NAME}`,
        from: undefined,
        to: 'karpenter-crd',
      },
      {
        field: `nodepools.karpenter.sh.annotations.${HELM_RELEASE_NAMESPACE}`,
        from: undefined,
        to: 'karpenter',
      },
      { field: `nodeclaims.karpenter.sh.annotations.${CRD_ADOPTED_BY}`, from: 'demo', to: undefined },
      { field: `nodeclaims.karpenter.sh.annotations.${REPLACED_MARKS}`, from: 'not json', to: undefined },
    ],
  })
  assert.deepEqual(e.writes, [
    [
      `PATCH ${CRDS}/nodepools.karpenter.sh`,
      { body: { metadata: restoredPool }, contentType: 'application/merge-patch+json' },
    ],
    [
      `PATCH ${CRDS}/nodeclaims.karpenter.sh`,
      { body: { metadata: off }, contentType: 'application/merge-patch+json' },
    ],
  ])
})

test('every teardown resource needs no preflight permission and says what it wants as data', () => {
  const want: [Resource, Record<string, unknown>][] = [
    [rule() as Resource, { absent: true }],
    [queue() as Resource, { absent: true }],
    [podIdentity() as Resource, { absent: true }],
    [releaseAbsent() as Resource, { absent: true }],
    [recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }) as Resource, { restored: true }],
    [recordedIngressRestore({ dependsOn: [] }) as Resource, { restored: true }],
    [autoscalerRestore({ dependsOn: [] }) as Resource, { restored: true }],
    [orphanSweep({ clusterName: 'demo', sweep: false, dependsOn: [] }) as Resource, { sweep: false }],
  ]
  for (const [r, desired] of want) {
    assert.deepEqual(r.permissions, [], r.address)
    assert.deepEqual(r.desired, desired, r.address)
  }
})

test('release holding two handed CRDs: both named; CRDs gone by the apply: only the record deleted', async () => {
  // Kills: the names joined without ", "; `l.items` without `?.` (the list read at apply time is gone).
  const crd = (name: string) => ({ metadata: { name, annotations: { [CRD_ADOPTED_BY]: 'demo' } } })
  const e = env({
    kube: {
      [SECRETS]: releaseList({ 'karpctl.io/managed-by': 'karpctl' }),
      [CRDS]: { items: [crd('nodepools.karpenter.sh'), crd('nodeclaims.karpenter.sh')] },
    },
  })
  const r = releaseAbsent('demo')
  const cur = await r.observe(e.env)
  assert.match(
    r.verdict(cur).note ?? '',
    /^its CRDs existed before karpctl \(nodepools\.karpenter\.sh, nodeclaims\.karpenter\.sh\): /,
  )
  const gone = env()
  await r.apply(gone.env, cur)
  assert.deepEqual(gone.writes, [
    [
      `DELETE /api/v1/namespaces/kube-system/secrets?labelSelector=${encodeURIComponent('owner=helm,name=karpenter')}`,
      undefined,
    ],
  ])
})

test('recorded tags: distinct security groups are each given back (listings merged by id, not into one)', async () => {
  // Kills: the security groups' id function dropped (every group merged under one key).
  const sg = (id: string) => ({
    GroupId: id,
    VpcId: 'vpc-1',
    Tags: tagList({ 'karpenter.sh/discovery': 'demo', [ADDED_TAGS]: 'karpenter.sh/discovery' }),
  })
  const e = env({
    aws: {
      DescribeSubnets: () => ({}),
      DescribeSecurityGroups: () => ({ SecurityGroups: [sg('sg-1'), sg('sg-2')] }),
    },
  })
  const cur = await recordedTagsRestore({ clusterName: 'demo', dependsOn: [] }).observe(e.env)
  assert.deepEqual(
    cur?.map((t) => t.id),
    ['sg-1', 'sg-2'],
  )
})
