// The one Helm repair --fix makes: which findings become value edits, the values it sets (new
// intermediate objects where a path runs through a scalar), and the release it upgrades (chart,
// version, labels, the repair's note) — from the OCI chart or a --chart-dir.
import assert from 'node:assert/strict'
import { parse } from 'yaml'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import type { HelmRelease } from '../../../src/facts/types.js'
import { editedValues, helmRepair, valueTypeEdits } from '../../../src/fix/helm-values.js'
import type { ApplyEnv } from '../../../src/plan/types.js'
import { fixturePath } from '../../helpers/fixtures.js'
import { healthyFacts } from '../../helpers/facts.js'

const releaseOf = (mutate?: (r: HelmRelease) => void): HelmRelease => {
  const f = healthyFacts()
  if (!f.kube.release.ok || !f.kube.release.value) throw new Error('no release')
  mutate?.(f.kube.release.value)
  return f.kube.release.value
}
const finding = (path: string): Finding => ({ status: 'fail', message: path, evidence: { path } })

test('valueTypeEdits: each finding whose path the user values hold, as that path set to the string', () => {
  const r = releaseOf((x) => {
    x.values.tolerations = [{ key: 'a', value: false }]
    x.values.podAnnotations = { 'x.io/n': 3 }
  })
  const [t, other, a] = [
    finding('tolerations[0].value'),
    finding('nodeSelector.zone'),
    finding('podAnnotations.x\\.io/n'),
  ]
  const noEvidence: Finding = { status: 'fail', message: 'none' }
  const edits = valueTypeEdits(r, [t, other, a, noEvidence])
  assert.deepEqual(
    edits.map((e) => [e.path, e.value, e.finding]),
    [
      [['tolerations', 0, 'value'], 'false', t],
      [['podAnnotations', 'x.io/n'], '3', a],
    ],
  )
})

test('editedValues: a path through a scalar or null gets objects; the release values are not changed', () => {
  const r = releaseOf((x) => {
    x.values.a = 'scalar'
    x.values.b = null
    x.values.c = { keep: 1 }
  })
  const before = structuredClone(r.values)
  const edit = (path: (string | number)[], value: unknown) => ({ path, value, finding: finding('x') })
  const out = editedValues(r, [edit(['a', 'x', 'y'], 's'), edit(['b', 'z'], 't'), edit(['c', 'n'], 'u')])
  assert.deepEqual(out, {
    ...before,
    a: { x: { y: 's' } },
    b: { z: 't' },
    c: { keep: 1, n: 'u' },
  })
  assert.deepEqual(r.values, before)
})

const captureHelm = () => {
  const calls: Record<string, unknown>[] = []
  const env = {
    helm: async () => ({
      upgradeInstall: async (a: Record<string, unknown>) => {
        calls.push(a)
      },
    }),
  } as unknown as ApplyEnv
  return { env, calls }
}

test('helmRepair from the OCI chart: the release, its chart version, the edited values, the repaired label', async () => {
  const r = releaseOf((x) => {
    x.values.tolerations = [{ key: 'a', value: true }]
  })
  const edits = valueTypeEdits(r, [finding('tolerations[0].value'), finding('tolerations[0].value')])
  const res = helmRepair(r, edits, {}, 'fix: toleration-value-types')
  assert.equal(res.address, 'helm.karpenter.repair')
  assert.equal(res.group, 'fix: toleration-value-types')
  assert.equal(res.name, 'kube-system/karpenter')
  assert.deepEqual(res.dependsOn, [])
  assert.deepEqual(res.desired, {
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    version: '1.14.1',
    namespace: 'kube-system',
    values: { ...r.values, tolerations: [{ key: 'a', value: 'true' }] },
  })
  const cur = { release: { ...r, values: { ...r.values } }, labels: {} }
  const v = res.verdict(cur as never)
  assert.equal(v.action, 'update')
  assert.equal(
    v.note,
    `sets tolerations[0].value: a new revision (helm rollback undoes it), labelled karpctl.io/repaired`,
  )
  const { env, calls } = captureHelm()
  await res.apply(env, cur as never)
  assert.equal(calls.length, 1)
  const { values, ...call } = calls[0]!
  assert.deepEqual(parse(values as string), { ...r.values, tolerations: [{ key: 'a', value: 'true' }] })
  assert.deepEqual(call, {
    release: 'karpenter',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    version: '1.14.1',
    namespace: 'kube-system',
    labels: { 'karpctl.io/repaired': 'doctor-fix' },
  })
})

test("helmRepair from --chart-dir: the folder's karpenter chart, no version asked of it, checked against the release", async () => {
  const r = releaseOf((x) => {
    x.values.tolerations = [{ key: 'a', value: 1 }]
    x.values.podAnnotations = { n: 2 }
  })
  const edits = valueTypeEdits(r, [finding('tolerations[0].value'), finding('podAnnotations.n')])
  const dir = fixturePath('v1.14.1/charts')
  const res = helmRepair(r, edits, { chartDir: dir }, 'g')
  assert.equal(res.desired.chart, `${dir}/karpenter`)
  assert.equal(res.desired.version, '1.14.1', 'the release runs it')
  const cur = { release: r, labels: {} }
  assert.equal(
    res.verdict(cur as never).note,
    `sets tolerations[0].value, podAnnotations.n: a new revision (helm rollback undoes it), labelled karpctl.io/repaired`,
  )
  const { env, calls } = captureHelm()
  await res.apply(env, cur as never)
  assert.equal(calls[0]!.chart, `${dir}/karpenter`)
  assert.equal(calls[0]!.version, undefined)
  // The folder holds another version than the release runs: blocked, not an upgrade.
  const older = helmRepair(r, edits, { chartDir: fixturePath('v1.0.14/charts') }, 'g')
  assert.match(
    older.verdict(cur as never).blocked ?? '',
    /^--chart-dir holds karpenter 1\.0\.14 but the release runs 1\.14\.1/,
  )
})
