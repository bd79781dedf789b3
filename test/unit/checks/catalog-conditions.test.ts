// The doctor catalog, pinned whole (issue 12, item 8: mutation testing): every check, once, in the
// order the report lists them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'

test('the catalog lists the twenty-one checks in report order', () => {
  assert.deepEqual(
    catalog.map((c) => c.meta.id),
    [
      'sg-webhook-8443',
      'discovery-tags',
      'irsa-trust-policy',
      'passrole-node-role',
      'sts-regional-annotation',
      'toleration-value-types',
      'pod-identity',
      'controller-policy',
      'node-role',
      'ebs-kms-key',
      'spot-service-linked-role',
      'interruption-queue',
      'interruption-rules',
      'karpenter-version',
      'helm-release',
      'crd-conversion-webhook',
      'controller-ready',
      'nodeclass-ready',
      'cluster-autoscaler',
      'tenant-isolation',
      'helm-registry-auth',
    ],
  )
})
