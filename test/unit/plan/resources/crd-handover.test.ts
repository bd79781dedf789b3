import assert from 'node:assert/strict'
import { test } from 'node:test'
import { handedCrdsRestore } from '../../../../src/plan/resources/crd-handback.js'
import { buildPlan } from '../../../../src/plan/plan.js'
import { renderPlan } from '../../../../src/plan/render.js'
import {
  CRD_ADOPTED_BY,
  HELM_KEEP,
  REPLACED_MARKS,
  chartCrdNames,
  chartDirCrdNames,
  crdHandover,
  HELM_MANAGED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
  type Crd,
} from '../../../../src/plan/resources/crd-handover.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { fixturePath } from '../../../helpers/fixtures.js'

const NAMES = chartCrdNames('1.14.1')
const PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'

const crd = (name: string, labels?: Record<string, string>, annotations?: Record<string, string>): Crd => ({
  metadata: { name, labels, annotations },
})
const helmOwned = (name: string, release: string, namespace: string) =>
  crd(
    name,
    { [HELM_MANAGED_BY]: 'Helm' },
    { [HELM_RELEASE_NAME]: release, [HELM_RELEASE_NAMESPACE]: namespace },
  )
const handover = (adopt: boolean) =>
  crdHandover({ clusterName: 'demo', namespace: 'kube-system', names: NAMES, adopt, dependsOn: [] })

/** An API server holding some CRDs: GETs answer them, a merge patch merges into them. */
function fakeKube(crds: Crd[]) {
  const store = new Map(crds.map((c) => [`${PATH}${c.metadata.name}`, structuredClone(c)]))
  const writes: { method: string; path: string; body: unknown; contentType?: string }[] = []
  const kube = {
    get: async (path: string) => structuredClone(store.get(path) ?? null),
    write: async (
      method: string,
      path: string,
      body: { metadata?: Crd['metadata'] },
      contentType?: string,
    ) => {
      writes.push({ method, path, body, contentType })
      const c = store.get(path)
      if (!c) throw new Error(`404 ${path}`)
      c.metadata.labels = { ...c.metadata.labels, ...body.metadata?.labels }
      c.metadata.annotations = { ...c.metadata.annotations, ...body.metadata?.annotations }
    },
  }
  return { env: { kube } as unknown as ApplyEnv, store, writes }
}

test('the CRD names of a published version are those its karpenter-crd chart holds', () => {
  assert.deepEqual([...NAMES].sort(), chartDirCrdNames(fixturePath('v1.14.1/charts/karpenter-crd')))
  const old = chartDirCrdNames(fixturePath('v1.0.14/charts/karpenter-crd'))
  assert.deepEqual(old, [
    'ec2nodeclasses.karpenter.k8s.aws',
    'nodeclaims.karpenter.sh',
    'nodepools.karpenter.sh',
  ])
  // An older version claims only Karpenter's own groups beyond its chart, never the autoscaling SIG's CRD.
  const claimed = chartCrdNames('1.0.14')
  assert.ok(old.every((n) => claimed.includes(n)))
  assert.deepEqual(
    claimed.filter((n) => !old.includes(n)),
    ['nodeoverlays.karpenter.sh'],
  )
  assert.ok(chartCrdNames('1.13.2').every((n) => !n.endsWith('autoscaling.x-k8s.io')))
  assert.ok(chartCrdNames('2.0.0').includes('capacitybuffers.autoscaling.x-k8s.io'))
})

test('a --chart-dir whose karpenter-crd/ holds no CRD template is one input error', () => {
  assert.throws(
    () => chartDirCrdNames(fixturePath('v1.14.1/charts/karpenter')),
    (e: Error & { code?: string }) =>
      e.code === 'INVALID_INPUT' && /karpenter\/templates" holds no CustomResourceDefinition/.test(e.message),
  )
  assert.throws(() => chartDirCrdNames('/nonexistent/karpenter-crd'), /holds no CustomResourceDefinition/)
})

test('no CRD yet, or every one already the karpenter-crd release of the namespace: unchanged', () => {
  assert.deepEqual(handover(false).verdict(null), { action: 'unchanged', changes: [] })
  const owned = { crds: NAMES.map((n) => helmOwned(n, 'karpenter-crd', 'kube-system')) }
  assert.deepEqual(handover(false).verdict(owned), { action: 'unchanged', changes: [] })
})

