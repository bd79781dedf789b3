// The IAM repairs, built from hand-made findings: which findings each builder repairs, the exact
// resource it plans (address, role, document, record), and what it leaves manual and why — a
// CloudFormation stack's role, a boundary or Deny, a policy past IAM's size limit.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Finding } from '../../../src/checks/types.js'
import { INLINE_LIMIT } from '../../../src/checks/controller-policy.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import { controllerPolicy, irsaTrust, narrowTrust, nodeRole, passRole, spot } from '../../../src/fix/iam.js'
import { REPAIRED_INLINE } from '../../../src/desired/ownership.js'
import {
  ACCOUNT,
  CLUSTER,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  failed,
  healthyFacts,
  irsaTrust as trustOf,
  ISSUER,
  NODE_ROLE,
  NODE_ROLE_ARN,
  nodeRole as nodeRoleFacts,
  OIDC_ARN,
  ok,
  REGION,
} from '../../helpers/facts.js'
import { nodeClasses } from '../../helpers/check-fixtures.js'
import { EKSCTL_STACK, notOwned, ownedBy, ownerUnknown } from '../../helpers/owners.js'

const fail = (over: Partial<Finding> = {}): Finding => ({ status: 'fail', message: 'm', ...over })
const stackRole = (name: string) => (f: Facts) => ownedBy(f, name, EKSCTL_STACK, 'Role1', 'AWS::IAM::Role')
const heldWhy = (what: string) =>
  `${what} belongs to CloudFormation stack ${EKSCTL_STACK}: change it in the stack, a direct change is drift the stack reverts`
const doc = (...actions: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: actions, Resource: '*' }],
})

test('passRole: one inline grant of every node role in use and each failing one; boundary denials and non-ARNs manual', () => {
  const other = `arn:aws:iam::${ACCOUNT}:role/Other`
  const facts = healthyFacts((f) => {
    nodeClasses({ role: NODE_ROLE })(f)
    f.iam.roles.Other = ok(nodeRoleFacts('Other'))
  })
  const failing = [
    fail({ subject: other }),
    fail({ subject: other, evidence: { permissionsBoundary: { decision: 'allowed' } } }),
    fail({ subject: NODE_ROLE_ARN, evidence: { permissionsBoundary: {} } }),
  ]
  const denied = fail({ subject: other, evidence: { permissionsBoundary: { decision: 'explicitDeny' } } })
  const notArn = fail({ subject: 'KarpenterNodeRole-x' })
  const noSubject = fail()
  const built = passRole(facts, [...failing, denied, notArn, noSubject], 'passrole-node-role', {})
  assert.deepEqual(built.manual, [denied, notArn, noSubject])
  assert.equal(built.resources.length, 1)
  const r = built.resources[0]!
  assert.deepEqual(
    [r.address, r.name, r.group, r.dependsOn, r.desired],
    [
      'iam-policy.passrole-fix',
      `${CONTROLLER_ROLE}/KarpctlPassNodeRoles`,
      'fix: passrole-node-role',
      [],
      { role: CONTROLLER_ROLE, policy: 'KarpctlPassNodeRoles' },
    ],
  )
  assert.deepEqual(
    r.permissions.map((p) => p.resource),
    [CONTROLLER_ROLE_ARN, CONTROLLER_ROLE_ARN],
    'the role ARN has no region; the grant is recorded on the role',
  )
  assert.deepEqual(
    (r.documents!.KarpctlPassNodeRoles as PolicyDocument).Statement[0]!.Resource,
    [NODE_ROLE_ARN, other],
    'sorted, each once',
  )
  assert.equal(r.verdict({ roleExists: true } as never).note, `recorded as the ${REPAIRED_INLINE} tag`)
})

