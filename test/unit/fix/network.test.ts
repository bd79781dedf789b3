// The network repairs --fix plans, built from hand-made findings: the webhook's tcp/8443 rule per
// node security group (its address, ARN and record), and the discovery tags, only for the plain
// `karpenter.sh/discovery=<cluster>` selector.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import { discovery, sgWebhook } from '../../../src/fix/network.js'
import { REPAIRED_INGRESS } from '../../../src/plan/resources/webhook-ingress.js'
import { ACCOUNT, CLUSTER, CLUSTER_SG, failed, healthyFacts, NODE_SG, REGION } from '../../helpers/facts.js'

const webhook = (evidence?: Record<string, unknown>): Finding => ({
  status: 'fail',
  message: 'no 8443',
  ...(evidence ? { evidence } : {}),
})

test('sgWebhook: one rule per node group with both groups known; the rest manual', () => {
  const facts = healthyFacts()
  const both = webhook({ securityGroup: NODE_SG, clusterSecurityGroup: CLUSTER_SG })
  const second = webhook({ securityGroup: 'sg-2', clusterSecurityGroup: CLUSTER_SG })
  const noCluster = webhook({ securityGroup: 'sg-3' })
  const noGroup = webhook({ clusterSecurityGroup: CLUSTER_SG })
  const bare = webhook()
  const built = sgWebhook(facts, [both, second, noCluster, noGroup, bare], 'sg-webhook-8443', {})
  assert.deepEqual(
    built.resources.map((r) => [r.address, r.group, r.desired, r.permissions.map((p) => p.resource)]),
    [
      [
        `ec2-ingress.webhook-8443.${NODE_SG}`,
        'fix: sg-webhook-8443',
        { groupId: NODE_SG, protocol: 'tcp', port: 8443, source: CLUSTER_SG },
        Array(2).fill(`arn:aws:ec2:${REGION}:${ACCOUNT}:security-group/${NODE_SG}`),
      ],
      [
        'ec2-ingress.webhook-8443.sg-2',
        'fix: sg-webhook-8443',
        { groupId: 'sg-2', protocol: 'tcp', port: 8443, source: CLUSTER_SG },
        Array(2).fill(`arn:aws:ec2:${REGION}:${ACCOUNT}:security-group/sg-2`),
      ],
    ],
  )
  // A finding naming its node group is not listed manual (its rule is planned, or needs the cluster group).
  assert.deepEqual(built.manual, [noGroup, bare])
})

test('sgWebhook records the rule as a repair, and an account id that is not known leaves the ARN without one', () => {
  const facts = healthyFacts((f) => {
    f.meta.accountId = undefined
    f.meta.partition = 'aws-cn'
  })
  const [r] = sgWebhook(
    facts,
    [webhook({ securityGroup: NODE_SG, clusterSecurityGroup: CLUSTER_SG })],
    'c',
    {},
  ).resources
  assert.equal(r!.permissions[0]!.resource, `arn:aws-cn:ec2:${REGION}::security-group/${NODE_SG}`)
  const v = r!.verdict({ present: false, tags: {} })
  assert.equal(v.note, `recorded as the ${REPAIRED_INGRESS} tag on ${NODE_SG}`)
})

const unmatched = (code: string, selector: unknown, message = code): Finding => ({
  status: 'fail',
  code,
  message,
  evidence: { selector },
})
const plain = [{ tags: { 'karpenter.sh/discovery': CLUSTER } }]

