// What teardown deletes and what it keeps, one condition at a time (issue 18): an access entry and a
// Kubernetes object go only with karpctl's marks; a role karpctl made is emptied then deleted, a role it
// adopted gets back what the records list. Each assertion fails when the condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeApiError } from '../../../src/context/kube.js'
import { ADDED_MAP_ROLES } from '../../../src/plan/resources/aws-auth.js'
import { accessEntryAbsent } from '../../../src/plan/resources/eks-access-absent.js'
import { awsAuthEntryAbsent } from '../../../src/plan/resources/aws-auth-absent.js'
import { iamRoleAbsent } from '../../../src/plan/resources/iam-role-absent.js'
import { karpenterLifts, kubeObjectAbsent } from '../../../src/plan/resources/kube-object-absent.js'
import type { ApplyEnv } from '../../../src/plan/types.js'
import { ADOPTED_BY, ownershipTags } from '../../../src/desired/ownership.js'
import { recordingEnv } from '../../helpers/recording-env.js'

const OWN = ownershipTags('demo')
const PRINCIPAL = 'arn:aws:iam::1:role/KarpenterNodeRole-demo'

const entry = () =>
  accessEntryAbsent({ clusterName: 'demo', principalArn: PRINCIPAL, ownership: OWN, dependsOn: ['x'] })

test('access entry: the resource, read by cluster and principal; gone, kept without the marks, deleted with them', async () => {
  const r = entry()
  assert.equal(r.address, 'eks-access-entry.remove')
  assert.equal(r.kind, 'EKS access entry')
  assert.equal(r.name, PRINCIPAL)
  assert.equal(r.group, 'Cluster access')
  assert.deepEqual(r.dependsOn, ['x'])
  assert.deepEqual(r.desired, { absent: true })
  assert.deepEqual(r.permissions, [])
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'already gone' })
  assert.deepEqual(r.verdict({ tags: { team: 'x' } }), {
    action: 'unchanged',
    changes: [],
    note: 'kept: karpctl did not make it',
  })
  assert.deepEqual(r.verdict({ tags: { ...OWN } }), { action: 'delete', changes: [] })

  const asked: unknown[] = []
  const found = recordingEnv({
    aws: { DescribeAccessEntry: (i) => (asked.push(i), { accessEntry: { tags: OWN } }) },
  })
  assert.deepEqual(await r.observe(found.env), { tags: OWN })
  assert.deepEqual(asked, [{ clusterName: 'demo', principalArn: PRINCIPAL }])
  const untagged = recordingEnv({ aws: { DescribeAccessEntry: () => ({ accessEntry: {} }) } })
  assert.deepEqual(await r.observe(untagged.env), { tags: {} })
  assert.deepEqual(await r.observe(recordingEnv({ aws: { DescribeAccessEntry: () => ({}) } }).env), {
    tags: {},
  })
  assert.equal(await r.observe(recordingEnv().env), null)
  const denied = recordingEnv({
    aws: {
      DescribeAccessEntry: () => {
        throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' })
      },
    },
  })
  await assert.rejects(r.observe(denied.env), /denied/)
})

test('access entry apply: one DeleteAccessEntry; already gone is done; another failure is not', async () => {
  const services: string[] = []
  const env = (fail?: Error) =>
    ({
      aws: {
        write: async (service: string, op: string, input: unknown) => {
          services.push(`${service}:${op}:${JSON.stringify(input)}`)
          if (fail) throw fail
          return {}
        },
      },
    }) as unknown as ApplyEnv
  await entry().apply(env(), { tags: OWN })
  assert.deepEqual(services, [
    `eks:DeleteAccessEntry:${JSON.stringify({ clusterName: 'demo', principalArn: PRINCIPAL })}`,
  ])
  await entry().apply(env(Object.assign(new Error('gone'), { name: 'ResourceNotFoundException' })), {
    tags: OWN,
  })
  await assert.rejects(
    entry().apply(env(Object.assign(new Error('nope'), { name: 'AccessDeniedException' })), { tags: OWN }),
    /nope/,
  )
})

