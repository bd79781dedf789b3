// The conditions irsa-trust-policy judges, one at a time (issue 12, item 8: mutation testing): when
// it applies (IRSA, an OIDC issuer), which OIDC provider is the cluster's, how each :sub operator
// reads several values (any of them admits, any wildcard makes it broad), and which message says why
// the controller is not let in.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { irsaTrustPolicy } from '../../../src/checks/irsa-trust-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import type { PolicyStatement } from '../../../src/policy/types.js'
import {
  CLUSTER,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  healthyFacts,
  irsaTrust,
  ISSUER,
  ok,
  REGION,
} from '../../helpers/facts.js'

const RUNNING = 'system:serviceaccount:kube-system:karpenter'
const SUB = `${ISSUER}:sub`
const AUD = { [`${ISSUER}:aud`]: 'sts.amazonaws.com' }

/** The controller role trusting the issuer through one healthy-looking statement per condition. */
const trusting =
  (...conditions: NonNullable<PolicyStatement['Condition']>[]) =>
  (f: Facts) => {
    const r = f.iam.roles[CONTROLLER_ROLE]
    assert.ok(r?.ok && r.value)
    const trust = irsaTrust()
    const statement = trust.Statement[0]!
    trust.Statement = conditions.map((Condition) => ({
      ...statement,
      Condition,
    }))
    r.value.role.trust = trust
  }
const run = (fn?: (f: Facts) => void) => runCheck(irsaTrustPolicy, healthyFacts(fn))
const statuses = (fn?: (f: Facts) => void) => run(fn).findings.map((f) => f.status)
/** The message of the finding that is not the security one (why the controller is not let in). */
const mismatch = (fn: (f: Facts) => void) => {
  const found = run(fn).findings.filter((f) => f.status === 'fail' && !f.message.startsWith('security:'))
  assert.equal(found.length, 1)
  return found[0]!.message
}
const security = (fn: (f: Facts) => void) => {
  const found = run(fn).findings.filter((f) => f.message.startsWith('security:'))
  assert.equal(found.length, 1)
  return found[0]!.message
}

test('irsa-trust-policy is an error-severity security check', () => {
  assert.equal(irsaTrustPolicy.meta.id, 'irsa-trust-policy')
  assert.equal(irsaTrustPolicy.meta.severity, 'error')
  assert.equal(irsaTrustPolicy.meta.category, 'security')
})

test('a controller not on IRSA: skipped, naming its identity', () => {
  assert.deepEqual(run((f) => (f.iam.controllerIdentity = 'pod-identity')).findings, [
    {
      status: 'skipped',
      message: 'the controller does not use IRSA (identity: pod-identity)',
    },
  ])
})

test('no cluster, or a cluster without an OIDC issuer: skipped, saying so', () => {
  const noIssuer = [{ status: 'skipped', message: 'the cluster has no OIDC issuer' }]
  assert.deepEqual(run((f) => (f.eks.cluster = ok(null))).findings, noIssuer)
  assert.deepEqual(
    run((f) => {
      if (f.eks.cluster.ok && f.eks.cluster.value) delete f.eks.cluster.value.oidcIssuer
    }).findings,
    noIssuer,
  )
})

test("only another issuer's OIDC provider registered: fail for the cluster's issuer, with the eksctl fix and the aws one", () => {
  const other = 'oidc.eks.us-west-2.amazonaws.com/id/OTHERCLUSTER'
  const r = run(
    (f) =>
      (f.iam.oidcProviders = ok([
        {
          arn: `arn:aws:iam::1:oidc-provider/${other}`,
          url: other,
          clientIds: [],
        },
      ])),
  )
  assert.deepEqual(r.findings[0], {
    status: 'fail',
    subject: ISSUER,
    message: `no IAM OIDC provider is registered for the cluster issuer ${ISSUER}`,
    fix: {
      summary: 'register the cluster OIDC provider, with eksctl or without it (below)',
      commands: [
        `eksctl utils associate-iam-oidc-provider --cluster ${CLUSTER} --region ${REGION} --approve`,
      ],
      alternative: {
        label: 'without eksctl (aws and kubectl only)',
        commands: [
          `aws iam create-open-id-connect-provider --url https://${ISSUER} --client-id-list sts.amazonaws.com`,
        ],
      },
    },
  })
  assert.deepEqual(
    r.findings.map((f) => [f.status, f.subject]),
    [
      ['fail', ISSUER],
      ['pass', CONTROLLER_ROLE_ARN],
    ],
  )
})

test('StringEquals on an empty :sub names no service account: the "no statement" message', () => {
  assert.equal(
    mismatch(trusting({ StringEquals: { [SUB]: '', ...AUD } })),
    `trust of ${CONTROLLER_ROLE} has no sts:AssumeRoleWithWebIdentity statement for ${ISSUER} with :sub = ${RUNNING} and :aud = sts.amazonaws.com`,
  )
})

