import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicy } from '../../../src/checks/controller-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { AttachedPolicy, Facts } from '../../../src/facts/types.js'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { referencePolicies } from '../../../src/desired/reference-policy.js'
import { CONTROLLER_ROLE, CONTROLLER_ROLE_ARN, failed, healthyFacts, ok } from '../../helpers/facts.js'
import {
  asList as list,
  controllerRole,
  setChartVersion as setVersion,
} from '../../helpers/check-fixtures.js'

const { role, attachedOf, editStatements, dropActions } = controllerRole

const attach =
  (name: string, document: PolicyDocument | null, extra: Partial<AttachedPolicy> = {}) =>
  (f: Facts) => {
    role(f).attached = ok([
      ...attachedOf(f),
      { arn: `arn:aws:iam::123456789012:policy/${name}`, name, document, ...extra },
    ])
  }

test('healthy: the getting-started policies grant everything 1.14.1 needs', () => {
  const r = runCheck(controllerPolicy, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 1)
  assert.match(r.findings[0]!.message, /grants all \d+ actions Karpenter 1.14.1 needs/)
})

test('missing actions fail, named with their reference statement, and the fix adds exactly those', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(dropActions('ec2:DescribeInstanceStatus', 'iam:ListInstanceProfiles')),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings[0]!
  assert.equal(fail.subject, CONTROLLER_ROLE_ARN)
  assert.match(
    fail.message,
    /lacks 2 action\(s\) Karpenter 1.14.1 needs: ec2:DescribeInstanceStatus, iam:ListInstanceProfiles/,
  )
  assert.deepEqual(fail.evidence?.missing, [
    {
      action: 'ec2:DescribeInstanceStatus',
      referenceSid: 'AllowRegionalReadActions',
      referencePolicy: 'KarpenterControllerResourceDiscoveryPolicy-demo',
    },
    {
      action: 'iam:ListInstanceProfiles',
      referenceSid: 'AllowUnscopedInstanceProfileListAction',
      referencePolicy: 'KarpenterControllerResourceDiscoveryPolicy-demo',
    },
  ])
  const cmd = fail.fix!.commands![0]!
  assert.match(
    cmd,
    /^aws iam put-role-policy --role-name KarpenterControllerRole-demo --policy-name KarpenterControllerMissing-demo --policy-document '/,
  )
  const doc = JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument
  assert.deepEqual(
    doc.Statement.map((s) => s.Action),
    [['ec2:DescribeInstanceStatus'], ['iam:ListInstanceProfiles']],
  )
  assert.deepEqual(doc.Statement[0]!.Condition, { StringEquals: { 'aws:RequestedRegion': 'us-west-2' } })
})

test('an older controller is judged against its own version’s template: the 1.0.14 policy passes at 1.0.14 and lacks what later minors added at 1.14.1', () => {
  const v1_0 = (f: Facts) => {
    role(f).attached = ok(
      referencePolicies('1.0.14', {
        partition: 'aws',
        region: 'us-west-2',
        accountId: '123456789012',
        clusterName: 'demo',
        nodeRoleArns: [CONTROLLER_ROLE_ARN],
        queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
      }).map((d) => ({
        arn: `arn:aws:iam::123456789012:policy/${d.name}`,
        name: d.name,
        document: d.document,
      })),
    )
  }
  assert.equal(
    runCheck(
      controllerPolicy,
      healthyFacts((f) => (v1_0(f), setVersion('1.0.14')(f))),
    ).status,
    'pass',
  )
  const r = runCheck(controllerPolicy, healthyFacts(v1_0))
  assert.equal(r.status, 'fail')
  assert.deepEqual((r.findings[0]!.evidence?.missing as { action: string }[]).map((m) => m.action).sort(), [
    'ec2:DescribeCapacityReservations',
    'ec2:DescribeInstanceStatus',
    // ec2:DescribePlacementGroups: only for an EC2NodeClass with placementGroupSelector (none here)
    'iam:ListInstanceProfiles',
  ])
})

test('a 1.0 install is not asked for DescribeAvailabilityZones: its template lists it, the controller stopped calling it (#5308, #6932)', () => {
  // The newest policies on a 1.0.14 controller: the state an IAM-first upgrade passes through.
  const r = runCheck(controllerPolicy, healthyFacts(setVersion('1.0.14')))
  assert.equal(r.status, 'pass', r.findings[0]!.message)
  assert.match(r.findings[0]!.message, /grants all \d+ actions Karpenter 1\.0\.14 needs/)
  assert.equal(runCheck(controllerPolicy, healthyFacts(setVersion('1.1.0'))).status, 'pass')
})

test('zonal shift and the queue actions are only needed when enabled', () => {
  // zonal shift is off in the healthy values: its action may be absent
  assert.equal(
    runCheck(controllerPolicy, healthyFacts(dropActions('arc-zonal-shift:GetManagedResource'))).status,
    'pass',
  )
  const zonal = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      dropActions('arc-zonal-shift:GetManagedResource')(f)
      if (f.kube.release.ok && f.kube.release.value)
        (f.kube.release.value.computedValues.settings as Record<string, unknown>).enableZonalShift = true
    }),
  )
  assert.equal(zonal.status, 'fail')
  const noQueue = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      dropActions('sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage')(f)
      if (f.kube.release.ok && f.kube.release.value)
        (f.kube.release.value.computedValues.settings as Record<string, unknown>).interruptionQueue = ''
      if (f.kube.deployment.ok && f.kube.deployment.value)
        delete f.kube.deployment.value.env.INTERRUPTION_QUEUE
    }),
  )
  assert.equal(noQueue.status, 'pass')
})

