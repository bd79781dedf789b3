import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDED_MAP_ROLES, awsAuthEntry } from '../../../../src/plan/resources/aws-auth.js'
import { mapRoles, withMapRole, withoutMapRole } from '../../../../src/plan/resources/map-roles.js'
import { awsAuthEntryAbsent } from '../../../../src/plan/resources/aws-auth-absent.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const PATH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'

// As eksctl writes it: a nested list at its key's indent, keys in alphabetical order.
const EKSCTL = [
  '- groups:',
  '  - system:bootstrappers',
  '  - system:nodes',
  '  rolearn: arn:aws:iam::123456789012:role/eksctl-demo-nodegroup-ng-1-NodeInstanceRole-1A2B3C',
  '  username: system:node:{{EC2PrivateDNSName}}',
  '- groups:',
  '  - system:masters',
  '  rolearn: arn:aws:iam::123456789012:role/admin',
  '  username: admin',
  '',
].join('\n')

// As the AWS docs show it: nested lists indented, a comment, a blank line, quotes.
const DOCS = [
  '- rolearn: arn:aws:iam::123456789012:role/my-role # the node group',
  '  username: system:node:{{EC2PrivateDNSName}}',
  '  groups:',
  '    - system:bootstrappers',
  '    - system:nodes',
  '',
  "- rolearn: 'arn:aws:iam::123456789012:role/ops'",
  '  username: "ops"',
  '  groups:',
  '    - system:masters',
  '',
].join('\n')

interface ConfigMap {
  metadata: { name: string; namespace: string; annotations?: Record<string, string> }
  data?: Record<string, string>
}

/** The API server's aws-auth: reads answer it, PUT and POST replace it. */
function fakeKube(cm: ConfigMap | null) {
  let stored = cm && structuredClone(cm)
  const read = async (path: string) => {
    assert.equal(path, PATH)
    return structuredClone(stored)
  }
  const kube = {
    get: read,
    fresh: read,
    write: async (method: string, path: string, body: ConfigMap) => {
      assert.ok(
        (method === 'PUT' && path === PATH) ||
          (method === 'POST' && path === '/api/v1/namespaces/kube-system/configmaps'),
        `${method} ${path}`,
      )
      stored = structuredClone(body)
    },
  }
  return { env: { kube } as unknown as ApplyEnv, now: () => stored }
}

const add = awsAuthEntry({
  roleArn: ROLE,
  dependsOn: [],
  managedLabel: ['app.kubernetes.io/managed-by', 'karpctl'],
})
const remove = awsAuthEntryAbsent({ roleArn: ROLE, dependsOn: [] })

const configMap = (mapRoles: string, annotations?: Record<string, string>): ConfigMap => ({
  metadata: { name: 'aws-auth', namespace: 'kube-system', ...(annotations ? { annotations } : {}) },
  data: { mapRoles, mapUsers: '- userarn: arn:aws:iam::123456789012:user/u\n  username: u\n' },
})

for (const [style, text] of [
  ['eksctl', EKSCTL],
  ['AWS docs', DOCS],
] as const)
  test(`${style} mapRoles: an add keeps every other entry's text, and the remove gives back the same bytes`, async () => {
    const k = fakeKube(configMap(text, { other: 'kept' }))
    const plan = add.verdict(await add.observe(k.env))
    assert.equal(plan.action, 'update')
    await add.apply(k.env, null)
    const added = k.now()?.data?.mapRoles ?? ''
    assert.ok(added.startsWith(text), added)
    assert.deepEqual(
      mapRoles(added).map((r) => r.rolearn),
      [...mapRoles(text).map((r) => r.rolearn), ROLE],
    )
    assert.equal(k.now()?.metadata.annotations?.[ADDED_MAP_ROLES], JSON.stringify([ROLE]))

    const fresh = fakeKube(k.now())
    assert.equal(remove.verdict(await remove.observe(fresh.env)).action, 'delete')
    await remove.apply(fresh.env, null)
    assert.equal(fresh.now()?.data?.mapRoles, text)
    assert.equal(fresh.now()?.data?.mapUsers, configMap(text).data?.mapUsers)
    assert.deepEqual(fresh.now()?.metadata.annotations, { other: 'kept' })
  })

