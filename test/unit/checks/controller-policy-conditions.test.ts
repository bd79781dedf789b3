// The conditions controller-policy judges, one at a time (issue 12, item 8: mutation testing):
// the version gates, the queue and account it derives, what counts as a Deny or a grant, each
// finding's message, evidence and fix, and the permissions boundary repair both IAM checks print.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { boundaryRepair, controllerPolicy, INLINE_LIMIT } from '../../../src/checks/controller-policy.js'
import { runCheck } from '../../../src/checks/run.js'
import type { AttachedPolicy, Facts } from '../../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  healthyFacts,
  NODE_ROLE_ARN,
  ok,
  passRoleEvaluation,
} from '../../helpers/facts.js'
import {
  asList as list,
  controllerRole,
  setChartVersion as setVersion,
} from '../../helpers/check-fixtures.js'

const { role, attachedOf, editStatements, dropActions } = controllerRole

const settings = (f: Facts) => {
  assert.ok(f.kube.release.ok && f.kube.release.value)
  return f.kube.release.value.computedValues.settings as Record<string, unknown>
}

const inline =
  (name: string, ...Statement: PolicyStatement[]) =>
  (f: Facts) => {
    role(f).inline = ok([{ name, document: { Version: '2012-10-17', Statement } }])
  }

const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

const docOf = (cmd: string) => JSON.parse(cmd.slice(cmd.indexOf("'") + 1, -1)) as PolicyDocument

const BOUNDARY_ARN = `arn:aws:iam::${ACCOUNT}:policy/KarpenterBoundary`

/** Gives the controller role a permissions boundary. */
const withBoundary =
  (document: PolicyDocument | null, extra: Partial<AttachedPolicy> = {}) =>
  (f: Facts) => {
    role(f).role.permissionsBoundaryArn = BOUNDARY_ARN
    role(f).boundary = { arn: BOUNDARY_ARN, name: 'KarpenterBoundary', document, ...extra }
  }

const allowAllBut = (...without: string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Sid: 'Ceiling', Effect: 'Allow', NotAction: without, Resource: '*' }],
})

/** Less ec2:DescribePlacementGroups: no EC2NodeClass of the healthy facts selects a placement group. */
const ALL_ACTIONS_1_14 = 29

// ---- meta ----

test('controller-policy is an error-severity IAM check', () => {
  assert.equal(controllerPolicy.meta.id, 'controller-policy')
  assert.equal(controllerPolicy.meta.severity, 'error')
  assert.equal(controllerPolicy.meta.category, 'iam')
})

// ---- the pass message ----

test('the pass names the role, the exact count of actions, the version, and what was not seen', () => {
  const r = runCheck(controllerPolicy, healthyFacts())
  assert.equal(r.findings.length, 1)
  assert.deepEqual(r.findings[0], {
    status: 'pass',
    subject: CONTROLLER_ROLE_ARN,
    message: `${CONTROLLER_ROLE} grants all ${ALL_ACTIONS_1_14} actions Karpenter 1.14.1 needs (compared with the reference policy: SCPs and session policies not seen; iam:PassRole: see passrole-node-role)`,
    caveats: [
      "controller-policy compares the role's policy documents (and its permissions boundary) with the reference: service control policies (SCPs) and session policies are not seen, and an SCP can still deny what they grant",
    ],
  })
})

test('the version shown: the chart version when it parses, else the app version, else the chart version as written', () => {
  const msg = (fn: (f: Facts) => void) => runCheck(controllerPolicy, healthyFacts(fn)).findings[0]!.message
  assert.match(msg(setVersion('latest', '1.14.1')), /actions Karpenter 1\.14\.1 needs/)
  assert.match(msg(setVersion('latest', 'main')), /actions Karpenter latest needs/)
})

test('an unreadable boundary does not let the pass say the boundary allows the actions', () => {
  const r = runCheck(controllerPolicy, healthyFacts(withBoundary(null)))
  const pass = r.findings.find((x) => x.status === 'pass')!
  assert.doesNotMatch(pass.message, /boundary/)
})

