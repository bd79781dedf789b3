// The CRD handover's conditions, one at a time (issue 18): which CRDs a chart version claims, how a chart
// folder's templates are read, which marks a CRD lacks, whose release it is taken from, and the record
// the patch carries. Each assertion fails when the condition it names is changed.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  CRD_ADOPTED_BY,
  HELM_KEEP,
  HELM_MANAGED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
  REPLACED_MARKS,
  chartCrdNames,
  chartDirCrdNames,
  crdHandover,
  replacedMarks,
  type Crd,
} from '../../../../src/plan/resources/crd-handover.js'
import { recordingEnv } from '../../../helpers/recording-env.js'

const PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'
const BUFFERS = 'capacitybuffers.autoscaling.x-k8s.io'
const V1 = ['nodepools.karpenter.sh', 'nodeclaims.karpenter.sh', 'ec2nodeclasses.karpenter.k8s.aws']

const crd = (name: string, labels?: Record<string, string>, annotations?: Record<string, string>): Crd => ({
  metadata: { name, labels, annotations },
})
const owned = (name: string, release: string, namespace?: string) =>
  crd(
    name,
    { [HELM_MANAGED_BY]: 'Helm' },
    {
      [HELM_RELEASE_NAME]: release,
      ...(namespace === undefined ? {} : { [HELM_RELEASE_NAMESPACE]: namespace }),
    },
  )
const handover = (adopt: boolean, names = V1, namespace = 'kube-system') =>
  crdHandover({ clusterName: 'demo', namespace, names, adopt, dependsOn: ['helm.karpenter-crd-pre'] })

test('chartCrdNames: the capacity buffers from 1.14.0 on, never before, nor for a version that does not parse', () => {
  const v1 = [...V1, 'nodeoverlays.karpenter.sh']
  assert.deepEqual(chartCrdNames('1.14.0'), [...v1, BUFFERS])
  assert.deepEqual(chartCrdNames('v1.15.2'), [...v1, BUFFERS])
  assert.deepEqual(chartCrdNames('1.13.9'), v1)
  assert.deepEqual(chartCrdNames('0.37.0'), v1)
  assert.deepEqual(chartCrdNames('0.14.0'), v1)
  assert.deepEqual(chartCrdNames('2.0.0'), [...v1, BUFFERS])
  assert.deepEqual(chartCrdNames('2.1.0'), [...v1, BUFFERS])
  assert.deepEqual(chartCrdNames('latest'), v1)
})

function chartDir(files: Record<string, string>): { dir: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-crd-'))
  mkdirSync(join(dir, 'templates'))
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, 'templates', f), text)
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) }
}
const crdYaml = (name: string, before = '') =>
  `---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n${before}  name: ${name}\nspec:\n  names:\n    kind: X\n`

test("chartDirCrdNames reads each .yaml template's CRD name (metadata.name, two spaces in), sorted", () => {
  const c = chartDir({
    'a.yaml': crdYaml('zz.example.com'),
    // A deeper `name:` before the metadata's is not the CRD's name.
    'b.yaml': crdYaml('aa.example.com', '  labels:\n    name: nested\n'),
    // Not a .yaml file: not a template.
    'c.yml': crdYaml('yml.example.com'),
    'NOTES.txt': crdYaml('notes.example.com'),
    // Not a CRD: another kind, a kind that only starts like it, a kind nested in another object.
    'd.yaml': 'kind: ConfigMap\nmetadata:\n  name: cm\n',
    'e.yaml': 'kind: CustomResourceDefinitionList\nmetadata:\n  name: list\n',
    'f.yaml': 'kind: List\nitems:\n  kind: CustomResourceDefinition\nmetadata:\n  name: nested-kind\n',
    // A CRD template whose name is not on a line of its own form: no name.
    'g.yaml': 'kind: CustomResourceDefinition\nmetadata:\n  name: {{ .Values.x }} y\n',
  })
  try {
    assert.deepEqual(chartDirCrdNames(c.dir), ['aa.example.com', 'zz.example.com'])
  } finally {
    c.done()
  }
})

