// The conditions passrole-node-role judges, one at a time (issue 12, item 8: mutation testing):
// which node roles are passed, how each evaluation reads, and each finding and fix as printed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  evaluationCaveats,
  LOCAL_CAVEAT,
  methodText,
  passroleNodeRole,
} from '../../../src/checks/passrole-node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts, PermissionEvaluation } from '../../../src/facts/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  failed,
  healthyFacts,
  NODE_ROLE,
  NODE_ROLE_ARN,
  ok,
  passRoleEvaluation,
} from '../../helpers/facts.js'
import { evaluated, nodeClasses } from '../../helpers/check-fixtures.js'

const findings = (fn?: (f: Facts) => void) => runCheck(passroleNodeRole, healthyFacts(fn)).findings
const BOUNDARY_ARN = `arn:aws:iam::${ACCOUNT}:policy/KarpenterBoundary`
const TENANT = 'KarpenterNodeRole-demo-acme'
const TENANT_ARN = `arn:aws:iam::${ACCOUNT}:role/${TENANT}`

const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))
const withBoundaryArn = (f: Facts) => {
  const r = f.iam.roles[CONTROLLER_ROLE]
  if (r?.ok && r.value) r.value.role.permissionsBoundaryArn = BOUNDARY_ARN
}

const IMPLICIT = { decision: 'implicitDeny' as const, matchedStatements: [] }

test('passrole-node-role is an error-severity IAM check', () => {
  assert.equal(passroleNodeRole.meta.id, 'passrole-node-role')
  assert.equal(passroleNodeRole.meta.severity, 'error')
  assert.equal(passroleNodeRole.meta.category, 'iam')
})

test('the simulator allows: the exact pass and its evidence, without caveats', () => {
  assert.deepEqual(findings(), [
    {
      status: 'pass',
      subject: NODE_ROLE_ARN,
      message: `${CONTROLLER_ROLE} may pass ${NODE_ROLE} to ec2.amazonaws.com (EC2NodeClass default; decided by IAM policy simulator)`,
      evidence: {
        roleArn: NODE_ROLE_ARN,
        nodeClasses: ['default'],
        controllerRole: CONTROLLER_ROLE,
        decision: 'allowed',
        method: 'IAM policy simulator',
        matchedStatements: ['AllowPassingInstanceRole'],
        context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
      },
    },
  ])
})

test('the local evaluator allows without a boundary: the pass says what it saw, with its caveats and notes', () => {
  const [f] = findings(evaluated({ method: 'local', simulatorUnavailable: 'ServiceFailure', notes: ['n1'] }))
  assert.equal(
    f!.message,
    `${CONTROLLER_ROLE} may pass ${NODE_ROLE} to ec2.amazonaws.com (EC2NodeClass default; decided by local evaluator (simulator unavailable: ServiceFailure); identity policies, no permissions boundary; SCPs and session policies not seen)`,
  )
  assert.deepEqual(f!.caveats, [LOCAL_CAVEAT, 'n1'])
  assert.deepEqual(f!.evidence?.notes, ['n1'])
})

test('methodText and evaluationCaveats', () => {
  assert.equal(
    methodText(passRoleEvaluation({ method: 'local' })),
    'local evaluator (simulator unavailable: reason not recorded)',
  )
  assert.deepEqual(evaluationCaveats(passRoleEvaluation()), [])
  assert.deepEqual(evaluationCaveats(passRoleEvaluation({ method: 'local' })), [LOCAL_CAVEAT])
})

test('no notes: no notes in the evidence', () => {
  const [f] = findings(evaluated({ notes: [] }))
  assert.equal('notes' in f!.evidence!, false)
})

// ---- which roles ----

