// What a user asked for on a role karpctl created: which tag keys are never taken as the user's, the
// record a run leaves, and the gap between the role and this run — exactly which policies are detached,
// which tags are removed, the record set first (covering what is still being removed) and last, and what
// the plan shows.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  ASKED_POLICIES,
  ASKED_TAGS,
  askedGap,
  askedRecord,
  isProtectedTag,
} from '../../../../src/plan/resources/asked-extras.js'

const NO_ASK = { policyArns: [], tags: {} }

test('the record keys are the documented karpctl.io/asked-policies and karpctl.io/asked-tags', () => {
  // Kills: either key emptied (the record lives on roles in AWS: renaming it loses earlier runs' records).
  assert.deepEqual([ASKED_POLICIES, ASKED_TAGS], ['karpctl.io/asked-policies', 'karpctl.io/asked-tags'])
})

test('isProtectedTag: karpctl.io/ and aws: prefixed keys only, not keys that merely end or contain them', () => {
  const keys = ['karpctl.io/tenant', 'aws:cloudformation:stack-name', 'team', 'x.karpctl.io/', 'team:aws:']
  assert.deepEqual(
    keys.map((k) => [k, isProtectedTag(k)]),
    [
      ['karpctl.io/tenant', true],
      ['aws:cloudformation:stack-name', true],
      ['team', false],
      ['x.karpctl.io/', false],
      ['team:aws:', false],
    ],
  )
})

test('askedRecord: policies without their leading arn:<partition>:iam::, tag keys without protected ones', () => {
  assert.deepEqual(
    askedRecord({
      policyArns: ['arn:aws:iam::aws:policy/A', 'arn:aws-us-gov:iam::123456789012:policy/B'],
      tags: { team: 'a', 'karpctl.io/tenant': 't', 'aws:cloudformation:stack-name': 's', cost: 'c' },
    }),
    { [ASKED_POLICIES]: 'aws:policy/A 123456789012:policy/B', [ASKED_TAGS]: 'team cost' },
  )
})

test('askedRecord strips the arn prefix only at the start of a policy name', () => {
  // Kills: the regex's `^` anchor dropped.
  assert.deepEqual(askedRecord({ policyArns: ['x-arn:aws:iam::1:policy/C'], tags: {} }), {
    [ASKED_POLICIES]: 'x-arn:aws:iam::1:policy/C',
  })
})

test("askedGap reads the record in the role's partition and keeps a policy wanted as itself or through orElse", () => {
  // Kills: partitionOf's `??` made `&&`; orElse left out of the wanted set.
  const readOnly = 'arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly'
  const old = 'arn:aws-cn:iam::123456789012:policy/Old'
  const worker = 'arn:aws-cn:iam::aws:policy/AmazonEKSWorkerNodePolicy'
  const recorded =
    'aws:policy/AmazonEC2ContainerRegistryReadOnly aws:policy/AmazonEKSWorkerNodePolicy 123456789012:policy/Old'
  assert.deepEqual(
    askedGap(
      {
        arn: 'arn:aws-cn:iam::123456789012:role/demo-node',
        managed: [
          { arn: 'arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly', orElse: readOnly },
          { arn: worker },
        ],
        tags: {},
        asked: NO_ASK,
      },
      { tags: { [ASKED_POLICIES]: recorded }, attached: [readOnly, worker, old] },
    ),
    {
      first: [[ASKED_POLICIES, '123456789012:policy/Old']],
      detach: [old],
      untag: [ASKED_POLICIES],
      last: [],
      changes: [
        { field: 'attached policy', from: 'Old', to: undefined },
        { field: `tags.${ASKED_POLICIES}`, from: recorded, to: undefined },
      ],
    },
  )
})

test('askedGap reads the record in the aws partition when the role ARN names none', () => {
  // Kills: the 'aws' fallback emptied.
  const gap = askedGap(
    { arn: 'demo-node', managed: [], tags: {}, asked: NO_ASK },
    { tags: { [ASKED_POLICIES]: 'aws:policy/Old' }, attached: ['arn:aws:iam::aws:policy/Old'] },
  )
  assert.deepEqual(gap.detach, ['arn:aws:iam::aws:policy/Old'])
})

test('askedGap removes a recorded tag still on the role, not one already gone nor a protected one', () => {
  // Kills: the stale-tag filter's `!isProtectedTag(k) && k in cur.tags` made `true` or `||`.
  const recorded = 'team gone karpctl.io/tenant'
  assert.deepEqual(
    askedGap(
      { arn: 'arn:aws:iam::123456789012:role/demo-node', managed: [], tags: {}, asked: NO_ASK },
      { tags: { [ASKED_TAGS]: recorded, team: 'a', 'karpctl.io/tenant': 't' }, attached: [] },
    ),
    {
      first: [[ASKED_TAGS, 'team']],
      detach: [],
      untag: ['team', ASKED_TAGS],
      last: [],
      changes: [
        { field: 'tags.team', from: 'a', to: undefined },
        { field: `tags.${ASKED_TAGS}`, from: recorded, to: undefined },
      ],
    },
  )
})

test('askedGap first records both the tags asked now and those being removed, then only the asked ones', () => {
  // Kills: the covering record's tag keys emptied.
  assert.deepEqual(
    askedGap(
      {
        arn: 'arn:aws:iam::123456789012:role/demo-node',
        managed: [],
        tags: { new: '2' },
        asked: { policyArns: [], tags: { new: '2' } },
      },
      { tags: { [ASKED_TAGS]: 'old', old: '1' }, attached: [] },
    ),
    {
      first: [
        ['new', '2'],
        [ASKED_TAGS, 'new old'],
      ],
      detach: [],
      untag: ['old'],
      last: [[ASKED_TAGS, 'new']],
      changes: [
        { field: 'tags.old', from: '1', to: undefined },
        { field: 'tags.new', from: undefined, to: '2' },
        { field: `tags.${ASKED_TAGS}`, from: 'old', to: 'new' },
      ],
    },
  )
})

test('askedGap removes an overflow record key only the covering record needed, without showing it', () => {
  // Kills: the shown removals no longer limited to keys the role has (`untag.filter` dropped).
  // Three 100-character keys: two fit one record tag, three need a second.
  const long = (k: string) => k + 'x'.repeat(98)
  const k1 = long('k1')
  const k2 = long('k2')
  const k3 = long('k3')
  assert.deepEqual(
    askedGap(
      {
        arn: 'arn:aws:iam::123456789012:role/demo-node',
        managed: [],
        tags: { [k2]: 'v2', [k3]: 'v3' },
        asked: { policyArns: [], tags: { [k2]: 'v2', [k3]: 'v3' } },
      },
      { tags: { [ASKED_TAGS]: k1, [k1]: 'v1' }, attached: [] },
    ),
    {
      first: [
        [k2, 'v2'],
        [k3, 'v3'],
        [ASKED_TAGS, `${k2} ${k3}`],
        [`${ASKED_TAGS}-2`, k1],
      ],
      detach: [],
      untag: [k1, `${ASKED_TAGS}-2`],
      last: [],
      changes: [
        { field: `tags.${k1}`, from: 'v1', to: undefined },
        { field: `tags.${k2}`, from: undefined, to: 'v2' },
        { field: `tags.${k3}`, from: undefined, to: 'v3' },
        { field: `tags.${ASKED_TAGS}`, from: k1, to: `${k2} ${k3}` },
      ],
    },
  )
})