test('chartDirCrdNames: a folder whose templates hold no CRD is an input error naming its templates folder', () => {
  const c = chartDir({ 'd.yaml': 'kind: ConfigMap\nmetadata:\n  name: cm\n' })
  try {
    assert.throws(
      () => chartDirCrdNames(c.dir),
      (e: Error & { code?: string }) =>
        e.code === 'INVALID_INPUT' &&
        e.message.startsWith(
          `--chart-dir: "${join(c.dir, 'templates')}" holds no CustomResourceDefinition: `,
        ) &&
        e.message.endsWith('give the folder that holds karpenter-crd/ and karpenter/'),
    )
  } finally {
    c.done()
  }
})

test('replacedMarks: the marks a CRD had, each one null when absent', () => {
  assert.deepEqual(
    replacedMarks(
      crd(
        'x',
        { [HELM_MANAGED_BY]: 'Flux', other: 'o' },
        {
          [HELM_RELEASE_NAME]: 'rel',
          [HELM_RELEASE_NAMESPACE]: 'ns',
          [HELM_KEEP]: 'keep',
          other: 'o',
        },
      ),
    ),
    {
      labels: { [HELM_MANAGED_BY]: 'Flux' },
      annotations: { [HELM_RELEASE_NAME]: 'rel', [HELM_RELEASE_NAMESPACE]: 'ns', [HELM_KEEP]: 'keep' },
    },
  )
  assert.deepEqual(replacedMarks(crd('x', {}, {})), {
    labels: { [HELM_MANAGED_BY]: null },
    annotations: { [HELM_RELEASE_NAME]: null, [HELM_RELEASE_NAMESPACE]: null, [HELM_KEEP]: null },
  })
  assert.equal(CRD_ADOPTED_BY, 'karpctl.io/adopted-by')
  assert.equal(REPLACED_MARKS, 'karpctl.io/replaced-marks')
  assert.equal(HELM_KEEP, 'helm.sh/resource-policy')
})

test('the resource: the karpenter-crd release of the namespace, its CRDs, no AWS permission', () => {
  const r = handover(true, V1, 'karpenter')
  assert.equal(r.address, 'crd-handover.karpenter-crd')
  assert.equal(r.kind, 'CRD ownership')
  assert.equal(r.name, 'karpenter/karpenter-crd')
  assert.equal(r.group, 'Kubernetes')
  assert.deepEqual(r.dependsOn, ['helm.karpenter-crd-pre'])
  assert.deepEqual(r.desired, { release: 'karpenter-crd', namespace: 'karpenter', crds: V1 })
  assert.deepEqual(r.permissions, [])
})

test('observe asks for each CRD by name and keeps those that exist; none is null', async () => {
  const found: Crd = { metadata: { name: 'nodeclaims.karpenter.sh' } }
  const some = recordingEnv({ kube: { [`${PATH}nodeclaims.karpenter.sh`]: found } })
  assert.deepEqual(await handover(true).observe(some.env), { crds: [found] })
  assert.equal(await handover(true).observe(recordingEnv().env), null)
})

test('blocked: the unmarked CRDs and each owning release, every CRD of a release in one clause', () => {
  const cur = {
    crds: [
      crd('nodepools.karpenter.sh'),
      owned('nodeclaims.karpenter.sh', 'karpenter', 'karpenter'),
      owned('ec2nodeclasses.karpenter.k8s.aws', 'karpenter', 'karpenter'),
      owned(BUFFERS, 'ca'),
    ],
  }
  const v = handover(false).verdict(cur)
  assert.deepEqual(v, {
    action: 'update',
    changes: [],
    blocked:
      "nodepools.karpenter.sh exist without Helm's marks for release kube-system/karpenter-crd (the karpenter chart's crds/ folder or kubectl made them), so helm would refuse to install over them; " +
      'nodeclaims.karpenter.sh, ec2nodeclasses.karpenter.k8s.aws belong to Helm release karpenter/karpenter, which must stop managing them once taken: its uninstall would delete them; ' +
      `${BUFFERS} belong to Helm release ?/ca (another tool), which must stop managing them once taken: its uninstall would delete them; ` +
      'pass --adopt to hand them to kube-system/karpenter-crd',
  })
  // Only owned CRDs: no clause about unmarked ones.
  const onlyOwned = handover(false).verdict({
    crds: [owned('nodepools.karpenter.sh', 'karpenter-crd', 'karpenter')],
  })
  assert.match(
    onlyOwned.blocked ?? '',
    /^nodepools.karpenter.sh belong to Helm release karpenter\/karpenter-crd, which/,
  )
})

