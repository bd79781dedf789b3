// The generic rule (issue 36.1): random-looking tokens go, what karpctl itself prints stays; passwords
// after -p, -a, --password, PASSWORD=, TOKEN=, SECRET= on command lines go; a cap cuts after redacting.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { entropy, groupedKey, looksRandom } from '../../../src/redact/redact-random.js'
import { REDACTED, redactClip, redactText } from '../../../src/redact/redact.js'

test('entropy: bits per character, as gitleaks and truffleHog compute it', () => {
  assert.equal(entropy('aaaa'), 0)
  assert.equal(entropy('abab'), 1)
  assert.equal(entropy('0123456789abcdef'), 4)
})

test('a random run is judged by entropy; names made of words are not', () => {
  for (const random of [
    'zbmhj00dpe2aqyvawy4ll3iowtv6445t',
    'p8TilcpM8dlWEf3vlIgkNps4s6AlaclXpFj6vhMh',
    'c2e1a055ee6a4246dac3ca5d83e89b3b',
  ])
    assert.equal(looksRandom(random), true, random)
  for (const name of [
    'AmazonEC2ContainerRegistryReadOnly',
    'AWSServiceRoleForEC2Spot',
    'KarpenterControllerPolicy20240101',
    'imageGCLowThresholdPercent',
    'consolidateAfter',
    'EC2NodeClassList',
    '12345678901234567890',
    'short1a2b',
  ])
    assert.equal(looksRandom(name), false, name)
  assert.equal(groupedKey('5r4n2goa-9xvb-2qst-6f3d-nvh2ji1pfjwf'), true)
  assert.equal(groupedKey('UDHUXZ6U-6BJ8WGA4-O4QWJJBE-EVOASRMZ'), true)
  assert.equal(groupedKey('web-v2-7d9f8c6b5-x7k2p'), false, 'a pod name')
  assert.equal(groupedKey('0c4e6bb2-d488-3662-832d-10f009d50285'), false, 'a UUID stays (Kubernetes uids)')
})

test('a healthy cluster keeps what karpctl prints: ARNs, ids, UUIDs, digests, endpoints, versions', () => {
  const kept = [
    'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo',
    'arn:aws:sqs:us-west-2:123456789012:demo',
    'arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'ami-0123456789abcdef0 i-0123456789abcdef0 sg-0123456789abcdef0 subnet-0a1b2c3d4e5f67890 lt-0a1b2c3d4e5f67890',
    'AROAZK3LXY5EXAMPLE7QW',
    'uid 0c4e6bb2-d488-4662-832d-10f009d50285',
    'public.ecr.aws/karpenter/controller:1.14.1@sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9',
    'https://0A1B2C3D4E5F60718293A4B5C6D7E8F9.gr7.us-west-2.eks.amazonaws.com',
    'https://oidc.eks.us-west-2.amazonaws.com/id/0A1B2C3D4E5F60718293A4B5C6D7E8F9',
    'v1.32.3-eks-4096722 1.14.1 karpenter-1.14.1',
    'ip-192-168-101-23.us-west-2.compute.internal karpenter-5d8f7c9b6-x7k2p default-x7k2p',
    'karpenter.k8s.aws/ec2nodeclass-hash: 12345678901234567890',
  ]
  for (const t of kept) assert.equal(redactText(t), t)
})

test('a random token in free text goes; beside an allowed shape only the random run', () => {
  assert.equal(redactText('vendor zbmhj00dpe2aqyvawy4ll3iowtv6445t ok'), `vendor ${REDACTED} ok`)
  assert.equal(redactText('key fdjdplq9-xoj7-ez3p-ov6d-c3sl9i09js2e.'), `key ${REDACTED}.`)
  assert.equal(
    redactText('arn:aws:iam::123456789012:role/demo zbmhj00dpe2aqyvawy4ll3iowtv6445t'),
    `arn:aws:iam::123456789012:role/demo ${REDACTED}`,
  )
})

