// The retired actions are data checked against the reference templates: each is granted by some
// template (else it needs no entry) and dropped by a later one, and the controller version from which
// it is not called is no later than the first template that drops it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { REFERENCE_VERSION_LIST, referencePolicies } from '../../../src/desired/reference-policy.js'
import { RETIRED_ACTIONS, retiredIn } from '../../../src/desired/retired-actions.js'
import { compareVersions } from '../../../src/desired/reference-policy.js'

const params = {
  partition: 'aws',
  region: 'us-west-2',
  accountId: '123456789012',
  clusterName: 'demo',
  nodeRoleArns: ['arn:aws:iam::123456789012:role/n'],
  queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
}
const grants = (version: string, action: string) =>
  referencePolicies(version, params)
    .flatMap((p) => p.document.Statement)
    .some((s) => [s.Action ?? []].flat().includes(action))

test('each retired action is granted by an older template and dropped by a later one', () => {
  for (const r of RETIRED_ACTIONS) {
    const granting = REFERENCE_VERSION_LIST.filter((v) => grants(v, r.action))
    assert.ok(granting.length > 0, `${r.action}: no template grants it`)
    const dropped = REFERENCE_VERSION_LIST.find((v) => !grants(v, r.action))
    assert.ok(dropped, `${r.action}: every template still grants it`)
    assert.ok(compareVersions(r.notCalledFrom, dropped) <= 0, `${r.action} is dropped at ${dropped}`)
    assert.ok(r.sources.length > 0)
  }
})

test('retiredIn: from the version on, case-insensitively; not before, not for an unreadable version', () => {
  assert.equal(retiredIn('ec2:DescribeAvailabilityZones', '1.0.14')?.notCalledFrom, '1.0.0')
  assert.ok(retiredIn('EC2:describeavailabilityzones', '1.14.1'))
  assert.equal(retiredIn('ec2:DescribeAvailabilityZones', '0.37.0'), undefined)
  assert.equal(retiredIn('ec2:DescribeAvailabilityZones', 'latest'), undefined)
  assert.equal(retiredIn('ec2:DescribeInstances', '1.0.14'), undefined)
})