test('spec.role as an ARN, and by name with the collected role ARN: the same role, judged once for both classes', () => {
  const f = findings(nodeClasses({ role: NODE_ROLE_ARN }, { role: NODE_ROLE }))
  assert.equal(f.length, 1)
  assert.match(f[0]!.message, /\(EC2NodeClass nc0, nc1; decided by/)
})

test('a role not collected is named by the account ARN; without an account, <account-id>', () => {
  const f = findings(
    both(nodeClasses({ role: 'Other' }), evaluated({}, `arn:aws:iam::${ACCOUNT}:role/Other`)),
  )
  assert.equal(f[0]!.subject, `arn:aws:iam::${ACCOUNT}:role/Other`)
  assert.equal(f[0]!.status, 'pass')
  const g = findings(
    both(nodeClasses({ role: 'Other' }), (f) => {
      f.meta.accountId = undefined
      f.meta.partition = 'aws-cn'
    }),
  )
  assert.equal(g[0]!.subject, 'arn:aws-cn:iam::<account-id>:role/Other')
})

test('an evaluation keyed by the ARN with a role path still counts for the role', () => {
  const withPath = `arn:aws:iam::${ACCOUNT}:role/nodes/${NODE_ROLE}`
  const f = findings((f) => {
    f.iam.passRole = { [withPath]: ok(passRoleEvaluation({ resource: withPath })) }
  })
  assert.equal(f[0]!.status, 'pass')
  assert.equal(f[0]!.subject, NODE_ROLE_ARN)
})

test('neither spec.role nor spec.instanceProfile: unknown for that class, the others still judged', () => {
  const f = findings(nodeClasses({ role: undefined }, {}))
  assert.deepEqual(f[0], {
    status: 'unknown',
    subject: 'nc0',
    message: 'EC2NodeClass nc0 names neither spec.role nor spec.instanceProfile: no node role to evaluate',
  })
  assert.equal(f[1]!.status, 'pass')
})

test('instance profiles: not collected, unreadable, missing or empty are unknown, each saying which', () => {
  const profile = (read: Facts['iam']['instanceProfiles'][string] | undefined) =>
    both(nodeClasses({ role: undefined, instanceProfile: 'p' }), (f) => {
      if (read) f.iam.instanceProfiles.p = read
    })
  assert.deepEqual(findings(profile(undefined)), [
    { status: 'unknown', subject: 'p', message: 'instance profile p (EC2NodeClass nc0) was not collected' },
  ])
  const denied = findings(profile(failed('iam:GetInstanceProfile p')))
  assert.deepEqual(denied, [
    {
      status: 'unknown',
      subject: 'p',
      message:
        'instance profile p (EC2NodeClass nc0): could not read iam:GetInstanceProfile p (permission denied: AccessDenied — AccessDenied for iam:GetInstanceProfile p)',
      evidence: { read: 'iam:GetInstanceProfile p' },
    },
  ])
  assert.deepEqual(findings(profile(ok(null))), [
    {
      status: 'unknown',
      subject: 'p',
      message:
        'instance profile p (EC2NodeClass nc0) does not exist: no node role to evaluate (see node-role)',
    },
  ])
  assert.equal(
    findings(profile(ok({ name: 'p', arn: 'arn:aws:iam::1:instance-profile/p', roles: [] })))[0]!.message,
    'instance profile p (EC2NodeClass nc0) holds no role: no node role to evaluate (see node-role)',
  )
})

// ---- not evaluated / unreadable ----

test('no evaluation: unknown, saying the controller role is not known when it is not', () => {
  const f = findings((f) => {
    f.iam.passRole = {}
    f.iam.controllerRoleName = null
  })
  assert.deepEqual(f, [
    {
      status: 'unknown',
      subject: NODE_ROLE_ARN,
      message: `iam:PassRole on ${NODE_ROLE} (EC2NodeClass default) was not evaluated: the controller role is not known`,
      evidence: { roleArn: NODE_ROLE_ARN, nodeClasses: ['default'], controllerRole: null },
    },
  ])
  assert.equal(
    findings((f) => (f.iam.passRole = {}))[0]!.message,
    `iam:PassRole on ${NODE_ROLE} (EC2NodeClass default) was not evaluated`,
  )
})

test('an evaluation that failed: unknown with the reason and the read', () => {
  const [f] = findings((f) => (f.iam.passRole[NODE_ROLE_ARN] = failed('iam:SimulatePrincipalPolicy')))
  assert.deepEqual(f, {
    status: 'unknown',
    subject: NODE_ROLE_ARN,
    message: `iam:PassRole on ${NODE_ROLE} (EC2NodeClass default): could not read iam:SimulatePrincipalPolicy (permission denied: AccessDenied — AccessDenied for iam:SimulatePrincipalPolicy)`,
    evidence: { roleArn: NODE_ROLE_ARN, read: 'iam:SimulatePrincipalPolicy' },
  })
})

// ---- denials ----

const passFix = (role: string, resources: string | string[], names: string, extra = '') => {
  const document = {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPassingInstanceRole',
        Effect: 'Allow',
        Resource: resources,
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
      },
    ],
  }
  return {
    summary: `let ${role} pass ${names} to EC2${extra}`,
    commands: [
      `aws iam put-role-policy --role-name ${role} --policy-name KarpctlPassNodeRoles --policy-document '${JSON.stringify(document)}'`,
    ],
    snippet: { language: 'json', text: JSON.stringify(document, null, 2) },
  }
}