test("CRDs from the karpenter chart's crds/ folder: blocked without --adopt, handed over with it", () => {
  const cur = { crds: [crd('nodepools.karpenter.sh'), crd('nodeclaims.karpenter.sh', { team: 'x' })] }
  const blocked = handover(false).verdict(cur)
  assert.equal(blocked.action, 'update')
  assert.match(
    blocked.blocked ?? '',
    /^nodepools.karpenter.sh, nodeclaims.karpenter.sh exist without Helm's marks for release kube-system\/karpenter-crd .*; pass --adopt to hand them to kube-system\/karpenter-crd$/,
  )
  const v = handover(true).verdict(cur)
  assert.equal(v.action, 'update')
  assert.equal(v.blocked, undefined)
  assert.deepEqual(v.changes.slice(0, 3), [
    { field: `nodepools.karpenter.sh label ${HELM_MANAGED_BY}`, from: undefined, to: 'Helm' },
    { field: `nodepools.karpenter.sh annotation ${HELM_RELEASE_NAME}`, from: undefined, to: 'karpenter-crd' },
    {
      field: `nodepools.karpenter.sh annotation ${HELM_RELEASE_NAMESPACE}`,
      from: undefined,
      to: 'kube-system',
    },
  ])
  assert.equal(v.changes.length, 6)
  assert.match(
    v.note ?? '',
    /teardown removes the release and gives them back as they were, with every object of their kinds$/,
  )
})

test('only the marks that differ are changed: karpenter-crd of another namespace, a missing label', () => {
  const cur = {
    crds: [
      helmOwned('nodepools.karpenter.sh', 'karpenter-crd', 'karpenter'),
      crd(
        'nodeclaims.karpenter.sh',
        {},
        { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'kube-system' },
      ),
      helmOwned('ec2nodeclasses.karpenter.k8s.aws', 'karpenter-crd', 'kube-system'),
    ],
  }
  const v = handover(true).verdict(cur)
  assert.deepEqual(v.changes, [
    {
      field: `nodepools.karpenter.sh annotation ${HELM_RELEASE_NAMESPACE}`,
      from: 'karpenter',
      to: 'kube-system',
    },
    { field: `nodeclaims.karpenter.sh label ${HELM_MANAGED_BY}`, from: undefined, to: 'Helm' },
  ])
  assert.match(
    v.note ?? '',
    /taken from Helm release karpenter\/karpenter-crd, which must stop managing nodepools.karpenter.sh/,
  )
  assert.doesNotMatch(v.note ?? '', /another tool/)
})

test("a CRD another tool's Helm release owns: named, blocked without --adopt, taken with a warning with it", () => {
  const cur = {
    crds: [
      helmOwned('capacitybuffers.autoscaling.x-k8s.io', 'cluster-autoscaler', 'kube-system'),
      helmOwned('nodepools.karpenter.sh', 'karpenter-crd', 'kube-system'),
    ],
  }
  assert.match(
    handover(false).verdict(cur).blocked ?? '',
    /^capacitybuffers.autoscaling.x-k8s.io belong to Helm release kube-system\/cluster-autoscaler \(another tool\), .*; pass --adopt/,
  )
  const v = handover(true).verdict(cur)
  assert.deepEqual(
    v.changes.map((c) => c.field),
    [`capacitybuffers.autoscaling.x-k8s.io annotation ${HELM_RELEASE_NAME}`],
  )
  assert.match(
    v.note ?? '',
    /taken from Helm release kube-system\/cluster-autoscaler \(another tool\), which must stop managing capacitybuffers.autoscaling.x-k8s.io: its uninstall would delete them/,
  )
})

test('apply merge-patches the marks Helm checks onto each CRD that lacks them; the re-run changes nothing', async () => {
  const k = fakeKube([
    crd('nodepools.karpenter.sh', { keep: 'me' }, { 'controller-gen.kubebuilder.io/version': 'v0.20.1' }),
    helmOwned('nodeclaims.karpenter.sh', 'karpenter-crd', 'kube-system'),
  ])
  const r = handover(true)
  const cur = await r.observe(k.env)
  assert.deepEqual(
    cur?.crds.map((c) => c.metadata.name),
    ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh'],
  )
  await r.apply(k.env, cur)
  assert.deepEqual(k.writes, [
    {
      method: 'PATCH',
      path: `${PATH}nodepools.karpenter.sh`,
      body: {
        metadata: {
          labels: { [HELM_MANAGED_BY]: 'Helm' },
          annotations: {
            [HELM_RELEASE_NAME]: 'karpenter-crd',
            [HELM_RELEASE_NAMESPACE]: 'kube-system',
            [HELM_KEEP]: 'keep',
            [CRD_ADOPTED_BY]: 'demo',
            [REPLACED_MARKS]: JSON.stringify({
              labels: { [HELM_MANAGED_BY]: null },
              annotations: {
                [HELM_RELEASE_NAME]: null,
                [HELM_RELEASE_NAMESPACE]: null,
                [HELM_KEEP]: null,
              },
            }),
          },
        },
      },
      contentType: 'application/merge-patch+json',
    },
  ])
  assert.deepEqual(k.store.get(`${PATH}nodepools.karpenter.sh`)?.metadata, {
    name: 'nodepools.karpenter.sh',
    labels: { keep: 'me', [HELM_MANAGED_BY]: 'Helm' },
    annotations: {
      'controller-gen.kubebuilder.io/version': 'v0.20.1',
      [HELM_RELEASE_NAME]: 'karpenter-crd',
      [HELM_RELEASE_NAMESPACE]: 'kube-system',
      [HELM_KEEP]: 'keep',
      [CRD_ADOPTED_BY]: 'demo',
      [REPLACED_MARKS]:
        '{"labels":{"app.kubernetes.io/managed-by":null},"annotations":{"meta.helm.sh/release-name":null,"meta.helm.sh/release-namespace":null,"helm.sh/resource-policy":null}}',
    },
  })
  const again = handover(true)
  assert.deepEqual(again.verdict(await again.observe(k.env)), { action: 'unchanged', changes: [] })
})

