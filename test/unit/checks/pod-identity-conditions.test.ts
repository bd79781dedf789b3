// The conditions pod-identity judges, one at a time (issue 12, item 8: mutation testing): whether the
// controller uses IRSA instead (the collector's verdict, else the annotation, live or rendered), the
// association of the controller ServiceAccount, the trust of the role it names (missing, unreadable,
// not trusting pods.eks.amazonaws.com) and the agent add-on. Each finding is pinned exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { podIdentity } from '../../../src/checks/pod-identity.js'
import { runCheck, runChecks } from '../../../src/checks/run.js'
import { fixSet } from '../../../src/fix/fixes.js'
import type { Facts, PodIdentityAssociation } from '../../../src/facts/types.js'
import { both, podIdentityFacts, podTrust, roleOf } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, CONTROLLER_ROLE_ARN, failed, ok } from '../../helpers/facts.js'

const result = (fn?: (f: Facts) => void) => runCheck(podIdentity, podIdentityFacts(fn))
const run = (fn?: (f: Facts) => void) => result(fn).findings
const associations =
  (...list: PodIdentityAssociation[]) =>
  (f: Facts) => {
    f.eks.podIdentityAssociations = ok(list)
  }
const association = (over: Partial<PodIdentityAssociation> = {}): PodIdentityAssociation => ({
  associationId: 'a-1',
  namespace: 'kube-system',
  serviceAccount: 'karpenter',
  ...over,
})
const liveAnnotation = (arn: string) => (f: Facts) => {
  if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
    f.kube.serviceAccount.value.metadata.annotations = { 'eks.amazonaws.com/role-arn': arn }
}
const renderedAnnotation = (arn: string) => (f: Facts) => {
  if (f.kube.release.ok && f.kube.release.value)
    f.kube.release.value.renderedServiceAccount = {
      name: 'karpenter',
      annotations: { 'eks.amazonaws.com/role-arn': arn },
    }
}
const identity = (id: Facts['iam']['controllerIdentity'] | undefined) => (f: Facts) => {
  ;(f.iam as { controllerIdentity?: string }).controllerIdentity = id
}
const status = (fn: (f: Facts) => void) => result(fn).status

const ASSOCIATION_PASS = {
  status: 'pass',
  subject: 'kube-system/karpenter',
  message: `Pod Identity association a-1234567890abcdef0 maps kube-system/karpenter to ${CONTROLLER_ROLE_ARN}`,
  evidence: { associationId: 'a-1234567890abcdef0', roleArn: CONTROLLER_ROLE_ARN },
}
const TRUST_PASS = {
  status: 'pass',
  subject: CONTROLLER_ROLE_ARN,
  message: `${CONTROLLER_ROLE} trusts pods.eks.amazonaws.com for sts:AssumeRole + sts:TagSession`,
}
const AGENT_PASS = {
  status: 'pass',
  subject: 'eks-pod-identity-agent',
  message: 'the eks-pod-identity-agent add-on is installed',
}
const CREATE = (roleArn: string) =>
  `aws eks create-pod-identity-association --cluster-name demo --namespace kube-system --service-account karpenter --role-arn ${roleArn} --region us-west-2`
const SKIP = {
  status: 'skipped',
  message:
    'the controller uses IRSA (eks.amazonaws.com/role-arn on kube-system/karpenter), not Pod Identity: see irsa-trust-policy',
}

test('pod-identity is an error-severity iam check', () => {
  assert.equal(podIdentity.meta.id, 'pod-identity')
  assert.equal(podIdentity.meta.severity, 'error')
  assert.equal(podIdentity.meta.category, 'iam')
})

test('healthy Pod Identity: the association, the trust and the agent pass, exactly', () => {
  assert.deepEqual(run(), [ASSOCIATION_PASS, TRUST_PASS, AGENT_PASS])
})

test('the collector says IRSA: skipped, even with no annotation', () => {
  assert.deepEqual(run(identity('irsa')), [SKIP])
})

test('the collector says Pod Identity: judged, even with an IRSA annotation left on the ServiceAccount', () => {
  assert.equal(status(liveAnnotation(CONTROLLER_ROLE_ARN)), 'pass')
})

