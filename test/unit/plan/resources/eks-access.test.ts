// The node role's EKS access entry and the controller's Pod Identity association (issue 18): their
// shapes, what they read, each verdict, and the exact writes in order (the pending-restart marker
// before the role change, the restart, then the marker's removal). Each assertion fails when the
// condition it names is changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shapeOf } from '../../../helpers/resource-shape.js'
import type { Aws } from '../../../../src/context/aws.js'
import { accessEntry, podIdentityAssociation } from '../../../../src/plan/resources/eks-access.js'
import { awsError } from '../../../helpers/fake-resource.js'
import { recordingEnv, type RecordingEnv } from '../../../helpers/recording-env.js'

const CLUSTER_ARN = 'arn:aws:eks:us-west-2:123456789012:cluster/demo'
const NODE_ROLE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const ROLE = 'arn:aws:iam::123456789012:role/demo-karpenter'
const OTHER_ROLE = 'arn:aws:iam::123456789012:role/someone-else'
const ASSOC_ARN = 'arn:aws:eks:us-west-2:123456789012:podidentityassociation/demo/a-1'
const OWNED = { 'karpctl.io/cluster': 'demo' }
// Written out, not imported: the marker's key is what a later run and teardown look for.
const PENDING = 'karpctl.io/restart-pending'
const DEPLOYMENT_PATH = '/apis/apps/v1/namespaces/kube-system/deployments/karpenter'
const RESTARTED = {
  method: 'PATCH',
  path: DEPLOYMENT_PATH,
  body: {
    spec: {
      template: {
        metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '1970-01-01T00:00:00.000Z' } },
      },
    },
  },
  contentType: 'application/strategic-merge-patch+json',
}

const entry = () =>
  accessEntry({
    clusterName: 'demo',
    principalArn: NODE_ROLE,
    clusterArn: CLUSTER_ARN,
    tags: { team: 'infra' },
    dependsOn: ['iam-role.node'],
  })

const association = (o: { restart?: boolean; adopt?: boolean } = {}) =>
  podIdentityAssociation({
    clusterName: 'demo',
    clusterArn: CLUSTER_ARN,
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    roleArn: ROLE,
    tags: { team: 'infra' },
    ownership: OWNED,
    adopt: o.adopt ?? false,
    dependsOn: ['iam-role.controller'],
    ...(o.restart ? { restart: { namespace: 'kube-system', name: 'karpenter' } } : {}),
  })

const shape = shapeOf

/** A recording env whose writes answer as `answers` say (the recorder alone answers every write with {}). */
function answering(r: RecordingEnv, answers: Record<string, unknown>): RecordingEnv {
  const aws = r.env.aws
  const record = aws.write.bind(aws)
  r.env.aws = Object.assign(Object.create(aws) as Aws, {
    write: async (service: Parameters<Aws['write']>[0], op: string, input: object) => {
      await record(service, op, input)
      return answers[op] ?? {}
    },
  })
  return r
}

// --- access entry -------------------------------------------------------------------------------

test('access entry shape: an EC2_LINUX entry for the node role, made with CreateAccessEntry and TagResource', () => {
  // Kills: kind, group and permission action literals.
  assert.deepEqual(shape(entry()), {
    address: 'eks-access-entry.node',
    kind: 'EKS access entry',
    name: NODE_ROLE,
    group: 'Cluster access',
    dependsOn: ['iam-role.node'],
    desired: { principalArn: NODE_ROLE, type: 'EC2_LINUX', tags: { team: 'infra' } },
    permissions: [
      { action: 'eks:CreateAccessEntry', resource: CLUSTER_ARN },
      { action: 'eks:TagResource', resource: CLUSTER_ARN },
    ],
  })
})

test("access entry observe: the entry's type, read with DescribeAccessEntry by cluster and principal", async () => {
  const inputs: unknown[] = []
  const r = recordingEnv({
    aws: { DescribeAccessEntry: (i) => (inputs.push(i), { accessEntry: { type: 'STANDARD' } }) },
  })
  assert.deepEqual(await entry().observe(r.env), { type: 'STANDARD' })
  assert.deepEqual(r.awsCalls, [{ service: 'eks', op: 'DescribeAccessEntry' }])
  assert.deepEqual(inputs, [{ clusterName: 'demo', principalArn: NODE_ROLE }])
})