const PATH = '/apis/karpenter.sh/v1/nodepools/default'
const obj = (
  w: {
    waitGone?: { paths: string[]; timeoutMs: number; what: string }
    waitSelf?: ReturnType<typeof karpenterLifts>
  } = {},
) =>
  kubeObjectAbsent({
    address: 'kube.nodepool',
    kind: 'NodePool',
    name: 'default',
    path: PATH,
    labels: { 'karpctl.io/managed-by': 'karpctl' },
    dependsOn: ['y'],
    ...w,
  })

test("Kubernetes object: the resource; gone, kept without karpctl's label, deleted with it (saying what it waits for)", async () => {
  const r = obj()
  assert.equal(r.address, 'kube.nodepool')
  assert.equal(r.kind, 'NodePool')
  assert.equal(r.name, 'default')
  assert.equal(r.group, 'Kubernetes')
  assert.deepEqual(r.dependsOn, ['y'])
  assert.deepEqual(r.desired, { absent: true })
  assert.deepEqual(r.permissions, [])
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'already gone' })
  assert.deepEqual(r.verdict({ metadata: {} }), {
    action: 'unchanged',
    changes: [],
    note: "kept: not labelled as karpctl's",
  })
  assert.deepEqual(
    r.verdict({ metadata: { labels: { 'karpctl.io/managed-by': 'other' } } }).action,
    'unchanged',
  )
  const mine = { metadata: { labels: { 'karpctl.io/managed-by': 'karpctl' } } }
  assert.deepEqual(r.verdict(mine), { action: 'delete', changes: [], note: undefined })
  assert.deepEqual(obj({ waitGone: { paths: [], timeoutMs: 1, what: 'nodes' } }).verdict(mine), {
    action: 'delete',
    changes: [],
    note: 'waits for its nodes to go',
  })
  const env = recordingEnv({ kube: { [PATH]: mine } })
  assert.deepEqual(await r.observe(env.env), mine)
})

test('Kubernetes object apply: DELETE unless already being deleted; a 404 is done; then waits until what it lists is gone', async () => {
  const mine = { metadata: { labels: { 'karpctl.io/managed-by': 'karpctl' } } }
  const r1 = recordingEnv()
  await obj().apply(r1.env, mine)
  assert.deepEqual(r1.kubeWrites, [{ method: 'DELETE', path: PATH }])
  const r2 = recordingEnv()
  await obj().apply(r2.env, { metadata: { ...mine.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } })
  assert.deepEqual(r2.kubeWrites, [])
  const r3 = recordingEnv()
  await obj().apply(r3.env, null)
  assert.deepEqual(r3.kubeWrites, [])

  const kubeEnv = (
    write: () => Promise<unknown>,
    lists: ({ items?: unknown[] } | null)[][],
    progress: string[],
  ) => {
    let round = 0
    const sleeps: number[] = []
    const env = {
      kube: {
        write,
        fresh: async (p: string) => {
          const i = p === '/a' ? 0 : 1
          return lists[Math.min(round, lists.length - 1)]![i] ?? null
        },
      },
      sleep: async (ms: number) => {
        sleeps.push(ms)
        round++
      },
      progress: (s: string) => progress.push(s),
    } as unknown as ApplyEnv
    return { env, sleeps }
  }
  const progress: string[] = []
  const gone404 = async () => {
    throw new KubeApiError(404, 'NotFound', 'gone', PATH)
  }
  const w = kubeEnv(
    gone404,
    [
      [{ items: [1, 2] }, { items: [3] }],
      [{ items: [1] }, null],
      [{ items: [] }, {}],
    ],
    progress,
  )
  await obj({ waitGone: { paths: ['/a', '/b'], timeoutMs: 60_000, what: 'nodes' } }).apply(w.env, mine)
  assert.deepEqual(w.sleeps, [2000, 2000])
  assert.deepEqual(progress, [
    'NodePool default: waiting for 3 nodes to go',
    'NodePool default: waiting for 1 nodes to go',
  ])
  // Another API failure is not "gone".
  const failing = kubeEnv(
    async () => {
      throw new KubeApiError(403, 'Forbidden', 'forbidden', PATH)
    },
    [[{ items: [] }, { items: [] }]],
    [],
  )
  await assert.rejects(obj().apply(failing.env, mine), /forbidden/)
})