test('no verdict from the collector: the live annotation, else the rendered one, means IRSA', () => {
  assert.deepEqual(run(both(identity(undefined), liveAnnotation(CONTROLLER_ROLE_ARN))), [SKIP])
  assert.deepEqual(run(both(identity(undefined), renderedAnnotation(CONTROLLER_ROLE_ARN))), [SKIP])
  assert.equal(status(both(identity(undefined), liveAnnotation(''), renderedAnnotation(''))), 'pass')
  assert.equal(status(identity(undefined)), 'pass')
})

test('a ServiceAccount without annotations, or a rendered annotation that is not a string: not IRSA', () => {
  const bare = (f: Facts) => {
    if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
      delete f.kube.serviceAccount.value.metadata.annotations
  }
  assert.equal(status(both(identity(undefined), bare)), 'pass')
  const notString = (f: Facts) => {
    if (f.kube.release.ok && f.kube.release.value)
      f.kube.release.value.renderedServiceAccount = {
        name: 'karpenter',
        annotations: { 'eks.amazonaws.com/role-arn': true as unknown as string },
      }
  }
  assert.equal(status(both(identity(undefined), notString)), 'pass')
})

test('an unreadable ServiceAccount and release values: the rendered annotation still decides', () => {
  const noLive = (f: Facts) => {
    f.kube.serviceAccount = failed('kube:get serviceaccount')
  }
  assert.deepEqual(run(both(identity(undefined), noLive, renderedAnnotation(CONTROLLER_ROLE_ARN))), [SKIP])
})

test('an association of another ServiceAccount in the same namespace does not count', () => {
  const other = association({ serviceAccount: 'other', roleArn: undefined, associationId: 'a-other' })
  assert.deepEqual(run(associations(other)), [
    {
      status: 'fail',
      subject: 'kube-system/karpenter',
      message:
        'no Pod Identity association for kube-system/karpenter in cluster demo; association a-other is for kube-system/other, not for kube-system/karpenter, which the controller runs as',
      code: 'no-association',
      evidence: {
        serviceAccount: 'kube-system/karpenter',
        associations: ['kube-system/other → a-other'],
        roleArn: CONTROLLER_ROLE_ARN,
      },
      fix: {
        summary: `associate kube-system/karpenter with ${CONTROLLER_ROLE} (controller role ${CONTROLLER_ROLE}), then restart the controller so it picks up the credentials`,
        commands: [
          CREATE(CONTROLLER_ROLE_ARN),
          'kubectl -n kube-system rollout restart deployment karpenter',
        ],
      },
    },
  ])
})

test('an association made for another namespace names it and its role (issue 21, item 6); --fix still creates the right one', async () => {
  const elsewhere = association({
    namespace: 'karpenter',
    associationId: 'a-ns',
    roleArn: CONTROLLER_ROLE_ARN,
  })
  const f = run(associations(elsewhere))[0]
  assert.equal(
    f?.message,
    `no Pod Identity association for kube-system/karpenter in cluster demo; association a-ns is for karpenter/karpenter (role ${CONTROLLER_ROLE_ARN.split('/').pop()}), not for kube-system/karpenter, which the controller runs as`,
  )
  assert.equal(f?.code, 'no-association')
  // An unrelated association (another namespace, service account and role) is not named.
  const unrelated = association({
    namespace: 'apps',
    serviceAccount: 'web',
    roleArn: 'arn:aws:iam::123456789012:role/web',
    associationId: 'a-web',
  })
  assert.equal(
    run(associations(unrelated))[0]?.message,
    'no Pod Identity association for kube-system/karpenter in cluster demo',
  )
})

test('--fix keys on the finding, not its words: an association elsewhere, or none at all, gets the right one created (issue 21, item 12)', () => {
  for (const fn of [
    associations(
      association({ namespace: 'karpenter', associationId: 'a-ns', roleArn: CONTROLLER_ROLE_ARN }),
    ),
    both(identity('none'), associations()),
  ]) {
    const facts = podIdentityFacts(fn)
    const fs = fixSet(facts, runChecks([podIdentity], facts))
    assert.deepEqual(
      fs.resources.map((r) => [r.kind, r.name]),
      [['EKS Pod Identity association', 'kube-system/karpenter']],
    )
    assert.deepEqual(fs.manual, [])
  }
})