test('passRole never grants a role that does not exist or could not be read (issue 35, item 6)', () => {
  const missing = `arn:aws:iam::${ACCOUNT}:role/Karpenter-demo`
  const facts = healthyFacts((f) => {
    f.iam.roles['Karpenter-demo'] = ok(null)
    f.iam.roles.Unread = failed('iam:GetRole Unread')
  })
  const failing = [fail({ subject: missing }), fail({ subject: `arn:aws:iam::${ACCOUNT}:role/Unread` })]
  const built = passRole(facts, failing, 'passrole-node-role', {})
  assert.deepEqual(built.resources, [])
  assert.deepEqual(built.manual, failing)
  assert.match(
    built.why!.get(failing[0]!)!,
    /is not proven to exist: fix the EC2NodeClass or create the role first/,
  )
})

test('passRole: no controller role known, or nothing grantable: all manual, nothing planned', () => {
  const failing = [fail({ subject: NODE_ROLE_ARN })]
  const noController = healthyFacts((f) => {
    f.iam.controllerRoleName = null
  })
  assert.deepEqual(passRole(noController, failing, 'c', {}), { resources: [], manual: failing })
  const notArn = [fail({ subject: 'x' })]
  assert.deepEqual(passRole(healthyFacts(), notArn, 'c', {}), { resources: [], manual: notArn })
})

test("passRole on a stack's controller role: every finding manual, naming the stack, 'grant it there'", () => {
  const facts = healthyFacts(stackRole(CONTROLLER_ROLE))
  const f = fail({ subject: NODE_ROLE_ARN, message: 'no PassRole' })
  const built = passRole(facts, [f], 'c', {})
  assert.deepEqual(built.resources, [])
  assert.deepEqual(built.manual, [
    { ...f, message: `no PassRole (managed by CloudFormation stack ${EKSCTL_STACK}: grant it there)` },
  ])
  assert.deepEqual([...built.why!.values()], [heldWhy(`controller role ${CONTROLLER_ROLE}`)])
  assert.equal(built.why!.get(built.manual[0]!), heldWhy(`controller role ${CONTROLLER_ROLE}`))
})

test('narrowTrust: a statement without conditions gets exactly :aud and :sub; an operator holding only them goes', () => {
  const bare: PolicyStatement = {
    Effect: 'Allow',
    Principal: { Federated: OIDC_ARN },
    Action: 'sts:AssumeRoleWithWebIdentity',
  }
  const trust: PolicyDocument = { Version: '2012-10-17', Statement: [bare] }
  assert.deepEqual(narrowTrust(trust, bare, `https://${ISSUER}`, 'system:serviceaccount:ns:sa'), {
    Version: '2012-10-17',
    Statement: [
      {
        ...bare,
        Condition: {
          StringEquals: {
            [`${ISSUER}:aud`]: 'sts.amazonaws.com',
            [`${ISSUER}:sub`]: 'system:serviceaccount:ns:sa',
          },
        },
      },
    ],
  })
  const wide: PolicyStatement = {
    ...bare,
    Condition: {
      StringLike: { [`${ISSUER}:sub`]: '*', [`${ISSUER}:aud`]: '*' },
      StringEquals: { [`${ISSUER}:sub`]: 'x' },
    },
  }
  const out = narrowTrust({ ...trust, Statement: [wide] }, wide, ISSUER, 's')
  assert.deepEqual(out.Statement[0]!.Condition, {
    StringEquals: { [`${ISSUER}:aud`]: 'sts.amazonaws.com', [`${ISSUER}:sub`]: 's' },
  })
})

const wideTrust = (f: Facts) => {
  const r = f.iam.roles[CONTROLLER_ROLE]
  if (!r?.ok || !r.value) throw new Error('no role')
  r.value.role.trust = trustOf('kube-system', '*')
}
const SUB = 'system:serviceaccount:kube-system:karpenter'