test('another service account under a wrong :aud: the sub mismatch, not the audience, is what is wrong', () => {
  assert.equal(
    mismatch(
      trusting({
        StringEquals: {
          [SUB]: 'system:serviceaccount:other:x',
          [`${ISSUER}:aud`]: 'x',
        },
      }),
    ),
    `trust of ${CONTROLLER_ROLE} allows system:serviceaccount:other:x, but the controller runs as ${RUNNING}`,
  )
})

test('two statements for two other service accounts: both are named', () => {
  assert.equal(
    mismatch(
      trusting(
        { StringEquals: { [SUB]: 'system:serviceaccount:a:x', ...AUD } },
        { StringEquals: { [SUB]: 'system:serviceaccount:b:x', ...AUD } },
      ),
    ),
    `trust of ${CONTROLLER_ROLE} allows system:serviceaccount:a:x, system:serviceaccount:b:x, but the controller runs as ${RUNNING}`,
  )
})

test('one of two statements compares a "*" literally: the message says so', () => {
  assert.match(
    mismatch(
      trusting(
        { StringEquals: { [SUB]: 'system:serviceaccount:a:x', ...AUD } },
        {
          StringEquals: {
            [SUB]: 'system:serviceaccount:kube-system:*',
            ...AUD,
          },
        },
      ),
    ),
    /allows system:serviceaccount:a:x, system:serviceaccount:kube-system:\* \(StringEquals compares literally: \* matches only a "\*"\), but/,
  )
})

test('StringEquals is case-sensitive: the service account in other case is not let in', () => {
  assert.deepEqual(
    statuses(
      trusting({
        StringEquals: {
          [SUB]: 'system:serviceaccount:kube-system:Karpenter',
          ...AUD,
        },
      }),
    ),
    ['fail'],
  )
})

test('several :sub values: any one naming the controller admits it (IgnoreCase, StringLike without a wildcard)', () => {
  const other = 'system:serviceaccount:other:x'
  const ignoreCase = {
    StringEqualsIgnoreCase: { [SUB]: [other, RUNNING.toUpperCase()] },
    StringEquals: AUD,
  }
  assert.deepEqual(statuses(trusting(ignoreCase)), ['pass'])
  assert.deepEqual(statuses(trusting({ StringLike: { [SUB]: [other, RUNNING] }, StringEquals: AUD })), [
    'pass',
  ])
})

test('StringLike with one wildcard value among exact ones is broad: the security finding', () => {
  assert.match(
    security(
      trusting({
        StringLike: { [SUB]: [RUNNING, 'system:serviceaccount:other:*'] },
        StringEquals: AUD,
      }),
    ),
    /uses StringLike on .+:sub = "system:serviceaccount:kube-system:karpenter,system:serviceaccount:other:\*": any matching service account can assume the controller role \(the controller's system:serviceaccount:kube-system:karpenter among them\)$/,
  )
})

test('StringNotEquals compares literally: a "*" excludes nothing, so the controller is among those let in', () => {
  assert.match(
    security(
      trusting({
        StringNotEquals: { [SUB]: 'system:serviceaccount:kube-system:*' },
        StringEquals: AUD,
      }),
    ),
    /\(the controller's system:serviceaccount:kube-system:karpenter among them\)$/,
  )
})

test('StringNotLike with the controller among its values shuts the controller out', () => {
  assert.match(
    security(
      trusting({
        StringNotLike: { [SUB]: ['system:serviceaccount:other:*', RUNNING] },
        StringEquals: AUD,
      }),
    ),
    /\(but not the controller's system:serviceaccount:kube-system:karpenter\)$/,
  )
})

test('a negated or unread operator that shuts the controller out: the mismatch claims no literal comparison', () => {
  for (const op of ['StringNotEquals', 'StringNotLike', 'ArnLike']) {
    const message = mismatch(trusting({ [op]: { [SUB]: RUNNING }, StringEquals: AUD }))
    assert.match(message, /, but the controller runs as system:serviceaccount:kube-system:karpenter$/, op)
    assert.doesNotMatch(message, /compares literally/, op)
  }
})

test('a negation on :sub is not a trust that "allows" the service account it names: the mismatch says what it lets in', () => {
  for (const op of ['StringNotEquals', 'StringNotLike'])
    assert.equal(
      mismatch(trusting({ [op]: { [SUB]: RUNNING }, StringEquals: AUD })),
      `trust of ${CONTROLLER_ROLE} allows every service account except ${RUNNING}, but the controller runs as ${RUNNING}`,
      op,
    )
  assert.equal(
    mismatch(trusting({ ArnLike: { [SUB]: RUNNING }, StringEquals: AUD })),
    `trust of ${CONTROLLER_ROLE} allows ${RUNNING} (compared by ArnLike, which does not match a service account name), but the controller runs as ${RUNNING}`,
  )
})
