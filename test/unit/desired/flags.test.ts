// The flag validators of install, tenant add/remove and teardown: what each grammar accepts, what it
// refuses, and that a refusal is one InputError line naming the flag.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InputError } from '../../../src/errors.js'
import {
  karpenterVersionProblem,
  MAX_TIMEOUT_S,
  parseInterval,
  parseKeyValue,
  parseListen,
  parseSelectorTag,
  parseTag,
  validateRoleName,
  validateCpuLimit,
  validateDuration,
  validateInstanceCategories,
  validateInstanceFamilies,
  validatePolicyArn,
  validateQuantity,
  validateZones,
} from '../../../src/desired/flags.js'

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

test('every refusal carries the INVALID_INPUT code, for --json consumers', () => {
  // Kills: the code of `bad` emptied.
  for (const fn of [
    () => validateCpuLimit(0),
    () => validateQuantity('x', '--memory-limit'),
    () => parseTag('novalue'),
    () => validatePolicyArn('acme-s3'),
  ])
    assert.equal(refusal(fn).code, 'INVALID_INPUT')
})

test('--memory-limit: decimals of any length, a bare fraction, signed and multi-digit exponents', () => {
  // Kills: `\.[0-9]*` cut to one digit, `\.[0-9]+` cut to one digit, the exponent's sign or digits narrowed.
  for (const q of ['1.25Gi', '1.', '.25', '.125Mi', '1e-3', '1e+3', '1E+10', '1e10', '2.5e-12'])
    assert.equal(validateQuantity(q, '--memory-limit'), q)
})

test('key=value: the key is everything before the first `=`, and an empty or blank key is refused', () => {
  // Kills: the match unanchored at the start (`=a=b` read as a=b); `!m || !key` weakened to `&&`.
  assert.deepEqual(parseKeyValue('k=', '--subnet-tag'), ['k', ''])
  assert.deepEqual(parseKeyValue('k=a\nb', '--subnet-tag'), ['k', 'a\nb'])
  assert.equal(
    refusal(() => parseKeyValue('=a=b', '--subnet-tag')).message,
    '--subnet-tag takes key=value (got "=a=b"): fix --subnet-tag',
  )
  assert.equal(
    refusal(() => parseKeyValue('  =v', '--subnet-tag')).message,
    '--subnet-tag takes key=value (got "  =v"): fix --subnet-tag',
  )
})

test('--tag: the refusals name --tag by default, a long key is shown by its first 20 characters', () => {
  // Kills: the default flag emptied; the key shown whole; the reserved prefixes unanchored.
  assert.equal(refusal(() => parseTag('novalue')).message, '--tag takes key=value (got "novalue"): fix --tag')
  assert.equal(
    refusal(() => parseTag(`${'abcdefghij'.repeat(13)}=v`)).message,
    '--tag key "abcdefghijabcdefghij"… is longer than 128 characters: shorten it',
  )
  assert.equal(
    refusal(() => parseTag('aws:x=1', '--node-tag')).message,
    '--node-tag key "aws:x" is reserved (karpctl.io/ and aws: keys): choose another key',
  )
  // Only a key that begins with a reserved prefix is reserved.
  assert.deepEqual(parseTag('team/aws:x=1'), ['team/aws:x', '1'])
  assert.deepEqual(parseTag('acme.karpctl.io/x=1'), ['acme.karpctl.io/x', '1'])
})

test('--policy-arn: anchored at both ends, a name of at most 128 characters, dots inside a segment allowed', () => {
  // Kills: POLICY_ARN unanchored at either end; the path split on every character; `.` segments let through.
  const base = 'arn:aws:iam::123456789012:policy/'
  for (const arn of [
    `${base}v1.2/acme`,
    `${base}a..b/x.y`,
    `${base}.hidden/acme`,
    `${base}${'n'.repeat(128)}`,
  ])
    assert.equal(validatePolicyArn(arn), arn)
  for (const arn of [
    `x${base}acme`,
    `${base}${'n'.repeat(129)}`,
    `${base}acme!`,
    `${base}./acme`,
    `${base}team/./acme`,
    `${base}.`,
  ])
    assert.equal(
      refusal(() => validatePolicyArn(arn)).message,
      `--policy-arn "${arn}" is not an IAM policy ARN (arn:aws:iam::<account>:policy/[<path>/]<name>): fix --policy-arn`,
    )
})