test('irsaTrust: the statement trusting the issuer is narrowed to the expected :sub, in one trust rewrite', () => {
  const facts = healthyFacts(wideTrust)
  const narrowed = fail({ evidence: { expectedSub: SUB } })
  const noSub = fail({ evidence: {} })
  const bare = fail()
  const built = irsaTrust(facts, [narrowed, noSub, bare], 'irsa-trust-policy', {})
  assert.deepEqual(built.manual, [noSub, bare])
  assert.equal(built.resources.length, 1)
  const r = built.resources[0]!
  assert.deepEqual(
    [r.address, r.name, r.group, r.permissions.map((p) => p.resource)],
    [
      'iam-trust.controller',
      CONTROLLER_ROLE,
      'fix: irsa-trust-policy',
      [CONTROLLER_ROLE_ARN, CONTROLLER_ROLE_ARN],
    ],
  )
  const trust = r.desired.trust as PolicyDocument
  assert.deepEqual(trust.Statement[0]!.Condition, {
    StringEquals: { [`${ISSUER}:aud`]: 'sts.amazonaws.com', [`${ISSUER}:sub`]: SUB },
  })
  assert.deepEqual(r.verdict(null).changes, [
    { field: 'trust', from: 'as found', to: `irsa :sub narrowed to ${SUB}` },
  ])
})

test("irsaTrust: the finding's own statement is the one narrowed; none trusting the issuer leaves it manual", () => {
  const other: PolicyStatement = {
    Effect: 'Allow',
    Principal: { Federated: 'arn:aws:iam::1:oidc-provider/other' },
    Action: 'sts:AssumeRoleWithWebIdentity',
  }
  const facts = healthyFacts((f) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (!r?.ok || !r.value) throw new Error('no role')
    r.value.role.trust = { Version: '2012-10-17', Statement: [other] }
  })
  const f = fail({ evidence: { expectedSub: SUB } })
  assert.deepEqual(irsaTrust(facts, [f], 'c', {}), { resources: [], manual: [f] })
  const own = fail({ evidence: { expectedSub: SUB, statement: other } })
  const [r] = irsaTrust(facts, [own], 'c', {}).resources
  assert.deepEqual((r!.desired.trust as PolicyDocument).Statement[0]!.Condition, {
    StringEquals: { [`${ISSUER}:aud`]: 'sts.amazonaws.com', [`${ISSUER}:sub`]: SUB },
  })
})

test('irsaTrust: no controller role, role, cluster or issuer: all manual; a stack role: manual naming the stack', () => {
  const f = fail({ evidence: { expectedSub: SUB }, message: 'wide' })
  const cases: ((x: Facts) => void)[] = [
    (x) => {
      x.iam.controllerRoleName = null
    },
    (x) => {
      x.iam.roles[CONTROLLER_ROLE] = failed('role')
    },
    (x) => {
      x.iam.roles[CONTROLLER_ROLE] = ok(null)
    },
    (x) => {
      x.eks.cluster = failed('cluster')
    },
    (x) => {
      if (x.eks.cluster.ok && x.eks.cluster.value) x.eks.cluster.value.oidcIssuer = undefined
    },
  ]
  for (const c of cases)
    assert.deepEqual(irsaTrust(healthyFacts(c), [f], 'c', {}), { resources: [], manual: [f] })
  const held = irsaTrust(healthyFacts(stackRole(CONTROLLER_ROLE)), [f], 'c', {})
  assert.deepEqual(held.resources, [])
  assert.deepEqual(held.manual, [
    { ...f, message: `wide (managed by CloudFormation stack ${EKSCTL_STACK}: change it there)` },
  ])
  assert.equal(held.why!.get(held.manual[0]!), heldWhy(`controller role ${CONTROLLER_ROLE}`))
})

const missing = (document: PolicyDocument | undefined, over: Record<string, unknown> = {}) =>
  fail({ evidence: { ...(document ? { document } : {}), ...over } })

