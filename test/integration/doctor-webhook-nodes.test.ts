// sg-webhook-8443 on a 1.0.14 install, through the HTTP layer: the controller's nodes (pods → Node
// providerID → one DescribeInstances) and the groups on their instances, read once each, judged where
// the webhook is served; a denied DescribeInstances is unknown, never the EC2NodeClasses' verdict.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { CheckResult } from '../../src/checks/types.js'
import { CallLog } from '../../src/context/limiter.js'
import { doctor, type DoctorOutcome } from '../../src/doctor/doctor.js'
import { CLUSTER_SG, NODE_SG, VPC } from '../helpers/facts.js'
import {
  defaultReleaseValues,
  helmReleaseSecret,
  startMockCluster,
  type MockOptions,
  type MockState,
} from '../helpers/mock-cluster.js'

const NG_SG = 'sg-0ae0ae0ae0ae0ae0a'

/** A 1.0.14 install (webhooks on 8443); `nodeGroupIngress`: the node group's own SG, on its instances. */
function v1014(nodeGroupIngress?: MockState['securityGroups'][number]['ingress']) {
  return (s: MockState) => {
    s.kube.helmSecrets = [
      helmReleaseSecret({
        chartVersion: '1.0.14',
        values: { ...defaultReleaseValues(), webhook: { enabled: true, port: 8443 } },
      }),
    ]
    if (!nodeGroupIngress) return
    s.securityGroups.push({ id: NG_SG, name: 'demo-ng', vpcId: VPC, tags: {}, ingress: nodeGroupIngress })
    for (const i of s.instances ?? []) i.enis = [[NG_SG], [NG_SG]]
  }
}

async function run(t: TestContext, options: MockOptions) {
  const m = startMockCluster(options)
  t.after(() => m.stop())
  const outcome = await doctor({ live: m.runOptions({ maxAttempts: 1 }) })
  return { m, outcome, r: outcome.results.find((x) => x.meta.id === 'sg-webhook-8443')! }
}
const show = (r: CheckResult) => r.findings.map((f) => `${f.status}: ${f.message}`).join('\n')

function readsOnce({ m, outcome }: { m: ReturnType<typeof startMockCluster>; outcome: DoctorOutcome }) {
  const log = new CallLog()
  for (const c of outcome.calls ?? []) log.record(c)
  assert.deepEqual(log.duplicates(), [])
  assert.deepEqual(m.duplicates(), [])
  assert.deepEqual(m.unexpected(), [], 'reads the mock did not expect')
  assert.ok(m.isDone(), `expected reads never made:\n${m.pending().join('\n')}`)
}

test("1.0.14 with the controller on the EC2NodeClass's group: one DescribeInstances, that group not read again, pass", async (t) => {
  const got = await run(t, { mutate: v1014() })
  assert.equal(got.r.status, 'pass', show(got.r))
  assert.equal(got.r.findings[0]!.message, `${NODE_SG} allows tcp/8443 from ${CLUSTER_SG}`)
  assert.equal(got.m.count('ec2:DescribeInstances'), 1)
  readsOnce(got)
  const nodes = got.outcome.facts.ec2.controllerNodes
  assert.ok(nodes?.ok)
  assert.deepEqual(
    nodes.value.map((n) => [n.name, n.instanceId]),
    [
      ['ip-10-0-1-1', 'i-010011'],
      ['ip-10-0-2-1', 'i-010021'],
    ],
  )
})

test("the controller's node group SG lacks the rule while the EC2NodeClass's has it: fails on the node group SG", async (t) => {
  const got = await run(t, { mutate: v1014([]) })
  assert.equal(got.r.status, 'fail', show(got.r))
  assert.equal(got.r.findings[0]!.subject, NG_SG)
  assert.match(got.r.findings[0]!.message, /controller's nodes ip-10-0-1-1, ip-10-0-2-1/)
  assert.equal(
    got.m.count('ec2:DescribeSecurityGroups'),
    3,
    'the node class term, the cluster SG, the node group SG',
  )
  readsOnce(got)
})

test('the node group SG has the rule: pass, whatever the EC2NodeClass has', async (t) => {
  const rule = { protocol: 'tcp', fromPort: 8443, toPort: 8443, cidrs: [], sourceGroupIds: [CLUSTER_SG] }
  const got = await run(t, {
    mutate: (s) => {
      v1014([rule])(s)
      s.securityGroups.find((g) => g.id === NODE_SG)!.ingress = []
    },
  })
  assert.equal(got.r.status, 'pass', show(got.r))
  assert.equal(got.r.findings[0]!.message, `${NG_SG} allows tcp/8443 from ${CLUSTER_SG}`)
})

test('DescribeInstances denied: unknown with the reason, not the EC2NodeClasses verdict', async (t) => {
  const got = await run(t, {
    mutate: v1014(),
    faults: [{ op: 'ec2:DescribeInstances', error: 'denied', times: Infinity }],
  })
  assert.equal(got.r.status, 'unknown', show(got.r))
  assert.match(show(got.r), /permission denied/)
})

test('Karpenter 1.14 runs no webhooks: no DescribeInstances', async (t) => {
  const got = await run(t, {})
  assert.equal(got.r.status, 'skipped')
  assert.equal(got.m.count('ec2:DescribeInstances'), 0)
  assert.equal(got.outcome.facts.ec2.controllerNodes, undefined)
})
