// The flag validators of install, tenant add/remove and teardown: what each grammar accepts, what it
// refuses, and that a refusal is one InputError line naming the flag.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import {
  MAX_TIMEOUT_S,
  parseKeyValue,
  parseTag,
  validateCpuLimit,
  validateDuration,
  validateInstanceFamilies,
  validatePolicyArn,
  validateQuantity,
  validateZones,
} from '../../../src/spec/flags.js'

/** The InputError `fn` throws; fails when it throws nothing or something else. */
function refusal(fn: () => unknown): InputError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof InputError, String(err))
    assert.ok(!err.message.includes('\n'), err.message)
    return err
  }
  assert.fail('accepted')
}

test('--timeout: at most what a Node timer can hold (2^31-1 ms), so a wait never fires at once', () => {
  assert.equal(MAX_TIMEOUT_S, 2_147_483)
  assert.ok(MAX_TIMEOUT_S * 1000 <= 2 ** 31 - 1)
  assert.ok((MAX_TIMEOUT_S + 1) * 1000 > 2 ** 31 - 1)
})

test('--cpu-limit: a whole number of cores from 1 to a million', () => {
  for (const n of [1, 64, 1_000_000]) assert.equal(validateCpuLimit(n), n)
  for (const n of [0, -1, 1.5, 1_000_001, 1180591620717411303424, Number.NaN])
    assert.match(refusal(() => validateCpuLimit(n)).message, /^--cpu-limit .* is not a whole number of cores/)
})

test("--memory-limit: Kubernetes' quantity grammar", () => {
  for (const q of ['400Gi', '1.5Ti', '512M', '1e9', '+1k', '.5Gi', '100', '1E3', '2Pi'])
    assert.equal(validateQuantity(q, '--memory-limit'), q)
  for (const q of ['400XYZ', 'Gi', '400 Gi', '-1Gi', '1.2.3', '', '400gi', '1e', '0x10'])
    assert.match(
      refusal(() => validateQuantity(q, '--memory-limit')).message,
      /^--memory-limit ".*" is not a Kubernetes quantity \(e\.g\. 400Gi/,
    )
})

test("--consolidate-after: Karpenter's duration (h, m, s) or Never", () => {
  for (const d of ['0s', '30s', '1m', '1h30m', '720h', 'Never']) assert.equal(validateDuration(d, '--c'), d)
  for (const d of ['forever', 'never', '1d', '1.5h', '-1m', '10', '', '1h 30m', '5ms'])
    assert.match(
      refusal(() => validateDuration(d, '--consolidate-after')).message,
      /or Never: fix --consolidate-after$/,
    )
})

test("--zones: the region's zones when AWS says them, else the <region><letter> shape", () => {
  const known = ['us-west-2a', 'us-west-2b', 'us-west-2-lax-1a']
  assert.deepEqual(validateZones(['us-west-2a', 'us-west-2-lax-1a'], 'us-west-2', known), [
    'us-west-2a',
    'us-west-2-lax-1a',
  ])
  assert.equal(
    refusal(() => validateZones(['us-west-2z'], 'us-west-2', known)).message,
    '--zones "us-west-2z" is not an availability zone of us-west-2: pass one of us-west-2a, us-west-2b, us-west-2-lax-1a',
  )
  // Shape only: a letter (or a Local Zone suffix) after the region.
  assert.deepEqual(validateZones(['us-west-2d', 'us-west-2-lax-1a'], 'us-west-2'), [
    'us-west-2d',
    'us-west-2-lax-1a',
  ])
  for (const z of ['us-east-1a', 'us-west-2', 'us-west-2ab', 'us-west-2A', '*', 'us-west-2-'])
    assert.match(refusal(() => validateZones([z], 'us-west-2')).message, /e\.g\. us-west-2a$/)
})

test('--instance-families: EC2 family names, no wildcard', () => {
  assert.deepEqual(validateInstanceFamilies(['m7g', 'c6in', 'u-6tb1', 'trn1n']), [
    'm7g',
    'c6in',
    'u-6tb1',
    'trn1n',
  ])
  for (const f of ['*', 'm7*', 'M7g', '7g', 'm7g.large', '', 'm-'])
    assert.match(refusal(() => validateInstanceFamilies([f])).message, /no wildcards/)
})

test('--tag: key=value within AWS limits; aws: and karpctl.io/ keys are refused, not dropped', () => {
  assert.deepEqual(parseTag('cost-center=4711'), ['cost-center', '4711'])
  assert.deepEqual(parseTag(' team =a=b'), ['team', 'a=b'])
  assert.deepEqual(parseTag(`${'k'.repeat(128)}=${'v'.repeat(256)}`), ['k'.repeat(128), 'v'.repeat(256)])
  const cases: [string, RegExp][] = [
    ['novalue', /takes key=value/],
    ['=v', /takes key=value/],
    ['aws:createdBy=me', /is reserved/],
    ['AWS:x=1', /is reserved/],
    ['karpctl.io/cluster=other', /"karpctl\.io\/cluster" is reserved/],
    ['cost center=1', /has a space/],
    [`${'k'.repeat(129)}=v`, /longer than 128 characters/],
    [`k=${'v'.repeat(257)}`, /value of "k" is longer than 256 characters/],
  ]
  for (const [v, message] of cases) assert.match(refusal(() => parseTag(v)).message, message)
  // A selector's key may be AWS's own (aws:cloudformation:stack-name): only its form is checked.
  assert.deepEqual(parseKeyValue('aws:cloudformation:stack-name=net', '--subnet-tag'), [
    'aws:cloudformation:stack-name',
    'net',
  ])
})

test('--policy-arn: an IAM policy ARN, its path without . or .. segments', () => {
  for (const arn of [
    'arn:aws:iam::123456789012:policy/acme-s3',
    'arn:aws:iam::123456789012:policy/team/acme/acme-s3',
    'arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess',
    'arn:aws-us-gov:iam::123456789012:policy/a.b',
  ])
    assert.equal(validatePolicyArn(arn), arn)
  for (const arn of [
    'arn:aws:iam::123456789012:policy/../admin',
    'arn:aws:iam::123456789012:policy/team/../../x',
    'arn:aws:iam::123456789012:policy/./x',
    'arn:aws:iam::123456789012:policy/..',
    'arn:aws:iam::123456789012:role/x',
    'arn:aws:iam::12345:policy/x',
    'acme-s3',
  ])
    assert.match(refusal(() => validatePolicyArn(arn)).message, /is not an IAM policy ARN/)
})