test('an implicit deny by the simulator: the exact fail and the fix granting every role in use', () => {
  const f = findings(
    both(nodeClasses({ role: NODE_ROLE }, { role: TENANT }), evaluated(IMPLICIT), evaluated({}, TENANT_ARN)),
  )
  assert.equal(f[1]!.status, 'pass')
  assert.deepEqual(f[0], {
    status: 'fail',
    subject: NODE_ROLE_ARN,
    message: `${CONTROLLER_ROLE} may not pass ${NODE_ROLE} to EC2: no statement allows it; nodes of EC2NodeClass nc0 cannot launch (decided by IAM policy simulator)`,
    evidence: {
      roleArn: NODE_ROLE_ARN,
      nodeClasses: ['nc0'],
      controllerRole: CONTROLLER_ROLE,
      decision: 'implicitDeny',
      method: 'IAM policy simulator',
      matchedStatements: [],
      context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
    },
    fix: passFix(CONTROLLER_ROLE, [NODE_ROLE_ARN, TENANT_ARN], NODE_ROLE),
  })
})

test('the controller role not discovered: the fix uses the getting-started name and says so', () => {
  const [f] = findings(
    both(evaluated(IMPLICIT), (f) => {
      f.iam.controllerRoleName = null
    }),
  )
  assert.match(f!.message, /^the controller role may not pass/)
  assert.deepEqual(
    f!.fix,
    passFix(
      CONTROLLER_ROLE,
      NODE_ROLE_ARN,
      NODE_ROLE,
      ` (the controller role was not discovered: ${CONTROLLER_ROLE} is the getting-started name, adjust it)`,
    ),
  )
})

