// An install with no Helm release, read back from the live objects: who applied it (Argo CD's tracking
// annotation or label, Flux's kustomize-controller labels, else plain manifests), the chart version its
// labels or image name, the settings the chart rendered into the controller's environment, and only the
// ServiceAccount annotations a check reads.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { installOf, renderedBy, renderedInstall } from '../../../src/facts/rendered-install.js'
import type { Deployment, ServiceAccount } from '../../../src/facts/types.js'

const deployment = (o: Partial<Deployment> = {}, meta: Partial<Deployment['metadata']> = {}): Deployment => ({
  metadata: { name: 'karpenter', namespace: 'karpenter', ...meta },
  replicas: 2,
  availableReplicas: 2,
  readyReplicas: 2,
  conditions: [],
  serviceAccountName: 'karpenter',
  env: {},
  image: 'public.ecr.aws/karpenter/controller:1.14.1@sha256:0123',
  ...o,
})

test('who applied it: Argo CD by annotation (3.x) or label tracking, Flux by its labels, else manifests', () => {
  const argo = deployment(
    {},
    {
      annotations: {
        'argocd.argoproj.io/tracking-id': 'addons-karpenter:apps/Deployment:karpenter/karpenter',
      },
    },
  )
  assert.deepEqual(renderedBy(argo), { tool: 'argocd', name: 'addons-karpenter' })
  assert.deepEqual(renderedBy(deployment({}, { labels: { 'argocd.argoproj.io/instance': 'karpenter' } })), {
    tool: 'argocd',
    name: 'karpenter',
  })
  const flux = deployment(
    {},
    {
      labels: {
        'kustomize.toolkit.fluxcd.io/name': 'infra',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    },
  )
  assert.deepEqual(renderedBy(flux), { tool: 'flux', name: 'flux-system/infra' })
  // helm template's own labels say Helm rendered it, not who applied it.
  const bare = deployment(
    {},
    { labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/instance': 'karpenter' } },
  )
  assert.deepEqual(renderedBy(bare), { tool: 'manifests' })
})

test('the version: the helm.sh/chart label first, else the image tag, else unknown', () => {
  const labelled = deployment(
    { image: '111122223333.dkr.ecr.us-west-2.amazonaws.com/mirror/karpenter@sha256:abc' },
    { labels: { 'helm.sh/chart': 'karpenter-1.13.2', 'app.kubernetes.io/version': '1.13.2' } },
  )
  const r = renderedInstall(labelled, null)
  assert.equal(r.chartVersion, '1.13.2')
  assert.equal(r.appVersion, '1.13.2')
  assert.equal(renderedInstall(deployment(), null).chartVersion, '1.14.1')
  assert.equal(
    renderedInstall(deployment({ image: 'registry.local/karpenter:latest' }), null).chartVersion,
    'unknown',
  )
  // Another chart's label is not Karpenter's version.
  assert.equal(
    renderedInstall(
      deployment({ image: undefined }, { labels: { 'helm.sh/chart': 'karpenter-crd-1.0.0x' } }),
      null,
    ).chartVersion,
    'unknown',
  )
})

test("the settings: from the controller's environment, typed as the chart's values are", () => {
  const r = renderedInstall(
    deployment({
      env: {
        CLUSTER_NAME: 'demo',
        CLUSTER_ENDPOINT: 'https://ABC.gr7.us-west-2.eks.amazonaws.com',
        INTERRUPTION_QUEUE: 'Karpenter-demo',
        ISOLATED_VPC: 'false',
        VM_MEMORY_OVERHEAD_PERCENT: '0.075',
        FEATURE_GATES: 'SpotToSpotConsolidation=false',
        LOG_LEVEL: 'info',
        DISABLE_WEBHOOK: 'true',
      },
    }),
    null,
  )
  assert.deepEqual(r.computedValues.settings, {
    clusterName: 'demo',
    clusterEndpoint: 'https://ABC.gr7.us-west-2.eks.amazonaws.com',
    interruptionQueue: 'Karpenter-demo',
    isolatedVPC: false,
    vmMemoryOverheadPercent: 0.075,
  })
  // The 1.0.x chart's DISABLE_WEBHOOK is webhook.enabled inverted.
  assert.deepEqual(r.computedValues.webhook, { enabled: false })
  assert.equal(renderedInstall(deployment(), null).computedValues.webhook, undefined)
  assert.deepEqual(r.values, {})
  assert.equal(r.namespace, 'karpenter')
})

test('the ServiceAccount: its name from the pod template, only the annotations a check reads', () => {
  const sa: ServiceAccount = {
    metadata: {
      name: 'karpenter',
      namespace: 'karpenter',
      annotations: {
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/KarpenterController',
        'kubectl.kubernetes.io/last-applied-configuration': '{"secret":"x"}',
      },
    },
  }
  assert.deepEqual(renderedInstall(deployment(), sa).computedValues.serviceAccount, {
    name: 'karpenter',
    annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/KarpenterController' },
  })
})

test('installOf: the Helm release wins; else the rendered install; a failed read is none', () => {
  const rendered = renderedInstall(deployment(), null)
  const release = { ...rendered, renderedBy: undefined, name: 'helm' } as never
  assert.equal(
    installOf({ release: { ok: true, value: release }, rendered: { ok: true, value: rendered } }),
    release,
  )
  assert.equal(
    installOf({ release: { ok: true, value: null }, rendered: { ok: true, value: rendered } }),
    rendered,
  )
  assert.equal(installOf({ release: { ok: true, value: null } }), null)
  const failure = { ok: false as const, error: { read: 'x', kind: 'error' as const, code: 'E', message: '' } }
  assert.equal(installOf({ release: { ok: true, value: null }, rendered: failure }), null)
})
