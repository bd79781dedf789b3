// What lib/facts decides for every check, one rule at a time (issue 12, item 8: mutation testing):
// how a failed read and a skip are raised and worded, dotted value paths, version parsing, which
// release versions run webhooks or are v0.x, the node role an EC2NodeClass names, and shell quoting.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  describeFailure,
  isLegacy,
  need,
  isRendered,
  needHelmRelease,
  needRelease,
  nodeClassRoleName,
  NotCollected,
  parseVersion,
  partitionOf,
  releaseVersion,
  roleNameFromArn,
  setting,
  shellQuote,
  skip,
  Skipped,
  valueAt,
  webhooksEnabled,
} from '../../../../src/checks/lib/facts.js'
import type { EC2NodeClass, Facts, HelmRelease, ReadFailure } from '../../../../src/facts/types.js'
import { nodeClass, setChartVersion } from '../../../helpers/check-fixtures.js'
import { failed, healthyFacts, ok, withoutHelm } from '../../../helpers/facts.js'

const failure = (kind: ReadFailure['kind'], message = 'm'): ReadFailure => ({
  code: 'C',
  kind,
  message,
  read: 'r',
})
const release = (fn?: (f: Facts) => void): HelmRelease => {
  const f = healthyFacts(fn)
  assert.ok(f.kube.release.ok && f.kube.release.value)
  return f.kube.release.value
}
const versions = (chartVersion: string, appVersion: string) =>
  release(setChartVersion(chartVersion, appVersion))
const webhook = (enabled: unknown) => (f: Facts) => {
  if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.computedValues.webhook = { enabled }
}

test('need: the value of a read, or NotCollected carrying the failure', () => {
  assert.equal(need(ok(3)), 3)
  const read = failed<number>('iam:GetRole x')
  assert.throws(
    () => need(read),
    (err: unknown) => {
      assert.ok(err instanceof NotCollected)
      assert.ok(!read.ok)
      assert.equal(err.failure, read.error)
      assert.equal(err.message, 'iam:GetRole x: AccessDenied for iam:GetRole x')
      return true
    },
  )
})

test('skip throws Skipped with the reason', () => {
  assert.throws(
    () => skip('why'),
    (err: unknown) => err instanceof Skipped && err.message === 'why',
  )
})

test('describeFailure words each kind, with the message when there is one', () => {
  assert.equal(describeFailure(failure('denied')), 'could not read r (permission denied: C — m)')
  assert.equal(describeFailure(failure('throttled')), 'could not read r (throttled: C — m)')
  assert.equal(
    describeFailure(failure('unsupported')),
    'could not read r (not supported by this endpoint: C — m)',
  )
  assert.equal(describeFailure(failure('network')), 'could not read r (network error: C — m)')
  assert.equal(describeFailure(failure('error', '')), 'could not read r (error: C)')
})

test('valueAt walks a dotted path and stops at anything that is not an object', () => {
  const values = { a: { b: { c: 1 }, n: null, s: 'x' } }
  assert.equal(valueAt(values, 'a.b.c'), 1)
  assert.deepEqual(valueAt(values, 'a.b'), { c: 1 })
  assert.equal(valueAt(values, 'a.n'), null)
  assert.equal(valueAt(values, 'a.n.c'), undefined)
  assert.equal(valueAt(values, 'a.s.length'), undefined)
  assert.equal(valueAt(values, 'a.missing.c'), undefined)
  assert.equal(valueAt(undefined, 'a'), undefined)
})

test('parseVersion: x.y.z with an optional v, anchored at the start', () => {
  assert.deepEqual(parseVersion('v1.2.3-rc.1'), { raw: 'v1.2.3-rc.1', major: 1, minor: 2, patch: 3 })
  assert.deepEqual(parseVersion('10.20.30'), { raw: '10.20.30', major: 10, minor: 20, patch: 30 })
  assert.equal(parseVersion('1.2'), null)
  assert.equal(parseVersion('x1.2.3'), null)
  assert.equal(parseVersion('vv1.2.3'), null)
  assert.equal(parseVersion(undefined), null)
})

test('needRelease: the release, else the rendered install, a skip without either, unknown when unreadable', () => {
  assert.equal(needRelease(healthyFacts()).name, 'karpenter')
  assert.throws(
    () => needRelease(healthyFacts((f) => (f.kube.release = ok(null)))),
    (err: unknown) =>
      err instanceof Skipped &&
      err.message === 'no Karpenter Helm release and no controller Deployment found in the cluster',
  )
  const viaArgo = healthyFacts(withoutHelm())
  assert.equal(needRelease(viaArgo).namespace, 'kube-system')
  assert.equal(isRendered(needRelease(viaArgo)), true)
  assert.throws(() => needRelease(healthyFacts((f) => (f.kube.release = failed('x')))), NotCollected)
  assert.throws(
    () => needRelease(healthyFacts((f) => ((f.kube.release = ok(null)), (f.kube.rendered = failed('y'))))),
    NotCollected,
  )
})