test('access entry observe: an answer without an entry is an entry of no type', async () => {
  // Kills: out.accessEntry?.type -> out.accessEntry.type (a TypeError).
  const r = recordingEnv({ aws: { DescribeAccessEntry: () => ({}) } })
  assert.deepEqual(await entry().observe(r.env), { type: undefined })
})

test('access entry observe: not found is null; any other error is thrown as it is', async () => {
  const missing = recordingEnv({
    aws: {
      DescribeAccessEntry: () => {
        throw awsError('ResourceNotFoundException', 'no entry')
      },
    },
  })
  assert.equal(await entry().observe(missing.env), null)
  const denied = recordingEnv({
    aws: {
      DescribeAccessEntry: () => {
        throw awsError('AccessDeniedException', 'denied')
      },
    },
  })
  await assert.rejects(entry().observe(denied.env), { name: 'AccessDeniedException', message: 'denied' })
})

test('access entry verdict: none is created as EC2_LINUX; EC2_LINUX is unchanged; another type blocks', () => {
  const r = entry()
  assert.deepEqual(r.verdict(null), { action: 'create', changes: [{ field: 'type', to: 'EC2_LINUX' }] })
  assert.deepEqual(r.verdict({ type: 'EC2_LINUX' }), { action: 'unchanged', changes: [] })
  assert.deepEqual(r.verdict({ type: 'STANDARD' }), {
    action: 'update',
    changes: [],
    blocked: `an access entry of type STANDARD exists for it: nodes need EC2_LINUX; delete that entry (\`aws eks delete-access-entry --cluster-name demo --principal-arn ${NODE_ROLE}\`) and run again`,
  })
})

test('access entry apply: none is created with its type and tags; an existing one is never written', async () => {
  const r = recordingEnv()
  await entry().apply(r.env, null)
  assert.deepEqual(r.awsCalls, [{ service: 'eks', op: 'CreateAccessEntry' }])
  assert.deepEqual(r.awsWrites, [
    {
      op: 'CreateAccessEntry',
      input: { clusterName: 'demo', principalArn: NODE_ROLE, type: 'EC2_LINUX', tags: { team: 'infra' } },
    },
  ])
  const kept = recordingEnv()
  await entry().apply(kept.env, { type: 'STANDARD' })
  assert.deepEqual(kept.awsCalls, [])
})

// --- Pod Identity association -------------------------------------------------------------------

test('association shape: one per service account, made and pointed with the Pod Identity calls and PassRole', () => {
  // Kills: kind, name, group and permission action literals.
  assert.deepEqual(shape(association()), {
    address: 'eks-pod-identity.controller',
    kind: 'EKS Pod Identity association',
    name: 'kube-system/karpenter',
    group: 'Controller identity',
    dependsOn: ['iam-role.controller'],
    desired: {
      namespace: 'kube-system',
      serviceAccount: 'karpenter',
      roleArn: ROLE,
      tags: { team: 'infra' },
    },
    permissions: [
      { action: 'eks:CreatePodIdentityAssociation', resource: CLUSTER_ARN },
      { action: 'eks:UpdatePodIdentityAssociation', resource: CLUSTER_ARN },
      { action: 'iam:PassRole', resource: ROLE },
    ],
  })
})

test("association observe: the first listed association's ARN, role and tags, described by its id", async () => {
  const inputs: unknown[] = []
  const r = recordingEnv({
    aws: {
      ListPodIdentityAssociations: (i) => (
        inputs.push(i),
        { associations: [{ associationId: 'a-1' }, { associationId: 'a-2' }] }
      ),
      DescribePodIdentityAssociation: (i) => (
        inputs.push(i),
        { association: { associationArn: ASSOC_ARN, roleArn: ROLE, tags: { [PENDING]: 'true' } } }
      ),
    },
  })
  assert.deepEqual(await association().observe(r.env), {
    associationId: 'a-1',
    associationArn: ASSOC_ARN,
    roleArn: ROLE,
    tags: { [PENDING]: 'true' },
  })
  assert.deepEqual(r.awsCalls, [
    { service: 'eks', op: 'ListPodIdentityAssociations' },
    { service: 'eks', op: 'DescribePodIdentityAssociation' },
  ])
  assert.deepEqual(inputs, [
    { clusterName: 'demo', namespace: 'kube-system', serviceAccount: 'karpenter' },
    { clusterName: 'demo', associationId: 'a-1' },
  ])
})