test('controllerPolicy: the first fixable finding as one inline policy; Deny, stack policies, size and no document manual', () => {
  const facts = healthyFacts()
  const a = missing(doc('ec2:CreateFleet'))
  const b = missing(doc('ec2:RunInstances'))
  const denied = missing(doc('ec2:X'), { missing: [{ action: 'ec2:X', deniedBy: 'Deny' }] })
  const notDenied = missing(doc('ec2:Y'), { missing: [{ action: 'ec2:Y' }] })
  const reattach = missing(doc('ec2:Z'), { reattach: ['arn:p'] })
  const update = missing(doc('ec2:Z'), { updateStacks: ['s'] })
  const emptyStack = missing(doc('ec2:W'), { reattach: [], updateStacks: [] })
  const big = missing({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'a'.repeat(INLINE_LIMIT), Resource: '*' }],
  })
  const noDoc = missing(undefined)
  const built = controllerPolicy(
    facts,
    [a, b, denied, notDenied, reattach, update, emptyStack, big, noDoc],
    'controller-policy',
    {},
  )
  assert.deepEqual(built.manual, [denied, reattach, update, big, noDoc])
  const stackWay =
    "the actions are in a CloudFormation stack's own managed policies: re-attach them or update the stack (below), not a copy beside them"
  assert.deepEqual(
    [...built.why!.entries()],
    [
      [reattach, stackWay],
      [update, stackWay],
    ],
  )
  assert.equal(built.resources.length, 1)
  const r = built.resources[0]!
  const policy = `KarpenterControllerMissing-${CLUSTER}`
  assert.deepEqual(
    [r.address, r.name, r.group, r.dependsOn, r.documents, r.permissions.map((p) => p.resource)],
    [
      'iam-policy.controller-missing',
      `${CONTROLLER_ROLE}/${policy}`,
      'fix: controller-policy',
      [],
      { [policy]: doc('ec2:CreateFleet') },
      [CONTROLLER_ROLE_ARN, CONTROLLER_ROLE_ARN],
    ],
  )
  // Exactly at the limit still fits.
  const fits = { Version: '2012-10-17', Statement: [] as PolicyStatement[], x: '' }
  fits.x = 'a'.repeat(INLINE_LIMIT - JSON.stringify(fits).length)
  const edge = controllerPolicy(facts, [missing(fits as PolicyDocument)], 'c', {})
  assert.equal(edge.resources.length, 1)
})

test('controllerPolicy: no role read, or nothing fixable: nothing planned, the stack reason kept', () => {
  const reattach = missing(doc('a'), { reattach: ['p'] })
  const a = missing(doc('b'))
  for (const c of [
    (x: Facts) => {
      x.iam.controllerRoleName = null
    },
    (x: Facts) => {
      x.iam.roles[CONTROLLER_ROLE] = failed('role')
    },
    (x: Facts) => {
      x.iam.roles[CONTROLLER_ROLE] = ok(null)
    },
  ]) {
    const built = controllerPolicy(healthyFacts(c), [a, reattach], 'c', {})
    assert.deepEqual(built.resources, [])
    assert.deepEqual(built.manual, [a, reattach])
    assert.equal(built.why!.size, 1)
  }
})

test("controllerPolicy on a stack's role: the stack's policies first (re-attach), the rest held for the stack", () => {
  const facts = healthyFacts(stackRole(CONTROLLER_ROLE))
  const a = missing(doc('a'))
  a.message = 'lacks a'
  const reattach = missing(doc('b'), { reattach: ['p'] })
  reattach.message = 'detached'
  const built = controllerPolicy(facts, [a, reattach], 'c', {})
  assert.deepEqual(built.resources, [])
  const stackWay =
    "the actions are in a CloudFormation stack's own managed policies: re-attach them or update the stack (below), not a copy beside them"
  assert.deepEqual(
    built.manual.map((m) => [m.message, built.why!.get(m)]),
    [
      [
        `detached (managed by CloudFormation stack ${EKSCTL_STACK}: re-attach its policies as printed)`,
        `controller role ${CONTROLLER_ROLE} belongs to CloudFormation stack ${EKSCTL_STACK}: ${stackWay} (what the stack declares: not drift)`,
      ],
      [
        `lacks a (managed by CloudFormation stack ${EKSCTL_STACK}: add them there)`,
        heldWhy(`controller role ${CONTROLLER_ROLE}`),
      ],
    ],
  )
  // Owner unknown: held too, the re-attach reason without a stack to name.
  const unknown = healthyFacts((f) => ownerUnknown(f, CONTROLLER_ROLE))
  const u = controllerPolicy(unknown, [reattach], 'c', {})
  assert.deepEqual(u.manual, [reattach])
  assert.equal(u.why!.get(reattach), `${stackWay} (what the stack declares: not drift)`)
})