// ---- version gates ----

test('an action is needed from the first version whose template has it: 1.13.0 needs DescribeInstanceStatus, 1.12.9 does not', () => {
  const without = dropActions('ec2:DescribeInstanceStatus')
  assert.equal(runCheck(controllerPolicy, healthyFacts(both(without, setVersion('1.12.9')))).status, 'pass')
  const r = runCheck(controllerPolicy, healthyFacts(both(without, setVersion('1.13.0'))))
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.message,
    /lacks 1 action\(s\) Karpenter 1\.13\.0 needs: ec2:DescribeInstanceStatus$/,
  )
})

test('ListInstanceProfiles is needed from 1.8 (its template), not by 1.7', () => {
  const without = dropActions('iam:ListInstanceProfiles')
  assert.equal(runCheck(controllerPolicy, healthyFacts(both(without, setVersion('1.7.6')))).status, 'pass')
  assert.equal(runCheck(controllerPolicy, healthyFacts(both(without, setVersion('1.8.0')))).status, 'fail')
})

test('a later major version needs every action of the reference', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(both(dropActions('ec2:DescribeCapacityReservations'), setVersion('2.0.0'))),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /Karpenter 2\.0\.0 needs: ec2:DescribeCapacityReservations$/)
})

test('a version that parses nowhere is judged against the whole reference', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(both(dropActions('ec2:DescribeInstanceStatus'), setVersion('latest', 'main'))),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /Karpenter latest needs: ec2:DescribeInstanceStatus$/)
})

test('placement-group resources are needed from 1.12 on: a RunInstances grant without them is narrower then, not before', () => {
  const noPlacement = editStatements((s) =>
    s.Sid === 'AllowScopedEC2InstanceAccessActions'
      ? { ...s, Resource: list(s.Resource).filter((x) => !x.includes('placement-group')) }
      : s,
  )
  const now = runCheck(controllerPolicy, healthyFacts(noPlacement))
  assert.equal(now.status, 'warn')
  assert.deepEqual(
    (now.findings.find((x) => x.status === 'warn')!.evidence?.narrower as { action: string }[]).map(
      (n) => n.action,
    ),
    ['ec2:RunInstances', 'ec2:CreateFleet'],
  )
  assert.equal(
    runCheck(controllerPolicy, healthyFacts(both(noPlacement, setVersion('1.11.3')))).status,
    'pass',
  )
  assert.equal(
    runCheck(controllerPolicy, healthyFacts(both(noPlacement, setVersion('1.12.0')))).status,
    'warn',
  )
})

// ---- the queue and the account ----

test('no queue configured: the SQS actions are not needed, but every other action still is', () => {
  const noQueue = (f: Facts) => {
    settings(f).interruptionQueue = ''
    if (f.kube.deployment.ok && f.kube.deployment.value) delete f.kube.deployment.value.env.INTERRUPTION_QUEUE
  }
  const r = runCheck(controllerPolicy, healthyFacts(both(noQueue, dropActions('eks:DescribeCluster'))))
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /lacks 1 action\(s\) Karpenter 1\.14\.1 needs: eks:DescribeCluster$/)
})

test('a queue setting that names no queue (a URL without a name): the SQS actions are not demanded', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      both(
        (f) => (settings(f).interruptionQueue = 'https://sqs.us-west-2.amazonaws.com/'),
        dropActions('sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'),
      ),
    ),
  )
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /grants all 26 actions/)
})

test('the account unknown to the facts is read from the role ARN: the queue ARN and account-scoped grants still match', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      f.meta.accountId = undefined
      f.sqs.queue = ok(null)
    }),
  )
  assert.equal(r.status, 'pass')
})

