import assert from 'node:assert/strict'
import { test } from 'node:test'
import { passroleNodeRole } from '../../../src/checks/passrole-node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
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

const run = (f: Facts) => runCheck(passroleNodeRole, f)
const evaluation = passRoleEvaluation

test('healthy: the simulator allows passing the node role → pass, and says the simulator decided', () => {
  const r = run(healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 1)
  const f = r.findings[0]!
  assert.equal(f.subject, NODE_ROLE_ARN)
  assert.match(f.message, /decided by IAM policy simulator/)
  assert.equal(f.evidence?.method, 'IAM policy simulator')
})

test('local evaluator: the reason the simulator was unavailable is in the message and evidence', () => {
  const r = run(
    healthyFacts((f) => {
      f.iam.passRole[NODE_ROLE_ARN] = ok(
        evaluation({
          method: 'local',
          simulatorUnavailable: 'AccessDenied: not authorized to perform iam:SimulatePrincipalPolicy',
        }),
      )
    }),
  )
  assert.equal(r.status, 'pass')
  assert.match(
    r.findings[0]!.message,
    /local evaluator \(simulator unavailable: AccessDenied: not authorized/,
  )
  // What the local evaluator cannot see is a caveat of the pass, in the message and for every report.
  assert.match(r.findings[0]!.message, /SCPs and session policies not seen/)
  assert.match(r.findings[0]!.caveats!.join('\n'), /service control policies \(SCPs\) or session policies/)
})

test('implicit deny → fail with a put-role-policy fix scoped to the node role and iam:PassedToService', () => {
  const r = run(
    healthyFacts((f) => {
      f.iam.passRole[NODE_ROLE_ARN] = ok(
        evaluation({
          decision: 'implicitDeny',
          matchedStatements: [],
          method: 'local',
          simulatorUnavailable: 'HTTP 500',
        }),
      )
    }),
  )
  assert.equal(r.status, 'fail')
  const f = r.findings[0]!
  assert.equal(f.subject, NODE_ROLE_ARN)
  assert.match(
    f.message,
    new RegExp(`${CONTROLLER_ROLE} may not pass ${NODE_ROLE} to EC2: no statement allows it`),
  )
  assert.match(f.message, /local evaluator \(simulator unavailable: HTTP 500\)/)
  assert.deepEqual(f.evidence?.nodeClasses, ['default'])
  assert.equal(f.evidence?.decision, 'implicitDeny')
  const cmd = f.fix?.commands?.[0] ?? ''
  assert.match(
    cmd,
    new RegExp(
      `^aws iam put-role-policy --role-name ${CONTROLLER_ROLE} --policy-name KarpctlPassNodeRoles --policy-document '`,
    ),
  )
  const doc = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, cmd.lastIndexOf("'")))
  assert.deepEqual(doc.Statement[0], {
    Sid: 'AllowPassingInstanceRole',
    Effect: 'Allow',
    Action: 'iam:PassRole',
    Resource: NODE_ROLE_ARN,
    Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
  })
})

test('explicit deny → fail naming the Deny statement, and the fix says to remove it first', () => {
  const r = run(
    healthyFacts((f) => {
      f.iam.passRole[NODE_ROLE_ARN] = ok(
        evaluation({ decision: 'explicitDeny', matchedStatements: ['DenyPassRole'] }),
      )
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /explicit Deny \(DenyPassRole\)/)
  assert.match(r.findings[0]!.fix?.summary ?? '', /remove or narrow the Deny statement DenyPassRole/)
})

test('instance profile: the role inside the profile is evaluated; one fix grants every role in use', () => {
  const tenantArn = `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo-acme`
  const r = run(
    healthyFacts((f) => {
      const classes = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value : []
      classes.push({
        metadata: { name: 'acme' },
        spec: { instanceProfile: 'acme-profile', subnetSelectorTerms: [], securityGroupSelectorTerms: [] },
      })
      f.iam.instanceProfiles['acme-profile'] = ok({
        name: 'acme-profile',
        arn: 'arn:aws:iam::1:instance-profile/acme-profile',
        roles: ['KarpenterNodeRole-demo-acme'],
      })
      f.iam.passRole[tenantArn] = ok(
        evaluation({ resource: tenantArn, decision: 'implicitDeny', matchedStatements: [] }),
      )
    }),
  )
  assert.equal(r.status, 'fail')
  const bySubject = Object.fromEntries(r.findings.map((f) => [f.subject, f]))
  assert.equal(bySubject[NODE_ROLE_ARN]?.status, 'pass')
  assert.equal(bySubject[tenantArn]?.status, 'fail')
  assert.deepEqual(bySubject[tenantArn]?.evidence?.nodeClasses, ['acme'])
  // put-role-policy replaces the policy: it must keep the default role too
  assert.match(
    bySubject[tenantArn]?.fix?.commands?.[0] ?? '',
    new RegExp(`"Resource":\\["${NODE_ROLE_ARN}","${tenantArn}"\\]`),
  )
})

test('a node role with no evaluation → unknown "not evaluated"', () => {
  const r = run(
    healthyFacts((f) => {
      f.iam.passRole = {}
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /was not evaluated/)
  assert.equal(r.findings[0]!.subject, NODE_ROLE_ARN)
})

test('a failed read → unknown with the reason, never pass', () => {
  const simulator = run(
    healthyFacts((f) => {
      f.iam.passRole[NODE_ROLE_ARN] = failed('iam:GetRolePolicy KarpenterControllerRole-demo')
    }),
  )
  assert.equal(simulator.status, 'unknown')
  assert.match(simulator.findings[0]!.message, /could not read iam:GetRolePolicy .*permission denied/)

  const nodeClasses = run(
    healthyFacts((f) => {
      f.kube.nodeClasses = failed('list ec2nodeclasses.karpenter.k8s.aws')
    }),
  )
  assert.equal(nodeClasses.status, 'unknown')

  const profile = run(
    healthyFacts((f) => {
      f.kube.nodeClasses = ok([
        {
          metadata: { name: 'p' },
          spec: { instanceProfile: 'prof', subnetSelectorTerms: [], securityGroupSelectorTerms: [] },
        },
      ])
      f.iam.instanceProfiles.prof = failed('iam:GetInstanceProfile prof')
    }),
  )
  assert.equal(profile.status, 'unknown')
  assert.equal(profile.findings[0]!.subject, 'prof')
})

test('not applicable: no EC2NodeClass, or no Karpenter release → skipped with why', () => {
  const none = run(
    healthyFacts((f) => {
      f.kube.nodeClasses = ok([])
    }),
  )
  assert.equal(none.status, 'skipped')
  assert.match(none.findings[0]!.message, /no EC2NodeClass/)

  const noRelease = run(
    healthyFacts((f) => {
      f.kube.release = ok(null)
    }),
  )
  assert.equal(noRelease.status, 'skipped')
})
