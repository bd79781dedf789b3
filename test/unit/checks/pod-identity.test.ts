import assert from 'node:assert/strict'
import { test } from 'node:test'
import { podIdentity } from '../../../src/checks/pod-identity.js'
import { runCheck } from '../../../src/checks/run.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { podIdentityFacts, podTrust } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, CONTROLLER_ROLE_ARN, failed, healthyFacts, ok } from '../../helpers/facts.js'

test('healthy Pod Identity: association, trust and agent add-on pass', () => {
  const r = runCheck(podIdentity, podIdentityFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 3)
  assert.match(r.findings[0]!.message, /a-1234567890abcdef0 maps kube-system\/karpenter/)
})

test('IRSA install: skipped, saying why', () => {
  const r = runCheck(podIdentity, healthyFacts())
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /uses IRSA/)
})

test('no association for the controller service account fails with create-pod-identity-association', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => {
      f.eks.podIdentityAssociations = ok([
        {
          associationId: 'a-other',
          namespace: 'karpenter',
          serviceAccount: 'karpenter',
          roleArn: CONTROLLER_ROLE_ARN,
        },
      ])
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings[0]!
  assert.equal(fail.subject, 'kube-system/karpenter')
  assert.deepEqual(fail.evidence?.associations, [`karpenter/karpenter → ${CONTROLLER_ROLE_ARN}`])
  assert.match(
    fail.fix!.commands![0]!,
    /aws eks create-pod-identity-association --cluster-name demo --namespace kube-system --service-account karpenter --role-arn arn:aws:iam::123456789012:role\/KarpenterControllerRole-demo --region us-west-2/,
  )
})

test('no identity at all (no annotation, no association) fails', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => {
      f.iam.controllerIdentity = 'none'
      f.eks.podIdentityAssociations = ok([])
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /has no AWS identity/)
})

test('an association found without an IRSA annotation applies the check even if the collector said none', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => (f.iam.controllerIdentity = 'none')),
  )
  assert.equal(r.status, 'pass')
})

test('trust without sts:TagSession fails and the fix keeps the other statements', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => {
      const role = f.iam.roles[CONTROLLER_ROLE]
      if (role?.ok && role.value) role.value.role.trust = podTrust(['sts:AssumeRole'])
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, CONTROLLER_ROLE_ARN)
  assert.deepEqual(fail.evidence?.missingActions, ['sts:TagSession'])
  const cmd = fail.fix!.commands![0]!
  assert.match(
    cmd,
    /^aws iam update-assume-role-policy --role-name KarpenterControllerRole-demo --policy-document '/,
  )
  const doc = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument
  assert.equal(doc.Statement.length, 2)
  assert.deepEqual(doc.Statement[1]!.Action, ['sts:AssumeRole', 'sts:TagSession'])
})

test('an IRSA-only trust on a Pod Identity role fails', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => {
      const role = f.iam.roles[CONTROLLER_ROLE]
      if (role?.ok && role.value) {
        role.value.role.trust = {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { Federated: 'arn:aws:iam::123456789012:oidc-provider/x' },
              Action: 'sts:AssumeRoleWithWebIdentity',
            },
          ],
        }
      }
    }),
  )
  assert.equal(r.status, 'fail')
  assert.deepEqual(r.findings.find((x) => x.status === 'fail')!.evidence?.missingActions, [
    'sts:AssumeRole',
    'sts:TagSession',
  ])
})

test('the association names a role that does not exist: fail', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null))),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings.find((x) => x.status === 'fail')!.message,
    /names role KarpenterControllerRole-demo, which does not exist/,
  )
})

test('missing eks-pod-identity-agent add-on fails with create-addon', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => (f.eks.addons = ok(['vpc-cni']))),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, 'eks-pod-identity-agent')
  assert.deepEqual(fail.evidence?.addons, ['vpc-cni'])
  assert.equal(
    fail.fix!.commands![0],
    'aws eks create-addon --cluster-name demo --addon-name eks-pod-identity-agent --region us-west-2',
  )
})

test('an endpoint that cannot list associations (moto: 404) makes the check unknown, not pass', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => {
      f.eks.podIdentityAssociations = failed(
        'eks:ListPodIdentityAssociations demo',
        'NotFound',
        'unsupported',
      )
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /not supported by this endpoint/)
})

test('an unreadable add-on list makes that part unknown; the rest is still judged', () => {
  const r = runCheck(
    podIdentity,
    podIdentityFacts((f) => (f.eks.addons = failed('eks:ListAddons demo'))),
  )
  assert.equal(r.status, 'unknown')
  assert.equal(r.findings.filter((x) => x.status === 'pass').length, 2)
})