test('the account unknown: a missing SQS action is demanded on the queue ARN in the role account', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      f.meta.accountId = undefined
      f.sqs.queue = ok(null)
      dropActions('sqs:GetQueueUrl')(f)
    }),
  )
  assert.equal(r.status, 'fail')
  const doc = r.findings[0]!.evidence?.document as PolicyDocument
  assert.deepEqual(doc.Statement[0]!.Resource, [`arn:aws:sqs:us-west-2:${ACCOUNT}:demo`])
})

// ---- what counts as a Deny and as a grant ----

test('a Deny on only some of the reference resources (one subnet) does not make the action missing', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      inline('guardrail', {
        Sid: 'NotThatSubnet',
        Effect: 'Deny',
        Action: 'ec2:RunInstances',
        Resource: `arn:aws:ec2:us-west-2:${ACCOUNT}:subnet/subnet-0bad`,
      }),
    ),
  )
  assert.equal(r.status, 'pass')
})

test('a conditional Deny is not a grant: the action it names stays missing', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      both(
        dropActions('pricing:GetProducts'),
        inline('guardrail', {
          Sid: 'NoPricingOutsideHours',
          Effect: 'Deny',
          Action: 'pricing:GetProducts',
          Resource: '*',
          Condition: { Bool: { 'aws:ViaAWSService': 'false' } },
        }),
      ),
    ),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings[0]!.message, /lacks 1 action\(s\) Karpenter 1\.14\.1 needs: pricing:GetProducts$/)
})

// ---- the missing finding ----

test('missing actions: the exact message, evidence document and fix (one statement per reference statement)', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(dropActions('ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate', 'eks:DescribeCluster')),
  )
  const f = r.findings[0]!
  assert.equal(f.status, 'fail')
  assert.equal(
    f.message,
    `controller role ${CONTROLLER_ROLE} lacks 3 action(s) Karpenter 1.14.1 needs: ec2:TerminateInstances, ec2:DeleteLaunchTemplate, eks:DescribeCluster`,
  )
  const doc = f.evidence?.document as PolicyDocument
  assert.equal(doc.Version, '2012-10-17')
  assert.deepEqual(
    doc.Statement.map((s) => [s.Sid, s.Action]),
    [
      ['AllowScopedDeletion', ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate']],
      ['AllowAPIServerEndpointDiscovery', ['eks:DescribeCluster']],
    ],
  )
  assert.equal(
    f.fix!.summary,
    'add the missing statements of the reference (KarpenterControllerNodeLifecyclePolicy-demo, KarpenterControllerEKSIntegrationPolicy-demo) as an inline policy; denied actions also need the Deny removed',
  )
  assert.equal(f.fix!.snippet!.language, 'json')
  assert.deepEqual(JSON.parse(f.fix!.snippet!.text), doc)
  assert.deepEqual(docOf(f.fix!.commands![0]!), doc)
})

test('two Deny statements are both named, once each', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      inline(
        'guardrail',
        { Sid: 'NoPricing', Effect: 'Deny', Action: 'pricing:*', Resource: '*' },
        { Sid: 'NoSSM', Effect: 'Deny', Action: 'ssm:GetParameter', Resource: '*' },
      ),
    ),
  )
  assert.equal(
    r.findings[0]!.message,
    `controller role ${CONTROLLER_ROLE} lacks 2 action(s) Karpenter 1.14.1 needs: ssm:GetParameter, pricing:GetProducts (explicitly denied: guardrail#NoSSM, guardrail#NoPricing)`,
  )
  assert.deepEqual(r.findings[0]!.evidence?.missing, [
    {
      action: 'ssm:GetParameter',
      referenceSid: 'AllowSSMReadActions',
      referencePolicy: 'KarpenterControllerResourceDiscoveryPolicy-demo',
      deniedBy: 'guardrail#NoSSM',
    },
    {
      action: 'pricing:GetProducts',
      referenceSid: 'AllowPricingReadActions',
      referencePolicy: 'KarpenterControllerResourceDiscoveryPolicy-demo',
      deniedBy: 'guardrail#NoPricing',
    },
  ])
})