test('a CRD whose marks name the target release but lacks the label is pending yet taken from nobody', () => {
  const cur = {
    crds: [
      crd(
        'nodepools.karpenter.sh',
        {},
        { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'kube-system' },
      ),
    ],
  }
  const blocked = handover(false).verdict(cur).blocked ?? ''
  assert.match(blocked, /^nodepools.karpenter.sh exist without Helm's marks/)
  assert.doesNotMatch(blocked, /belong to/)
  const v = handover(true).verdict(cur)
  assert.doesNotMatch(v.note ?? '', /taken from/)
  assert.match(
    v.note ?? '',
    /^handed to Helm release kube-system\/karpenter-crd, whose upgrade then takes them over; they existed before karpctl, so they are marked helm.sh\/resource-policy=keep and recorded \(karpctl.io\/replaced-marks\)/,
  )
  // A label with another value is a change from it.
  assert.deepEqual(
    handover(true).verdict({ crds: [owned('nodepools.karpenter.sh', 'karpenter-crd', 'kube-system')] }),
    { action: 'unchanged', changes: [] },
  )
  const flux = crd('nodepools.karpenter.sh', { [HELM_MANAGED_BY]: 'Flux' }, cur.crds[0]!.metadata.annotations)
  assert.deepEqual(handover(true).verdict({ crds: [flux] }).changes, [
    { field: `nodepools.karpenter.sh label ${HELM_MANAGED_BY}`, from: 'Flux', to: 'Helm' },
  ])
})

test('with --adopt each previous owner is named once, in the order met, with all its CRDs', () => {
  const v = handover(true).verdict({
    crds: [
      owned('nodepools.karpenter.sh', 'karpenter', 'kube-system'),
      owned(BUFFERS, 'ca', 'kube-system'),
      owned('nodeclaims.karpenter.sh', 'karpenter', 'kube-system'),
    ],
  })
  const parts = (v.note ?? '').split('; ').slice(2)
  assert.deepEqual(parts, [
    'taken from Helm release kube-system/karpenter, which must stop managing nodepools.karpenter.sh, nodeclaims.karpenter.sh: its uninstall would delete them with every object of their kinds',
    `taken from Helm release kube-system/ca (another tool), which must stop managing ${BUFFERS}: its uninstall would delete them with every object of their kinds`,
  ])
})

test('apply patches only the pending CRDs and keeps the record of an earlier, half-finished run', async () => {
  const first = '{"labels":{"app.kubernetes.io/managed-by":"Flux"}}'
  const half = crd(
    'nodeclaims.karpenter.sh',
    {},
    { [REPLACED_MARKS]: first, [HELM_RELEASE_NAME]: 'karpenter-crd' },
  )
  const done = owned('nodepools.karpenter.sh', 'karpenter-crd', 'kube-system')
  const r = recordingEnv()
  await handover(true).apply(r.env, { crds: [done, half] })
  assert.equal(r.kubeWrites.length, 1)
  assert.equal(r.kubeWrites[0]!.path, `${PATH}nodeclaims.karpenter.sh`)
  const body = r.kubeWrites[0]!.body as { metadata: { annotations: Record<string, string> } }
  assert.equal(body.metadata.annotations[REPLACED_MARKS], first)
  // A CRD without any annotation: its record is made from nothing.
  const bare = recordingEnv()
  await handover(true).apply(bare.env, { crds: [{ metadata: { name: 'nodepools.karpenter.sh' } }] })
  const bareBody = bare.kubeWrites[0]!.body as { metadata: { annotations: Record<string, string> } }
  assert.equal(
    bareBody.metadata.annotations[REPLACED_MARKS],
    JSON.stringify(replacedMarks({ metadata: { name: 'nodepools.karpenter.sh' } })),
  )
  const none = recordingEnv()
  await handover(true).apply(none.env, null)
  assert.deepEqual(none.kubeWrites, [])
})

test('the verdict with no CRD found is unchanged even without --adopt', () => {
  assert.deepEqual(handover(false).verdict({ crds: [] }), { action: 'unchanged', changes: [] })
})