test('the plan shows each mark as from → to', async () => {
  const k = fakeKube([helmOwned('nodepools.karpenter.sh', 'karpenter', 'kube-system')])
  const text = renderPlan(await buildPlan('T', [handover(true)], k.env), { color: false })
  assert.match(text, /~ update {4}CRD ownership kube-system\/karpenter-crd\n/)
  assert.match(
    text,
    /\n {8}nodepools.karpenter.sh annotation meta.helm.sh\/release-name: karpenter → karpenter-crd\n/,
  )
})

test('teardown gives handed-over CRDs back exactly as they were: marks, keep policy and record removed', async () => {
  const before = crd(
    'nodepools.karpenter.sh',
    { keep: 'me' },
    { 'controller-gen.kubebuilder.io/version': 'v0.20.1' },
  )
  const k = fakeKube([before])
  const r = handover(true)
  await r.apply(k.env, await r.observe(k.env))
  const list = { items: [...k.store.values()] }
  const env = {
    kube: {
      get: async (path: string) => (path.endsWith('/customresourcedefinitions') ? list : null),
      write: (k.env.kube as unknown as { write: (...a: unknown[]) => Promise<void> }).write,
    },
  } as unknown as ApplyEnv
  const back = handedCrdsRestore({ clusterName: 'demo', dependsOn: [] })
  const cur = await back.observe(env)
  assert.equal(back.verdict(cur).action, 'update')
  await back.apply(env, cur)
  // A merge patch's null removes a key: what is left is the CRD as it was before the handover.
  const after = k.store.get(`${PATH}nodepools.karpenter.sh`)!.metadata
  const present = (m?: Record<string, string | null>) =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([, v]) => v !== null))
  assert.deepEqual(
    { labels: present(after.labels), annotations: present(after.annotations) },
    { labels: before.metadata.labels, annotations: before.metadata.annotations },
  )
  // Another cluster's record is not this teardown's to give back.
  const other = handedCrdsRestore({ clusterName: 'other', dependsOn: [] })
  assert.deepEqual(await other.observe(env), [])
})

test('crossing 1.1, the hand-over removes the 1.0.x conversion webhook (Helm adoption keeps it); marks untouched where they are right', async () => {
  // Issue 33: a getting-started 1.0.14 install upgraded to 1.14.1 kept `conversion.strategy: Webhook`
  // to kube-system/karpenter:8443 on the three CRDs its chart's crds/ folder made.
  const webhook = { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 'karpenter' } } } }
  const foreign = { ...crd('nodepools.karpenter.sh'), spec: { conversion: webhook } }
  const ours = {
    ...helmOwned('nodeclaims.karpenter.sh', 'karpenter-crd', 'kube-system'),
    spec: { conversion: webhook },
  }
  const { env, writes } = fakeKube([foreign, ours])
  const r = crdHandover({
    clusterName: 'demo',
    namespace: 'kube-system',
    names: NAMES,
    adopt: true,
    record: false,
    dropConversion: true,
    dependsOn: [],
  })
  const plan = await buildPlan('t', [r], env)
  const v = plan.steps[0]!.verdict
  assert.ok(
    v.changes.some((c) => c.field === 'nodepools.karpenter.sh spec.conversion.strategy' && c.to === 'None'),
  )
  assert.ok(v.changes.some((c) => c.field === 'nodeclaims.karpenter.sh spec.conversion.strategy'))
  assert.match(v.note ?? '', /1\.0\.x conversion webhook removed/)
  await r.apply(env, plan.steps[0]!.current as never)
  const byPath = Object.fromEntries(writes.map((w) => [w.path.slice(PATH.length), w.body]))
  assert.deepEqual((byPath['nodepools.karpenter.sh'] as { spec: unknown }).spec, {
    conversion: { strategy: 'None', webhook: null },
  })
  // Already the release's: only the webhook goes, no keep mark, no record.
  assert.deepEqual(byPath['nodeclaims.karpenter.sh'], {
    spec: { conversion: { strategy: 'None', webhook: null } },
  })
  // Without dropConversion (install, or a target that still has the webhooks) the field is left alone.
  const keep = crdHandover({
    clusterName: 'demo',
    namespace: 'kube-system',
    names: NAMES,
    adopt: true,
    dependsOn: [],
  })
  assert.equal(keep.verdict({ crds: [ours] }).action, 'unchanged')
  // Without adopt, a CRD only losing its webhook is not blocked (nothing to take over).
  const own = crdHandover({
    clusterName: 'demo',
    namespace: 'kube-system',
    names: NAMES,
    adopt: false,
    dropConversion: true,
    dependsOn: [],
  })
  assert.equal(own.verdict({ crds: [ours] }).blocked, undefined)
})
