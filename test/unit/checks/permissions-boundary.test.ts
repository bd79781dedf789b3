// The controller role's permissions boundary in passrole-node-role and controller-policy, and the
// caveats of a local verdict (issue 12, item 2).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicy } from '../../../src/checks/controller-policy.js'
import { passroleNodeRole } from '../../../src/checks/passrole-node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import { evaluateWithBoundary } from '../../../src/policy/evaluate.js'
import type { Facts, PermissionEvaluation } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
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

const BOUNDARY_ARN = `arn:aws:iam::${ACCOUNT}:policy/KarpenterBoundary`

/** A boundary that allows everything except `without` (NotAction, as security teams write them). */
const boundaryWithout = (...without: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'Ceiling', Effect: 'Allow', NotAction: without, Resource: '*' }],
})

/** Gives the controller role a permissions boundary (document null: it could not be read). */
function withBoundary(document: PolicyDocument | null) {
  return (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (!r?.ok || !r.value) return
    r.value.role.permissionsBoundaryArn = BOUNDARY_ARN
    r.value.boundary = {
      arn: BOUNDARY_ARN,
      name: 'KarpenterBoundary',
      document,
      ...(document
        ? {}
        : {
            documentError: {
              code: 'AccessDenied',
              kind: 'denied' as const,
              message: 'no',
              read: `iam:GetPolicyVersion ${BOUNDARY_ARN}`,
            },
          }),
    }
  }
}

const localEvaluation = (over: Partial<PermissionEvaluation>) => (f: Facts) => {
  f.iam.passRole[NODE_ROLE_ARN] = ok(
    passRoleEvaluation({ method: 'local', simulatorUnavailable: 'ServiceFailure: HTTP 500', ...over }),
  )
}

const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

// ---- passrole-node-role ----

test('passrole: the boundary leaves out iam:PassRole → fail naming the boundary, fixed on the boundary', () => {
  const r = runCheck(
    passroleNodeRole,
    healthyFacts(
      both(
        withBoundary(boundaryWithout('iam:PassRole')),
        localEvaluation({
          decision: 'implicitDeny',
          matchedStatements: [],
          identityDecision: 'allowed',
          permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'implicitDeny', matchedStatements: [] },
        }),
      ),
    ),
  )
  assert.equal(r.status, 'fail')
  const f = r.findings[0]!
  assert.match(
    f.message,
    new RegExp(
      `${CONTROLLER_ROLE} may not pass ${NODE_ROLE} to EC2: its permissions boundary KarpenterBoundary does not allow iam:PassRole on it, though its policies do`,
    ),
  )
  assert.match(f.message, /identity policies ∩ permissions boundary KarpenterBoundary/)
  const cmd = f.fix!.commands![0]!
  assert.match(
    cmd,
    new RegExp(
      `^aws iam create-policy-version --policy-arn ${BOUNDARY_ARN} --set-as-default --policy-document '`,
    ),
  )
  const doc = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument
  assert.equal(doc.Statement[0]!.Sid, 'Ceiling', 'the boundary keeps its statements')
  assert.deepEqual(doc.Statement[1], {
    Sid: 'AllowPassingKarpenterNodeRoles',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: NODE_ROLE_ARN,
  })
  assert.doesNotMatch(cmd, /put-role-policy/, 'granting it again on the role would change nothing')
})

test('passrole: an explicit Deny in the boundary → fail naming that statement; the fix says to remove it', () => {
  const r = runCheck(
    passroleNodeRole,
    healthyFacts(
      both(
        withBoundary(boundaryWithout()),
        localEvaluation({
          decision: 'explicitDeny',
          matchedStatements: ['permissions boundary NoPass'],
          identityDecision: 'allowed',
          permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'explicitDeny', matchedStatements: ['NoPass'] },
        }),
      ),
    ),
  )
  const f = r.findings[0]!
  assert.equal(f.status, 'fail')
  assert.match(
    f.message,
    /an explicit Deny in its permissions boundary KarpenterBoundary \(NoPass\) forbids it/,
  )
  assert.match(f.fix!.summary, /^remove or narrow the Deny statement NoPass/)
})

test('passrole: the boundary could not be read while the policies allow → unknown, never pass', () => {
  const r = runCheck(
    passroleNodeRole,
    healthyFacts(
      both(
        withBoundary(null),
        localEvaluation({
          decision: 'implicitDeny',
          matchedStatements: [],
          identityDecision: 'allowed',
          permissionsBoundary: {
            arn: BOUNDARY_ARN,
            decision: 'unreadable',
            matchedStatements: [],
            error: {
              code: 'AccessDenied',
              kind: 'denied',
              message: 'no',
              read: `iam:GetPolicyVersion ${BOUNDARY_ARN}`,
            },
          },
        }),
      ),
    ),
  )
  assert.equal(r.status, 'unknown')
  assert.match(
    r.findings[0]!.message,
    /permissions boundary KarpenterBoundary could not be read, so the allow is not confirmed: could not read iam:GetPolicyVersion/,
  )
  assert.equal(r.findings[0]!.fix, undefined)
})

test('passrole: allowed by policies and boundary on the local evaluator → pass that says what it saw and did not see', () => {
  const r = runCheck(
    passroleNodeRole,
    healthyFacts(
      both(
        withBoundary(boundaryWithout()),
        localEvaluation({
          identityDecision: 'allowed',
          permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'allowed', matchedStatements: ['Ceiling'] },
        }),
      ),
    ),
  )
  assert.equal(r.status, 'pass')
  const f = r.findings[0]!
  assert.match(
    f.message,
    /identity policies ∩ permissions boundary KarpenterBoundary; SCPs and session policies not seen\)$/,
  )
  assert.ok(f.caveats?.some((c) => /SCPs/.test(c)))
})

