import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildPlan } from '../../../../src/plan/plan.js'
import { planJson, renderPlan } from '../../../../src/plan/render.js'
import { kubeObject } from '../../../../src/plan/resources/kube-object.js'
import { createdSettings } from '../../../../src/plan/resources/kube-settings.js'
import type { ApplyEnv } from '../../../../src/plan/types.js'
import { defaultNodeClass, defaultNodePool } from '../../../../src/desired/karpenter.js'
import { spec } from '../../../helpers/install-spec.js'

const OWNER: [string, string] = ['app.kubernetes.io/managed-by', 'karpctl']
const absent = { kube: { get: async () => null } } as unknown as ApplyEnv

test("a created NodePool lists its chosen settings, one line each, its template's spec unwrapped", () => {
  const pool = defaultNodePool(spec({ nodePool: { ...spec().nodePool, cpuLimit: 64 } }))
  assert.deepEqual(
    createdSettings(pool).map((c) => c.field),
    [
      'metadata.labels',
      'spec.template.spec.requirements',
      'spec.template.spec.nodeClassRef',
      'spec.template.spec.expireAfter',
      'spec.limits',
      'spec.disruption',
    ],
  )
  assert.deepEqual(
    createdSettings(pool).find((c) => c.field === 'spec.limits'),
    {
      field: 'spec.limits',
      to: { cpu: '64' },
    },
  )
  // An object without labels or spec: nothing to list but what it has.
  assert.deepEqual(createdSettings({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } }), [])
})

test('install --show-policies: the plan says the NodePool and EC2NodeClass settings and prints their documents', async () => {
  const s = spec()
  const resources = [
    kubeObject({
      address: 'kube.ec2nodeclass.default',
      object: defaultNodeClass(s),
      ownerLabel: OWNER,
      adopt: false,
      dependsOn: [],
    }),
    kubeObject({
      address: 'kube.nodepool.default',
      object: defaultNodePool(s),
      ownerLabel: OWNER,
      adopt: false,
      dependsOn: [],
    }),
  ]
  const plan = await buildPlan('T', resources, absent)
  const text = renderPlan(plan, { color: false })
  assert.match(
    text,
    /\+ create {4}EC2NodeClass default\n {8}metadata\.labels: \{app\.kubernetes\.io\/managed-by: karpctl\}\n {8}spec\.role: KarpenterNodeRole-demo\n {8}spec\.amiSelectorTerms: \[\{alias: al2023@latest\}\]\n/,
  )
  assert.match(text, /\n {8}spec\.subnetSelectorTerms: \[\{tags: \{karpenter\.sh\/discovery: demo\}\}\]\n/)
  assert.match(
    text,
    /\n {8}spec\.template\.spec\.requirements: \[kubernetes\.io\/arch In \[amd64\], kubernetes\.io\/os In \[linux\], karpenter\.sh\/capacity-type In \[on-demand, spot\], karpenter\.k8s\.aws\/instance-category In \[c, m, r\], karpenter\.k8s\.aws\/instance-generation Gt \[2\]\]\n/,
  )
  assert.match(text, /\n {8}spec\.limits: \{cpu: 1000\}\n/)
  assert.match(
    text,
    /\n {8}spec\.disruption: \{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m\}\n/,
  )
  assert.doesNotMatch(text, /"apiVersion"/, 'documents only with --show-policies')
  const shown = renderPlan(plan, { color: false, showDocuments: true })
  assert.match(
    shown,
    /\n {8}NodePool:\n {10}\{\n {12}"apiVersion": "karpenter\.sh\/v1",\n {12}"kind": "NodePool",/,
  )
  assert.match(shown, /\n {8}EC2NodeClass:\n {10}\{\n {12}"apiVersion": "karpenter\.k8s\.aws\/v1",/)
  assert.deepEqual(planJson(plan).steps[1]?.documents, { NodePool: defaultNodePool(s) })
})

const object = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'x', ...(labels ? { labels } : {}) },
  spec,
})

test('a wrapper of only metadata and/or spec is unwrapped; an empty map, a null, a list or another key is a setting as it is', () => {
  // Kills: isMap → true (null/list/string read as maps), `keys.length > 0` → true / >= 0, every → some,
  // `k === 'metadata'` → false / ''.
  assert.deepEqual(
    createdSettings(
      object({
        template: { metadata: { labels: { team: 'a' } }, spec: { expireAfter: '720h' } },
        onlyMeta: { metadata: { labels: { team: 'b' } } },
        mixed: { spec: { a: 1 }, weight: 2 },
        empty: {},
        none: null,
        list: ['spec'],
        text: 'spec',
      }),
    ),
    [
      { field: 'spec.template.metadata.labels', to: { team: 'a' } },
      { field: 'spec.template.spec.expireAfter', to: '720h' },
      { field: 'spec.onlyMeta.metadata.labels', to: { team: 'b' } },
      { field: 'spec.mixed', to: { spec: { a: 1 }, weight: 2 } },
      { field: 'spec.empty', to: {} },
      { field: 'spec.none', to: null },
      { field: 'spec.list', to: ['spec'] },
      { field: 'spec.text', to: 'spec' },
    ],
  )
})

test("a wrapper's part that is not a map (a list, a string, a null) has no settings to list", () => {
  // Kills: the non-map part's [] → ['Stryker was here'], and isMap → true on its list, string or null.
  assert.deepEqual(
    createdSettings(object({ a: { spec: ['x', 'y'] }, b: { spec: 'xy' }, c: { metadata: null } })),
    [],
  )
})

test('empty labels are not listed', () => {
  // Kills: `labels && Object.keys(labels).length` → true.
  assert.deepEqual(createdSettings(object({ weight: 1 }, {})), [{ field: 'spec.weight', to: 1 }])
  assert.deepEqual(createdSettings(object({}, { a: 'b' })), [{ field: 'metadata.labels', to: { a: 'b' } }])
})