test('Kubernetes object apply: still draining past the timeout is an error that says to run again', async () => {
  const env = {
    kube: { write: async () => ({}), fresh: async () => ({ items: [1] }) },
    sleep: async () => {
      await new Promise((resolve) => setTimeout(resolve, 5))
    },
  } as unknown as ApplyEnv
  await assert.rejects(
    obj({ waitGone: { paths: ['/a'], timeoutMs: 1, what: 'nodes' } }).apply(env, null),
    /^Error: 1 nodes of NodePool default still draining after 0 s: run the same command again to keep waiting$/,
  )
})

test('Kubernetes object apply with waitSelf: deleted, then polled until gone, naming its finalizers; bounded', async () => {
  // Issue 33: teardown uninstalled the controller before Karpenter had lifted the EC2NodeClass's
  // termination finalizer, and `helm uninstall karpenter-crd --wait` hung.
  const nodeClass = (fresh: (p: string) => Promise<unknown>, progress: string[] = []) => {
    const writes: string[] = []
    const sleeps: number[] = []
    const env = {
      kube: { write: async (m: string, p: string) => void writes.push(`${m} ${p}`), fresh },
      sleep: async (ms: number) => void sleeps.push(ms),
      progress: (line: string) => progress.push(line),
    } as unknown as ApplyEnv
    return { env, writes, sleeps }
  }
  const held = { metadata: { finalizers: ['karpenter.k8s.aws/termination'], deletionTimestamp: 't' } }
  const answers: unknown[] = [held, held, null]
  const progress: string[] = []
  const n = nodeClass(async (p) => (assert.equal(p, PATH), answers.shift() ?? null), progress)
  const mine = { metadata: { labels: { 'karpctl.io/managed-by': 'karpctl' } } }
  const self = obj({ waitSelf: karpenterLifts(60_000, 'kube-system') })
  assert.match(
    self.verdict(mine).note ?? '',
    /waits until it is gone \(the Karpenter controller lifts its finalizers\)/,
  )
  await self.apply(n.env, mine)
  assert.deepEqual(n.writes, [`DELETE ${PATH}`])
  assert.deepEqual(n.sleeps, [2000, 2000])
  assert.deepEqual(progress, [
    'NodePool default: waiting for it to go (finalizers karpenter.k8s.aws/termination)',
    'NodePool default: waiting for it to go (finalizers karpenter.k8s.aws/termination)',
  ])
  const stuck = nodeClass(async () => held)
  stuck.env.sleep = () => new Promise((resolve) => setTimeout(resolve, 5))
  await assert.rejects(
    obj({ waitSelf: karpenterLifts(1, 'kube-system') }).apply(stuck.env, held),
    /^Error: NodePool default still there after 0 s \(finalizers karpenter\.k8s\.aws\/termination\): the Karpenter controller lifts them once it has cleaned up; check that it runs \(`kubectl -n kube-system get deployment karpenter`\), then run the same command again to keep waiting$/,
  )
  assert.deepEqual(stuck.writes, [], 'already being deleted: no second DELETE')
})