test("the added entry is written in the document's own list style", () => {
  assert.match(
    withMapRole(EKSCTL, { rolearn: ROLE, groups: ['a'] }),
    /\n- rolearn: \S+\n {2}groups:\n {2}- a\n$/,
  )
  assert.match(
    withMapRole(DOCS, { rolearn: ROLE, groups: ['a'] }),
    /\n- rolearn: \S+\n {2}groups:\n {4}- a\n$/,
  )
})

test('mapRoles empty or `[]`: the entry is a block list, and its removal leaves it empty', () => {
  for (const before of ['', '[]']) {
    const after = withMapRole(before, { rolearn: ROLE, groups: ['g'] })
    assert.equal(after, `- rolearn: ${ROLE}\n  groups:\n    - g\n`)
    assert.equal(withoutMapRole(after, ROLE), '')
  }
})

test('no aws-auth: created with the entry and the record', async () => {
  const k = fakeKube(null)
  assert.equal(add.verdict(await add.observe(k.env)).action, 'create')
  await add.apply(k.env, null)
  assert.deepEqual(mapRoles(k.now()?.data?.mapRoles), [
    {
      rolearn: ROLE,
      username: 'system:node:{{EC2PrivateDNSName}}',
      groups: ['system:bootstrappers', 'system:nodes'],
    },
  ])
  assert.equal(k.now()?.metadata.annotations?.[ADDED_MAP_ROLES], JSON.stringify([ROLE]))
})

test('an entry karpctl did not add is kept by the remove, byte for byte', async () => {
  const mine = withMapRole(EKSCTL, { rolearn: ROLE, groups: ['system:nodes'] })
  const k = fakeKube(configMap(mine))
  const v = remove.verdict(await remove.observe(k.env))
  assert.equal(v.action, 'unchanged')
  assert.match(v.note ?? '', /karpctl did not add it/)
})

test('mapRoles that is not a YAML list: the add is blocked, the remove keeps it and says so', async () => {
  for (const bad of ['rolearn: x\n', '- rolearn: [unclosed\n']) {
    const k = fakeKube(configMap(bad, { [ADDED_MAP_ROLES]: JSON.stringify([ROLE]) }))
    assert.match(
      add.verdict(await add.observe(k.env)).blocked ?? '',
      /^aws-auth mapRoles is not (a YAML list|valid YAML)/,
    )
    const v = remove.verdict(await remove.observe(k.env))
    assert.equal(v.action, 'unchanged')
    assert.match(v.note ?? '', /^kept: aws-auth mapRoles is not/)
    assert.throws(() => withoutMapRole(bad, ROLE), /fix it by hand/)
  }
})

// --- Exact verdicts and writes (issue 18) ---

const NODE_ENTRY = {
  rolearn: ROLE,
  username: 'system:node:{{EC2PrivateDNSName}}',
  groups: ['system:bootstrappers', 'system:nodes'],
}
const cmAt = (cm: unknown) => recordingEnv({ kube: { [PATH]: cm } })

// Kills: the kind, group, documents and permissions literals emptied or filled.
test('awsAuthEntry: planned as the aws-auth mapping of the role, its entry shown, no AWS permission', () => {
  const r = awsAuthEntry({ roleArn: ROLE, dependsOn: ['iam-role.node'], managedLabel: ['k', 'v'] })
  assert.equal(r.address, 'aws-auth.node')
  assert.equal(r.kind, 'aws-auth mapping')
  assert.equal(r.name, ROLE)
  assert.equal(r.group, 'Cluster access')
  assert.deepEqual(r.dependsOn, ['iam-role.node'])
  assert.deepEqual(r.desired, NODE_ENTRY)
  assert.deepEqual(r.documents, { 'aws-auth mapRoles entry': NODE_ENTRY })
  assert.deepEqual(r.permissions, [])
})

