// The install's pure data, exactly: trust documents, the queue policy and the rules, every derived name
// (conventional, existing and shortened), the controller policies without the queue's, the webhook
// versions, and the Helm values and Kubernetes objects install writes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { controllerPolicies, hasWebhooks, installNames } from '../../../src/desired/install.js'
import {
  interruptionRules,
  queuePolicy,
  QUEUE_ATTRIBUTES,
  QUEUE_SENDERS,
  referenceQueueStatements,
  RULE_TARGET_ID,
  withReferenceStatements,
} from '../../../src/desired/interruption.js'
import {
  defaultNodeClass,
  defaultNodePool,
  helmValues,
  MANAGED_LABEL,
  requiredValues,
} from '../../../src/desired/karpenter.js'
import { irsaTrust, nodeTrust, podIdentityTrust, urlSuffix } from '../../../src/desired/trust.js'
import {
  EC2_SERVICES,
  PASS_NODE_ROLES_POLICY,
  passRolePolicy,
  passRoleStatement,
} from '../../../src/desired/controller-policy.js'
import { ISSUER, spec } from '../../helpers/install-spec.js'

test('trust: EC2 (China’s suffix in aws-cn), IRSA without the https:// of the issuer, Pod Identity', () => {
  assert.equal(urlSuffix('aws'), 'amazonaws.com')
  assert.equal(urlSuffix('aws-us-gov'), 'amazonaws.com')
  assert.equal(urlSuffix('aws-cn'), 'amazonaws.com.cn')
  assert.deepEqual(nodeTrust('aws-cn'), {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com.cn' }, Action: 'sts:AssumeRole' },
    ],
  })
  assert.deepEqual(irsaTrust('arn:aws:iam::1:oidc-provider/x', 'https://oidc.example/id/A', 'ns', 'sa'), {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: 'arn:aws:iam::1:oidc-provider/x' },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: {
          StringEquals: {
            'oidc.example/id/A:aud': 'sts.amazonaws.com',
            'oidc.example/id/A:sub': 'system:serviceaccount:ns:sa',
          },
        },
      },
    ],
  })
  // Only a leading https:// goes.
  const mid = irsaTrust('p', 'oidc.example/https://x', 'ns', 'sa').Statement[0]!.Condition as {
    StringEquals: Record<string, string>
  }
  assert.deepEqual(Object.keys(mid.StringEquals), [
    'oidc.example/https://x:aud',
    'oidc.example/https://x:sub',
  ])
  assert.deepEqual(podIdentityTrust(), {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowEksAuthToAssumeRoleForPodIdentity',
        Effect: 'Allow',
        Principal: { Service: 'pods.eks.amazonaws.com' },
        Action: ['sts:AssumeRole', 'sts:TagSession'],
      },
    ],
  })
})

const Q = 'arn:aws:sqs:us-west-2:123456789012:demo'
const SEND = {
  Effect: 'Allow',
  Principal: { Service: ['events.amazonaws.com', 'sqs.amazonaws.com'] },
  Action: 'sqs:SendMessage',
  Resource: Q,
}
const DENY = {
  Sid: 'DenyHTTP',
  Effect: 'Deny',
  Action: 'sqs:*',
  Resource: Q,
  Condition: { Bool: { 'aws:SecureTransport': false } },
  Principal: '*',
}

test('the queue: its attributes, its policy, and a policy with the reference statements it lacks added', () => {
  assert.deepEqual(QUEUE_SENDERS, ['events.amazonaws.com', 'sqs.amazonaws.com'])
  assert.deepEqual(QUEUE_ATTRIBUTES, { MessageRetentionPeriod: '300', SqsManagedSseEnabled: 'true' })
  assert.deepEqual(referenceQueueStatements(Q), [SEND, DENY])
  assert.deepEqual(queuePolicy(Q), {
    Version: '2012-10-17',
    Id: 'EC2InterruptionPolicy',
    Statement: [SEND, DENY],
  })
  assert.deepEqual(withReferenceStatements(null, Q), {
    Version: '2012-10-17',
    Id: 'EC2InterruptionPolicy',
    Statement: [SEND, DENY],
  })
  const own = { Sid: 'Theirs', Effect: 'Allow' as const, Action: 'sqs:*', Resource: Q }
  assert.deepEqual(withReferenceStatements({ Version: '2008-10-17', Statement: [own] }, Q), {
    Version: '2008-10-17',
    Statement: [own, SEND, DENY],
  })
  const theirDeny = { ...own, Sid: 'DenyHTTP', Effect: 'Deny' as const }
  assert.deepEqual(withReferenceStatements({ Version: '2012-10-17', Statement: [theirDeny] }, Q), {
    Version: '2012-10-17',
    Statement: [theirDeny, SEND],
  })
})

