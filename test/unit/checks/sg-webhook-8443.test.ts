import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { sgWebhook8443 } from '../../../src/checks/sg-webhook-8443.js'
import type { Facts } from '../../../src/facts/types.js'
import { CLUSTER_SG, failed, healthyFacts, NODE_SG, ok } from '../../helpers/facts.js'

/** The v1.0.14 chart: webhooks enabled on 8443. */
function webhookEra(f: Facts) {
  if (f.kube.release.ok && f.kube.release.value) {
    f.kube.release.value.chartVersion = '1.0.14'
    f.kube.release.value.appVersion = '1.0.14'
    f.kube.release.value.computedValues.webhook = { enabled: true, port: 8443 }
  }
}

test('v1.14 runs no webhooks: skipped, saying the rule is unneeded', () => {
  const r = runCheck(sgWebhook8443, healthyFacts())
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no webhooks: an 8443 rule is not needed/)
})

test('v1.0.14 with the 8443 rule from the cluster SG passes', () => {
  const r = runCheck(sgWebhook8443, healthyFacts(webhookEra))
  assert.equal(r.status, 'pass')
})

test('v1.0.14 without the rule fails naming both groups, with the authorize command', () => {
  const r = runCheck(
    sgWebhook8443,
    healthyFacts((f) => {
      webhookEra(f)
      if (f.ec2.securityGroupsByNodeClass.default?.ok)
        f.ec2.securityGroupsByNodeClass.default.value[0]!.ingress = []
    }),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings[0]!.subject, NODE_SG)
  assert.equal(
    r.findings[0]!.fix!.commands![0],
    `aws ec2 authorize-security-group-ingress --group-id ${NODE_SG} --protocol tcp --port 8443 --source-group ${CLUSTER_SG} --region us-west-2`,
  )
})

test('v1.0.14 with webhook.enabled=false: skipped', () => {
  const r = runCheck(
    sgWebhook8443,
    healthyFacts((f) => {
      webhookEra(f)
      if (f.kube.release.ok && f.kube.release.value)
        f.kube.release.value.computedValues.webhook = { enabled: false }
    }),
  )
  assert.equal(r.status, 'skipped')
})

test('security groups unreadable: unknown', () => {
  const r = runCheck(
    sgWebhook8443,
    healthyFacts((f) => {
      webhookEra(f)
      f.ec2.securityGroupsByNodeClass.default = failed(
        'ec2:DescribeSecurityGroups',
        'Throttling',
        'throttled',
      )
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /throttled/)
})

test('a rule for all traffic from the cluster SG counts', () => {
  const r = runCheck(
    sgWebhook8443,
    healthyFacts((f) => {
      webhookEra(f)
      f.ec2.securityGroupsByNodeClass.default = ok([
        {
          id: NODE_SG,
          name: 'n',
          vpcId: 'v',
          tags: {},
          ingress: [{ protocol: '-1', cidrs: [], sourceGroupIds: [CLUSTER_SG] }],
        },
      ])
    }),
  )
  assert.equal(r.status, 'pass')
})

/** The node group's 8443 rule replaced by one from these CIDRs (terraform `cidr_blocks`, aws/karpenter-provider-aws#1165). */
const cidrRule = (cidrs: string[], subnetCidrs = true) =>
  healthyFacts((f) => {
    webhookEra(f)
    if (f.ec2.securityGroupsByNodeClass.default?.ok)
      f.ec2.securityGroupsByNodeClass.default.value[0]!.ingress = [
        { protocol: 'tcp', fromPort: 8443, toPort: 8443, cidrs, sourceGroupIds: [] },
      ]
    if (!subnetCidrs && f.ec2.subnetsByNodeClass.default?.ok)
      for (const s of f.ec2.subnetsByNodeClass.default.value) delete s.cidr
  })

test("an 8443 rule from a CIDR that holds the cluster's subnets (the control plane's interfaces are there) passes", () => {
  const vpc = runCheck(sgWebhook8443, cidrRule(['10.0.0.0/16']))
  assert.equal(vpc.status, 'pass', vpc.findings[0]?.message)
  assert.match(
    vpc.findings[0]!.message,
    /from 10\.0\.0\.0\/16, which holds the cluster's subnets \(10\.0\.0\.0\/19\)/,
  )
  assert.equal(runCheck(sgWebhook8443, cidrRule(['0.0.0.0/0'])).status, 'pass')
  // Another range: the control plane cannot reach it.
  const other = runCheck(sgWebhook8443, cidrRule(['10.1.0.0/16']))
  assert.equal(other.status, 'fail')
  // A /24 inside the /19 holds only part of the subnets: not enough.
  assert.equal(runCheck(sgWebhook8443, cidrRule(['10.0.0.0/24'])).status, 'fail')
  // The subnets' CIDRs not read: unknown, never a pass or a fail.
  const unread = runCheck(sgWebhook8443, cidrRule(['10.0.0.0/16'], false))
  assert.equal(unread.status, 'unknown')
  assert.match(unread.findings[0]!.message, /whether that holds the control plane's addresses is unknown/)
})