test('association observe: a description without its association has no ARN, no role and no tags', async () => {
  // Kills: the optional chains on d.association and `tags ?? {}`.
  const r = recordingEnv({
    aws: {
      ListPodIdentityAssociations: () => ({ associations: [{ associationId: 'a-1' }] }),
      DescribePodIdentityAssociation: () => ({}),
    },
  })
  assert.deepEqual(await association().observe(r.env), {
    associationId: 'a-1',
    associationArn: undefined,
    roleArn: undefined,
    tags: {},
  })
})

test('association observe: no list, an empty list or an entry without an id is none, and nothing is described', async () => {
  // Kills: the optional chains on list.associations and first, and `!first?.associationId`.
  for (const listed of [{}, { associations: [] }, { associations: [{ namespace: 'kube-system' }] }]) {
    const r = recordingEnv({ aws: { ListPodIdentityAssociations: () => listed } })
    assert.equal(await association().observe(r.env), null, JSON.stringify(listed))
    assert.deepEqual(r.awsCalls, [{ service: 'eks', op: 'ListPodIdentityAssociations' }])
  }
})

const cur = (roleArn: string, tags: Record<string, string> = OWNED) => ({
  associationId: 'a-1',
  associationArn: ASSOC_ARN,
  roleArn,
  tags,
})
const RESTART_CHANGE = { field: 'restart', to: 'deployment kube-system/karpenter', event: true }

test('association verdict: none is created with its role, and with the restart when one is asked for', () => {
  assert.deepEqual(association().verdict(null), { action: 'create', changes: [{ field: 'role', to: ROLE }] })
  assert.deepEqual(association({ restart: true }).verdict(null), {
    action: 'create',
    changes: [{ field: 'role', to: ROLE }, RESTART_CHANGE],
  })
})

test('association verdict: the right role is unchanged unless a restart is asked for and still pending', () => {
  assert.deepEqual(association().verdict(cur(ROLE)), { action: 'unchanged', changes: [] })
  assert.deepEqual(association().verdict(cur(ROLE, { ...OWNED, [PENDING]: 'true' })), {
    action: 'unchanged',
    changes: [],
  })
  assert.deepEqual(association({ restart: true }).verdict(cur(ROLE)), { action: 'unchanged', changes: [] })
  assert.deepEqual(association({ restart: true }).verdict(cur(ROLE, { [PENDING]: 'true' })), {
    action: 'update',
    changes: [RESTART_CHANGE],
    note: 'a run stopped before the restart',
  })
})

test('association verdict: another role is repointed when karpctl made it or --adopt is given, else it blocks', () => {
  const repoint = { action: 'update', changes: [{ field: 'role', from: OTHER_ROLE, to: ROLE }] }
  assert.deepEqual(association().verdict(cur(OTHER_ROLE)), repoint)
  assert.deepEqual(association({ adopt: true }).verdict(cur(OTHER_ROLE, {})), repoint)
  assert.deepEqual(association().verdict(cur(OTHER_ROLE, {})), {
    action: 'update',
    changes: [],
    blocked: `it grants ${OTHER_ROLE}, and karpctl did not make it: pass --adopt to point it at ${ROLE}`,
  })
})

/** Every call an association apply makes is a write to EKS (the recorder keeps services in awsCalls). */
const allToEks = (r: RecordingEnv) =>
  assert.deepEqual(
    r.awsCalls,
    r.awsWrites.map((w) => ({ service: 'eks', op: w.op })),
  )