test('the five rules: named Karpenter-<cluster>-<key without Rule>, shortened past 64 characters', () => {
  assert.equal(RULE_TARGET_ID, 'KarpenterInterruptionQueueTarget')
  assert.deepEqual(interruptionRules('demo'), [
    {
      key: 'ScheduledChangeRule',
      name: 'Karpenter-demo-ScheduledChange',
      eventPattern: { source: ['aws.health'], 'detail-type': ['AWS Health Event'] },
    },
    {
      key: 'SpotInterruptionRule',
      name: 'Karpenter-demo-SpotInterruption',
      eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    },
    {
      key: 'RebalanceRule',
      name: 'Karpenter-demo-Rebalance',
      eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Instance Rebalance Recommendation'] },
    },
    {
      key: 'InstanceStateChangeRule',
      name: 'Karpenter-demo-InstanceStateChange',
      eventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'] },
    },
    {
      key: 'CapacityReservationInterruptionRule',
      name: 'Karpenter-demo-CapacityReservationInterruption',
      eventPattern: {
        source: ['aws.ec2'],
        'detail-type': ['EC2 Capacity Reservation Instance Interruption Warning'],
      },
    },
  ])
  const long = interruptionRules('c'.repeat(40))
  assert.equal(long[2]!.name, `Karpenter-${'c'.repeat(40)}-Rebalance`)
  assert.match(long[4]!.name, /^Karpenter-c{40}-Capa-[0-9a-f]{8}$/)
  assert.equal(long[4]!.name.length, 64)
})

test('names: the reused node role by its ARN, an existing install’s names, the queue within 80 characters', () => {
  const n = installNames(spec({ partition: 'aws-cn', region: 'cn-north-1' }))
  assert.deepEqual(n, {
    controllerRoleName: 'KarpenterControllerRole-demo',
    controllerRoleArn: 'arn:aws-cn:iam::123456789012:role/KarpenterControllerRole-demo',
    nodeRoleName: 'KarpenterNodeRole-demo',
    nodeRoleArn: 'arn:aws-cn:iam::123456789012:role/KarpenterNodeRole-demo',
    queueName: 'demo',
    queueArn: 'arn:aws-cn:sqs:cn-north-1:123456789012:demo',
    oidcProviderArn: `arn:aws-cn:iam::123456789012:oidc-provider/${ISSUER.replace('https://', '')}`,
    rules: interruptionRules('demo'),
    nodeClassName: 'default',
    nodePoolName: 'default',
  })
  const reused = installNames(
    spec({
      nodeRole: { create: false, arn: 'arn:aws:iam::123456789012:role/path/to/NodeRole' },
      oidcIssuer: undefined,
    }),
  )
  assert.equal(reused.nodeRoleArn, 'arn:aws:iam::123456789012:role/path/to/NodeRole')
  assert.equal(reused.nodeRoleName, 'NodeRole')
  assert.equal(reused.oidcProviderArn, undefined)
  const existing = installNames(
    spec({
      existing: {
        controllerRoleName: 'demo-karpenter',
        controllerProblems: [],
        queueName: 'Karpenter-demo',
        ruleNames: { SpotInterruptionRule: 'their-spot-rule' },
        releaseValues: {},
        summary: '',
      },
    }),
  )
  assert.equal(existing.controllerRoleArn, 'arn:aws:iam::123456789012:role/demo-karpenter')
  assert.equal(existing.queueArn, 'arn:aws:sqs:us-west-2:123456789012:Karpenter-demo')
  assert.deepEqual(
    existing.rules.map((r) => r.name),
    [
      'Karpenter-demo-ScheduledChange',
      'their-spot-rule',
      'Karpenter-demo-Rebalance',
      'Karpenter-demo-InstanceStateChange',
      'Karpenter-demo-CapacityReservationInterruption',
    ],
  )
  assert.equal(installNames(spec({ clusterName: 'q'.repeat(100) })).queueName, 'q'.repeat(80))
})

