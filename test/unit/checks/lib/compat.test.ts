import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  KARPENTER_K8S_COMPAT,
  kubernetesSupport,
  minimumKarpenterFor,
  parseKubernetesMinor,
  supportRange,
} from '../../../../src/checks/lib/compat.js'
import { parseVersion, type KarpenterVersion } from '../../../../src/checks/lib/facts.js'

const v = (s: string) => parseVersion(s) as KarpenterVersion
const k = (s: string) => parseKubernetesMinor(s)!

test('the table is ordered and every range is well formed', () => {
  for (let i = 1; i < KARPENTER_K8S_COMPAT.length; i++) {
    const [a, b] = [v(KARPENTER_K8S_COMPAT[i - 1]!.since), v(KARPENTER_K8S_COMPAT[i]!.since)]
    assert.ok(
      a.major < b.major ||
        (a.major === b.major && (a.minor < b.minor || (a.minor === b.minor && a.patch < b.patch))),
    )
  }
  for (const e of KARPENTER_K8S_COMPAT) assert.ok(k(e.minKubernetes).minor <= k(e.maxKubernetes).minor)
})

test('documented boundaries', () => {
  assert.equal(supportRange(v('1.0.4'))?.entry.maxKubernetes, '1.30')
  assert.equal(supportRange(v('1.0.5'))?.entry.maxKubernetes, '1.31')
  assert.equal(supportRange(v('1.1.4'))?.entry.maxKubernetes, '1.31')
  assert.equal(supportRange(v('1.4.1'))?.entry.maxKubernetes, '1.32')
  assert.equal(supportRange(v('1.6.3'))?.entry.maxKubernetes, '1.33')
  assert.equal(supportRange(v('1.14.1'))?.entry.maxKubernetes, '1.34')
  assert.equal(supportRange(v('0.20.0')), null)
})

test('support verdicts', () => {
  assert.equal(kubernetesSupport(v('1.14.1'), k('v1.34.1-eks-113cf36')), 'supported')
  assert.equal(kubernetesSupport(v('1.2.0'), k('1.33')), 'too-new')
  assert.equal(kubernetesSupport(v('1.14.1'), k('1.24')), 'too-old')
  assert.equal(supportRange(v('1.14.1'))?.reviewed, true)
  assert.equal(supportRange(v('1.15.0'))?.reviewed, false)
})

test('the oldest Karpenter for a Kubernetes minor', () => {
  assert.equal(minimumKarpenterFor(k('1.31')), '1.0.5')
  assert.equal(minimumKarpenterFor(k('1.34')), '1.7.0')
  assert.equal(minimumKarpenterFor(k('1.40')), null)
})