test('an explicit deny naming no statement, and two statements: the advice is plural then', () => {
  const [f] = findings(evaluated({ decision: 'explicitDeny', matchedStatements: [] }))
  assert.match(f!.message, /an explicit Deny \(statement not named\) forbids it/)
  const [g] = findings(evaluated({ decision: 'explicitDeny', matchedStatements: ['A', 'B'] }))
  assert.match(g!.message, /an explicit Deny \(A, B\) forbids it/)
  assert.match(
    g!.fix!.summary,
    /^remove or narrow the Deny statements A, B \(an Allow cannot override it; an SCP or permission boundary can also deny\), then: let /,
  )
  const [h] = findings(evaluated({ decision: 'explicitDeny', matchedStatements: ['A'] }))
  assert.match(h!.fix!.summary, /^remove or narrow the Deny statement A \(/)
})

test('the simulator denies a role whose controller has a boundary: the fix adds that the boundary must allow it', () => {
  const [f] = findings(both(evaluated(IMPLICIT), withBoundaryArn))
  assert.equal(
    f!.fix!.summary,
    `let ${CONTROLLER_ROLE} pass ${NODE_ROLE} to EC2 (the role has permissions boundary KarpenterBoundary: it must allow iam:PassRole too)`,
  )
})

const localBoundary = (
  pb: PermissionEvaluation['permissionsBoundary'],
  over: Partial<PermissionEvaluation> = {},
) =>
  evaluated({
    method: 'local',
    simulatorUnavailable: 'x',
    identityDecision: 'allowed',
    permissionsBoundary: pb,
    ...IMPLICIT,
    ...over,
  })

test('the local boundary denies, the boundary not collected: a boundary fix snippet for the denied roles', () => {
  const [f] = findings(
    both(
      withBoundaryArn,
      localBoundary({ arn: BOUNDARY_ARN, decision: 'implicitDeny', matchedStatements: [] }),
    ),
  )
  assert.equal(f!.status, 'fail')
  assert.equal(
    f!.message,
    `${CONTROLLER_ROLE} may not pass ${NODE_ROLE} to EC2: its permissions boundary KarpenterBoundary does not allow iam:PassRole on it, though its policies do; nodes of EC2NodeClass default cannot launch (decided by local evaluator (simulator unavailable: x); identity policies ∩ permissions boundary KarpenterBoundary)`,
  )
  assert.deepEqual(f!.evidence?.permissionsBoundary, {
    arn: BOUNDARY_ARN,
    decision: 'implicitDeny',
    matchedStatements: [],
  })
  assert.equal(f!.evidence?.identityDecision, 'allowed')
  assert.deepEqual(f!.fix, {
    summary: `add a statement allowing iam:PassRole on ${NODE_ROLE} to the permissions boundary of ${CONTROLLER_ROLE}`,
    snippet: {
      language: 'json',
      text: JSON.stringify(
        {
          Sid: 'AllowPassingKarpenterNodeRoles',
          Effect: 'Allow',
          Action: 'iam:PassRole',
          Resource: NODE_ROLE_ARN,
        },
        null,
        2,
      ),
    },
  })
})

test('the local boundary denies two roles: the boundary fix names both', () => {
  const pb = { arn: BOUNDARY_ARN, decision: 'implicitDeny' as const, matchedStatements: [] }
  const f = findings(
    both(
      withBoundaryArn,
      nodeClasses({ role: NODE_ROLE }, { role: TENANT }),
      localBoundary(pb),
      evaluated(
        { method: 'local', identityDecision: 'allowed', permissionsBoundary: pb, ...IMPLICIT },
        TENANT_ARN,
      ),
      (f) => (f.iam.controllerRoleName = CONTROLLER_ROLE),
    ),
  )
  assert.equal(
    f[0]!.fix!.summary,
    `add a statement allowing iam:PassRole on ${NODE_ROLE}, ${TENANT} to the permissions boundary of ${CONTROLLER_ROLE}`,
  )
  assert.match(
    f[0]!.fix!.snippet!.text,
    new RegExp(`"Resource": \\[\\n\\s+"${NODE_ROLE_ARN}",\\n\\s+"${TENANT_ARN}"`),
  )
})

test('an explicit Deny in the boundary without a name, and the boundary fix without a controller role', () => {
  const [f] = findings(
    both(
      localBoundary(
        { arn: BOUNDARY_ARN, decision: 'explicitDeny', matchedStatements: [] },
        { decision: 'explicitDeny' },
      ),
      (f) => (f.iam.controllerRoleName = null),
    ),
  )
  assert.match(
    f!.message,
    /an explicit Deny in its permissions boundary KarpenterBoundary \(statement not named\) forbids it, though its policies allow it/,
  )
  assert.match(f!.fix!.summary, /to the permissions boundary of the controller role$/)
})

test('the local identity policies deny while a boundary exists: the identity fix, not the boundary one', () => {
  const [f] = findings(
    localBoundary(
      { arn: BOUNDARY_ARN, decision: 'implicitDeny', matchedStatements: [] },
      { identityDecision: 'implicitDeny' },
    ),
  )
  assert.match(f!.message, /: no statement allows it;/)
  assert.match(f!.fix!.summary, /^let KarpenterControllerRole-demo pass/)
})

test('the boundary unreadable while the identity allows: unknown, naming why (or "no document")', () => {
  const [f] = findings(localBoundary({ arn: BOUNDARY_ARN, decision: 'unreadable', matchedStatements: [] }))
  assert.equal(f!.status, 'unknown')
  assert.equal(
    f!.message,
    `the policies of ${CONTROLLER_ROLE} allow passing ${NODE_ROLE} to EC2 (EC2NodeClass default), but its permissions boundary KarpenterBoundary could not be read, so the allow is not confirmed: no document`,
  )
  assert.deepEqual(f!.caveats, [LOCAL_CAVEAT])
})

test('an unreadable boundary does not excuse an identity deny', () => {
  const [f] = findings(
    localBoundary(
      { arn: BOUNDARY_ARN, decision: 'unreadable', matchedStatements: [] },
      { identityDecision: 'implicitDeny' },
    ),
  )
  assert.equal(f!.status, 'fail')
})

test('the simulator with an unreadable-boundary shape is not "unconfirmed": its deny stands', () => {
  const [f] = findings(
    evaluated({
      method: 'simulator',
      identityDecision: 'allowed',
      permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'unreadable', matchedStatements: [] },
      ...IMPLICIT,
    }),
  )
  assert.equal(f!.status, 'fail')
})