const noAccess = (subject: string) => fail({ code: 'no-cluster-access', subject })
const lacking = (subject: string, missing: unknown) =>
  fail({ code: 'missing-policies', subject, evidence: { missing } })

test('nodeRole: access through aws-auth (its path dropped from the ARN) in CONFIG_MAP mode, one per role', () => {
  const pathed = `arn:aws:iam::${ACCOUNT}:role/team/nodes/NodeB`
  const notArn = noAccess('NodeC')
  const built = nodeRole(healthyFacts(), [noAccess(NODE_ROLE_ARN), noAccess(pathed), notArn], 'node-role', {})
  assert.deepEqual(
    built.resources.map((r) => [r.address, r.name, r.group, r.dependsOn]),
    [
      ['aws-auth.node.0', NODE_ROLE_ARN, 'fix: node-role', []],
      ['aws-auth.node.1', `arn:aws:iam::${ACCOUNT}:role/NodeB`, 'fix: node-role', []],
    ],
  )
  assert.deepEqual(built.manual, [notArn])
})

test('nodeRole: an access entry in API and API_AND_CONFIG_MAP modes', () => {
  for (const mode of ['API', 'API_AND_CONFIG_MAP'] as const) {
    const facts = healthyFacts((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = mode
    })
    const built = nodeRole(facts, [noAccess(NODE_ROLE_ARN)], 'node-role', {})
    assert.deepEqual(
      built.resources.map((r) => [r.address, r.name, r.desired, r.permissions.map((p) => p.resource)]),
      [
        [
          'eks-access-entry.node.0',
          NODE_ROLE_ARN,
          {
            principalArn: NODE_ROLE_ARN,
            type: 'EC2_LINUX',
            tags: { 'karpctl.io/managed-by': 'karpctl', 'karpctl.io/cluster': CLUSTER },
          },
          Array(2).fill(`arn:aws:eks:${REGION}:${ACCOUNT}:cluster/${CLUSTER}`),
        ],
      ],
      mode,
    )
  }
})

test('nodeRole: the missing managed policies attached and recorded; unknown names, roles and stack roles manual', () => {
  const facts = healthyFacts((f) => {
    f.iam.roles.Unread = failed('role')
    f.iam.roles.Gone = ok(null)
    stackRole('StackNode')(f)
    f.iam.roles.StackNode = f.iam.roles[NODE_ROLE]!
    notOwned(f, NODE_ROLE)
  })
  const fixable = lacking(NODE_ROLE, ['AmazonEKSWorkerNodePolicy', 'AmazonSSMManagedInstanceCore', 'Nope'])
  const unknownOnly = lacking(NODE_ROLE, ['Nope'])
  const notList = lacking(NODE_ROLE, 'AmazonEKSWorkerNodePolicy')
  const unread = lacking('Unread', ['AmazonEKSWorkerNodePolicy'])
  const gone = lacking('Gone', ['AmazonEKSWorkerNodePolicy'])
  const held = lacking('StackNode', ['AmazonEKSWorkerNodePolicy'])
  const otherCode = fail({
    code: 'x',
    subject: NODE_ROLE,
    evidence: { missing: ['AmazonEKSWorkerNodePolicy'] },
  })
  const built = nodeRole(facts, [fixable, notList, unread, gone, held, otherCode], 'node-role', {})
  assert.deepEqual(
    built.resources.map((r) => [r.address, r.name, r.group, r.desired]),
    [
      [
        `iam-role-policies.${NODE_ROLE}`,
        NODE_ROLE,
        'fix: node-role',
        {
          attached: [
            'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
            'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore',
          ],
        },
      ],
    ],
  )
  assert.deepEqual(built.resources[0]!.permissions[0]!.resource, NODE_ROLE_ARN)
  assert.deepEqual(built.manual, [notList, unread, gone, held, otherCode])
  assert.deepEqual([...built.why!.entries()], [[held, heldWhy('node role StackNode')]])
  // No managed policy karpctl knows among the missing: nothing attached, the finding stays manual.
  const none = nodeRole(healthyFacts(), [unknownOnly], 'node-role', {})
  assert.deepEqual([none.resources, none.manual], [[], [unknownOnly]])
})