const CREATED = {
  op: 'CreatePodIdentityAssociation',
  input: {
    clusterName: 'demo',
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    roleArn: ROLE,
    tags: { team: 'infra' },
  },
}
const UPDATED = {
  op: 'UpdatePodIdentityAssociation',
  input: { clusterName: 'demo', associationId: 'a-1', roleArn: ROLE },
}
const UNTAGGED = { op: 'UntagResource', input: { resourceArn: ASSOC_ARN, tagKeys: [PENDING] } }

test('association apply: none is created with its tags, and nothing is restarted when no restart is asked for', async () => {
  const r = answering(recordingEnv(), {
    CreatePodIdentityAssociation: { association: { associationArn: ASSOC_ARN } },
  })
  await association().apply(r.env, null)
  assert.deepEqual(r.awsWrites, [CREATED])
  assert.deepEqual(r.kubeWrites, [])
  allToEks(r)
})

test('association apply with a restart: created with the pending marker, the Deployment restarted, the marker removed', async () => {
  const r = answering(recordingEnv(), {
    CreatePodIdentityAssociation: { association: { associationArn: ASSOC_ARN } },
  })
  await association({ restart: true }).apply(r.env, null)
  assert.deepEqual(r.awsWrites, [
    { ...CREATED, input: { ...CREATED.input, tags: { team: 'infra', [PENDING]: 'true' } } },
    UNTAGGED,
  ])
  assert.deepEqual(r.kubeWrites, [RESTARTED])
  allToEks(r)
})

test('association apply with a restart: a create answer without an ARN leaves the marker (nothing to untag)', async () => {
  // Kills: out.association?.associationArn -> out.association.associationArn, and `if (associationArn)` -> true.
  const r = recordingEnv()
  await association({ restart: true }).apply(r.env, null)
  assert.deepEqual(
    r.awsWrites.map((w) => w.op),
    ['CreatePodIdentityAssociation'],
  )
  assert.deepEqual(r.kubeWrites, [RESTARTED])
  allToEks(r)
})

test('association apply: another role is repointed with UpdatePodIdentityAssociation alone when no restart is asked for', async () => {
  const r = recordingEnv()
  await association().apply(r.env, cur(OTHER_ROLE))
  assert.deepEqual(r.awsWrites, [UPDATED])
  assert.deepEqual(r.kubeWrites, [])
  allToEks(r)
})

test('association apply with a restart: the marker is tagged before the repoint, then the restart, then the untag', async () => {
  const r = recordingEnv()
  await association({ restart: true }).apply(r.env, cur(OTHER_ROLE))
  assert.deepEqual(r.awsWrites, [
    { op: 'TagResource', input: { resourceArn: ASSOC_ARN, tags: { [PENDING]: 'true' } } },
    UPDATED,
    UNTAGGED,
  ])
  assert.deepEqual(r.kubeWrites, [RESTARTED])
  allToEks(r)
})

test('association apply with a restart: without a known ARN the repoint and restart happen, untagged and unmarked', async () => {
  const r = recordingEnv()
  await association({ restart: true }).apply(r.env, { ...cur(OTHER_ROLE), associationArn: undefined })
  assert.deepEqual(r.awsWrites, [UPDATED])
  assert.deepEqual(r.kubeWrites, [RESTARTED])
  allToEks(r)
})

test('association apply: the right role with no pending marker is not written or restarted', async () => {
  for (const restart of [false, true]) {
    const r = recordingEnv()
    await association({ restart }).apply(r.env, cur(ROLE))
    assert.deepEqual(r.awsWrites, [], `restart: ${restart}`)
    assert.deepEqual(r.kubeWrites, [], `restart: ${restart}`)
  }
  const unasked = recordingEnv()
  await association().apply(unasked.env, cur(ROLE, { [PENDING]: 'true' }))
  assert.deepEqual(unasked.awsWrites, [])
  assert.deepEqual(unasked.kubeWrites, [])
})

test('association apply with a restart: a pending marker on the right role finishes the restart and removes it', async () => {
  const r = recordingEnv()
  await association({ restart: true }).apply(r.env, cur(ROLE, { ...OWNED, [PENDING]: 'true' }))
  assert.deepEqual(r.awsWrites, [UNTAGGED])
  assert.deepEqual(r.kubeWrites, [RESTARTED])
  allToEks(r)
})