test('missing actions with unreadable policies: every action and every policy named, with why each could not be read', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      dropActions('eks:DescribeCluster', 'pricing:GetProducts')(f)
      role(f).attached = ok([
        ...attachedOf(f),
        { arn: `arn:aws:iam::${ACCOUNT}:policy/a`, name: 'a', document: null },
        {
          arn: `arn:aws:iam::${ACCOUNT}:policy/b`,
          name: 'b',
          document: null,
          documentError: { code: 'AccessDenied', kind: 'denied', message: '', read: 'iam:GetPolicy b' },
        },
      ])
    }),
  )
  const f = r.findings[0]!
  assert.equal(f.status, 'unknown')
  assert.equal(
    f.message,
    `2 action(s) Karpenter 1.14.1 needs are not in the readable policies of ${CONTROLLER_ROLE} (eks:DescribeCluster, pricing:GetProducts), and 2 attached policy(ies) could not be read: a (no document); b (could not read iam:GetPolicy b (permission denied: AccessDenied))`,
  )
  assert.deepEqual(f.evidence?.unreadable, [
    `arn:aws:iam::${ACCOUNT}:policy/a`,
    `arn:aws:iam::${ACCOUNT}:policy/b`,
  ])
  assert.equal(f.fix, undefined)
})

test('everything granted but a policy unreadable: its own unknown finding, exact', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      role(f).attached = ok([
        ...attachedOf(f),
        { arn: `arn:aws:iam::${ACCOUNT}:policy/a`, name: 'a', document: null },
      ])
    }),
  )
  assert.deepEqual(r.findings[1], {
    status: 'unknown',
    subject: `arn:aws:iam::${ACCOUNT}:policy/a`,
    message:
      'attached policy a could not be read, so its statements (allows or denies) were not checked: no document',
    evidence: { policy: `arn:aws:iam::${ACCOUNT}:policy/a` },
  })
})

/**
 * Every reference statement missing, on a cluster and region whose names make the fix document
 * `INLINE_LIMIT + extra` characters long (15 per cluster-name character, 29 per region character).
 */
const nothingGranted = (extra: number, knownAccount = true) =>
  healthyFacts((f) => {
    f.meta.clusterName = 'c'.repeat(21)
    f.meta.region = 'r'.repeat(165 + extra)
    if (!knownAccount) f.meta.accountId = undefined
    role(f).attached = ok([])
    // every reference statement demanded: ec2:DescribePlacementGroups too (only with a selector)
    if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.spec.placementGroupSelector = { name: 'pg' }
  })

test('a fix exactly as long as an inline policy may be is still one inline policy', () => {
  const f = runCheck(controllerPolicy, nothingGranted(0)).findings[0]!
  assert.equal(JSON.stringify(f.evidence?.document).length, INLINE_LIMIT)
  assert.equal(f.fix!.commands!.length, 1)
  assert.match(f.fix!.commands![0]!, /^aws iam put-role-policy /)
})

test('a fix longer than an inline policy may be: managed policies created per reference policy and attached', () => {
  const c = 'c'.repeat(21)
  const f = runCheck(controllerPolicy, nothingGranted(1)).findings[0]!
  assert.equal(f.status, 'fail')
  assert.equal(JSON.stringify(f.evidence?.document).length, INLINE_LIMIT + 29)
  assert.equal(
    f.fix!.summary,
    `create the reference managed policies (KarpenterControllerNodeLifecyclePolicy-${c}, KarpenterControllerIAMIntegrationPolicy-${c}, KarpenterControllerEKSIntegrationPolicy-${c}, KarpenterControllerInterruptionPolicy-${c}, KarpenterControllerResourceDiscoveryPolicy-${c}) and attach them (if one exists, add a version with aws iam create-policy-version --set-as-default)`,
  )
  const cmds = f.fix!.commands!
  assert.equal(cmds.length, 10)
  assert.ok(
    cmds[0]!.startsWith(
      `aws iam create-policy --policy-name KarpenterControllerNodeLifecyclePolicy-${c} --policy-document '`,
    ),
  )
  const first = docOf(cmds[0]!)
  assert.equal(first.Version, '2012-10-17')
  assert.deepEqual(
    first.Statement.map((s) => s.Sid),
    [
      'AllowScopedEC2InstanceAccessActions',
      'AllowScopedEC2LaunchTemplateAccessActions',
      'AllowScopedEC2InstanceActionsWithTags',
      'AllowScopedResourceCreationTagging',
      'AllowScopedResourceTagging',
      'AllowScopedDeletion',
    ],
  )
  assert.equal(
    cmds[1],
    `aws iam attach-role-policy --role-name ${CONTROLLER_ROLE} --policy-arn arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerNodeLifecyclePolicy-${c}`,
  )
  assert.equal(f.fix!.snippet, undefined)
})

