import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parse } from 'yaml'
import { referenceData } from '../../../scripts/reference-policies.js'
import {
  REFERENCE_STATEMENTS,
  REFERENCE_VERSIONS,
} from '../../../src/desired/reference-policies.generated.js'
import {
  compareVersions,
  NEWEST_REFERENCE,
  REFERENCE_VERSION_LIST,
  referenceDelta,
  referenceFor,
  referenceNodePolicies,
  referencePolicies,
  referenceRules,
} from '../../../src/desired/reference-policy.js'
import { fixturePath } from '../../helpers/fixtures.js'

const params = {
  partition: 'aws',
  region: 'eu-west-1',
  accountId: '210987654321',
  clusterName: 'blue',
  nodeRoleArns: ['arn:aws:iam::210987654321:role/KarpenterNodeRole-blue'],
  queueArn: 'arn:aws:sqs:eu-west-1:210987654321:blue',
}

const customTags = ['Sub', 'GetAtt', 'Ref'].map((t) => ({ tag: `!${t}`, resolve: (s: string) => s }))
const fill = (text: string) =>
  text
    .replaceAll('${AWS::Partition}', params.partition)
    .replaceAll('${AWS::Region}', params.region)
    .replaceAll('${AWS::AccountId}', params.accountId)
    .replaceAll('${ClusterName}', params.clusterName)
    .replaceAll('${KarpenterNodeRole.Arn}', params.nodeRoleArns[0]!)
    .replaceAll('${KarpenterInterruptionQueue.Arn}', params.queueArn)

test('the generated reference data is what the fixture templates give (regenerate with scripts/reference-policies.ts)', () => {
  // The file's text is checked by `npm run lint` (scripts/reference-policies.ts --check); here its data.
  assert.deepEqual(referenceData(), { statements: REFERENCE_STATEMENTS, versions: REFERENCE_VERSIONS })
})

test('every template in the fixtures is held, oldest first, and each version equals its own template', () => {
  const files = readdirSync(fixturePath('policies')).filter((f) => f.endsWith('.yaml'))
  assert.equal(REFERENCE_VERSION_LIST.length, files.length)
  assert.deepEqual([...REFERENCE_VERSION_LIST].sort(compareVersions), REFERENCE_VERSION_LIST)
  for (const version of REFERENCE_VERSION_LIST) {
    const template = parse(readFileSync(fixturePath(`policies/cloudformation-v${version}.yaml`), 'utf8'), {
      customTags,
    }) as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> }
    const managed = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::IAM::ManagedPolicy')
    const ours = referencePolicies(version, params)
    assert.deepEqual(
      ours.map((p) => p.key),
      managed.map(([k]) => k),
      version,
    )
    for (const [key, r] of managed) {
      const mine = ours.find((p) => p.key === key)!
      assert.equal(mine.name, fill(r.Properties.ManagedPolicyName as string), `${version} ${key}`)
      assert.deepEqual(
        mine.document,
        JSON.parse(fill(r.Properties.PolicyDocument as string)),
        `${version} ${key}`,
      )
    }
  }
})

// What each minor changed, pinned: a change to the data or to the delta shows up here by name.
const DELTAS: Record<string, { added: string[]; removed: string[] }> = {
  '1.0.14->1.1.10': {
    added: [
      'AllowScopedEC2InstanceActionsWithTags',
      'AllowScopedResourceCreationTagging',
      'AllowScopedResourceTagging',
      'AllowRegionalReadActions',
      'AllowPassingInstanceRole',
      'AllowScopedInstanceProfileCreationActions',
      'AllowScopedInstanceProfileTagActions',
    ],
    removed: [],
  },
  '1.2.8->1.3.8': {
    added: [
      'AllowScopedEC2InstanceAccessActions',
      'AllowScopedEC2InstanceActionsWithTags',
      'AllowRegionalReadActions',
    ],
    removed: [],
  },
  '1.7.6->1.8.8': { added: ['AllowUnscopedInstanceProfileListAction'], removed: [] },
  '1.9.2->1.10.2': { added: ['AllowScopedEC2InstanceActionsWithTags'], removed: [] },
  '1.11.3->1.12.2': {
    added: ['AllowScopedEC2InstanceAccessActions', 'AllowRegionalReadActions'],
    removed: [],
  },
  '1.12.2->1.13.1': { added: ['AllowZonalShiftStatusReadOnly', 'AllowRegionalReadActions'], removed: [] },
}

