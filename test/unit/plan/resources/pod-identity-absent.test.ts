// The Pod Identity association's teardown: found by cluster, namespace and service account, deleted by
// its id only when karpctl's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { podIdentityAbsent } from '../../../../src/plan/resources/pod-identity-absent.js'
import { OWN, GONE, FOREIGN_NOTE, env, run, type Answer } from '../../../helpers/teardown-env.js'

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

test('empty answers: no association is gone; one without tags; nothing written for none', async () => {
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