test('iam:PassRole is left to passrole-node-role', () => {
  assert.equal(runCheck(controllerPolicy, healthyFacts(dropActions('iam:PassRole'))).status, 'pass')
})

test('ec2:* on Resource "*" covers the actions but warns as broader than the reference', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      role(f).attached = ok([])
      role(f).inline = ok([
        {
          name: 'karpenter',
          document: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'Everything',
                Effect: 'Allow',
                Action: [
                  'ec2:*',
                  'iam:*',
                  'ssm:GetParameter',
                  'pricing:GetProducts',
                  'eks:DescribeCluster',
                  'sqs:*',
                ],
                Resource: '*',
              },
            ],
          },
        },
      ])
    }),
  )
  assert.equal(r.status, 'warn')
  assert.equal(r.findings[0]!.status, 'pass')
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.equal(warn.subject, 'karpenter#Everything')
  assert.match(
    warn.message,
    /^security: .*action pattern ec2:\*.*Resource "\*" where the reference names ARNs.*no Condition where the reference scopes by tags/,
  )
  assert.ok((warn.evidence?.actions as string[]).includes('ec2:TerminateInstances'))
  assert.ok(
    !(warn.evidence?.actions as string[]).includes('ec2:DescribeInstances'),
    'reads are not a security finding',
  )
  assert.match(warn.fix!.snippet!.text, /AllowScopedDeletion/)
})

test('dropping the tag conditions on TerminateInstances warns', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      editStatements((s) => (s.Sid === 'AllowScopedDeletion' ? { ...s, Condition: undefined } : s)),
    ),
  )
  assert.equal(r.status, 'warn')
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.equal(warn.subject, 'KarpenterControllerNodeLifecyclePolicy-demo#AllowScopedDeletion')
  assert.deepEqual(warn.evidence?.actions, ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'])
})

test('a grant on fewer resources than the reference warns', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      editStatements((s) =>
        s.Sid === 'AllowScopedEC2InstanceAccessActions'
          ? { ...s, Resource: list(s.Resource).filter((x) => !x.includes('capacity-reservation')) }
          : s,
      ),
    ),
  )
  assert.equal(r.status, 'warn')
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.deepEqual(warn.evidence?.narrower, [
    {
      action: 'ec2:RunInstances',
      referenceSid: 'AllowScopedEC2InstanceAccessActions',
      notCovered: ['arn:aws:ec2:us-west-2:*:capacity-reservation/*'],
    },
    {
      action: 'ec2:CreateFleet',
      referenceSid: 'AllowScopedEC2InstanceAccessActions',
      notCovered: ['arn:aws:ec2:us-west-2:*:capacity-reservation/*'],
    },
  ])
})

test('an account-scoped ARN counts for the reference wildcard account', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      editStatements((s) => ({
        ...s,
        Resource: list(s.Resource).map((x) => x.replace(':*:', ':123456789012:')),
      })),
    ),
  )
  assert.equal(r.status, 'pass')
})

test('an explicit Deny counts as missing', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      role(f).inline = ok([
        {
          name: 'guardrail',
          document: { Statement: [{ Sid: 'NoPricing', Effect: 'Deny', Action: 'pricing:*', Resource: '*' }] },
        },
      ])
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /pricing:GetProducts \(explicitly denied: guardrail#NoPricing\)/)
})

test('missing actions with an unreadable attached policy: unknown, not fail and not pass', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      dropActions('eks:DescribeCluster')(f)
      attach('opaque', null, {
        documentError: {
          code: 'AccessDenied',
          kind: 'denied',
          message: 'no',
          read: 'iam:GetPolicyVersion opaque',
        },
      })(f)
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(
    r.findings[0]!.message,
    /eks:DescribeCluster.*opaque \(could not read iam:GetPolicyVersion opaque/,
  )
  assert.deepEqual(r.findings[0]!.evidence?.unreadable, ['arn:aws:iam::123456789012:policy/opaque'])
})

test('everything covered but one attached policy unreadable: the check does not pass', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      attach('opaque', null, {
        documentError: {
          code: 'AccessDenied',
          kind: 'denied',
          message: 'no',
          read: 'iam:GetPolicyVersion opaque',
        },
      }),
    ),
  )
  assert.equal(r.status, 'unknown')
  assert.equal(
    r.findings.find((x) => x.status === 'unknown')!.subject,
    'arn:aws:iam::123456789012:policy/opaque',
  )
})

test('a failed ListAttachedRolePolicies makes the check unknown', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      (f) => (role(f).attached = failed('iam:ListAttachedRolePolicies KarpenterControllerRole-demo')),
    ),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /ListAttachedRolePolicies/)
})

test('a controller role that does not exist fails', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null))),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings[0]!.subject, CONTROLLER_ROLE)
})

test('no controller role discovered, or a v0.x install: skipped, saying why', () => {
  const none = runCheck(
    controllerPolicy,
    healthyFacts((f) => ((f.iam.controllerRoleName = null), (f.iam.controllerIdentity = 'none'))),
  )
  assert.equal(none.status, 'skipped')
  assert.match(none.findings[0]!.message, /controller role was not discovered/)
  const legacy = runCheck(controllerPolicy, healthyFacts(setVersion('0.30.0')))
  assert.equal(legacy.status, 'skipped')
  assert.match(legacy.findings[0]!.message, /v0.x/)
})

test('a role holding the newest template on an older install is scoped right: no narrow or broad warning where only the older template differs', () => {
  for (const v of ['1.3.8', '1.7.6', '1.9.2']) {
    const r = runCheck(controllerPolicy, healthyFacts(setVersion(v)))
    assert.equal(r.status, 'pass', `${v}: ${r.findings.map((f) => f.message).join('; ')}`)
  }
})