test('needHelmRelease: a rendered install is skipped, naming who applied it', () => {
  const f = healthyFacts(withoutHelm())
  assert.throws(
    () => needHelmRelease(f),
    (err: unknown) =>
      err instanceof Skipped &&
      err.message ===
        'Karpenter was installed without Helm (Argo CD application "karpenter"): there is no Helm release to judge',
  )
})

test('releaseVersion: the chart version, else the app version', () => {
  assert.equal(releaseVersion(versions('1.2.3', '9.9.9'))?.raw, '1.2.3')
  assert.equal(releaseVersion(versions('main', 'v1.4.0'))?.raw, 'v1.4.0')
  assert.equal(releaseVersion(versions('main', 'latest')), null)
})

test('webhooksEnabled: always on v0.x, on 1.0.x unless disabled, never from 1.1, unreadable or absent', () => {
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('0.37.0')(f), webhook(false)(f)))), true)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('1.0.6')(f), webhook(false)(f)))), false)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('1.0.6')(f), webhook(true)(f)))), true)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('1.0.6')(f), webhook(undefined)(f)))), true)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('1.0.6')(f), webhook('false')(f)))), true)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('1.1.0')(f), webhook(true)(f)))), false)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('2.0.0')(f), webhook(true)(f)))), false)
  assert.equal(webhooksEnabled(release((f) => (setChartVersion('main', 'x')(f), webhook(true)(f)))), false)
  // No install at all (the collector asks before reading the controller's nodes).
  assert.equal(webhooksEnabled(null), false)
})

test('isLegacy: a readable v0.x version only', () => {
  assert.equal(isLegacy(versions('0.37.0', '0.37.0')), true)
  assert.equal(isLegacy(versions('1.0.0', '1.0.0')), false)
  assert.equal(isLegacy(versions('main', 'x')), false)
})

test('setting reads settings.<key> of the computed values', () => {
  assert.equal(setting(release(), 'clusterName'), 'demo')
  assert.equal(setting(release(), 'nothing'), undefined)
})

test('partitionOf: the partition, aws when empty', () => {
  assert.equal(partitionOf(healthyFacts((f) => (f.meta.partition = 'aws-us-gov'))), 'aws-us-gov')
  assert.equal(partitionOf(healthyFacts((f) => (f.meta.partition = ''))), 'aws')
})

test('roleNameFromArn: what follows the last slash', () => {
  assert.equal(roleNameFromArn('arn:aws:iam::1:role/a/b/Name'), 'Name')
  assert.equal(roleNameFromArn('Name'), 'Name')
})

test('nodeClassRoleName: spec.role (name or ARN), else the instance profile’s first role', () => {
  const roleOf = (spec: Partial<EC2NodeClass['spec']>, fn?: (f: Facts) => void) => {
    const f = healthyFacts(fn)
    const nc = nodeClass(f)
    nc.spec = { ...nc.spec, role: undefined, ...spec }
    return nodeClassRoleName(f, nc)
  }
  assert.equal(roleOf({ role: 'Nodes' }), 'Nodes')
  assert.equal(roleOf({ role: 'arn:aws:iam::1:role/path/Nodes' }), 'Nodes')
  assert.equal(roleOf({ role: 'path/Nodes' }), 'path/Nodes')
  const profiles = (f: Facts) => {
    f.iam.instanceProfiles = {
      ip: ok({ name: 'ip', arn: 'arn:aws:iam::1:instance-profile/ip', roles: ['First', 'Second'] }),
      gone: ok(null),
      denied: failed('iam:GetInstanceProfile denied'),
    }
  }
  assert.equal(roleOf({ instanceProfile: 'ip' }, profiles), 'First')
  assert.equal(roleOf({ instanceProfile: 'gone' }, profiles), undefined)
  assert.equal(roleOf({ instanceProfile: 'denied' }, profiles), undefined)
  assert.equal(roleOf({ instanceProfile: 'unread' }, profiles), undefined)
  assert.equal(roleOf({}, profiles), undefined)
})

test('shellQuote: safe words as they are, anything else single-quoted with quotes escaped', () => {
  assert.equal(shellQuote('a-Z_0@%+=:,./b'), 'a-Z_0@%+=:,./b')
  assert.equal(shellQuote('two words'), `'two words'`)
  assert.equal(shellQuote("it's"), `'it'\\''s'`)
  assert.equal(shellQuote("a'b'c"), `'a'\\''b'\\''c'`)
  assert.equal(shellQuote(''), `''`)
  assert.equal(shellQuote('x\ny'), `'x\ny'`)
  assert.equal(shellQuote('$x'), `'$x'`)
})
