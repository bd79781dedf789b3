// The :aud condition of an IRSA trust, pinned condition by condition (issue 12, item 8): the
// controller's token carries aud = sts.amazonaws.com, so a statement admits it only when its :aud
// condition (under whatever operator) holds for that audience.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyStatement } from '../../../src/policy/types.js'
import { CONTROLLER_ROLE, healthyFacts, irsaTrust, ISSUER } from '../../helpers/facts.js'

const RUNNING = 'system:serviceaccount:kube-system:karpenter'
const SUB = `${ISSUER}:sub`
const AUD = `${ISSUER}:aud`

function withCondition(condition: PolicyStatement['Condition']) {
  return (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (!r?.ok || !r.value) return
    const trust = irsaTrust()
    trust.Statement[0]!.Condition = condition
    r.value.role.trust = trust
  }
}

const WRONG_AUD =
  /allows system:serviceaccount:kube-system:karpenter only with :aud .+, but the controller's token carries aud "sts.amazonaws.com"/

test(':aud StringEquals sts.amazonaws.com among other audiences: pass', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({ StringEquals: { [SUB]: RUNNING, [AUD]: ['other.example', 'sts.amazonaws.com'] } }),
    ),
  )
  assert.equal(r.status, 'pass')
})

test(':aud StringEquals naming only other audiences: fail, saying the audience is wrong', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({ StringEquals: { [SUB]: RUNNING, [AUD]: ['other.example', 'sts.amazonaws.com.cn'] } }),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, WRONG_AUD)
  // The value found and the statement it is in (issue 21, item 3).
  assert.match(
    r.findings[0]!.message,
    /only with :aud StringEquals "other\.example", "sts\.amazonaws\.com\.cn" \(statement 1\),/,
  )
})

test('no :aud condition: the audience is not restricted, pass', () => {
  const r = runCheck(irsaTrustPolicy, healthyFacts(withCondition({ StringEquals: { [SUB]: RUNNING } })))
  assert.equal(r.status, 'pass')
})

test(':aud under StringLike is judged too: a pattern that does not match sts.amazonaws.com fails', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(withCondition({ StringEquals: { [SUB]: RUNNING }, StringLike: { [AUD]: 'other.*' } })),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, WRONG_AUD)
  assert.match(r.findings[0]!.message, /only with :aud StringLike "other\.\*" \(statement 1\),/)
})

test(':aud under StringLike with a matching pattern: pass', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(withCondition({ StringEquals: { [SUB]: RUNNING }, StringLike: { [AUD]: 'sts.*' } })),
  )
  assert.equal(r.status, 'pass')
})

test(':aud under StringNotEquals sts.amazonaws.com shuts the controller out: fail', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({ StringEquals: { [SUB]: RUNNING }, StringNotEquals: { [AUD]: 'sts.amazonaws.com' } }),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, WRONG_AUD)
})

test('a wrong :aud on the only statement that admits the controller is not rescued by a wildcard :sub', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts(
      withCondition({ StringLike: { [SUB]: 'system:serviceaccount:*:*' }, StringEquals: { [AUD]: 'x' } }),
    ),
  )
  const fails = r.findings.filter((f) => f.status === 'fail')
  assert.equal(fails.length, 2)
  assert.equal(fails[0]!.evidence?.admitsController, false)
  assert.match(fails[1]!.message, WRONG_AUD)
})