test('no association and no identity at all: the node-role fallback is named', () => {
  const findings = run(both(identity('none'), associations()))
  assert.equal(
    findings[0]?.message,
    "the controller ServiceAccount kube-system/karpenter has no AWS identity: no IRSA annotation and no Pod Identity association (it would fall back to the node's instance role)",
  )
})

test('the role to associate: the one read, never one guessed from a convention or a name not read (issue 35, item 4)', () => {
  const commandOf = (fn: (f: Facts) => void) => run(both(associations(), fn))[0]?.fix?.commands?.[0]
  assert.equal(
    commandOf((f) => (roleOf(f, CONTROLLER_ROLE).role.arn = 'arn:aws:iam::123456789012:role/path/Real')),
    CREATE('arn:aws:iam::123456789012:role/path/Real'),
  )
  assert.equal(
    commandOf((f) => {
      f.iam.controllerRoleName = null
      f.iam.roles = {}
      f.meta.partition = 'aws-cn'
    }),
    undefined,
  )
  assert.equal(
    commandOf((f) => {
      f.iam.controllerRoleName = 'Mine'
      f.meta.accountId = undefined
    }),
    undefined,
  )
})

test('an association without a role ARN names the discovered role, else "a role" and unknown', () => {
  const findings = run(associations(association()))
  assert.deepEqual(findings.slice(0, 2), [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: `Pod Identity association a-1 maps kube-system/karpenter to ${CONTROLLER_ROLE}`,
      evidence: { associationId: 'a-1', roleArn: undefined },
    },
    TRUST_PASS,
  ])
  const unnamed = run(both(associations(association()), (f) => (f.iam.controllerRoleName = null)))
  assert.deepEqual(unnamed.slice(0, 2), [
    {
      status: 'pass',
      subject: 'kube-system/karpenter',
      message: 'Pod Identity association a-1 maps kube-system/karpenter to a role',
      evidence: { associationId: 'a-1', roleArn: undefined },
    },
    {
      status: 'unknown',
      subject: 'a-1',
      message: 'the role of Pod Identity association a-1 was not read (DescribePodIdentityAssociation)',
    },
  ])
})

test('the role named by the ARN wins over the discovered one', () => {
  const findings = run(
    both(associations(association({ roleArn: 'arn:aws:iam::123456789012:role/Other' })), (f) => {
      f.iam.roles.Other = ok(null)
    }),
  )
  assert.equal(findings[1]?.subject, 'arn:aws:iam::123456789012:role/Other')
  assert.equal(findings[1]?.message, 'Pod Identity association a-1 names role Other, which does not exist')
})

test('the associated role does not exist: fail, create it trusting the agent', () => {
  const findings = run((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null)))
  assert.deepEqual(findings[1], {
    status: 'fail',
    subject: CONTROLLER_ROLE_ARN,
    message: `Pod Identity association a-1234567890abcdef0 names role ${CONTROLLER_ROLE}, which does not exist`,
    evidence: { associationId: 'a-1234567890abcdef0', roleArn: CONTROLLER_ROLE_ARN },
    fix: {
      summary: `create ${CONTROLLER_ROLE} trusting pods.eks.amazonaws.com, or point the association at the existing controller role`,
      commands: [
        `aws iam create-role --role-name ${CONTROLLER_ROLE} --assume-role-policy-document '${JSON.stringify(podTrust())}'`,
      ],
    },
  })
  assert.equal(findings.length, 3)
})

test('the associated role, discovered by name only, does not exist: the subject is its name', () => {
  const findings = run(both(associations(association()), (f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null))))
  assert.equal(findings[1]?.subject, CONTROLLER_ROLE)
})

test('the role read failed or was not made: that part is unknown, the agent is still judged', () => {
  assert.deepEqual(
    run((f) => (f.iam.roles[CONTROLLER_ROLE] = failed(`iam:GetRole ${CONTROLLER_ROLE}`))),
    [
      ASSOCIATION_PASS,
      {
        status: 'unknown',
        subject: CONTROLLER_ROLE,
        message: `IAM role ${CONTROLLER_ROLE}: could not read iam:GetRole ${CONTROLLER_ROLE} (permission denied: AccessDenied — AccessDenied for iam:GetRole ${CONTROLLER_ROLE})`,
        evidence: { read: `iam:GetRole ${CONTROLLER_ROLE}`, code: 'AccessDenied', kind: 'denied' },
      },
      AGENT_PASS,
    ],
  )
  assert.deepEqual(run((f) => delete f.iam.roles[CONTROLLER_ROLE])[1], {
    status: 'unknown',
    subject: CONTROLLER_ROLE,
    message: `IAM role ${CONTROLLER_ROLE} was not collected`,
  })
})