test('the managed-policy fix without a known account: the policy ARN says <account-id>', () => {
  const c = 'c'.repeat(21)
  const f = runCheck(controllerPolicy, nothingGranted(1, false)).findings[0]!
  assert.equal(
    f.fix!.commands![1],
    `aws iam attach-role-policy --role-name ${CONTROLLER_ROLE} --policy-arn arn:aws:iam::<account-id>:policy/KarpenterControllerNodeLifecyclePolicy-${c}`,
  )
})

// ---- role not collected / missing ----

test('a controller role that was not collected is unknown, saying so', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => delete f.iam.roles[CONTROLLER_ROLE]),
  )
  assert.deepEqual(r.findings, [
    {
      status: 'unknown',
      subject: CONTROLLER_ROLE,
      message: `controller role ${CONTROLLER_ROLE} was not collected`,
    },
  ])
})

test('a controller role that does not exist: the exact fail and its fix', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null))),
  )
  assert.deepEqual(r.findings, [
    {
      status: 'fail',
      subject: CONTROLLER_ROLE,
      message: `controller role ${CONTROLLER_ROLE} does not exist: every AWS call of the controller fails`,
      fix: {
        summary: 'create the role (karpctl install), or point the controller identity at the existing role',
      },
    },
  ])
})

// ---- narrow and broad ----

test('narrower grants: the exact warning and its fix', () => {
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
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.equal(warn.subject, CONTROLLER_ROLE_ARN)
  assert.equal(
    warn.message,
    `${CONTROLLER_ROLE} grants ec2:RunInstances, ec2:CreateFleet on fewer resources than the reference: calls on the others are denied`,
  )
  assert.deepEqual(warn.fix, {
    summary: 'widen the grants to the reference resources (or confirm the narrower scope is intended)',
  })
})

test('broader grants: the exact warning, its details per action and reason, and the reference as the fix', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      both(
        dropActions('ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'),
        inline('wide', {
          Sid: 'Delete',
          Effect: 'Allow',
          Action: ['ec2:Terminate*', 'ec2:DeleteLaunchTemplate'],
          Resource: '*',
        }),
      ),
    ),
  )
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.equal(warn.subject, 'wide#Delete')
  assert.equal(
    warn.message,
    `security: wide#Delete on ${CONTROLLER_ROLE} grants ec2:TerminateInstances, ec2:DeleteLaunchTemplate more broadly than the reference (action pattern ec2:Terminate*; no Condition where the reference scopes by tags)`,
  )
  assert.deepEqual(warn.evidence, {
    statement: 'wide#Delete',
    actions: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
    details: [
      {
        action: 'ec2:TerminateInstances',
        referenceSid: 'AllowScopedDeletion',
        detail: 'matched by ec2:Terminate*',
      },
      {
        action: 'ec2:TerminateInstances',
        referenceSid: 'AllowScopedDeletion',
        detail:
          'reference requires aws:ResourceTag/kubernetes.io/cluster/demo, aws:ResourceTag/karpenter.sh/nodepool',
      },
      {
        action: 'ec2:DeleteLaunchTemplate',
        referenceSid: 'AllowScopedDeletion',
        detail:
          'reference requires aws:ResourceTag/kubernetes.io/cluster/demo, aws:ResourceTag/karpenter.sh/nodepool',
      },
    ],
  })
  assert.equal(
    warn.fix!.summary,
    'scope the statement as the reference does (resources and tag conditions below)',
  )
  assert.equal(warn.fix!.snippet!.language, 'json')
  const ref = JSON.parse(warn.fix!.snippet!.text) as PolicyDocument
  assert.equal(ref.Version, '2012-10-17')
  assert.deepEqual(
    ref.Statement.map((s) => s.Sid),
    ['AllowScopedDeletion'],
  )
})