test('passrole: the simulator denies a role that has a boundary → the fix says the boundary must allow it too', () => {
  const r = runCheck(
    passroleNodeRole,
    healthyFacts(
      both(withBoundary(boundaryWithout()), (f) => {
        f.iam.passRole[NODE_ROLE_ARN] = ok(
          passRoleEvaluation({ decision: 'implicitDeny', matchedStatements: [] }),
        )
      }),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.fix!.summary,
    /the role has permissions boundary KarpenterBoundary: it must allow iam:PassRole too/,
  )
  assert.deepEqual(r.findings[0]!.caveats, undefined, 'the simulator applies SCPs and boundaries itself')
})

// ---- controller-policy ----

test('controller-policy: a boundary that leaves out reference actions → fail naming the boundary and them', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(withBoundary(boundaryWithout('iam:PassRole', 'ec2:CreateFleet', 'ec2:RunInstances'))),
  )
  assert.equal(r.status, 'fail')
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.equal(f.subject, BOUNDARY_ARN)
  assert.match(
    f.message,
    /^permissions boundary KarpenterBoundary of KarpenterControllerRole-demo does not allow 2 action\(s\) Karpenter 1\.14\.1 needs, so the role's grants of them are void: ec2:RunInstances, ec2:CreateFleet$/,
  )
  const cmd = f.fix!.commands![0]!
  assert.match(
    cmd,
    new RegExp(`^aws iam create-policy-version --policy-arn ${BOUNDARY_ARN} --set-as-default`),
  )
  const doc = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument
  assert.equal(doc.Statement[0]!.Sid, 'Ceiling')
  const added = doc.Statement.slice(1).flatMap((s) => [s.Action].flat())
  // The reference statements that hold them (scoped as the reference scopes them), and PassRole on
  // the node role, which the boundary lacks too: one version with everything, nothing else.
  assert.deepEqual([...new Set(added)].sort(), ['ec2:CreateFleet', 'ec2:RunInstances', 'iam:PassRole'])
  // The role's own policies are complete: their pass is still reported beside the boundary's fail.
  assert.ok(r.findings.some((x) => x.status === 'pass'))
})

test('controller-policy: a boundary that allows everything needed → pass saying so, with the caveat', () => {
  const r = runCheck(controllerPolicy, healthyFacts(withBoundary(boundaryWithout('iam:CreateUser'))))
  assert.equal(r.status, 'pass')
  const f = r.findings[0]!
  assert.match(f.message, /, and its permissions boundary KarpenterBoundary allows them/)
  assert.match(f.message, /SCPs and session policies not seen/)
  assert.ok(
    f.caveats?.some((c) => /service control policies \(SCPs\) and session policies are not seen/.test(c)),
  )
})

test('controller-policy: an explicit Deny in the boundary is named', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      withBoundary({
        Statement: [
          { Effect: 'Allow', Action: '*', Resource: '*' },
          { Sid: 'NoTerminate', Effect: 'Deny', Action: 'ec2:TerminateInstances', Resource: '*' },
        ],
      }),
    ),
  )
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.match(f.message, /ec2:TerminateInstances \(explicitly denied: KarpenterBoundary#NoTerminate\)/)
  assert.match(f.fix!.summary, /remove or narrow KarpenterBoundary#NoTerminate/)
})

test('controller-policy: the boundary could not be read → unknown beside the pass, never a silent pass', () => {
  const r = runCheck(controllerPolicy, healthyFacts(withBoundary(null)))
  assert.equal(r.status, 'unknown')
  const u = r.findings.find((x) => x.status === 'unknown')!
  assert.match(
    u.message,
    /permissions boundary KarpenterBoundary of KarpenterControllerRole-demo could not be read/,
  )
  assert.match(u.message, /permission denied: AccessDenied/)
})

test('controller-policy: the role unreadable stays unknown; no boundary is the healthy pass', () => {
  assert.equal(
    runCheck(
      controllerPolicy,
      healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = failed('iam:GetRole'))),
    ).status,
    'unknown',
  )
  const r = runCheck(controllerPolicy, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.doesNotMatch(r.findings[0]!.message, /permissions boundary/)
})

test('the boundary lacks PassRole and reference actions: both checks print the same one new version, and it fixes both', () => {
  const boundary = boundaryWithout('iam:PassRole', 'ec2:CreateFleet')
  const facts = healthyFacts(
    both(
      withBoundary(boundary),
      localEvaluation({
        decision: 'implicitDeny',
        matchedStatements: [],
        identityDecision: 'allowed',
        permissionsBoundary: { arn: BOUNDARY_ARN, decision: 'implicitDeny', matchedStatements: [] },
      }),
    ),
  )
  const pass = runCheck(passroleNodeRole, facts).findings.find((x) => x.status === 'fail')!
  const policy = runCheck(controllerPolicy, facts).findings.find((x) => x.status === 'fail')!
  assert.deepEqual(pass.fix!.commands, policy.fix!.commands)
  const cmd = policy.fix!.commands![0]!
  const fixed = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument
  // Applied: controller-policy passes, and the boundary lets the node role be passed.
  const after = healthyFacts(withBoundary(fixed))
  assert.equal(runCheck(controllerPolicy, after).status, 'pass')
  assert.equal(
    evaluateWithBoundary(
      { identity: [], boundary: fixed },
      {
        action: 'iam:PassRole',
        resource: NODE_ROLE_ARN,
        context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
      },
    ).boundary?.decision,
    'allowed',
  )
})
