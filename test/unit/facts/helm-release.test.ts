import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  decodeReleaseData,
  encodeReleaseData,
  mergeValues,
  toHelmRelease,
} from '../../../src/facts/helm-release.js'

const raw = {
  name: 'karpenter',
  namespace: 'kube-system',
  version: 3,
  info: { status: 'deployed' },
  chart: {
    metadata: { name: 'karpenter', version: '1.14.1', appVersion: '1.14.1' },
    values: {
      replicas: 2,
      settings: { clusterName: '', batchMaxDuration: '10s' },
      serviceAccount: { create: true, annotations: {} },
    },
  },
  config: {
    settings: { clusterName: 'demo' },
    serviceAccount: { annotations: { 'eks.amazonaws.com/sts-regional-endpoints': true } },
  },
  manifest:
    '---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: karpenter\n  annotations:\n    eks.amazonaws.com/sts-regional-endpoints: true\n---\nkind: Deployment\nmetadata:\n  name: karpenter\n',
}

test('decodes a Helm release secret (base64 of base64 of gzip of JSON) and keeps value types', () => {
  const decoded = decodeReleaseData(encodeReleaseData(raw))
  const release = toHelmRelease(decoded)
  assert.equal(release.chartVersion, '1.14.1')
  assert.equal(release.revision, 3)
  assert.equal(release.computedValues.replicas, 2)
  assert.deepEqual(release.computedValues.settings, { clusterName: 'demo', batchMaxDuration: '10s' })
  assert.equal(release.renderedServiceAccount?.annotations['eks.amazonaws.com/sts-regional-endpoints'], true)
})

test('Helm coalescing: null in user values deletes a default', () => {
  assert.deepEqual(mergeValues({ a: 1, b: { c: 2, d: 3 } }, { b: { d: null, e: 4 } }), {
    a: 1,
    b: { c: 2, e: 4 },
  })
})
