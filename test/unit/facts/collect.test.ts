// The pure steps of collect: which identity the controller has (IRSA annotation, else its
// ServiceAccount's Pod Identity association), how the roles read are keyed, and the notes a run makes
// about its Kubernetes endpoint.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerIdentityOf, rolesOf, runNotes } from '../../../src/facts/collect.js'
import type { HelmRelease, Read, RoleFacts, ServiceAccount } from '../../../src/facts/types.js'

const IRSA = 'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo'
const POD_ID = 'arn:aws:iam::123456789012:role/KarpenterPodIdentity-demo'

const release = (o: Partial<HelmRelease> = {}): HelmRelease => ({
  name: 'karpenter',
  namespace: 'kube-system',
  revision: 1,
  status: 'deployed',
  chartName: 'karpenter',
  chartVersion: '1.0.0',
  values: {},
  computedValues: {},
  ...o,
})
const sa = (name: string, annotations: Record<string, string> = {}) =>
  ({ metadata: { name, namespace: 'kube-system', annotations } }) as ServiceAccount
const assoc = (serviceAccount: string, namespace = 'kube-system') => ({
  ok: true as const,
  value: [{ associationId: 'a-1', namespace, serviceAccount, roleArn: POD_ID }],
})

test('controller identity: the live ServiceAccount annotation, else the one the release renders from values', () => {
  const live = sa('karpenter', { 'eks.amazonaws.com/role-arn': IRSA })
  assert.deepEqual(controllerIdentityOf(release(), live, assoc('karpenter')), { identity: 'irsa', arn: IRSA })
  const fromValues = release({
    computedValues: { serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': `${IRSA}-v` } } },
  })
  assert.deepEqual(controllerIdentityOf(fromValues, null, undefined), { identity: 'irsa', arn: `${IRSA}-v` })
  // An empty annotation in the values is none.
  const empty = release({
    computedValues: { serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': '' } } },
  })
  assert.deepEqual(controllerIdentityOf(empty, null, undefined), { identity: 'none' })
})

test("controller identity: without an annotation, the association of the controller's ServiceAccount in its namespace", () => {
  assert.deepEqual(controllerIdentityOf(release(), sa('karpenter'), assoc('karpenter')), {
    identity: 'pod-identity',
    arn: POD_ID,
  })
  // Another ServiceAccount's, or the same name in another namespace, is not the controller's.
  assert.deepEqual(controllerIdentityOf(release(), sa('karpenter'), assoc('other')), { identity: 'none' })
  assert.deepEqual(controllerIdentityOf(release(), sa('karpenter'), assoc('karpenter', 'default')), {
    identity: 'none',
  })
  // No live ServiceAccount: the rendered one's name, else the release's.
  const rendered = release({ renderedServiceAccount: { name: 'kp-sa', annotations: {} } })
  assert.equal(controllerIdentityOf(rendered, null, assoc('kp-sa')).identity, 'pod-identity')
  assert.equal(controllerIdentityOf(release(), null, assoc('karpenter')).identity, 'pod-identity')
})

test('controller identity: no release, an association read that failed, one without a role: none', () => {
  assert.deepEqual(controllerIdentityOf(null, null, assoc('karpenter')), { identity: 'none' })
  const failed = {
    ok: false as const,
    error: {
      code: 'AccessDenied',
      kind: 'denied' as const,
      message: 'no',
      read: 'eks:ListPodIdentityAssociations',
    },
  }
  assert.deepEqual(controllerIdentityOf(release(), null, failed), { identity: 'none' })
  const noRole = {
    ok: true as const,
    value: [{ associationId: 'a', namespace: 'kube-system', serviceAccount: 'karpenter' }],
  }
  assert.deepEqual(controllerIdentityOf(release(), null, noRole), { identity: 'none' })
})

const role = (arn: string): Read<RoleFacts | null> => ({ ok: true, value: { role: { arn } } as RoleFacts })

test('roles: node roles, the controller role over a node role of its name, the CNI role only where none is', () => {
  const roles = rolesOf(
    [
      ['node', role('node')],
      ['shared', role('as node')],
    ],
    ['shared', role('as controller')],
    ['node', role('as cni')],
  )
  assert.deepEqual(
    Object.fromEntries(Object.entries(roles).map(([k, v]) => [k, v.ok && v.value?.role.arn])),
    { node: 'node', shared: 'as controller' },
  )
  const cni = rolesOf([], null, ['aws-node', role('cni')])
  assert.deepEqual(Object.keys(cni), ['aws-node'])
  assert.deepEqual(rolesOf([], null, null), {})
})

const at = { server: 'https://ABC.gr7.us-west-2.eks.amazonaws.com/', context: 'ctx', clusterName: 'demo' }
const answered = { ok: true as const, value: null }

test('notes: an API server that did not answer says every Kubernetes check is unknown; other failures say nothing', () => {
  const down = {
    ok: false as const,
    error: { code: 'ECONNREFUSED', kind: 'network' as const, message: 'refused', read: 'kube' },
  }
  const notes = runNotes(at, down, undefined)
  assert.equal(notes.length, 1)
  assert.match(
    notes[0] ?? '',
    /^the Kubernetes API at https:\/\/ABC\S+ did not answer \(ECONNREFUSED\): every check/,
  )
  assert.deepEqual(runNotes(at, { ...down, error: { ...down.error, kind: 'denied' } }, undefined), [])
})

test("notes: a kube context whose server is not the cluster's endpoint is named; case and a trailing slash do not count", () => {
  assert.deepEqual(runNotes(at, answered, 'https://abc.gr7.us-west-2.eks.amazonaws.com'), [])
  const other = runNotes(at, answered, 'https://other.eks.amazonaws.com')
  assert.deepEqual(other, [
    `kube context "ctx" points at ${at.server}, not at EKS cluster demo (https://other.eks.amazonaws.com): Kubernetes facts may be of another cluster; pass --kube-context`,
  ])
  assert.deepEqual(runNotes(at, answered, undefined), [])
})
