// Teardown plans what the running install is made of, not karpctl's conventions alone: an eksctl
// controller role holds the tenants' grants, the queue is the one in the settings, the rules are those
// delivering to it — and never another cluster's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RunContext } from '../../../src/context/run-context.js'
import type { Facts } from '../../../src/facts/types.js'
import { interruptionRules } from '../../../src/desired/interruption.js'
import { discovered, teardownResources } from '../../../src/teardown/teardown.js'
import { ACCOUNT, CONTROLLER_ROLE, healthyFacts, REGION } from '../../helpers/facts.js'

function ctx(roles: string[]): RunContext {
  return {
    options: { clusterName: 'demo', region: REGION },
    kube: { get: async () => ({ items: [] }) },
    aws: { all: async () => roles.map((RoleName) => ({ RoleName })) },
  } as unknown as RunContext
}

const eksctlShaped = (f: Facts) => {
  f.iam.controllerRoleName = 'demo-karpenter'
  if (f.sqs.queue.ok && f.sqs.queue.value) {
    f.sqs.queue.value.name = 'Karpenter-demo'
    f.sqs.queue.value.arn = `arn:aws:sqs:${REGION}:${ACCOUNT}:Karpenter-demo`
  }
  if (f.events.rules.ok) {
    for (const r of f.events.rules.value) {
      r.name = `${r.name}-TF`
      r.targetArns = [`arn:aws:sqs:${REGION}:${ACCOUNT}:Karpenter-demo`]
    }
    // Another cluster's rule, to its own queue: never this teardown's.
    f.events.rules.value.push({
      name: 'Karpenter-other-SpotInterruption',
      arn: `arn:aws:events:${REGION}:${ACCOUNT}:rule/Karpenter-other-SpotInterruption`,
      state: 'ENABLED',
      eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
      targetArns: [`arn:aws:sqs:${REGION}:${ACCOUNT}:other`],
    })
  }
}

test('discovered: the controller role, the queue in the settings and only the rules delivering to it', () => {
  const d = discovered(healthyFacts(eksctlShaped))
  assert.equal(d.controllerRole, 'demo-karpenter')
  assert.equal(d.queue, 'Karpenter-demo')
  assert.equal(d.rules.length, 5)
  assert.ok(d.rules.every((r) => r.endsWith('-TF')))
  assert.equal(d.serviceAccount, 'karpenter')
})

test('teardown plans the discovered names beside the conventional ones; tenants’ grants on the real role', async () => {
  const rs = await teardownResources(ctx(['KarpenterNodeRole-demo-acme']), healthyFacts(eksctlShaped), {
    keepCrds: false,
    sweep: false,
    timeoutMs: 1000,
  })
  const byAddress = new Map(rs.map((r) => [r.address, r]))
  assert.equal(byAddress.get('iam-role.controller')?.name, 'KarpenterControllerRole-demo')
  assert.equal(byAddress.get('iam-role.controller-found')?.name, 'demo-karpenter')
  assert.equal(byAddress.get('sqs-queue.interruption-found')?.name, 'Karpenter-demo')
  const rules = rs.filter((r) => r.address.startsWith('events-rule.found.')).map((r) => r.name)
  assert.equal(rules.length, 5)
  assert.ok(!rules.includes('Karpenter-other-SpotInterruption'))
  assert.equal(
    byAddress.get('tenant.acme.iam-policy.tenant-passrole')?.name,
    'demo-karpenter/KarpctlTenantPassRole-acme',
  )
  // The discovered role goes after the tenants' grants on it, like the conventional one.
  assert.ok(
    byAddress.get('iam-role.controller-found')?.dependsOn.includes('tenant.acme.iam-policy.tenant-passrole'),
  )
})

test('an install with karpctl’s own names plans each once', async () => {
  const conventional = interruptionRules('demo')
  const facts = healthyFacts((f) => {
    if (f.events.rules.ok) f.events.rules.value.forEach((r, i) => (r.name = conventional[i]!.name))
  })
  const rs = await teardownResources(ctx([]), facts, {
    keepCrds: false,
    sweep: false,
    timeoutMs: 1000,
  })
  assert.equal(rs.filter((r) => r.kind === 'IAM role' && r.name === CONTROLLER_ROLE).length, 1)
  assert.ok(!rs.some((r) => r.address === 'iam-role.controller-found'))
  assert.ok(!rs.some((r) => r.address === 'sqs-queue.interruption-found'))
  assert.ok(!rs.some((r) => r.address.startsWith('events-rule.found.')))
})

test('a tenant on a cluster that allows access entries loses both its access entry and its aws-auth mapping', async () => {
  const rs = await teardownResources(
    ctx(['KarpenterNodeRole-demo-acme']),
    healthyFacts((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value)
        f.eks.cluster.value.authenticationMode = 'API_AND_CONFIG_MAP'
    }),
    { keepCrds: false, sweep: false, timeoutMs: 1000 },
  )
  const addresses = rs.map((r) => r.address)
  assert.ok(addresses.includes('tenant.acme.eks-access-entry.remove'))
  assert.ok(addresses.includes('tenant.acme.aws-auth.remove'))
  const role = rs.find((r) => r.address === 'tenant.acme.iam-role.tenant')!
  assert.ok(role.dependsOn.includes('tenant.acme.aws-auth.remove'))
  assert.ok(role.dependsOn.includes('tenant.acme.eks-access-entry.remove'))
})