test('Resource "*" where the reference names ARNs and sets no condition: the reason and the ARNs it scopes to', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      both(
        dropActions('eks:DescribeCluster'),
        inline('wide', { Sid: 'Eks', Effect: 'Allow', Action: 'eks:DescribeCluster', Resource: '*' }),
      ),
    ),
  )
  // DescribeCluster is a read: breadth on it is not a security finding.
  assert.equal(r.status, 'pass')
  const w = runCheck(
    controllerPolicy,
    healthyFacts(
      both(
        dropActions('iam:GetInstanceProfile', 'ec2:CreateTags'),
        editStatements((s) => (s.Sid === 'AllowScopedResourceTagging' ? null : s)),
        inline('wide', {
          Sid: 'Tags',
          Effect: 'Allow',
          Action: 'ec2:CreateTags',
          Resource: '*',
          Condition: { StringLike: { 'aws:RequestTag/x': '*' } },
        }),
      ),
    ),
  )
  assert.equal(
    w.findings.find((x) => x.status === 'warn'),
    undefined,
    'a conditioned Resource "*" grant is not judged broader',
  )
})

// ---- the permissions boundary ----

test('a boundary named but not collected: unknown, saying it was not collected', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts((f) => {
      role(f).role.permissionsBoundaryArn = BOUNDARY_ARN
    }),
  )
  const u = r.findings.find((x) => x.status === 'unknown')!
  assert.deepEqual(u, {
    status: 'unknown',
    subject: BOUNDARY_ARN,
    message: `permissions boundary KarpenterBoundary of ${CONTROLLER_ROLE} could not be read, so whether it allows what the role's policies grant is not known: not collected`,
    evidence: { permissionsBoundary: BOUNDARY_ARN },
  })
})

test('a boundary with two Deny statements: both named in the message, the evidence lists each action', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      withBoundary({
        Statement: [
          { Effect: 'Allow', Action: '*', Resource: '*' },
          { Sid: 'NoPricing', Effect: 'Deny', Action: 'pricing:GetProducts', Resource: '*' },
          { Sid: 'NoSSM', Effect: 'Deny', Action: 'ssm:GetParameter', Resource: '*' },
        ],
      }),
    ),
  )
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.equal(
    f.message,
    `permissions boundary KarpenterBoundary of ${CONTROLLER_ROLE} does not allow 2 action(s) Karpenter 1.14.1 needs, so the role's grants of them are void: ssm:GetParameter, pricing:GetProducts (explicitly denied: KarpenterBoundary#NoSSM, KarpenterBoundary#NoPricing)`,
  )
  assert.deepEqual(f.evidence, {
    permissionsBoundary: BOUNDARY_ARN,
    missing: [
      {
        action: 'ssm:GetParameter',
        referenceSid: 'AllowSSMReadActions',
        deniedBy: 'KarpenterBoundary#NoSSM',
      },
      {
        action: 'pricing:GetProducts',
        referenceSid: 'AllowPricingReadActions',
        deniedBy: 'KarpenterBoundary#NoPricing',
      },
    ],
  })
})