test('controller policies: all six, the queue’s only with interruption, PassRole on every node role', () => {
  const keys = (ps: { key: string }[]) => ps.map((p) => p.key)
  assert.deepEqual(keys(controllerPolicies(spec())), [
    'NodeLifecyclePolicy',
    'IAMIntegrationPolicy',
    'EKSIntegrationPolicy',
    'InterruptionPolicy',
    'ZonalShiftPolicy',
    'ResourceDiscoveryPolicy',
  ])
  assert.deepEqual(keys(controllerPolicies(spec({ interruption: false }))), [
    'NodeLifecyclePolicy',
    'IAMIntegrationPolicy',
    'EKSIntegrationPolicy',
    'ZonalShiftPolicy',
    'ResourceDiscoveryPolicy',
  ])
  const iam = controllerPolicies(spec(), ['arn:aws:iam::123456789012:role/tenant'])[1]!
  assert.deepEqual(iam.document.Statement[0], {
    Sid: 'AllowPassingInstanceRole',
    Effect: 'Allow',
    Resource: [
      'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo',
      'arn:aws:iam::123456789012:role/tenant',
    ],
    Action: 'iam:PassRole',
    Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
  })
  assert.deepEqual(EC2_SERVICES, ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'])
  assert.equal(PASS_NODE_ROLES_POLICY, 'KarpctlPassNodeRoles')
  assert.deepEqual(passRolePolicy(['r'], 'Mine'), {
    Version: '2012-10-17',
    Statement: [passRoleStatement(['r'], 'Mine')],
  })
  assert.equal(passRoleStatement(['r']).Sid, 'AllowPassingInstanceRole')
  assert.equal(passRoleStatement(['r']).Resource, 'r')
  // Two node roles (doctor's fix with a tenant's role in use): both, as a list, and nothing else.
  assert.deepEqual(passRoleStatement(['r', 's']).Resource, ['r', 's'])
})

test('webhooks: exactly the 1.0 minor of Karpenter 1, with or without a v', () => {
  for (const v of ['1.0.0', 'v1.0.14', '1.0']) assert.equal(hasWebhooks(v), true, v)
  for (const v of ['1.1.0', '0.37.0', '2.0.1', '10.0.1', '1.00x', 'latest', ''])
    assert.equal(hasWebhooks(v), v === '1.00x', v)
})

test('Helm values: the role and STS annotations for IRSA, the queue with interruption, the webhook on 1.0', () => {
  assert.deepEqual(helmValues(spec()), {
    serviceAccount: {
      name: 'karpenter',
      annotations: {
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo',
        'eks.amazonaws.com/sts-regional-endpoints': 'true',
      },
    },
    settings: { clusterName: 'demo', interruptionQueue: 'demo' },
  })
  assert.deepEqual(
    helmValues(
      spec({ identity: 'pod-identity', interruption: false, karpenterVersion: '1.0.8', serviceAccount: 'k' }),
    ),
    {
      serviceAccount: { name: 'k' },
      settings: { clusterName: 'demo' },
      webhook: { enabled: true },
    },
  )
  assert.deepEqual(requiredValues(spec()), {
    settings: { clusterName: 'demo', interruptionQueue: 'demo' },
    serviceAccount: {
      annotations: {
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo',
      },
    },
  })
  assert.deepEqual(requiredValues(spec({ identity: 'pod-identity', interruption: false })), {
    settings: { clusterName: 'demo' },
  })
})

test('the default EC2NodeClass and NodePool, field by field', () => {
  assert.equal(MANAGED_LABEL, 'app.kubernetes.io/managed-by')
  assert.deepEqual(defaultNodeClass(spec()), {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } },
    spec: {
      role: 'KarpenterNodeRole-demo',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      tags: { 'karpctl.io/cluster': 'demo' },
    },
  })
  assert.deepEqual(
    defaultNodePool(
      spec({
        nodePool: {
          capacityTypes: ['spot'],
          instanceCategories: ['m'],
          architectures: ['arm64'],
          cpuLimit: 64,
        },
      }),
    ),
    {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'default', labels: { 'app.kubernetes.io/managed-by': 'karpctl' } },
      spec: {
        template: {
          spec: {
            requirements: [
              { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
              { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
              { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] },
              { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['2'] },
            ],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            expireAfter: '720h',
          },
        },
        limits: { cpu: '64' },
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
      },
    },
  )
})