test('command lines: -p, -a, --password, PASSWORD=, TOKEN=, SECRET=, user:password@ in a URL', () => {
  const cases: [string, string][] = [
    ['redis-cli -h db -a S3cretPw! ping', `redis-cli -h db -a ${REDACTED} ping`],
    ['mysql -u root -p hunter2x', `mysql -u root -p ${REDACTED}`],
    ['psql --password=hunter2x', `psql --password=${REDACTED}`],
    ['vault login --password hunter2x', `vault login --password ${REDACTED}`],
    ['export DB_PASSWORD=hunter2x', `export DB_PASSWORD=${REDACTED}`],
    ['GITHUB_TOKEN=abc123def', `GITHUB_TOKEN=${REDACTED}`],
    ['APP_SECRET=zzzz', `APP_SECRET=${REDACTED}`],
    ['curl https://bob:hunter2@example.com/x', 'curl https://example.com/x'],
    ['git clone ssh://deploy:tok3n@git.example.com/r', 'git clone ssh://git.example.com/r'],
  ]
  for (const [text, want] of cases) assert.equal(redactText(text), want, text)
})

test('a capped text is redacted before the cut: the first half of a cut token never shows', () => {
  const token = 'zbmhj00dpe2aqyvawy4ll3iowtv6445tQ8wLx'
  const body = `${'x'.repeat(60)} error: bad credential ${token} given`
  // Cut first, the token's first 79-60 characters would be a run too short to judge.
  assert.ok(!redactClip(body, 80).includes(token.slice(0, 8)))
  assert.equal(redactClip('short', 80), 'short')
  assert.equal(redactClip('a'.repeat(100), 10), `${'a'.repeat(9)}…`)
})

test('a URL keeps its host however random its labels (an API server endpoint is compared, not hidden); a token in its path still goes', () => {
  // moto's EKS endpoint, a proxy: not EKS's shape (issue 35, install matrix: settings.clusterEndpoint
  // came back redacted and no longer matched DescribeCluster's).
  for (const t of [
    'https://gB4yrfURJkgJlsyppzST.H6a.us-west-2.eks.amazonaws.com/',
    'https://k8s-api.x7Qp2LmZ9wRt4VbN.internal.example.com:6443',
  ])
    assert.equal(redactText(t), t)
  assert.equal(
    redactText('https://hooks.example.com/zbmhj00dpe2aqyvawy4ll3iowtv6445t'),
    `https://hooks.example.com/${REDACTED}`,
  )
  assert.equal(
    redactText('https://bob:zbmhj00dpe2aqyvawy4ll3iowtv6445t@example.com/x'),
    'https://example.com/x',
  )
})

// Issue 36.1, the held-back half's leaks by class (not the leaked strings): each rule tested on draws
// of its own, and on the names it must keep.
test('digits scattered in three places or more: a drawn string, judged at the hex threshold even when its letters read as words', () => {
  for (const drawn of [
    'k3vqw8mzr1tbn6pd',
    'Qa7uiToRe3Lamo9Nuvef',
    'Zu9bre5Lami7Koro',
    'mab7coda2belu4fizo',
  ]) {
    assert.equal(looksRandom(drawn), true, drawn)
    assert.equal(redactText(`key ${drawn} end`), `key ${REDACTED} end`, drawn)
  }
  // Digits kept together, as names keep them (or too few places apart): kept.
  for (const name of [
    'AmazonEC2ContainerRegistryReadOnly',
    'KarpenterControllerPolicy20240101',
    'amazonlinux2023minimal',
    'eksctlClusterNodegroup2',
  ])
    assert.equal(looksRandom(name), false, name)
})

test('a version keeps a short pre-release or build suffix; a long one after `v1.0-` is a key that starts like a version', () => {
  for (const v of ['v1.32.3-eks-4096722', '1.14.1-rc.1', 'v1.31.0-eks-a1b2c3d', '1.0.14-eksbuild.3'])
    assert.equal(redactText(`version ${v}`), `version ${v}`)
  const key = 'v1.0-Xq7hR2mK9wLp4Tz8Bn3Cv6Yd1Fs5Gj0Ha'
  assert.ok(!redactText(`key ${key}`).includes(key.slice(5)), redactText(key))
})
