// The CRDs' conversion webhooks and the Services they name, as collected for crd-conversion-webhook:
// each Service read once, a missing one null, a CRD without a webhook carries no `conversion`.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../../src/context/kube.js'
import { conversionServices, crds } from '../../../src/facts/collect-kube.js'

const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/'
const spec = (conversion?: unknown) => ({
  group: 'karpenter.sh',
  versions: [{ name: 'v1', served: true, storage: true }],
  ...(conversion ? { conversion } : {}),
})
const webhook = {
  strategy: 'Webhook',
  webhook: { clientConfig: { service: { namespace: 'kube-system', name: 'karpenter', port: 8443 } } },
}

test('conversion: the webhook of the 1.0.x CRDs and its Service, read once; none on the others', async () => {
  const reads: string[] = []
  const answers: Record<string, unknown> = {
    [`${CRD}nodepools.karpenter.sh`]: { metadata: { name: 'nodepools.karpenter.sh' }, spec: spec(webhook) },
    [`${CRD}nodeclaims.karpenter.sh`]: { metadata: { name: 'nodeclaims.karpenter.sh' }, spec: spec(webhook) },
    [`${CRD}ec2nodeclasses.karpenter.k8s.aws`]: {
      metadata: { name: 'ec2nodeclasses.karpenter.k8s.aws' },
      spec: spec({ strategy: 'None' }),
    },
    '/api/v1/namespaces/kube-system/services/karpenter': {
      spec: { ports: [{ name: 'http-metrics', port: 8080 }] },
    },
  }
  const kube = {
    get: async (p: string) => (reads.push(p), answers[p] ?? null),
  } as unknown as KubeClient
  const list = await crds(kube)
  const pools = list.find((c) => c.name === 'nodepools.karpenter.sh')
  assert.deepEqual(pools?.conversion, {
    strategy: 'Webhook',
    service: { namespace: 'kube-system', name: 'karpenter', port: 8443 },
  })
  assert.equal(list.find((c) => c.name === 'ec2nodeclasses.karpenter.k8s.aws')?.conversion, undefined)
  reads.length = 0
  assert.deepEqual(await conversionServices(kube, list), {
    'kube-system/karpenter': {
      namespace: 'kube-system',
      name: 'karpenter',
      ports: [{ name: 'http-metrics', port: 8080 }],
    },
  })
  assert.deepEqual(reads, ['/api/v1/namespaces/kube-system/services/karpenter'], 'one read for two CRDs')
  answers['/api/v1/namespaces/kube-system/services/karpenter'] = null
  assert.deepEqual(await conversionServices(kube, list), { 'kube-system/karpenter': null })
})