test('a trust missing sts:TagSession: fail, the agent statement added, the others kept', () => {
  const irsa = {
    Effect: 'Allow' as const,
    Principal: { Federated: 'arn:aws:iam::123456789012:oidc-provider/x' },
    Action: 'sts:AssumeRoleWithWebIdentity',
  }
  const trust = { Version: '2012-10-17', Statement: [irsa, ...podTrust(['sts:AssumeRole']).Statement] }
  const findings = run((f) => (roleOf(f, CONTROLLER_ROLE).role.trust = trust))
  const fixed = { Version: '2012-10-17', Statement: [...trust.Statement, ...podTrust().Statement] }
  assert.deepEqual(findings[1], {
    status: 'fail',
    subject: CONTROLLER_ROLE_ARN,
    message: `trust policy of ${CONTROLLER_ROLE} does not let pods.eks.amazonaws.com perform sts:TagSession: the Pod Identity agent cannot hand the controller credentials`,
    evidence: { missingActions: ['sts:TagSession'], trust },
    fix: {
      summary: `let pods.eks.amazonaws.com assume ${CONTROLLER_ROLE} and tag the session (other trust statements are kept)`,
      commands: [
        `aws iam update-assume-role-policy --role-name ${CONTROLLER_ROLE} --policy-document '${JSON.stringify(fixed)}'`,
      ],
    },
  })
})

test('a trust missing both actions names both', () => {
  const findings = run((f) => (roleOf(f, CONTROLLER_ROLE).role.trust = podTrust(['sts:GetCallerIdentity'])))
  assert.match(findings[1]?.message ?? '', /perform sts:AssumeRole, sts:TagSession: /)
})

test('the agent add-on missing: fail, create it', () => {
  const findings = run((f) => (f.eks.addons = ok(['vpc-cni', 'eks-pod-identity-agent-old'])))
  assert.deepEqual(findings[2], {
    status: 'fail',
    subject: 'eks-pod-identity-agent',
    message:
      'the eks-pod-identity-agent add-on is not installed on demo: Pod Identity associations have no effect without the agent',
    evidence: { addons: ['vpc-cni', 'eks-pod-identity-agent-old'] },
    fix: {
      summary: 'install the eks-pod-identity-agent add-on (EKS Auto Mode clusters run the agent built in)',
      commands: [
        'aws eks create-addon --cluster-name demo --addon-name eks-pod-identity-agent --region us-west-2',
      ],
    },
  })
})

test('an unreadable add-on list: unknown about the agent, with the read', () => {
  const findings = run((f) => (f.eks.addons = failed('eks:ListAddons demo', 'Throttling', 'throttled')))
  assert.deepEqual(findings[2], {
    status: 'unknown',
    subject: 'eks-pod-identity-agent',
    message:
      'EKS add-ons: could not read eks:ListAddons demo (throttled: Throttling — Throttling for eks:ListAddons demo)',
    evidence: { read: 'eks:ListAddons demo', code: 'Throttling', kind: 'throttled' },
  })
})

test('no Helm release: skipped (the ServiceAccount is the chart’s)', () => {
  assert.equal(
    status((f) => (f.kube.release = ok(null))),
    'skipped',
  )
})

test('the restart names the controller Deployment, not the ServiceAccount (a custom serviceAccount.name)', () => {
  const findings = run(
    both(associations(), (f) => {
      if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
        f.kube.serviceAccount.value.metadata.name = 'karpenter-controller'
    }),
  )
  assert.deepEqual(findings[0]?.fix?.commands, [
    `aws eks create-pod-identity-association --cluster-name demo --namespace kube-system --service-account karpenter-controller --role-arn ${CONTROLLER_ROLE_ARN} --region us-west-2`,
    'kubectl -n kube-system rollout restart deployment karpenter',
  ])
})
