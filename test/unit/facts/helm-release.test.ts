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

test('the rendered ServiceAccount is found among the other documents, and only a ServiceAccount is taken for it', async () => {
  const { renderedServiceAccount, manifestDocuments } = await import('../../../src/facts/helm-release.js')
  const manifest = [
    '---\n# Source: karpenter/templates/pdb.yaml\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: karpenter\n',
    // A binding names a ServiceAccount in its subjects: mentioned, parsed, not taken.
    '---\nkind: RoleBinding\nmetadata:\n  name: karpenter\nsubjects:\n  - kind: ServiceAccount\n    name: other\n',
    // A block scalar that looks like a ServiceAccount is text of a ConfigMap.
    '---\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  sa.yaml: |\n    kind: ServiceAccount\n    metadata:\n      name: fake\n',
    '--- # the real one\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: karpenter\n  annotations:\n    eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/k"\n    eks.amazonaws.com/sts-regional-endpoints: true\n',
    '---\nkind: Deployment\nmetadata:\n  name: karpenter\n',
  ].join('')
  assert.equal(manifestDocuments(manifest).length, 5)
  assert.deepEqual(renderedServiceAccount(manifest), {
    name: 'karpenter',
    annotations: {
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/k',
      'eks.amazonaws.com/sts-regional-endpoints': true,
    },
  })
  assert.equal(
    renderedServiceAccount(
      manifest.replace(
        /kind: ServiceAccount\nmetadata:\n {2}name: karpenter/,
        'kind: Secret\nmetadata:\n  name: karpenter',
      ),
    ),
    undefined,
  )
})

test('releaseNamed: the newest revision, and the newest deployed one below it (where a stuck one goes back)', async () => {
  const { releaseNamed } = await import('../../../src/facts/collect-kube.js')
  const { helmReleaseSecret } = await import('../../helpers/mock-cluster.js')
  const kubeOf = (items: unknown[]) =>
    ({ get: async () => ({ items }) }) as unknown as Parameters<typeof releaseNamed>[0]
  const stuck = await releaseNamed(
    kubeOf([
      helmReleaseSecret({ revision: 2, status: 'failed' }),
      helmReleaseSecret({ revision: 4, status: 'pending-upgrade' }),
      helmReleaseSecret({ revision: 3, status: 'deployed' }),
    ]),
    'kube-system',
    'karpenter',
  )
  assert.equal(stuck?.release.revision, 4)
  assert.equal(stuck?.release.status, 'pending-upgrade')
  assert.equal(stuck?.lastDeployed, 3)
  const first = await releaseNamed(
    kubeOf([helmReleaseSecret({ revision: 1, status: 'pending-install' })]),
    'kube-system',
    'karpenter',
  )
  assert.equal(first?.lastDeployed, undefined)
})