test('IAM role: gone; kept untouched without marks or records; a role with records gets them back', () => {
  const r = iamRoleAbsent({ address: 'iam-role.remove', name: 'R', ownership: OWN, dependsOn: ['z'] })
  assert.equal(r.kind, 'IAM role')
  assert.equal(r.group, 'IAM')
  assert.deepEqual(r.desired, { absent: true })
  assert.deepEqual(r.permissions, [])
  const base = {
    trust: { Version: '2012-10-17', Statement: [] },
    attached: [] as string[],
    attachedArns: [] as string[],
    inline: {},
    inlineNames: [] as string[],
    profiles: [] as string[],
    tags: { team: 'x' } as Record<string, string>,
  }
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'already gone' })
  assert.deepEqual(r.verdict(base), {
    action: 'unchanged',
    changes: [],
    note: 'kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`)',
  })
  assert.equal(r.verdict({ ...base, owner: 'kept: stack S owns it' }).note, 'kept: stack S owns it')
  const noted = iamRoleAbsent({
    address: 'a',
    name: 'R',
    ownership: OWN,
    dependsOn: [],
    keptNote: 'kept: eksctl',
  })
  assert.equal(noted.verdict({ ...base, owner: 'kept: stack S owns it' }).note, 'kept: eksctl')
  assert.deepEqual(r.verdict({ ...base, tags: { ...base.tags, [ADOPTED_BY]: 'demo' } }), {
    action: 'update',
    changes: [{ field: `tags.${ADOPTED_BY}`, from: 'demo' }],
    note: "kept: karpctl did not make it (no karpctl.io/managed-by tag); remove it with the tool that made it (e.g. `terraform destroy`); karpctl's recorded changes given back",
  })
  assert.deepEqual(
    r.verdict({
      ...base,
      tags: { ...OWN },
      profiles: ['P'],
      attachedArns: ['arn:aws:iam::aws:policy/A'],
      inlineNames: ['I'],
    }),
    {
      action: 'delete',
      changes: [
        { field: 'in instance profile', from: 'P' },
        { field: 'attached policy', from: 'A' },
        { field: 'inline policy', from: 'I' },
      ],
    },
  )
})

test("IAM role give-back: each recorded change named, then undone (policies, statements, records), all in IAM; karpctl's role emptied then deleted", async () => {
  const r = iamRoleAbsent({ address: 'iam-role.remove', name: 'R', ownership: OWN, dependsOn: [] })
  const adopted = {
    trust: {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow' as const, Action: 'own' },
        { Sid: 'KarpctlAdopted0', Effect: 'Allow' as const, Action: 'added' },
      ],
    },
    attached: ['arn:aws:iam::aws:policy/A', 'arn:aws:iam::aws:policy/Own'],
    attachedArns: ['arn:aws:iam::aws:policy/A', 'arn:aws:iam::aws:policy/Own'],
    inline: { P: { Version: '2012-10-17', Statement: [] }, Mine: { Version: '2012-10-17', Statement: [] } },
    inlineNames: ['P', 'Mine'],
    profiles: [],
    tags: {
      team: 'x',
      [ADOPTED_BY]: 'demo',
      'karpctl.io/attached-policies': 'A',
      'karpctl.io/added-inline-policies': 'P',
    },
  }
  assert.deepEqual(r.verdict(adopted).changes, [
    { field: 'inline policy (added by karpctl)', from: 'P' },
    { field: 'attached policy (by karpctl)', from: 'A' },
    // Only the statement karpctl added goes; the role's own stays (no change shown for it).
    {
      field: 'trust.Statement.KarpctlAdopted0',
      from: { Sid: 'KarpctlAdopted0', Effect: 'Allow', Action: 'added' },
      to: undefined,
    },
    { field: `tags.${ADOPTED_BY}`, from: 'demo' },
    { field: 'tags.karpctl.io/attached-policies', from: 'A' },
    { field: 'tags.karpctl.io/added-inline-policies', from: 'P' },
  ])
  const writes: string[] = []
  const env = {
    aws: {
      write: async (service: string, op: string, input: unknown) => {
        writes.push(`${service}:${op}:${JSON.stringify(input)}`)
        return {}
      },
    },
  } as unknown as ApplyEnv
  await r.apply(env, adopted)
  assert.deepEqual(writes, [
    `iam:DeleteRolePolicy:${JSON.stringify({ RoleName: 'R', PolicyName: 'P' })}`,
    `iam:DetachRolePolicy:${JSON.stringify({ RoleName: 'R', PolicyArn: 'arn:aws:iam::aws:policy/A' })}`,
    `iam:UpdateAssumeRolePolicy:${JSON.stringify({
      RoleName: 'R',
      PolicyDocument: JSON.stringify({ ...adopted.trust, Statement: [adopted.trust.Statement[0]] }),
    })}`,
    `iam:UntagRole:${JSON.stringify({
      RoleName: 'R',
      TagKeys: [ADOPTED_BY, 'karpctl.io/attached-policies', 'karpctl.io/added-inline-policies'],
    })}`,
  ])
  writes.length = 0
  await r.apply(env, null)
  assert.equal(writes.length, 0)
  await r.apply(env, { ...adopted, tags: { ...OWN }, profiles: ['IP'] })
  assert.deepEqual(
    writes.map((w) => w.split(':').slice(0, 2).join(':')),
    [
      'iam:RemoveRoleFromInstanceProfile',
      'iam:DetachRolePolicy',
      'iam:DetachRolePolicy',
      'iam:DeleteRolePolicy',
      'iam:DeleteRolePolicy',
      'iam:DeleteRole',
    ],
  )
  assert.equal(
    writes[0],
    `iam:RemoveRoleFromInstanceProfile:${JSON.stringify({ InstanceProfileName: 'IP', RoleName: 'R' })}`,
  )
  assert.equal(writes[5], `iam:DeleteRole:${JSON.stringify({ RoleName: 'R' })}`)
})

