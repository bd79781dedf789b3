// What lib/compat answers, one rule at a time (issue 12, item 8: mutation testing): the Kubernetes
// range of every Karpenter version at each boundary of the table, whether that range was reviewed,
// the support verdict at both ends of a range, the oldest Karpenter for a Kubernetes minor, and the
// parsing and printing of Kubernetes minors.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  formatMinor,
  kubernetesSupport,
  minimumKarpenterFor,
  parseKubernetesMinor,
  supportRange,
} from '../../../../src/checks/lib/compat.js'
import { parseVersion, type KarpenterVersion } from '../../../../src/checks/lib/facts.js'

const v = (s: string) => parseVersion(s) as KarpenterVersion
const k = (s: string) => parseKubernetesMinor(s)!
const range = (s: string) => {
  const r = supportRange(v(s))
  return r ? `${r.entry.since} ${r.entry.minKubernetes}-${r.entry.maxKubernetes}` : null
}

test('every boundary of the table: the entry starts at its own version, not one patch before', () => {
  assert.equal(range('0.20.9'), null)
  assert.equal(range('0.21.0'), '0.21.0 1.21-1.24')
  assert.equal(range('0.24.9'), '0.21.0 1.21-1.24')
  assert.equal(range('0.25.0'), '0.25.0 1.21-1.25')
  assert.equal(range('0.27.9'), '0.25.0 1.21-1.25')
  assert.equal(range('0.28.0'), '0.28.0 1.23-1.27')
  assert.equal(range('0.30.9'), '0.28.0 1.23-1.27')
  assert.equal(range('0.31.0'), '0.31.0 1.23-1.28')
  assert.equal(range('0.33.9'), '0.31.0 1.23-1.28')
  assert.equal(range('0.34.0'), '0.34.0 1.23-1.29')
  assert.equal(range('0.36.9'), '0.34.0 1.23-1.29')
  assert.equal(range('0.37.0'), '0.37.0 1.23-1.30')
  assert.equal(range('0.37.99'), '0.37.0 1.23-1.30')
  assert.equal(range('1.0.0'), '1.0.0 1.25-1.30')
  assert.equal(range('1.0.4'), '1.0.0 1.25-1.30')
  assert.equal(range('1.0.5'), '1.0.5 1.25-1.31')
  assert.equal(range('1.1.9'), '1.0.5 1.25-1.31')
  assert.equal(range('1.2.0'), '1.2.0 1.25-1.32')
  assert.equal(range('1.4.9'), '1.2.0 1.25-1.32')
  assert.equal(range('1.5.0'), '1.5.0 1.25-1.33')
  assert.equal(range('1.6.9'), '1.5.0 1.25-1.33')
  assert.equal(range('1.7.0'), '1.7.0 1.25-1.34')
  assert.equal(range('2.0.0'), '1.7.0 1.25-1.34')
})

test('reviewed: through 1.14 (any patch), not 1.15 or 2.0; every 0.x is reviewed', () => {
  assert.equal(supportRange(v('0.21.0'))?.reviewed, true)
  assert.equal(supportRange(v('1.14.99'))?.reviewed, true)
  assert.equal(supportRange(v('1.15.0'))?.reviewed, false)
  assert.equal(supportRange(v('2.0.0'))?.reviewed, false)
  assert.equal(supportRange(v('2.13.0'))?.reviewed, false)
})

test('support verdict: both ends of the range are supported, one minor past either is not', () => {
  const at = (kube: string) => kubernetesSupport(v('1.2.0'), k(kube))
  assert.equal(at('1.24'), 'too-old')
  assert.equal(at('1.25'), 'supported')
  assert.equal(at('1.32'), 'supported')
  assert.equal(at('1.33'), 'too-new')
  assert.equal(at('0.40'), 'too-old')
  assert.equal(at('2.0'), 'too-new')
  assert.equal(kubernetesSupport(v('0.20.0'), k('1.22')), 'unknown')
})

test('the oldest Karpenter for a Kubernetes minor: the first entry whose range holds it', () => {
  assert.equal(minimumKarpenterFor(k('1.20')), null)
  assert.equal(minimumKarpenterFor(k('1.21')), '0.21.0')
  assert.equal(minimumKarpenterFor(k('1.25')), '0.25.0')
  assert.equal(minimumKarpenterFor(k('1.26')), '0.28.0')
  assert.equal(minimumKarpenterFor(k('1.30')), '0.37.0')
  assert.equal(minimumKarpenterFor(k('1.32')), '1.2.0')
  assert.equal(minimumKarpenterFor(k('1.33')), '1.5.0')
  assert.equal(minimumKarpenterFor(k('1.35')), null)
  assert.equal(minimumKarpenterFor(k('2.21')), null)
})

test('Kubernetes minors: parsed from a server or EKS version, printed as major.minor', () => {
  assert.deepEqual(parseKubernetesMinor('v1.34.1-eks-113cf36'), { major: 1, minor: 34 })
  assert.deepEqual(parseKubernetesMinor('12.3'), { major: 12, minor: 3 })
  assert.equal(parseKubernetesMinor('1'), null)
  assert.equal(parseKubernetesMinor('x1.34'), null)
  assert.equal(parseKubernetesMinor(null), null)
  assert.equal(parseKubernetesMinor(undefined), null)
  assert.equal(formatMinor({ major: 1, minor: 9 }), '1.9')
})
