import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { narrowTrust } from '../../../src/fix/iam.js'
import { evaluated, nodeClasses, setQueueSetting } from '../../helpers/check-fixtures.js'
import { ACCOUNT, CONTROLLER_ROLE, healthyFacts, NODE_ROLE, NODE_ROLE_ARN, ok } from '../../helpers/facts.js'
import { repoRoot } from '../../helpers/fixtures.js'

const broken = () =>
  JSON.parse(readFileSync(join(repoRoot, 'examples', 'shared-cluster-broken.json'), 'utf8')) as Facts

test('the broken example: 5 of its 7 failing findings are fixed automatically, 2 need a human and say why', () => {
  const facts = broken()
  const fs = fixSet(facts, runChecks(catalog, facts))
  assert.deepEqual(
    fs.resources.map((r) => [r.address, r.group]),
    [
      ['ec2-ingress.webhook-8443.sg-0a0de0a0de0a0de0a', 'fix: sg-webhook-8443'],
      ['iam-trust.controller', 'fix: irsa-trust-policy'],
      ['iam-policy.passrole-fix', 'fix: passrole-node-role'],
      ['kube.sa-annotation.eks.amazonaws.com/sts-regional-endpoints', 'fix: sts-regional-annotation'],
      ['helm.karpenter.repair', 'fix: toleration-value-types'],
    ],
  )
  assert.deepEqual(
    fs.manual.map((m) => m.check),
    ['discovery-tags', 'helm-release'],
  )
  assert.match(fs.manual[1]!.why, /Helm repair in this plan/)
  assert.ok(fs.touched.includes('helm-release'), 'the failed release is judged again after the repair')
  assert.match(
    fs.manual[0]!.message,
    /tenant-globex/,
    "a tenant's own subnet selector is its design, not a fix",
  )
  assert.ok(
    fs.manual.every((m) => m.why && m.commands.length > 0),
    'each manual finding keeps its commands',
  )
  const pass = fs.resources.find((r) => r.address === 'iam-policy.passrole-fix')!
  assert.match(JSON.stringify(pass.documents), /"Action":"iam:PassRole"/)
  assert.match(JSON.stringify(pass.documents), /"iam:PassedToService":\["ec2.amazonaws.com"/)
})

test('a healthy cluster has nothing to fix; --only limits what may be fixed', () => {
  const h = healthyFacts()
  assert.deepEqual(fixSet(h, runChecks(catalog, h)).resources, [])
  const facts = broken()
  const only = fixSet(facts, runChecks(catalog, facts), { selected: (id) => id === 'passrole-node-role' })
  assert.deepEqual(
    only.resources.map((r) => r.address),
    ['iam-policy.passrole-fix'],
  )
})

test('narrowTrust rewrites only the IRSA statement: exact :sub and :aud with StringEquals, other statements kept', () => {
  const issuer = 'oidc.eks.us-west-2.amazonaws.com/id/X'
  const irsa = {
    Effect: 'Allow' as const,
    Principal: { Federated: `arn:aws:iam::1:oidc-provider/${issuer}` },
    Action: 'sts:AssumeRoleWithWebIdentity',
    Condition: {
      StringLike: { [`${issuer}:sub`]: 'system:serviceaccount:*:*' },
      StringEquals: { 'aws:PrincipalTag/team': 'x' },
    },
  }
  const other = {
    Effect: 'Allow' as const,
    Principal: { Service: 'ec2.amazonaws.com' },
    Action: 'sts:AssumeRole',
  }
  const trust: PolicyDocument = { Version: '2012-10-17', Statement: [irsa, other] }
  const out = narrowTrust(trust, irsa, issuer, 'system:serviceaccount:kube-system:karpenter')
  assert.deepEqual(out.Statement[1], other)
  assert.deepEqual(out.Statement[0]!.Condition, {
    StringEquals: {
      'aws:PrincipalTag/team': 'x',
      [`${issuer}:aud`]: 'sts.amazonaws.com',
      [`${issuer}:sub`]: 'system:serviceaccount:kube-system:karpenter',
    },
  })
})

test('a controller role managed by CloudFormation: its trust is left to the stack, listed as manual', () => {
  const facts = broken()
  const name = facts.iam.controllerRoleName!
  const role = facts.iam.roles[name]!
  assert.ok(role.ok && role.value)
  role.value.role.tags = { ...role.value.role.tags, 'aws:cloudformation:stack-name': 'Karpenter-demo' }
  const fs = fixSet(facts, runChecks(catalog, facts))
  assert.ok(!fs.resources.some((r) => r.address === 'iam-trust.controller'))
  assert.ok(
    fs.manual.some(
      (m) => m.check === 'irsa-trust-policy' && /CloudFormation stack Karpenter-demo/.test(m.message),
    ),
  )
})

test('the PassRole fix names every node role in use: put-role-policy replaces the policy, so a grant of only the failing role would take PassRole from a role an earlier fix granted', () => {
  const granted = `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo-acme`
  const facts = healthyFacts((f) => {
    nodeClasses({ role: NODE_ROLE }, { role: 'KarpenterNodeRole-demo-acme' })(f)
    evaluated({ decision: 'implicitDeny', matchedStatements: [] })(f)
    evaluated({}, granted)(f)
  })
  const fs = fixSet(facts, runChecks(catalog, facts), { selected: (id) => id === 'passrole-node-role' })
  const pass = fs.resources.find((r) => r.address === 'iam-policy.passrole-fix')
  assert.ok(pass, 'a PassRole fix')
  assert.equal(pass.name, `${CONTROLLER_ROLE}/KarpctlPassNodeRoles`)
  assert.deepEqual(pass.documents?.KarpctlPassNodeRoles, {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPassingInstanceRole',
        Effect: 'Allow',
        Resource: [NODE_ROLE_ARN, granted],
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
      },
    ],
  })
})

test('the queue\'s ARN of another region is not "fixed" to its bare name (another queue here): manual, with the check\'s commands', () => {
  const only = { selected: (id: string) => id === 'interruption-queue' }
  const here = healthyFacts(setQueueSetting(`arn:aws:sqs:us-west-2:${ACCOUNT}:demo`))
  assert.ok(
    fixSet(here, runChecks(catalog, here), only).resources.length > 0,
    'this region: set in a Helm repair',
  )
  // What the collector reads for a queue elsewhere: no queue in this region.
  const there = healthyFacts((f) => {
    setQueueSetting(`arn:aws:sqs:eu-west-1:${ACCOUNT}:demo`)(f)
    f.sqs.queue = ok(null)
  })
  const fs = fixSet(there, runChecks(catalog, there), only)
  assert.deepEqual(fs.resources, [])
  assert.equal(fs.manual.length, 1)
  assert.match(fs.manual[0]!.message, /of a queue in eu-west-1/)
  assert.match(fs.manual[0]!.commands.join('\n'), /aws sqs create-queue --queue-name demo --region us-west-2/)
})