test('a Karpenter version: x.y.z or vx.y.z only, major 1, minor up to 14', () => {
  // Kills: the `v` stripped anywhere; the x.y.z shape unanchored or its major cut to one digit.
  assert.equal(karpenterVersionProblem('1.14.1'), undefined)
  assert.equal(karpenterVersionProblem('v1.0.0'), undefined)
  assert.equal(karpenterVersionProblem('1.2.3v'), '"1.2.3v" is not a Karpenter version (e.g. 1.14.1)')
  assert.equal(karpenterVersionProblem('vv1.2.3'), '"vv1.2.3" is not a Karpenter version (e.g. 1.14.1)')
  assert.equal(karpenterVersionProblem('a1.2.3'), '"a1.2.3" is not a Karpenter version (e.g. 1.14.1)')
  assert.equal(
    karpenterVersionProblem('10.0.0'),
    'karpctl installs Karpenter v1 (1.0 – 1.14); "10.0.0" is not',
  )
  assert.equal(karpenterVersionProblem('1.15.0'), 'Karpenter 1.15.0 is newer than karpctl knows (1.14)')
})

test('a Karpenter version refuses leading zeros and a doubled v: tags that do not exist (issue 36 §4)', () => {
  for (const v of ['01.14.1', '1.014.1', '1.14.01', 'vv1.14.1', 'V1.14.1', '1.14.1 ', '1.14.1\u2028'])
    assert.match(karpenterVersionProblem(v) ?? '', /is not a Karpenter version/, v)
  for (const v of ['1.14.1', 'v1.14.1', '1.0.0', '1.10.0'])
    assert.equal(karpenterVersionProblem(v), undefined, v)
})

test('--tag and --subnet-tag refuse controls, line separators, bidi and invisible characters, in key or value', () => {
  for (const [tag, at] of [
    ['team=a\u2028b', 'U+2028'],
    ['team=acme\u202e', 'U+202E'],
    ['te\u001bam=x', 'U+001B'],
    ['team=\u001b[2J', 'U+001B'],
    ['team=a\u200bb', 'U+200B'],
    ['team=\u2066x\u2069', 'U+2066'],
  ] as const) {
    assert.throws(
      () => parseTag(tag),
      new RegExp(`^Error: --tag (key|value) ".*" holds ${at.replace('+', '\\+')}, a control`),
      tag,
    )
    assert.throws(() => parseSelectorTag(tag, '--subnet-tag'), /--subnet-tag (key|value) .* holds U\+/, tag)
  }
  // The refusal quotes what it refuses: nothing raw reaches the line.
  assert.throws(
    () => parseTag('team=x\u202ey'),
    (err: Error) => !/[\u202e]/.test(err.message),
  )
  // Any script, spaces in values and AWS's punctuation stay allowed.
  assert.deepEqual(parseTag('チーム=支払い チーム'), ['チーム', '支払い チーム'])
  assert.deepEqual(parseSelectorTag('kubernetes.io/role/internal-elb=1', '--subnet-tag'), [
    'kubernetes.io/role/internal-elb',
    '1',
  ])
})

test('--instance-categories: letters only, as Karpenter labels them', () => {
  assert.deepEqual(validateInstanceCategories(['c', 'm', 'r', 'inf', 'trn']), ['c', 'm', 'r', 'inf', 'trn'])
  for (const c of ['c;rm', '*', 'C', '', 'c5', 'm\u001b'])
    assert.throws(
      () => validateInstanceCategories([c]),
      /--instance-categories ".*" is not an EC2 instance category/,
      c,
    )
})

test('--interval takes 10s to the timer limit, in h, m and s', () => {
  assert.equal(parseInterval('5m'), 300_000)
  assert.equal(parseInterval('10s'), 10_000)
  assert.equal(parseInterval('1h30m'), 5_400_000)
  assert.equal(parseInterval(' 2m5s '), 125_000)
  for (const bad of ['', '9s', '5', 'm', '5x', '-5m', '1d', '600h', '5m1h'])
    assert.throws(
      () => parseInterval(bad),
      /--interval .* is not a duration from 10s to \d+h .*fix --interval/,
      bad,
    )
})

test('--listen is host:port or :port, IPv6 in brackets', () => {
  assert.deepEqual(parseListen('127.0.0.1:9464'), { host: '127.0.0.1', port: 9464 })
  assert.deepEqual(parseListen(':9464'), { host: '0.0.0.0', port: 9464 })
  assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 })
  assert.deepEqual(parseListen('localhost:80'), { host: 'localhost', port: 80 })
  for (const bad of ['9464', '127.0.0.1', '127.0.0.1:65536', 'a b:1', '::1:9464', 'h:port'])
    assert.throws(() => parseListen(bad), /--listen .* is not host:port .*fix --listen/, bad)
})

test('validateRoleName: IAM role names only, never an ARN, a path or a space', () => {
  assert.equal(validateRoleName('KarpctlDoctor'), 'KarpctlDoctor')
  assert.equal(validateRoleName('a+b=c,d.e@f_g-h'), 'a+b=c,d.e@f_g-h')
  for (const bad of ['', 'a b', 'arn:aws:iam::111122223333:role/X', 'path/X', 'x'.repeat(65), 'x\u202e'])
    assert.match(refusal(() => validateRoleName(bad)).message, /is not an IAM role name/)
})
