// Each condition sg-webhook-8443 judges, pinned one at a time (issue 12, item 8): the rule's
// source group, its protocol, its port range (both ends), and which groups are judged at all. A
// mutation that ignores any one of them makes one of these tests fail.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { sgWebhook8443 } from '../../../src/checks/sg-webhook-8443.js'
import type { Facts, SgPermission } from '../../../src/facts/types.js'
import { CLUSTER_SG, healthyFacts, NODE_SG, ok, VPC } from '../../helpers/facts.js'

const OTHER_SG = 'sg-0bad0bad0bad0bad0'

/** The v1.0.14 chart (webhooks on 8443) with the node group's ingress replaced by `ingress`. */
function webhookEraWith(ingress: SgPermission[], mutate?: (f: Facts) => void) {
  return healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) {
      f.kube.release.value.chartVersion = '1.0.14'
      f.kube.release.value.appVersion = '1.0.14'
      f.kube.release.value.computedValues.webhook = { enabled: true, port: 8443 }
    }
    f.ec2.securityGroupsByNodeClass.default = ok([
      { id: NODE_SG, name: 'demo-node', vpcId: VPC, tags: {}, ingress },
    ])
    mutate?.(f)
  })
}

const tcp = (fromPort: number, toPort: number, sourceGroupIds = [CLUSTER_SG]): SgPermission => ({
  protocol: 'tcp',
  fromPort,
  toPort,
  cidrs: [],
  sourceGroupIds,
})

test('source group: tcp/8443 from a group other than the cluster SG fails', () => {
  const r = runCheck(sgWebhook8443, webhookEraWith([tcp(8443, 8443, [OTHER_SG])]))
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.message,
    new RegExp(`no ingress tcp/8443 from the cluster security group ${CLUSTER_SG}`),
  )
})

test('source group: all traffic (-1) from a group other than the cluster SG fails', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([{ protocol: '-1', cidrs: [], sourceGroupIds: [OTHER_SG] }]),
  )
  assert.equal(r.status, 'fail')
})

test('source group: the cluster SG among several sources of the rule passes', () => {
  const r = runCheck(sgWebhook8443, webhookEraWith([tcp(8443, 8443, [OTHER_SG, CLUSTER_SG])]))
  assert.equal(r.status, 'pass')
})

test("source: a CIDR-only 8443 rule passes only when it holds the cluster's subnets (10.0.0.0/19 here)", () => {
  const rule = (cidr: string) =>
    webhookEraWith([{ protocol: 'tcp', fromPort: 8443, toPort: 8443, cidrs: [cidr], sourceGroupIds: [] }])
  assert.equal(runCheck(sgWebhook8443, rule('10.1.0.0/16')).status, 'fail')
  assert.equal(runCheck(sgWebhook8443, rule('10.0.0.0/16')).status, 'pass')
})

test('port range: a rule from the cluster SG on another port (tcp/443) fails', () => {
  const r = runCheck(sgWebhook8443, webhookEraWith([tcp(443, 443)]))
  assert.equal(r.status, 'fail')
})

test('port range: a range ending just below 8443 fails, one starting just above fails', () => {
  assert.equal(runCheck(sgWebhook8443, webhookEraWith([tcp(1025, 8442)])).status, 'fail')
  assert.equal(runCheck(sgWebhook8443, webhookEraWith([tcp(8444, 9000)])).status, 'fail')
})

test('port range: a range that contains 8443, or ends or starts on it, passes', () => {
  assert.equal(runCheck(sgWebhook8443, webhookEraWith([tcp(1025, 65535)])).status, 'pass')
  assert.equal(runCheck(sgWebhook8443, webhookEraWith([tcp(8000, 8443)])).status, 'pass')
  assert.equal(runCheck(sgWebhook8443, webhookEraWith([tcp(8443, 9443)])).status, 'pass')
})

test('port range: a tcp rule without ports (EC2 omits them for all ports) passes', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([{ protocol: 'tcp', cidrs: [], sourceGroupIds: [CLUSTER_SG] }]),
  )
  assert.equal(r.status, 'pass')
})