test('each minor-to-minor delta of the controller policy is pinned; the rest add nothing', () => {
  for (let i = 1; i < REFERENCE_VERSION_LIST.length; i++) {
    const [from, to] = [REFERENCE_VERSION_LIST[i - 1]!, REFERENCE_VERSION_LIST[i]!]
    const delta = referenceDelta(from, to, params)
    assert.deepEqual(
      { added: delta.added.map((s) => s.Sid), removed: delta.removed },
      DELTAS[`${from}->${to}`] ?? { added: [], removed: [] },
      `${from} -> ${to}`,
    )
  }
})

test('a delta across several minors is every statement of the target the source lacks, filled in', () => {
  const delta = referenceDelta('1.0.14', NEWEST_REFERENCE, params)
  const zonal = delta.added.find((s) => s.Sid === 'AllowZonalShiftStatusReadOnly')
  assert.deepEqual(zonal?.Condition, {
    StringEquals: { 'arc-zonal-shift:ResourceIdentifier': 'arn:aws:eks:eu-west-1:210987654321:cluster/blue' },
  })
  assert.deepEqual(referenceDelta(NEWEST_REFERENCE, NEWEST_REFERENCE, params), { added: [], removed: [] })
})

test('several node roles become the PassRole statement’s resource list', () => {
  const roles = ['arn:aws:iam::1:role/a', 'arn:aws:iam::1:role/b']
  const statements = referencePolicies('1.5.8', { ...params, nodeRoleArns: roles }).flatMap(
    (p) => p.document.Statement,
  )
  assert.deepEqual(statements.find((s) => s.Sid === 'AllowPassingInstanceRole')?.Resource, roles)
})

test('a version is described by its own minor’s template, the newest for a newer one, none before 1.0', () => {
  assert.deepEqual(referenceFor('1.3.2'), { version: '1.3.8', newer: false })
  assert.deepEqual(referenceFor('v1.10.0'), { version: '1.10.2', newer: false })
  assert.deepEqual(referenceFor('1.14.9'), { version: '1.14.1', newer: false })
  assert.deepEqual(referenceFor('2.0.0'), { version: NEWEST_REFERENCE, newer: true })
  assert.deepEqual(referenceFor('1.99.0'), { version: NEWEST_REFERENCE, newer: true })
  assert.equal(referenceFor('0.37.0'), null)
  assert.equal(referenceFor('latest'), null)
})

test('node role policies and interruption rules change where the templates changed them', () => {
  assert.ok(referenceNodePolicies('1.3.8').includes('AmazonEC2ContainerRegistryReadOnly'))
  assert.ok(referenceNodePolicies('1.4.4').includes('AmazonEC2ContainerRegistryPullOnly'))
  assert.equal(referenceRules('1.10.2').length, 4)
  assert.equal(referenceRules('1.11.3').length, 5)
  assert.equal(referenceRules('1.11.3')[4]?.key, 'CapacityReservationInterruptionRule')
})

test('going back a minor removes what it added: the Sids only the newer template has', () => {
  assert.deepEqual(referenceDelta('1.8.8', '1.7.6', params).removed, [
    'AllowUnscopedInstanceProfileListAction',
  ])
  assert.deepEqual(referenceDelta('1.13.1', '1.0.14', params).removed, [
    'AllowUnscopedInstanceProfileListAction',
    'AllowZonalShiftStatusReadOnly',
  ])
})

test('every placeholder of every template is filled: no `${` is left in any statement or name', () => {
  for (const version of REFERENCE_VERSION_LIST)
    assert.doesNotMatch(JSON.stringify(referencePolicies(version, params)), /\$\{/, version)
})

test('a version karpctl holds no template of is refused, not guessed', () => {
  assert.throws(() => referencePolicies('1.99.0', params), /no reference policy for Karpenter 1\.99\.0/)
  assert.throws(() => compareVersions('1.2.3', 'latest'), /not a version: latest/)
  assert.throws(() => compareVersions('main', '1.2.3'), /not a version: main/)
  assert.deepEqual(referenceFor(' 1.3.2 '), { version: '1.3.8', newer: false })
})