test('boundaryRepair: null without a role, without a boundary, with an unreadable boundary, or one lacking nothing', () => {
  assert.equal(boundaryRepair(healthyFacts()), null)
  assert.equal(boundaryRepair(healthyFacts((f) => delete f.iam.roles[CONTROLLER_ROLE])), null)
  assert.equal(boundaryRepair(healthyFacts((f) => (f.iam.roles[CONTROLLER_ROLE] = ok(null)))), null)
  assert.equal(boundaryRepair(healthyFacts((f) => ((f.iam.controllerRoleName = null), undefined))), null)
  assert.equal(boundaryRepair(healthyFacts(withBoundary(null))), null)
  assert.equal(
    boundaryRepair(healthyFacts((f) => (role(f).role.permissionsBoundaryArn = BOUNDARY_ARN))),
    null,
    'named, not collected',
  )
  assert.equal(
    boundaryRepair(
      healthyFacts((f) => {
        role(f).boundary = {
          arn: BOUNDARY_ARN,
          name: 'KarpenterBoundary',
          document: allowAllBut('iam:PassRole'),
        }
      }),
    ),
    null,
    'a boundary document without the role naming it does not cap the role',
  )
  assert.equal(boundaryRepair(healthyFacts(withBoundary(allowAllBut('iam:CreateUser')))), null)
})

test('boundaryRepair: PassRole is judged as passed to EC2 (iam:PassedToService)', () => {
  const boundary: PolicyDocument = {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'Ceiling', Effect: 'Allow', NotAction: 'iam:PassRole', Resource: '*' },
      {
        Sid: 'PassToEc2',
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: '*',
        Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
      },
    ],
  }
  assert.equal(boundaryRepair(healthyFacts(withBoundary(boundary))), null)
})

test('boundaryRepair: two node roles not passable are both added, sorted; the document keeps its own Version', () => {
  const other = `arn:aws:iam::${ACCOUNT}:role/A-tenant`
  const repair = boundaryRepair(
    healthyFacts(
      both(withBoundary({ Version: '2008-10-17', Statement: allowAllBut('iam:PassRole').Statement }), (f) => {
        f.iam.passRole = {
          [NODE_ROLE_ARN]: ok(passRoleEvaluation()),
          [other]: ok(passRoleEvaluation({ resource: other })),
        }
      }),
    ),
  )!
  assert.deepEqual(repair.added, [
    {
      Sid: 'AllowPassingKarpenterNodeRoles',
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: [other, NODE_ROLE_ARN],
    },
  ])
  assert.equal(repair.arn, BOUNDARY_ARN)
  assert.equal(repair.document.Version, '2008-10-17')
  assert.deepEqual(repair.document.Statement, [...allowAllBut('iam:PassRole').Statement, ...repair.added])
  assert.equal(
    repair.fix.summary,
    `let the permissions boundary KarpenterBoundary of ${CONTROLLER_ROLE} allow what Karpenter needs (iam:PassRole): a new default version that keeps its statements and adds the missing ones. IAM keeps 5 versions (delete the oldest first if it has 5); the boundary may be your security team's`,
  )
  assert.deepEqual(repair.fix.snippet, {
    language: 'json',
    text: JSON.stringify({ Statement: repair.added }, null, 2),
  })
  assert.deepEqual(repair.fix.commands, [
    `aws iam create-policy-version --policy-arn ${BOUNDARY_ARN} --set-as-default --policy-document '${JSON.stringify(repair.document)}'`,
  ])
})

test('boundaryRepair: a boundary without a Version gets 2012-10-17', () => {
  const repair = boundaryRepair(
    healthyFacts(withBoundary({ Statement: allowAllBut('iam:PassRole').Statement })),
  )!
  assert.equal(repair.document.Version, '2012-10-17')
})

