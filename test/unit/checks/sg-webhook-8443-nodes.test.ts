// sg-webhook-8443 judges the security groups of the nodes the controller's pods run on (the webhook's
// endpoints are those pods' IPs, on those nodes' network interfaces), not the EC2NodeClasses': both
// ways they differ in the field, the fallback when the nodes are not known, and unknown when the
// instances could not be read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCheck } from '../../../src/checks/run.js'
import { sgWebhook8443 } from '../../../src/checks/sg-webhook-8443.js'
import type { ControllerNode, Facts, SecurityGroup, SgPermission } from '../../../src/facts/types.js'
import { CLUSTER_SG, failed, healthyFacts, NODE_SG, ok, VPC } from '../../helpers/facts.js'

const NG_SG = 'sg-0ae0ae0ae0ae0ae0a'
const FROM_CLUSTER: SgPermission = {
  protocol: 'tcp',
  fromPort: 8443,
  toPort: 8443,
  cidrs: [],
  sourceGroupIds: [CLUSTER_SG],
}
const group = (id: string, ingress: SgPermission[] = []): SecurityGroup => ({
  id,
  name: id,
  vpcId: VPC,
  tags: {},
  ingress,
})
const onNodes = (groups: SecurityGroup[]): ControllerNode[] =>
  ['ip-10-0-1-1', 'ip-10-0-2-1'].map((name, i) => ({
    name,
    fargate: false,
    instanceId: `i-0${i}`,
    securityGroups: groups,
  }))

/** The v1.0.14 chart (webhooks on 8443), the EC2NodeClass's group with `nodeClassIngress`. */
function webhookEra(nodeClassIngress: SgPermission[], controllerNodes?: Facts['ec2']['controllerNodes']) {
  return healthyFacts((f) => {
    if (f.kube.release.ok && f.kube.release.value) {
      f.kube.release.value.chartVersion = '1.0.14'
      f.kube.release.value.computedValues.webhook = { enabled: true, port: 8443 }
    }
    f.ec2.securityGroupsByNodeClass.default = ok([group(NODE_SG, nodeClassIngress)])
    if (controllerNodes) f.ec2.controllerNodes = controllerNodes
  })
}

test("the controller's node group SG lacks the rule while the EC2NodeClass's has it: fails on the node group SG", () => {
  const r = runCheck(sgWebhook8443, webhookEra([FROM_CLUSTER], ok(onNodes([group(NG_SG)]))))
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1)
  const f = r.findings[0]!
  assert.equal(f.subject, NG_SG)
  assert.match(f.message, /\(the controller's nodes ip-10-0-1-1, ip-10-0-2-1\) has no ingress tcp\/8443/)
  assert.deepEqual((f.evidence as { securityGroup: string }).securityGroup, NG_SG)
  assert.equal(
    f.fix!.commands![0],
    `aws ec2 authorize-security-group-ingress --group-id ${NG_SG} --protocol tcp --port 8443 --source-group ${CLUSTER_SG} --region us-west-2`,
  )
})

test("the EC2NodeClass's SG has no rule but the controller's nodes' SG does: passes", () => {
  const r = runCheck(sgWebhook8443, webhookEra([], ok(onNodes([group(NG_SG, [FROM_CLUSTER])]))))
  assert.equal(r.status, 'pass')
  assert.equal(r.findings[0]!.message, `${NG_SG} allows tcp/8443 from ${CLUSTER_SG}`)
})

test('any one group on the nodes with the rule is enough (AWS allows what any group allows)', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEra([], ok(onNodes([group(NG_SG), group(NODE_SG, [FROM_CLUSTER])]))),
  )
  assert.equal(r.status, 'pass')
  const none = runCheck(sgWebhook8443, webhookEra([], ok(onNodes([group(NG_SG), group(NODE_SG)]))))
  assert.equal(none.status, 'fail')
  assert.match(none.findings[0]!.message, new RegExp(`nor do ${NODE_SG} beside it`))
})

test("nodes that carry the cluster security group (EKS's managed node group default): passes", () => {
  const r = runCheck(sgWebhook8443, webhookEra([], ok(onNodes([group(CLUSTER_SG)]))))
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /carry the cluster security group .* within one group/)
})

test('a CIDR rule on the nodes that holds the cluster subnets passes; one that does not fails', () => {
  const cidr = (c: string): SgPermission => ({ ...FROM_CLUSTER, sourceGroupIds: [], cidrs: [c] })
  assert.equal(
    runCheck(sgWebhook8443, webhookEra([], ok(onNodes([group(NG_SG, [cidr('10.0.0.0/16')])])))).status,
    'pass',
  )
  assert.equal(
    runCheck(sgWebhook8443, webhookEra([], ok(onNodes([group(NG_SG, [cidr('10.9.0.0/16')])])))).status,
    'fail',
  )
})

test('the controller on Fargate: its ENI carries the cluster SG, passes whatever the EC2NodeClass has', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEra([], ok([{ name: 'fargate-ip-192-168-1-1.us-west-2.compute.internal', fargate: true }])),
  )
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /runs on EKS Fargate \(fargate-ip-192-168-1-1/)
})

test('pods run but their instances could not be read: unknown with the reason, not the EC2NodeClasses', () => {
  const r = runCheck(
    sgWebhook8443,
    webhookEra([FROM_CLUSTER], failed('ec2:DescribeInstances', 'UnauthorizedOperation', 'denied')),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /permission denied/)
  const gone = runCheck(
    sgWebhook8443,
    webhookEra(
      [FROM_CLUSTER],
      ok([{ name: 'n-1', fargate: false, instanceId: 'i-0d', unresolved: 'instance i-0d was not found' }]),
    ),
  )
  assert.equal(gone.status, 'unknown')
  assert.match(gone.findings[0]!.message, /node n-1 runs a controller pod.*instance i-0d was not found/)
})

test("the controller's nodes not known: the EC2NodeClasses' groups are judged, saying why", () => {
  const caveat = (f: Facts) => runCheck(sgWebhook8443, f).findings[0]!.caveats?.[0] ?? ''
  const old = webhookEra([])
  assert.equal(runCheck(sgWebhook8443, old).status, 'fail')
  assert.match(caveat(old), /EC2NodeClasses' security groups: .*a snapshot from before/)
  assert.match(caveat(webhookEra([FROM_CLUSTER], ok([]))), /no controller pod is scheduled on a node/)
  const unlisted = webhookEra([FROM_CLUSTER], failed('kubernetes: nodes', 'Forbidden', 'denied'))
  unlisted.kube.nodes = failed('kubernetes: nodes', 'Forbidden', 'denied')
  assert.equal(runCheck(sgWebhook8443, unlisted).status, 'pass')
  assert.match(caveat(unlisted), /pods or nodes could not be listed \(.*permission denied/)
})