test('discovery: the plain selector tags the cluster subnets and its security group; a custom one is manual', () => {
  const facts = healthyFacts()
  const subnets = unmatched('subnets-unmatched', plain)
  const groups = unmatched('security-groups-unmatched', plain)
  const other = unmatched('subnets-unmatched', [{ tags: { 'karpenter.sh/discovery': 'tenant-a' } }], 'a')
  const byId = unmatched('subnets-unmatched', [{ id: 'subnet-9', tags: plain[0]!.tags }], 'id')
  const extraTag = unmatched('subnets-unmatched', [{ tags: { ...plain[0]!.tags, team: 'x' } }], 'extra')
  const partly = unmatched('subnets-unmatched', [...plain, { tags: { team: 'x' } }], 'partly')
  const empty = unmatched('subnets-unmatched', [], 'empty')
  const noSelector: Finding = { status: 'fail', code: 'subnets-unmatched', message: 'none' }
  const otherCode = unmatched('no-subnets', plain, 'other code')
  const failing = [subnets, groups, other, byId, extraTag, partly, empty, noSelector, otherCode]
  const built = discovery(facts, failing, 'discovery-tags', {})
  assert.deepEqual(
    built.resources.map((r) => [r.address, r.group, r.name, r.desired]),
    [
      [
        'ec2-tags.discovery',
        'fix: discovery-tags',
        `karpenter.sh/discovery=${CLUSTER}`,
        {
          tag: { 'karpenter.sh/discovery': CLUSTER },
          subnets: ['subnet-0a', 'subnet-0b', 'subnet-0c'],
          securityGroups: [CLUSTER_SG],
        },
      ],
    ],
  )
  assert.deepEqual(
    built.resources[0]!.permissions.map((p) => p.resource),
    [
      `arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/subnet-0a`,
      `arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/subnet-0b`,
      `arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/subnet-0c`,
      `arn:aws:ec2:${REGION}:${ACCOUNT}:security-group/${CLUSTER_SG}`,
    ],
  )
  assert.deepEqual(built.manual, [other, byId, extraTag, partly, empty, noSelector, otherCode])
  assert.match(built.resources[0]!.verdict({}).note ?? '', /karpctl\.io\/repaired-tags/)
})

test('discovery: only the kind that failed is tagged; the cluster group falls back to its first group', () => {
  const onlySubnets = discovery(healthyFacts(), [unmatched('subnets-unmatched', plain)], 'c', {})
  assert.deepEqual(onlySubnets.resources[0]!.desired.securityGroups, [])
  assert.deepEqual(onlySubnets.manual, [])

  const noClusterGroup = healthyFacts((f) => {
    if (!f.eks.cluster.ok || !f.eks.cluster.value) throw new Error('no cluster')
    f.eks.cluster.value.clusterSecurityGroupId = undefined
    f.eks.cluster.value.securityGroupIds = ['sg-first', 'sg-second']
  })
  const groups = discovery(noClusterGroup, [unmatched('security-groups-unmatched', plain)], 'c', {})
  assert.deepEqual(groups.resources[0]!.desired, {
    tag: { 'karpenter.sh/discovery': CLUSTER },
    subnets: [],
    securityGroups: ['sg-first'],
  })

  const noGroupAtAll = healthyFacts((f) => {
    if (!f.eks.cluster.ok || !f.eks.cluster.value) throw new Error('no cluster')
    f.eks.cluster.value.clusterSecurityGroupId = undefined
    f.eks.cluster.value.securityGroupIds = []
    f.meta.accountId = undefined
  })
  const none = discovery(
    noGroupAtAll,
    [unmatched('security-groups-unmatched', plain), unmatched('subnets-unmatched', plain)],
    'c',
    {},
  )
  assert.deepEqual(none.resources[0]!.desired.securityGroups, [])
  assert.deepEqual(
    none.resources[0]!.permissions[0]!.resource,
    `arn:aws:ec2:${REGION}::subnet/subnet-0a`,
    'no account id known: none in the ARN',
  )
})

test('discovery: without the cluster read, nothing is planned and every finding is manual', () => {
  const facts = healthyFacts((f) => {
    f.eks.cluster = failed('the cluster')
  })
  const failing = [unmatched('subnets-unmatched', plain), unmatched('security-groups-unmatched', plain)]
  const built = discovery(facts, failing, 'c', {})
  assert.deepEqual(built, { resources: [], manual: failing })
})