test('protocol: udp/8443 from the cluster SG fails (webhooks are https over tcp)', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([
      { protocol: 'udp', fromPort: 8443, toPort: 8443, cidrs: [], sourceGroupIds: [CLUSTER_SG] },
    ]),
  )
  assert.equal(r.status, 'fail')
})

test('a wrong rule beside the right one: the right one counts', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([tcp(443, 443), tcp(8443, 8443, [OTHER_SG]), tcp(8443, 8443)]),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]!.message, `${NODE_SG} allows tcp/8443 from ${CLUSTER_SG}`)
})

test('the cluster SG itself selected by the EC2NodeClass is not judged (its self-rule governs)', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([], (f) => {
      f.ec2.securityGroupsByNodeClass.default = ok([
        { id: CLUSTER_SG, name: 'eks-cluster-sg-demo', vpcId: VPC, tags: {}, ingress: [] },
      ])
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.equal(r.findings.length, 1)
})

test('without clusterSecurityGroupId the first cluster security group is the source', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([tcp(8443, 8443, [OTHER_SG])], (f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value)
        f.eks.cluster = ok({
          ...f.eks.cluster.value,
          clusterSecurityGroupId: undefined,
          securityGroupIds: [OTHER_SG],
        })
    }),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]!.message, `${NODE_SG} allows tcp/8443 from ${OTHER_SG}`)
})

test('no cluster security group known: skipped with the reason', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([], (f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value)
        f.eks.cluster = ok({
          ...f.eks.cluster.value,
          clusterSecurityGroupId: undefined,
          securityGroupIds: [],
        })
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /cluster security group is not known/)
})

test('one finding per security group, naming every EC2NodeClass that selects it', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([], (f) => {
      const sg = { id: NODE_SG, name: 'demo-node', vpcId: VPC, tags: {}, ingress: [] }
      f.ec2.securityGroupsByNodeClass = { default: ok([sg]), gpu: ok([{ ...sg }]) }
    }),
  )
  assert.equal(r.findings.length, 1)
  assert.match(r.findings[0]!.message, /\(EC2NodeClass default, gpu\)/)
  assert.deepEqual(r.findings[0]!.evidence?.nodeClasses, ['default', 'gpu'])
})

test('the EKS cluster not found: skipped, saying so', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([], (f) => (f.eks.cluster = ok(null))),
  )
  assert.equal(r.status, 'skipped')
  assert.equal(r.findings[0]!.message, 'EKS cluster not found')
})

test('a chart version that does not parse: skipped, naming the version as the chart gives it', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEraWith([], (f) => {
      if (f.kube.release.ok && f.kube.release.value) {
        f.kube.release.value.chartVersion = 'main'
        f.kube.release.value.appVersion = 'dev'
      }
    }),
  )
  assert.equal(r.status, 'skipped')
  assert.equal(r.findings[0]!.message, 'Karpenter main runs no webhooks: an 8443 rule is not needed')
})

test('the failing finding carries the groups, the EC2NodeClasses and the ingress as evidence, and a named fix', () => {
  const ingress = [tcp(443, 443)]
  const f = runCheck(sgWebhook8443, webhookEraWith(ingress)).findings[0]!
  assert.deepEqual(f.evidence, {
    securityGroup: NODE_SG,
    clusterSecurityGroup: CLUSTER_SG,
    nodeClasses: ['default'],
    ingress,
  })
  assert.equal(f.fix!.summary, 'allow the control plane to reach the webhook')
  assert.equal(
    f.message,
    `node security group ${NODE_SG} (EC2NodeClass default) has no ingress tcp/8443 from the cluster security group ${CLUSTER_SG}: webhook calls time out`,
  )
})

test('a missing rule is a network error (it fails doctor), not a warning', () => {
  assert.equal(sgWebhook8443.meta.severity, 'error')
  assert.equal(sgWebhook8443.meta.category, 'network')
})