test('boundaryRepair: reference actions and a denied PassRole: every action added listed once, every Deny named', () => {
  const repair = boundaryRepair(
    healthyFacts(
      withBoundary({
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'Ceiling',
            Effect: 'Allow',
            NotAction: ['ec2:CreateFleet', 'ec2:RunInstances'],
            Resource: '*',
          },
          { Sid: 'NoPricing', Effect: 'Deny', Action: 'pricing:GetProducts', Resource: '*' },
          { Sid: 'NoPass', Effect: 'Deny', Action: 'iam:PassRole', Resource: '*' },
        ],
      }),
    ),
  )!
  assert.equal(
    repair.fix.summary,
    `let the permissions boundary KarpenterBoundary of ${CONTROLLER_ROLE} allow what Karpenter needs (ec2:RunInstances, ec2:CreateFleet, pricing:GetProducts, iam:PassRole): a new default version that keeps its statements and adds the missing ones; remove or narrow KarpenterBoundary#NoPricing, NoPass first (an Allow cannot override a Deny). IAM keeps 5 versions (delete the oldest first if it has 5); the boundary may be your security team's`,
  )
})

test('boundaryRepair: a v0.x install or no release: only PassRole is judged, not the v1 reference', () => {
  const boundary = withBoundary(allowAllBut('iam:PassRole', 'ec2:CreateFleet'))
  for (const install of [setVersion('0.37.0'), (f: Facts) => (f.kube.release = ok(null))]) {
    const repair = boundaryRepair(healthyFacts(both(boundary, install)))!
    assert.deepEqual(
      repair.added.map((s) => s.Action),
      ['iam:PassRole'],
    )
  }
})

test('boundaryRepair: the account unknown to the facts comes from the role ARN', () => {
  const repair = boundaryRepair(
    healthyFacts(
      both(
        withBoundary(allowAllBut('iam:GetInstanceProfile', 'iam:PassRole')),
        (f) => (f.meta.accountId = undefined),
      ),
    ),
  )!
  assert.deepEqual(repair.added.find((s) => s.Sid === 'AllowInstanceProfileReadActions')?.Resource, [
    `arn:aws:iam::${ACCOUNT}:instance-profile/*`,
  ])
})

test('a Deny on a resource type the action never touches (TerminateInstances on launch templates) does not make it missing', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(
      inline('guardrail', {
        Sid: 'NoTerminateOnTemplates',
        Effect: 'Deny',
        Action: 'ec2:TerminateInstances',
        Resource: 'arn:aws:ec2:*:*:launch-template/*',
      }),
    ),
  )
  assert.equal(r.status, 'pass')
})

test('Resource "*" where the reference names ARNs without a condition: the detail lists the ARNs it scopes to', () => {
  const r = runCheck(
    controllerPolicy,
    healthyFacts(inline('wide', { Sid: 'Run', Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*' })),
  )
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.equal(warn.subject, 'wide#Run')
  assert.deepEqual(
    (warn.evidence?.details as { referenceSid: string; detail: string }[]).find(
      (d) => d.referenceSid === 'AllowScopedEC2InstanceAccessActions',
    ),
    {
      action: 'ec2:RunInstances',
      referenceSid: 'AllowScopedEC2InstanceAccessActions',
      detail:
        'reference scopes to arn:aws:ec2:us-west-2::image/*, arn:aws:ec2:us-west-2::snapshot/*, arn:aws:ec2:us-west-2:*:security-group/*, arn:aws:ec2:us-west-2:*:subnet/*, arn:aws:ec2:us-west-2:*:capacity-reservation/*, arn:aws:ec2:us-west-2:*:placement-group/*',
    },
  )
})

test('boundaryRepair: node roles the boundary lets pass are not named as denials', () => {
  const repair = boundaryRepair(healthyFacts(withBoundary(allowAllBut('ec2:CreateFleet'))))!
  assert.equal(
    repair.fix.summary,
    `let the permissions boundary KarpenterBoundary of ${CONTROLLER_ROLE} allow what Karpenter needs (ec2:CreateFleet): a new default version that keeps its statements and adds the missing ones. IAM keeps 5 versions (delete the oldest first if it has 5); the boundary may be your security team's`,
  )
})