test('a collected role with a path is named by its real ARN', () => {
  const withPath = `arn:aws:iam::${ACCOUNT}:role/nodes/${NODE_ROLE}`
  const [f] = findings((f) => {
    const r = f.iam.roles[NODE_ROLE]
    assert.ok(r?.ok && r.value)
    r.value.role.arn = withPath
  })
  assert.equal(f!.subject, withPath)
})

test('the evaluation of the exact ARN wins over another role of the same name', () => {
  const other = `arn:aws:iam::210987654321:role/${NODE_ROLE}`
  const [f] = findings((f) => {
    f.iam.passRole = {
      [other]: ok(passRoleEvaluation({ resource: other, ...IMPLICIT })),
      [NODE_ROLE_ARN]: ok(passRoleEvaluation()),
    }
  })
  assert.equal(f!.status, 'pass')
})

test('the controller role not collected, or missing: the verdict stands without a boundary', () => {
  assert.equal(findings((f) => delete f.iam.roles[CONTROLLER_ROLE])[0]!.status, 'pass')
  assert.equal(findings((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null)))[0]!.status, 'pass')
})

test('identity allows and the boundary allows, yet denied (an SCP, by the simulator): judged as an identity denial', () => {
  const [f] = findings(
    evaluated({
      identityDecision: 'allowed',
      permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'allowed', matchedStatements: ['Ceiling'] },
      ...IMPLICIT,
    }),
  )
  assert.match(f!.message, /: no statement allows it;/)
  assert.match(f!.fix!.summary, /^let KarpenterControllerRole-demo pass/)
  const [g] = findings(evaluated({ identityDecision: 'allowed', ...IMPLICIT }))
  assert.match(g!.message, /: no statement allows it;/)
})

test('an explicit Deny in the boundary naming two statements: both named', () => {
  const [f] = findings(
    localBoundary(
      { arn: BOUNDARY_ARN, decision: 'explicitDeny', matchedStatements: ['A', 'B'] },
      { decision: 'explicitDeny' },
    ),
  )
  assert.match(
    f!.message,
    /an explicit Deny in its permissions boundary KarpenterBoundary \(A, B\) forbids it/,
  )
  assert.match(f!.fix!.summary, /^remove or narrow the Deny statements A, B /)
})

test('an explicit identity Deny with a boundary present: the advice names the identity statements', () => {
  const [f] = findings(
    localBoundary(
      { arn: BOUNDARY_ARN, decision: 'explicitDeny', matchedStatements: ['BoundaryDeny'] },
      { decision: 'explicitDeny', identityDecision: 'explicitDeny', matchedStatements: ['IdentityDeny'] },
    ),
  )
  assert.match(f!.message, /an explicit Deny \(IdentityDeny\) forbids it/)
  assert.match(f!.fix!.summary, /^remove or narrow the Deny statement IdentityDeny /)
})

test('a local identity denial for a controller with a boundary: no simulator remark in the fix', () => {
  const [f] = findings(
    both(withBoundaryArn, evaluated({ method: 'local', identityDecision: 'implicitDeny', ...IMPLICIT })),
  )
  assert.equal(f!.fix!.summary, `let ${CONTROLLER_ROLE} pass ${NODE_ROLE} to EC2`)
})

test('another role evaluated is not taken for the node role', () => {
  const other = `arn:aws:iam::${ACCOUNT}:role/Other`
  const [f] = findings((f) => (f.iam.passRole = { [other]: ok(passRoleEvaluation({ resource: other })) }))
  assert.equal(f!.status, 'unknown')
  assert.match(f!.message, /was not evaluated$/)
})

test('two node roles denied: one fix naming both', () => {
  const f = findings(
    both(
      nodeClasses({ role: NODE_ROLE }, { role: TENANT }),
      evaluated(IMPLICIT),
      evaluated(IMPLICIT, TENANT_ARN),
    ),
  )
  assert.equal(f[0]!.fix!.summary, `let ${CONTROLLER_ROLE} pass ${NODE_ROLE}, ${TENANT} to EC2`)
  assert.deepEqual(f[1]!.fix, f[0]!.fix)
})
