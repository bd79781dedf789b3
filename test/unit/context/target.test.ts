// Which cluster and region: flags, then the environment, then an EKS-ARN kube context.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, afterEach, before, beforeEach, test } from 'node:test'
import { resolveTarget } from '../../../src/context/target.js'
import { InputError } from '../../../src/errors.js'

const PROD_ARN = 'arn:aws:eks:eu-west-1:123456789012:cluster/prod'

let dir: string
const savedKubeconfig = process.env.KUBECONFIG

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-target-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))
// No test may see the host's kubeconfig: by default KUBECONFIG points at a file that does not exist.
beforeEach(() => {
  process.env.KUBECONFIG = join(dir, 'absent')
})
afterEach(() => {
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG
  else process.env.KUBECONFIG = savedKubeconfig
})

function inputError(fn: () => unknown): InputError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`)
    return err
  }
  assert.fail('expected an InputError, but nothing was thrown')
}

test('flags win over the environment and the kube context', () => {
  assert.deepEqual(
    resolveTarget(
      { cluster: 'flag-cluster', region: 'ap-south-1', 'kube-context': PROD_ARN },
      { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-east-2' },
    ),
    { clusterName: 'flag-cluster', region: 'ap-south-1' },
  )
})

test('AWS_REGION, then AWS_DEFAULT_REGION, supply the region', () => {
  assert.deepEqual(resolveTarget({ cluster: 'demo' }, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'x' }), {
    clusterName: 'demo',
    region: 'us-east-1',
  })
  assert.deepEqual(resolveTarget({ cluster: 'demo' }, { AWS_DEFAULT_REGION: 'us-east-2' }), {
    clusterName: 'demo',
    region: 'us-east-2',
  })
})

test('the environment region wins over the region of an EKS-ARN context', () => {
  assert.deepEqual(resolveTarget({ 'kube-context': PROD_ARN }, { AWS_REGION: 'us-east-1' }), {
    clusterName: 'prod',
    region: 'us-east-1',
  })
})

test('an EKS-ARN --kube-context supplies cluster and region', () => {
  assert.deepEqual(resolveTarget({ 'kube-context': PROD_ARN }, {}), {
    clusterName: 'prod',
    region: 'eu-west-1',
  })
})

test('an EKS ARN in another partition works too', () => {
  assert.deepEqual(
    resolveTarget({ 'kube-context': 'arn:aws-cn:eks:cn-north-1:123456789012:cluster/china_1' }, {}),
    { clusterName: 'china_1', region: 'cn-north-1' },
  )
})

test("the kubeconfig's current EKS-ARN context is used when no --kube-context is given", () => {
  const path = join(dir, 'config')
  writeFileSync(path, `apiVersion: v1\nkind: Config\ncurrent-context: ${PROD_ARN}\ncontexts: []\n`)
  process.env.KUBECONFIG = path
  assert.deepEqual(resolveTarget({}, {}), { clusterName: 'prod', region: 'eu-west-1' })
})

test('a kube context that is not an EKS ARN supplies nothing', () => {
  const err = inputError(() => resolveTarget({ 'kube-context': 'my-laptop' }, { AWS_REGION: 'us-east-1' }))
  assert.equal(err.code, 'MISSING_CLUSTER')
})

test('a malformed kubeconfig does not stop flags from working', () => {
  const path = join(dir, 'broken')
  writeFileSync(path, 'clusters: [unclosed\n')
  process.env.KUBECONFIG = path
  assert.deepEqual(resolveTarget({ cluster: 'demo', region: 'us-west-2' }, {}), {
    clusterName: 'demo',
    region: 'us-west-2',
  })
})

test('no cluster anywhere is MISSING_CLUSTER', () => {
  const err = inputError(() => resolveTarget({}, { AWS_REGION: 'us-east-1' }))
  assert.equal(err.code, 'MISSING_CLUSTER')
  assert.equal(err.message, 'which cluster? pass --cluster <name> (or set KARPCTL_CLUSTER)')
  assert.equal(err.exitCode, 2)
})

test('an invalid cluster name is INVALID_CLUSTER', () => {
  for (const bad of ['my cluster', '-leading-dash', '_leading', 'a'.repeat(101), 'demo;rm', 'dé']) {
    const err = inputError(() => resolveTarget({ cluster: bad, region: 'us-east-1' }, {}))
    assert.equal(err.code, 'INVALID_CLUSTER', bad)
    assert.ok(err.message.startsWith(`"${bad}" is not a valid EKS cluster name`), err.message)
  }
})

test('valid cluster names at the edges are accepted', () => {
  for (const good of ['a', '0cluster', 'a'.repeat(100), 'prod_eu-1']) {
    assert.equal(resolveTarget({ cluster: good, region: 'us-east-1' }, {}).clusterName, good)
  }
})

test('no region anywhere is MISSING_REGION (checked after the cluster)', () => {
  const err = inputError(() => resolveTarget({ cluster: 'demo' }, {}))
  assert.equal(err.code, 'MISSING_REGION')
  assert.equal(err.message, 'which region? pass --region (or set AWS_REGION)')
  // With neither, the cluster is asked for first.
  assert.equal(inputError(() => resolveTarget({}, {})).code, 'MISSING_CLUSTER')
})
