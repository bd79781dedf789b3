// Helm releases on teardown: uninstalled, rolled back, stripped of karpctl's labels or kept, and a
// release holding CRDs that existed before karpctl forgotten rather than uninstalled.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RELEASE_SELECTOR } from '../../../../src/facts/collect-kube.js'
import {
  CRD_ADOPTED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
} from '../../../../src/plan/resources/crd-handover.js'
import { ADOPTED_FROM_REVISION, UPGRADED_TO } from '../../../../src/plan/resources/helm-release.js'
import { helmReleaseAbsent } from '../../../../src/plan/resources/helm-release-absent.js'
import { ADOPTED_BY } from '../../../../src/desired/ownership.js'
import { helmReleaseSecret } from '../../../helpers/mock-cluster.js'
import { GONE, env, run } from '../../../helpers/teardown-env.js'

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

test('release with a handover to look for but no CRDs listed: none handed, uninstalled', async () => {
  const h = helmLog()
  const e = env({ kube: { [SECRETS]: releaseList({ 'karpctl.io/managed-by': 'karpctl' }) }, helm: h.helm })
  const { cur } = await run(releaseAbsent('demo'), e.env)
  assert.deepEqual(cur?.handed, [])
  assert.deepEqual(e.kubeReads, [SECRETS, CRDS])
  assert.deepEqual(h.calls, [['uninstall', 'karpenter', 'kube-system']])
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
