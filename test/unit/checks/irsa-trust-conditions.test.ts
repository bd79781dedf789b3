// Each condition the IRSA trust analysis judges, pinned on its own (issue 12, item 8): which
// statements count (effect, action, principal), how each :sub operator admits the running service
// account, which service account that is, and what the fix writes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyStatement } from '../../../src/policy/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  healthyFacts,
  irsaTrust,
  ISSUER,
  OIDC_ARN,
  ok,
} from '../../helpers/facts.js'

const RUNNING = 'system:serviceaccount:kube-system:karpenter'
const SUB = `${ISSUER}:sub`
const AUD = { [`${ISSUER}:aud`]: 'sts.amazonaws.com' }
const NO_STATEMENT =
  /has no sts:AssumeRoleWithWebIdentity statement for .+ with :sub = system:serviceaccount:kube-system:karpenter/

/** The healthy trust with its one statement changed by `over`. */
function withStatement(over: Partial<PolicyStatement>) {
  return (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (!r?.ok || !r.value) return
    const trust = irsaTrust()
    Object.assign(trust.Statement[0]!, over)
    r.value.role.trust = trust
  }
}
const run = (over: Partial<PolicyStatement>) => runCheck(irsaTrustPolicy, healthyFacts(withStatement(over)))
const failMessage = (over: Partial<PolicyStatement>) => {
  const r = run(over)
  assert.equal(r.status, 'fail')
  return r.findings.find((f) => f.status === 'fail')!.message
}

test('a Deny statement does not let the controller in', () => {
  assert.match(failMessage({ Effect: 'Deny' }), NO_STATEMENT)
})

test('the action must be sts:AssumeRoleWithWebIdentity, sts:* or *', () => {
  assert.match(failMessage({ Action: 'sts:AssumeRole' }), NO_STATEMENT)
  assert.equal(run({ Action: 'sts:*' }).status, 'pass')
  assert.equal(run({ Action: '*' }).status, 'pass')
  assert.equal(run({ Action: ['sts:TagSession', 'sts:AssumeRoleWithWebIdentity'] }).status, 'pass')
})

test("the principal must be the cluster's OIDC provider (or *)", () => {
  const other = `arn:aws:iam::${ACCOUNT}:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/OTHER`
  assert.match(failMessage({ Principal: { Federated: other } }), NO_STATEMENT)
  assert.match(failMessage({ Principal: { Service: 'ec2.amazonaws.com' } }), NO_STATEMENT)
  assert.match(failMessage({ Principal: undefined }), NO_STATEMENT)
  assert.equal(run({ Principal: { Federated: [other, OIDC_ARN] } }).status, 'pass')
  assert.equal(run({ Principal: '*' }).status, 'pass')
  assert.equal(run({ Principal: { Federated: '*' } }).status, 'pass')
})

test('StringEquals: one of several :sub values naming the running service account passes', () => {
  const r = run({ Condition: { StringEquals: { [SUB]: ['system:serviceaccount:a:b', RUNNING], ...AUD } } })
  assert.equal(r.status, 'pass')
})

test('StringEqualsIgnoreCase admits the service account in another case, exactly', () => {
  assert.equal(
    run({ Condition: { StringEqualsIgnoreCase: { [SUB]: RUNNING.toUpperCase() }, StringEquals: AUD } })
      .status,
    'pass',
  )
  const m = failMessage({
    Condition: { StringEqualsIgnoreCase: { [SUB]: 'system:serviceaccount:*:*' }, StringEquals: AUD },
  })
  assert.match(m, /StringEquals compares literally/)
})

test('StringNotLike on :sub is broad: a security finding that says whether the controller is among them', () => {
  const m = failMessage({
    Condition: { StringNotLike: { [SUB]: 'system:serviceaccount:default:*' }, StringEquals: AUD },
  })
  assert.match(
    m,
    /^security: .+ uses StringNotLike .+\(the controller's system:serviceaccount:kube-system:karpenter among them\)$/,
  )
  const shut = run({
    Condition: { StringNotLike: { [SUB]: 'system:serviceaccount:kube-system:*' }, StringEquals: AUD },
  })
  assert.match(
    shut.findings[0]!.message,
    /\(but not the controller's system:serviceaccount:kube-system:karpenter\)$/,
  )
})

test('an operator the check does not read on :sub (ArnLike) is neither exact nor trusted', () => {
  const r = run({ Condition: { ArnLike: { [SUB]: RUNNING }, StringEquals: AUD } })
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /^security: .+ uses ArnLike .+but not the controller's/)
  assert.equal(r.findings[0]!.evidence?.admitsController, false)
})

test('the expected service account: the live one, else serviceAccount.name, else the release name', () => {
  const noLive = (name: string | undefined) => (f: Facts) => {
    f.kube.serviceAccount = ok(null)
    if (f.kube.release.ok && f.kube.release.value)
      f.kube.release.value.computedValues.serviceAccount = { create: true, name }
  }
  const expecting = (mutate: (f: Facts) => void) =>
    runCheck(irsaTrustPolicy, healthyFacts(mutate))
      .findings.map((f) => f.message)
      .join('\n')
  assert.match(expecting(noLive('custom')), /system:serviceaccount:kube-system:custom/)
  assert.match(expecting(noLive('')), /trusts exactly system:serviceaccount:kube-system:karpenter/)
  assert.match(expecting(noLive(undefined)), /trusts exactly system:serviceaccount:kube-system:karpenter/)
  assert.match(
    expecting((f) => {
      if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
        f.kube.serviceAccount.value.metadata = { name: 'ctl', namespace: 'karpenter' }
    }),
    /but the controller runs as system:serviceaccount:karpenter:ctl/,
  )
})

test('the controller role not collected: skipped; collected as absent: fail naming the ServiceAccount', () => {
  const skipped = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => delete f.iam.roles[CONTROLLER_ROLE]),
  )
  assert.equal(skipped.status, 'skipped')
  assert.match(skipped.findings[0]!.message, /controller role KarpenterControllerRole-demo was not collected/)
  const absent = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null))),
  )
  assert.equal(absent.status, 'fail')
  assert.equal(
    absent.findings[0]!.message,
    'the ServiceAccount kube-system/karpenter names role KarpenterControllerRole-demo, which does not exist',
  )
})

test('no provider registered: the fix still writes the provider ARN the cluster issuer will have', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => {
      f.iam.oidcProviders = ok([])
      withStatement({ Effect: 'Deny' })(f)
    }),
  )
  const fix = r.findings.find((f) => f.fix?.commands?.[0]?.includes('update-assume-role-policy'))!.fix!
  const doc = JSON.parse(/--policy-document '(.+)'$/.exec(fix.commands![0]!)![1]!)
  assert.deepEqual(doc, {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: OIDC_ARN },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: { StringEquals: { [SUB]: RUNNING, [`${ISSUER}:aud`]: 'sts.amazonaws.com' } },
      },
    ],
  })
  assert.equal(fix.summary, `restrict the trust of ${CONTROLLER_ROLE} to ${RUNNING}`)
  const register = r.findings.find((f) => /no IAM OIDC provider/.test(f.message))!
  assert.equal(register.subject, ISSUER)
  assert.deepEqual(register.fix!.commands, [
    'eksctl utils associate-iam-oidc-provider --cluster demo --region us-west-2 --approve',
  ])
})