test('spot: the service-linked role, for the account (none in the ARN when it is not known)', () => {
  const [r] = spot(healthyFacts(), [], 'spot-service-linked-role', {}).resources
  assert.deepEqual(
    [r!.address, r!.group, r!.permissions[0]!.resource],
    [
      'iam-service-linked-role.spot',
      'fix: spot-service-linked-role',
      `arn:aws:iam::${ACCOUNT}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`,
    ],
  )
  const anon = spot(
    healthyFacts((f) => {
      f.meta.accountId = undefined
    }),
    [fail()],
    'c',
    {},
  )
  assert.equal(
    anon.resources[0]!.permissions[0]!.resource,
    'arn:aws:iam:::role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot',
  )
  assert.deepEqual(anon.manual, [])
})

test('a controller role the facts do not hold, or a Deny on only some of the missing actions: nothing planned', () => {
  const noRole = healthyFacts((f) => {
    delete f.iam.roles[CONTROLLER_ROLE]
  })
  const trust = fail({ evidence: { expectedSub: SUB } })
  assert.deepEqual(irsaTrust(noRole, [trust], 'c', {}), { resources: [], manual: [trust] })
  const a = missing(doc('a'))
  assert.deepEqual(controllerPolicy(noRole, [a], 'c', {}).manual, [a])
  const partly = missing(doc('a', 'b'), { missing: [{ action: 'a', deniedBy: 'Deny' }, { action: 'b' }] })
  assert.deepEqual(controllerPolicy(healthyFacts(), [partly], 'c', {}).manual, [partly])
})

test('passRole: the granted roles are sorted, whatever order they were found in', () => {
  const first = `arn:aws:iam::${ACCOUNT}:role/A`
  const facts = healthyFacts((f) => (f.iam.roles.A = ok(nodeRoleFacts('A'))))
  const [r] = passRole(facts, [fail({ subject: first })], 'c', {}).resources
  assert.deepEqual((r!.documents!.KarpctlPassNodeRoles as PolicyDocument).Statement[0]!.Resource, [
    first,
    NODE_ROLE_ARN,
  ])
})

test('nodeRole: no cluster read (aws-auth); only no-cluster-access findings with an ARN get access; odd findings manual', () => {
  const facts = healthyFacts((f) => {
    f.eks.cluster = failed('cluster')
  })
  const built = nodeRole(facts, [noAccess(NODE_ROLE_ARN)], 'c', {})
  assert.deepEqual(
    built.resources.map((r) => r.address),
    ['aws-auth.node.0'],
  )
  const entry = nodeRole(
    healthyFacts((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = 'API'
    }),
    [noAccess(NODE_ROLE_ARN)],
    'c',
    {},
  )
  assert.deepEqual(entry.resources[0]!.dependsOn, [])
  const otherCode = fail({ code: 'x', subject: NODE_ROLE_ARN })
  const noSubject = fail({ code: 'no-cluster-access' })
  const noEvidence = fail({ code: 'missing-policies', subject: NODE_ROLE })
  const unknownRole = lacking('NotRead', ['AmazonEKSWorkerNodePolicy'])
  const odd = nodeRole(healthyFacts(), [otherCode, noSubject, noEvidence, unknownRole], 'c', {})
  assert.deepEqual([odd.resources, odd.manual], [[], [otherCode, noSubject, noEvidence, unknownRole]])
})
