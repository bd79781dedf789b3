// helm-release and settings.clusterEndpoint (issue 35, item 7): when set, it is the API server nodes
// are told to join; values kept from a recreated cluster point at one that no longer exists and no node
// registers (aws/karpenter-provider-aws#2423, #1634). Unset is the chart default (discovered): clean.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { helmRelease } from '../../../src/checks/helm-release.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { failed, healthyFacts } from '../../helpers/facts.js'

const ENDPOINT = 'https://EXAMPLED539D4633E53DE1B71EXAMPLE.gr7.us-west-2.eks.amazonaws.com'
const OLD = 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com'

const withEndpoint =
  (value: unknown, endpoint: string | null = ENDPOINT) =>
  (f: Facts) => {
    if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.endpoint = endpoint ?? undefined
    if (f.kube.release.ok && f.kube.release.value) {
      const settings = f.kube.release.value.computedValues.settings as Record<string, unknown>
      f.kube.release.value.computedValues.settings = { ...settings, clusterEndpoint: value }
    }
  }
const endpointFinding = (fn: (f: Facts) => void) =>
  runCheck(helmRelease, healthyFacts(fn)).findings.find((x) => /clusterEndpoint/.test(x.message))

test("an endpoint kept from a recreated cluster fails; the fix sets the cluster's", () => {
  const f = endpointFinding(withEndpoint(OLD))!
  assert.equal(f.status, 'fail')
  assert.equal(f.code, 'cluster-endpoint')
  assert.match(f.message, /nodes are told to join another API server and never register/)
  assert.deepEqual(f.fix!.commands, [
    `helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --namespace kube-system --version 1.14.1 --reuse-values --set settings.clusterEndpoint=${ENDPOINT}`,
  ])
})

test('healthy: unset (the chart default) is not judged; the same endpoint in another case or with a slash passes', () => {
  assert.equal(endpointFinding(withEndpoint('')), undefined)
  assert.equal(endpointFinding(withEndpoint(undefined)), undefined)
  assert.equal(endpointFinding(withEndpoint(`${ENDPOINT.toLowerCase()}/`))!.status, 'pass')
  assert.equal(runCheck(helmRelease, healthyFacts(withEndpoint(ENDPOINT))).status, 'pass')
})

test('the cluster unreadable or without an endpoint: unknown, never passed', () => {
  assert.equal(endpointFinding(withEndpoint(OLD, null))!.status, 'unknown')
  const r = runCheck(
    helmRelease,
    healthyFacts((f) => {
      withEndpoint(OLD)(f)
      f.eks.cluster = failed('eks:DescribeCluster demo')
    }),
  )
  assert.ok(r.findings.some((x) => x.status === 'unknown' && /DescribeCluster/.test(x.message)))
})
