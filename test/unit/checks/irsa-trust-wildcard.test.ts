// A wildcard or otherwise broad IRSA trust yields one finding with one fix, worded by what the
// condition really lets in (issue 12, item 4).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { CheckResult } from '../../../src/checks/types.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyStatement } from '../../../src/policy/types.js'
import { CONTROLLER_ROLE, failed, healthyFacts, irsaTrust, ISSUER, ok } from '../../helpers/facts.js'

const RUNNING = 'system:serviceaccount:kube-system:karpenter'

/** The healthy trust with its one statement's Condition replaced. */
function withCondition(condition: PolicyStatement['Condition'] | undefined) {
  return (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (!r?.ok || !r.value) return
    const trust = irsaTrust()
    if (condition) trust.Statement[0]!.Condition = condition
    else delete trust.Statement[0]!.Condition
    r.value.role.trust = trust
  }
}

const fails = (r: CheckResult) => r.findings.filter((f) => f.status === 'fail')
const aud = { [`${ISSUER}:aud`]: 'sts.amazonaws.com' }

test('StringLike system:serviceaccount:*:* : exactly one failing finding (the security one), with the exact trust as its fix', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({
        StringLike: { [`${ISSUER}:sub`]: 'system:serviceaccount:*:*' },
        StringEquals: aud,
      }),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings.length, 1, JSON.stringify(r.findings, null, 1))
  const f = r.findings[0]!
  assert.match(
    f.message,
    /^security: trust of KarpenterControllerRole-demo uses StringLike on .+:sub = "system:serviceaccount:\*:\*"/,
  )
  assert.match(f.message, /the controller's system:serviceaccount:kube-system:karpenter among them/)
  assert.doesNotMatch(f.message, /but the controller runs as/)
  assert.equal(f.evidence?.admitsController, true)
  const cmd = f.fix!.commands![0]!
  assert.match(cmd, /update-assume-role-policy --role-name KarpenterControllerRole-demo/)
  assert.ok(cmd.includes(`"${ISSUER}:sub":"${RUNNING}"`), cmd)
})

test('a namespace wildcard that still matches (system:serviceaccount:kube-system:*): one finding', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({
        StringLike: { [`${ISSUER}:sub`]: 'system:serviceaccount:kube-system:*' },
        StringEquals: aud,
      }),
    ),
  )
  assert.equal(fails(r).length, 1)
  assert.equal(r.findings.length, 1)
})

test('a wildcard that does not match the running service account: the security finding says so, plus the mismatch', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({
        StringLike: { [`${ISSUER}:sub`]: 'system:serviceaccount:karpenter:*' },
        StringEquals: aud,
      }),
    ),
  )
  const f = fails(r)
  assert.equal(f.length, 2)
  assert.match(f[0]!.message, /but not the controller's system:serviceaccount:kube-system:karpenter/)
  assert.match(f[1]!.message, /allows system:serviceaccount:karpenter:\*, but the controller runs as/)
})

test('StringEquals with "*" is literal, not a wildcard: no security finding, one mismatch that says why', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(withCondition({ StringEquals: { [`${ISSUER}:sub`]: 'system:serviceaccount:*:*', ...aud } })),
  )
  assert.equal(r.findings.length, 1)
  const f = r.findings[0]!
  assert.equal(f.status, 'fail')
  assert.doesNotMatch(f.message, /security|any matching/)
  assert.match(f.message, /StringEquals compares literally/)
  assert.match(f.message, /but the controller runs as system:serviceaccount:kube-system:karpenter/)
})

test('no :sub condition at all: one security finding saying every service account can assume the role', () => {
  const r = runCheck(irsaTrustPolicy, healthyFacts(withCondition({ StringEquals: aud })))
  assert.equal(r.findings.length, 1)
  assert.match(
    r.findings[0]!.message,
    /sets no .+:sub condition: every service account of the cluster can assume/,
  )
  assert.ok(r.findings[0]!.fix)
})

test('StringNotEquals on :sub is broad: one security finding', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({
        StringNotEquals: { [`${ISSUER}:sub`]: 'system:serviceaccount:default:default' },
        StringEquals: aud,
      }),
    ),
  )
  assert.equal(r.findings.length, 1)
  assert.match(r.findings[0]!.message, /^security: .+StringNotEquals/)
})

test('the exact :sub with a wrong :aud: the finding names the audience, not a sub mismatch', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({
        StringEquals: { [`${ISSUER}:sub`]: RUNNING, [`${ISSUER}:aud`]: 'sts.amazonaws.com.cn' },
      }),
    ),
  )
  assert.equal(r.findings.length, 1)
  assert.match(
    r.findings[0]!.message,
    /allows system:serviceaccount:kube-system:karpenter only with :aud StringEquals "sts\.amazonaws\.com\.cn" \(statement 1\), but the controller's token carries aud "sts\.amazonaws\.com"/,
  )
})

test('an exact statement beside a wildcard one: the wildcard is reported, the exact one passes', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => {
      const role = f.iam.roles[CONTROLLER_ROLE]
      if (!role?.ok || !role.value) return
      const wide = irsaTrust().Statement[0]!
      wide.Condition = { StringLike: { [`${ISSUER}:sub`]: '*' } }
      role.value.role.trust.Statement.push(wide)
    }),
  )
  assert.deepEqual(
    r.findings.map((f) => f.status),
    ['fail', 'pass'],
  )
})

test('unknown and skipped stay as they were: unreadable role, no OIDC issuer', () => {
  assert.equal(
    runCheck(
      irsaTrustPolicy,
      healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = failed('iam:GetRole'))),
    ).status,
    'unknown',
  )
  assert.equal(
    runCheck(
      irsaTrustPolicy,
      healthyFacts((f) => {
        if (f.eks.cluster.ok && f.eks.cluster.value)
          f.eks.cluster = ok({ ...f.eks.cluster.value, oidcIssuer: undefined })
      }),
    ).status,
    'skipped',
  )
})

test('StringLike without a wildcard compares like StringEquals: pass, no finding', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(withCondition({ StringLike: { [`${ISSUER}:sub`]: RUNNING }, StringEquals: aud })),
  )
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 1)
})
