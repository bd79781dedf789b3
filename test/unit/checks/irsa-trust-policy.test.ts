import assert from 'node:assert/strict'
import { test } from 'node:test'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { CONTROLLER_ROLE, failed, healthyFacts, irsaTrust, ISSUER, ok } from '../../helpers/facts.js'

function withTrust(trust: PolicyDocument) {
  return (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    if (r?.ok && r.value) r.value.role.trust = trust
  }
}

test('exact StringEquals on the running service account passes', () => {
  assert.equal(runCheck(irsaTrustPolicy, healthyFacts()).status, 'pass')
})

test(':sub naming another namespace fails and names both', () => {
  const r = runCheck(irsaTrustPolicy, healthyFacts(withTrust(irsaTrust('karpenter', 'karpenter'))))
  assert.equal(r.status, 'fail')
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.match(f.message, /system:serviceaccount:karpenter:karpenter/)
  assert.match(f.message, /system:serviceaccount:kube-system:karpenter/)
  assert.match(f.fix!.commands![0]!, /update-assume-role-policy --role-name KarpenterControllerRole-demo/)
  assert.match(f.fix!.commands![0]!, /"StringEquals"/)
})

test('StringLike with a wildcard is a security finding', () => {
  const trust = irsaTrust()
  trust.Statement[0]!.Condition = { StringLike: { [`${ISSUER}:sub`]: 'system:serviceaccount:*:*' } }
  const r = runCheck(irsaTrustPolicy, healthyFacts(withTrust(trust)))
  assert.equal(r.status, 'fail')
  assert.ok(
    r.findings.some((x) => /StringLike/.test(x.message) && /any matching service account/.test(x.message)),
  )
})

test('no OIDC provider for the issuer fails', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => (f.iam.oidcProviders = ok([]))),
  )
  assert.equal(r.status, 'fail')
  assert.ok(r.findings.some((x) => /no IAM OIDC provider/.test(x.message)))
})

test('the role unreadable: unknown', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = failed('iam:GetRole'))),
  )
  assert.equal(r.status, 'unknown')
})

test('Pod Identity controller: skipped', () => {
  const r = runCheck(
    irsaTrustPolicy,
    healthyFacts((f) => (f.iam.controllerIdentity = 'pod-identity')),
  )
  assert.equal(r.status, 'skipped')
})