// Kills: the verdicts' action, changes and note literals; `cm?.data?.mapRoles` made `cm?.data.mapRoles`.
test('verdict: no aws-auth is a create, one without the entry (or without data) an update, both exact', () => {
  const change = [{ field: 'mapRoles entry', to: NODE_ENTRY }]
  assert.deepEqual(add.verdict(null), {
    action: 'create',
    changes: change,
    note: 'aws-auth does not exist: karpctl creates it',
  })
  const update = {
    action: 'update',
    changes: change,
    note: 'recorded in the karpctl.io/added-map-roles annotation for teardown',
  }
  assert.deepEqual(add.verdict(configMap(EKSCTL)), update)
  assert.deepEqual(add.verdict({ metadata: { name: 'aws-auth', namespace: 'kube-system' } }), update)
})

test('verdict: mapRoles that is not a list blocks with the kubectl edit to run, and no change', () => {
  assert.deepEqual(add.verdict(configMap('rolearn: x\n')), {
    action: 'update',
    changes: [],
    blocked:
      'aws-auth mapRoles is not a YAML list: karpctl cannot add an entry to it; fix it (`kubectl edit configmap aws-auth -n kube-system`) and run again',
  })
})

// Kills: entryFor/its find made to find nothing, `if (!have)` made `true`, the groups check mutated.
test('verdict: the entry with both node groups is unchanged; one lacking a group (or all) is blocked', () => {
  const withEntry = (groups?: string[]) =>
    configMap(withMapRole(EKSCTL, { rolearn: ROLE, username: 'u', ...(groups ? { groups } : {}) }))
  assert.deepEqual(add.verdict(withEntry(['system:nodes', 'system:bootstrappers', 'x'])), {
    action: 'unchanged',
    changes: [],
  })
  const blocked = (lacking: string) => ({
    action: 'update',
    changes: [],
    blocked: `aws-auth maps it without ${lacking}: nodes could not join; add the groups to that entry (\`kubectl edit configmap aws-auth -n kube-system\`) and run again`,
  })
  assert.deepEqual(add.verdict(withEntry(['system:nodes'])), blocked('system:bootstrappers'))
  assert.deepEqual(add.verdict(withEntry()), blocked('system:bootstrappers, system:nodes'))
})

// Kills: the early return made `false`, `wanted.rolearn ?? ''` made `&&` (the entry not found, written again).
test('apply: an entry already there (added meanwhile) is not written again', async () => {
  const env = cmAt(configMap(withMapRole(EKSCTL, NODE_ENTRY)))
  await add.apply(env.env, null)
  assert.deepEqual(env.kubeWrites, [])
})

// Kills: the POST body's apiVersion, kind, name, namespace and label literals.
test('apply: no aws-auth is created in kube-system, labelled as karpctl-managed, with the record', async () => {
  const env = cmAt(null)
  await add.apply(env.env, null)
  assert.deepEqual(env.kubeWrites, [
    {
      method: 'POST',
      path: '/api/v1/namespaces/kube-system/configmaps',
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'aws-auth',
          namespace: 'kube-system',
          labels: { 'app.kubernetes.io/managed-by': 'karpctl' },
          annotations: { [ADDED_MAP_ROLES]: JSON.stringify([ROLE]) },
        },
        data: { mapRoles: withMapRole('', NODE_ENTRY) },
      },
    },
  ])
})

// Kills: `cm.data?.mapRoles` made `cm.data.mapRoles` (an aws-auth with no data would throw).
test('apply: an aws-auth without data gets a mapRoles with the entry, its other records kept', async () => {
  const env = cmAt({
    metadata: {
      name: 'aws-auth',
      namespace: 'kube-system',
      resourceVersion: '7',
      annotations: { [ADDED_MAP_ROLES]: JSON.stringify(['arn:other']) },
    },
  })
  await add.apply(env.env, null)
  assert.deepEqual(env.kubeWrites, [
    {
      method: 'PUT',
      path: PATH,
      body: {
        metadata: {
          name: 'aws-auth',
          namespace: 'kube-system',
          resourceVersion: '7',
          annotations: { [ADDED_MAP_ROLES]: JSON.stringify(['arn:other', ROLE]) },
        },
        data: { mapRoles: withMapRole(undefined, NODE_ENTRY) },
      },
    },
  ])
})