test("aws-auth entry: kept unread, kept when not karpctl's, its stale record dropped, deleted when recorded; apply rewrites only karpctl's entry", async () => {
  const AWS_AUTH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'
  const ROLE = 'arn:aws:iam::1:role/KarpenterNodeRole-demo'
  const OTHER = 'arn:aws:iam::1:role/Other'
  const r = awsAuthEntryAbsent({ roleArn: ROLE, dependsOn: ['q'] })
  assert.equal(r.address, 'aws-auth.remove')
  assert.equal(r.kind, 'aws-auth mapping')
  assert.equal(r.name, ROLE)
  assert.equal(r.group, 'Cluster access')
  assert.deepEqual(r.desired, { absent: true })
  assert.deepEqual(r.permissions, [])
  const entry = (arn: string) =>
    `- rolearn: ${arn}\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n  - system:nodes\n`
  const cm = (roles: string[], added?: string[]) => ({
    metadata: added ? { annotations: { [ADDED_MAP_ROLES]: JSON.stringify(added), keep: 'me' } } : {},
    data: { mapRoles: roles.map(entry).join(''), other: 'x' },
  })
  const unreadable = r.verdict({ metadata: {}, data: { mapRoles: '- [unclosed' } })
  assert.equal(unreadable.action, 'unchanged')
  assert.match(
    unreadable.note ?? '',
    /^kept: aws-auth mapRoles .*, so karpctl cannot read it; if it maps this role for karpctl/,
  )
  assert.deepEqual(unreadable.changes, [])
  assert.deepEqual(r.verdict(cm([OTHER])), { action: 'unchanged', changes: [], note: 'already gone' })
  assert.deepEqual(r.verdict(null), { action: 'unchanged', changes: [], note: 'already gone' })
  assert.deepEqual(r.verdict(cm([OTHER], [ROLE])), {
    action: 'update',
    changes: [{ field: ADDED_MAP_ROLES, from: ROLE }],
    note: 'the mapping is already gone; its record goes',
  })
  assert.deepEqual(r.verdict(cm([OTHER, ROLE], [OTHER])), {
    action: 'unchanged',
    changes: [],
    note: `kept: not in ${ADDED_MAP_ROLES}, so karpctl did not add it`,
  })
  assert.deepEqual(r.verdict(cm([OTHER, ROLE], [ROLE])), { action: 'delete', changes: [] })

  const apply = async (live: unknown) => {
    const env = recordingEnv({ kube: { [AWS_AUTH]: live } })
    await r.apply(env.env, null)
    return env.kubeWrites
  }
  assert.deepEqual(await apply(null), [])
  assert.deepEqual(await apply(cm([OTHER, ROLE], [OTHER])), [])
  assert.deepEqual(await apply(cm([OTHER, ROLE], [ROLE, OTHER])), [
    {
      method: 'PUT',
      path: AWS_AUTH,
      body: {
        metadata: { annotations: { [ADDED_MAP_ROLES]: JSON.stringify([OTHER]), keep: 'me' } },
        data: { mapRoles: entry(OTHER), other: 'x' },
      },
    },
  ])
  // The last record goes with its entry; an entry already gone leaves the data as it is.
  assert.deepEqual(await apply(cm([OTHER], [ROLE])), [
    {
      method: 'PUT',
      path: AWS_AUTH,
      body: { metadata: { annotations: { keep: 'me' } }, data: cm([OTHER]).data },
    },
  ])
})
