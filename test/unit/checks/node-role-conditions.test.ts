// The conditions node-role judges, one at a time (issue 12, item 8: mutation testing): where the
// role comes from, its trust, its policies and its cluster access, with each finding as the user
// reads it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { awsAuthMappingCommands } from '../../../src/checks/lib/node-access.js'
import { nodeRole } from '../../../src/checks/node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts, RoleFacts } from '../../../src/facts/types.js'
import {
  ACCOUNT,
  failed,
  healthyFacts,
  healthyNodeClass,
  NODE_ROLE,
  NODE_ROLE_ARN,
  ok,
} from '../../helpers/facts.js'
import {
  awsNodeIrsa,
  CNI_ROLE,
  CNI_ROLE_ARN,
  cniRole,
  roleOf,
  withoutPolicies as withoutRolePolicies,
} from '../../helpers/check-fixtures.js'

const role = (f: Facts): RoleFacts => roleOf(f, NODE_ROLE)
const withoutPolicies = (...names: string[]) => withoutRolePolicies(NODE_ROLE, ...names)

const mode = (m: string | undefined) => (f: Facts) => {
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = m as string
}

const both =
  (...fns: ((f: Facts) => void)[]) =>
  (f: Facts) =>
    fns.forEach((fn) => fn(f))

const USED = 'used by EC2NodeClass default'
const findingsOf = (fn?: (f: Facts) => void) => runCheck(nodeRole, healthyFacts(fn)).findings
const access = (fn?: (f: Facts) => void) => findingsOf(fn).at(-1)!

const AWS_AUTH_FIX = {
  summary: `map ${NODE_ROLE} in the aws-auth ConfigMap (kube-system) under data.mapRoles, with eksctl or without it (below); the ARN must not include the role path`,
  commands: [
    `eksctl create iamidentitymapping --cluster demo --region us-west-2 --arn ${NODE_ROLE_ARN} --username 'system:node:{{EC2PrivateDNSName}}' --group system:bootstrappers --group system:nodes`,
  ],
  // eksctl is often not installed: the same mapping with kubectl alone, the other entries and keys kept.
  alternative: {
    label: 'without eksctl (aws and kubectl only)',
    commands: [
      // the kubectl-only mapping: its edit is proven on every mapRoles shape in lib/aws-auth-edit.test.ts
      ...awsAuthMappingCommands(NODE_ROLE_ARN),
    ],
  },
  snippet: {
    language: 'yaml',
    text: [
      '# kubectl -n kube-system edit configmap aws-auth — add to data.mapRoles:',
      `- rolearn: ${NODE_ROLE_ARN}`,
      '  username: system:node:{{EC2PrivateDNSName}}',
      '  groups:',
      '    - system:bootstrappers',
      '    - system:nodes',
    ].join('\n'),
  },
}

const ENTRY_FIX = {
  summary: `grant ${NODE_ROLE} node access with an EC2_LINUX access entry`,
  commands: [
    `aws eks create-access-entry --cluster-name demo --principal-arn ${NODE_ROLE_ARN} --type EC2_LINUX --region us-west-2`,
  ],
}

test('node-role is an error-severity IAM check', () => {
  assert.equal(nodeRole.meta.id, 'node-role')
  assert.equal(nodeRole.meta.severity, 'error')
  assert.equal(nodeRole.meta.category, 'iam')
})

test('healthy: the three passes, exactly', () => {
  assert.deepEqual(findingsOf(), [
    { status: 'pass', subject: NODE_ROLE_ARN, message: `${NODE_ROLE} trusts ec2.amazonaws.com (${USED})` },
    {
      status: 'pass',
      subject: NODE_ROLE,
      message: `${NODE_ROLE} has the CNI, worker node and ECR pull policies`,
      evidence: {
        attached: [
          'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
          'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
          'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
          'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore',
        ],
      },
    },
    {
      status: 'pass',
      subject: NODE_ROLE_ARN,
      message: `aws-auth maps ${NODE_ROLE} to system:bootstrappers + system:nodes (mode CONFIG_MAP)`,
    },
  ])
})

test('two EC2NodeClasses with one role: the role is checked once, naming both', () => {
  const f = findingsOf((f) => {
    f.kube.nodeClasses = ok([healthyNodeClass(), { ...healthyNodeClass(), metadata: { name: 'gpu' } }])
  })
  assert.equal(f.length, 3)
  assert.equal(f[0]!.message, `${NODE_ROLE} trusts ec2.amazonaws.com (used by EC2NodeClass default, gpu)`)
})

test('spec.role as an ARN is the role of that name', () => {
  const f = findingsOf((f) => {
    if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.spec.role = NODE_ROLE_ARN
  })
  assert.ok(f.every((x) => x.status === 'pass'))
})

// ---- where the role comes from ----

const withProfile = (profile: Facts['iam']['instanceProfiles'][string] | 'absent') => (f: Facts) => {
  if (f.kube.nodeClasses.ok) {
    f.kube.nodeClasses.value[0]!.spec = {
      ...f.kube.nodeClasses.value[0]!.spec,
      role: undefined,
      instanceProfile: 'acme-profile',
    }
  }
  if (profile !== 'absent') f.iam.instanceProfiles['acme-profile'] = profile
}

test('neither spec.role nor spec.instanceProfile: unknown, saying so', () => {
  const f = findingsOf((f) => {
    if (f.kube.nodeClasses.ok) f.kube.nodeClasses.value[0]!.spec.role = undefined
  })
  assert.deepEqual(f, [
    {
      status: 'unknown',
      subject: 'EC2NodeClass/default',
      message: 'EC2NodeClass/default names neither spec.role nor spec.instanceProfile',
    },
  ])
})

test('an instance profile that was not collected, or could not be read: unknown for it', () => {
  assert.deepEqual(findingsOf(withProfile('absent')), [
    {
      status: 'unknown',
      subject: 'acme-profile',
      message: 'instance profile acme-profile was not collected',
    },
  ])
  const denied = findingsOf(withProfile(failed('iam:GetInstanceProfile acme-profile')))
  assert.equal(denied.length, 1)
  assert.equal(denied[0]!.status, 'unknown')
  assert.match(denied[0]!.message, /^instance profile acme-profile: could not read iam:GetInstanceProfile/)
})

test('an instance profile that does not exist: fail, with create and add commands (or spec.role instead)', () => {
  assert.deepEqual(findingsOf(withProfile(ok(null))), [
    {
      status: 'fail',
      subject: 'acme-profile',
      message:
        'instance profile acme-profile used by EC2NodeClass/default does not exist: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)',
      evidence: {
        nodeClass: 'default',
        instanceProfile: 'acme-profile',
        role: 'KarpenterNodeRole-demo',
        manualBecause:
          'which role an instance profile holds is a choice (the role printed is a guess: one another EC2NodeClass uses, else the one install creates), and so is setting spec.role instead',
      },
      code: 'instance-profile-missing',
      fix: {
        summary:
          'create the instance profile and add node role KarpenterNodeRole-demo (the node role karpctl install creates; name yours if it differs) to it; or set spec.role of EC2NodeClass/default instead of spec.instanceProfile (Karpenter then creates and manages the instance profile)',
        commands: [
          'aws iam create-instance-profile --instance-profile-name acme-profile',
          'aws iam add-role-to-instance-profile --instance-profile-name acme-profile --role-name KarpenterNodeRole-demo',
        ],
        // The CRD allows exactly one of role and instanceProfile: the profile is removed in the same patch.
        alternative: {
          label:
            'or let Karpenter manage the instance profile: set spec.role of EC2NodeClass/default (removing spec.instanceProfile)',
          commands: [
            `kubectl patch ec2nodeclass default --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo","instanceProfile":null}}'`,
          ],
        },
      },
    },
  ])
})

test('an instance profile that holds no role: fail, with only the add command', () => {
  const f = findingsOf(
    withProfile(
      ok({ name: 'acme-profile', arn: `arn:aws:iam::${ACCOUNT}:instance-profile/acme-profile`, roles: [] }),
    ),
  )
  assert.equal(f.length, 1)
  assert.equal(
    f[0]!.message,
    'instance profile acme-profile used by EC2NodeClass/default holds no role: Karpenter cannot launch nodes with it (an instance without a role gets no credentials and never joins)',
  )
  assert.equal(f[0]!.code, 'instance-profile-empty')
  assert.deepEqual(f[0]!.fix!.commands, [
    'aws iam add-role-to-instance-profile --instance-profile-name acme-profile --role-name KarpenterNodeRole-demo',
  ])
})

test('an empty instance profile beside an EC2NodeClass with spec.role: the fix adds that existing role', () => {
  const f = findingsOf((f) => {
    const nc = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value[0]! : undefined
    assert.ok(nc)
    f.kube.nodeClasses = ok([
      { ...nc, metadata: { name: 'plain' }, spec: { ...nc.spec, role: 'AcmeNodes' } },
      {
        ...nc,
        metadata: { name: 'profiled' },
        spec: { ...nc.spec, role: undefined, instanceProfile: 'acme-profile' },
      },
    ])
    f.iam.roles.AcmeNodes = f.iam.roles[NODE_ROLE]!
    f.iam.instanceProfiles['acme-profile'] = ok({ name: 'acme-profile', arn: 'x', roles: [] })
  })
  const fail = f.find((x) => x.subject === 'acme-profile')!
  assert.deepEqual(fail.fix!.commands, [
    'aws iam add-role-to-instance-profile --instance-profile-name acme-profile --role-name AcmeNodes',
  ])
  assert.match(fail.fix!.summary, /AcmeNodes \(the node role another EC2NodeClass uses\)/)
})

test('an instance profile with a role: that role is checked, named with the profile that holds it', () => {
  const f = findingsOf(
    withProfile(
      ok({
        name: 'acme-profile',
        arn: `arn:aws:iam::${ACCOUNT}:instance-profile/acme-profile`,
        roles: [NODE_ROLE],
      }),
    ),
  )
  assert.equal(f.length, 3)
  assert.ok(f.every((x) => x.status === 'pass'))
  assert.match(f[0]!.message, /used by EC2NodeClass default \(through instance profile acme-profile\)/)
})

test('a node role that was not collected: unknown for it', () => {
  assert.deepEqual(
    findingsOf((f) => delete f.iam.roles[NODE_ROLE]),
    [{ status: 'unknown', subject: NODE_ROLE, message: `IAM role ${NODE_ROLE} was not collected` }],
  )
})

test('a node role that does not exist: the exact fail, creating it with the EC2 trust and every node policy', () => {
  const trust = JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
  })
  assert.deepEqual(
    findingsOf((f) => (f.iam.roles[NODE_ROLE] = ok(null))),
    [
      {
        status: 'fail',
        subject: NODE_ROLE,
        message: `node role ${NODE_ROLE} (${USED}) does not exist: Karpenter cannot launch nodes with it`,
        fix: {
          summary: `create ${NODE_ROLE} with the node policies, then grant it cluster access`,
          commands: [
            `aws iam create-role --role-name ${NODE_ROLE} --assume-role-policy-document '${trust}'`,
            ...[
              'AmazonEKS_CNI_Policy',
              'AmazonEKSWorkerNodePolicy',
              'AmazonEC2ContainerRegistryPullOnly',
              'AmazonSSMManagedInstanceCore',
            ].map(
              (p) =>
                `aws iam attach-role-policy --role-name ${NODE_ROLE} --policy-arn arn:aws:iam::aws:policy/${p}`,
            ),
          ],
        },
      },
    ],
  )
})

test('the managed policy ARNs follow the partition', () => {
  const f = findingsOf((f) => {
    f.meta.partition = 'aws-cn'
    f.iam.roles[NODE_ROLE] = ok(null)
  })
  assert.ok(
    f[0]!.fix!.commands!.slice(1).every((c) => c.includes('--policy-arn arn:aws-cn:iam::aws:policy/')),
  )
})

// ---- trust ----

test('trust without EC2: the exact fail; the fix keeps the other statements and adds EC2', () => {
  const lambda = {
    Effect: 'Allow' as const,
    Principal: { Service: 'lambda.amazonaws.com' },
    Action: 'sts:AssumeRole',
  }
  const f = findingsOf((f) => (role(f).role.trust = { Version: '2012-10-17', Statement: [lambda] }))[0]!
  assert.deepEqual(f, {
    status: 'fail',
    subject: NODE_ROLE_ARN,
    message: `trust policy of node role ${NODE_ROLE} (${USED}) does not let ec2.amazonaws.com assume it: instances get no credentials`,
    evidence: { trust: { Version: '2012-10-17', Statement: [lambda] } },
    fix: {
      summary: `let EC2 assume ${NODE_ROLE} (other trust statements are kept)`,
      commands: [
        `aws iam update-assume-role-policy --role-name ${NODE_ROLE} --policy-document '${JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            lambda,
            { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        })}'`,
      ],
    },
  })
})

test('trusting ec2.amazonaws.com.cn is trusting EC2', () => {
  const f = findingsOf((f) => {
    role(f).role.trust = {
      Statement: [
        { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com.cn' }, Action: 'sts:AssumeRole' },
      ],
    }
  })
  assert.equal(f[0]!.status, 'pass')
})

// ---- policies ----

test('missing CNI and ECR policies: the exact fail, saying the ReadOnly alternative', () => {
  const f = findingsOf(withoutPolicies('AmazonEKS_CNI_Policy', 'AmazonEC2ContainerRegistryPullOnly'))[1]!
  assert.deepEqual(f, {
    status: 'fail',
    subject: NODE_ROLE,
    message: `node role ${NODE_ROLE} (${USED}) lacks AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryPullOnly (or AmazonEC2ContainerRegistryReadOnly): nodes fail to join, get no pod IPs or cannot pull images`,
    code: 'missing-policies',
    evidence: {
      attached: [
        'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
        'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore',
      ],
      missing: ['AmazonEKS_CNI_Policy', 'AmazonEC2ContainerRegistryPullOnly'],
    },
    fix: {
      summary: `attach AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryPullOnly to ${NODE_ROLE}`,
      commands: [
        `aws iam attach-role-policy --role-name ${NODE_ROLE} --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy`,
        `aws iam attach-role-policy --role-name ${NODE_ROLE} --policy-arn arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly`,
      ],
    },
  })
})

test('missing only the worker node policy: no ECR alternative in the message', () => {
  const f = findingsOf(withoutPolicies('AmazonEKSWorkerNodePolicy'))[1]!
  assert.equal(
    f.message,
    `node role ${NODE_ROLE} (${USED}) lacks AmazonEKSWorkerNodePolicy: nodes fail to join, get no pod IPs or cannot pull images`,
  )
})

test('a managed policy attached under another partition ARN still counts (matched by its :iam::aws:policy/ suffix)', () => {
  const f = findingsOf((f) => {
    f.meta.partition = 'aws-us-gov'
  })
  assert.equal(f[1]!.status, 'pass')
})

test('the CNI policy is excused only by an own role of kube-system/aws-node (Pod Identity or IRSA)', () => {
  const assoc = (namespace: string, serviceAccount: string) => (f: Facts) => {
    f.eks.podIdentityAssociations = ok([
      { associationId: 'a', namespace, serviceAccount, roleArn: CNI_ROLE_ARN },
    ])
    f.iam.roles[CNI_ROLE] = ok(cniRole())
  }
  const noCni = withoutPolicies('AmazonEKS_CNI_Policy')
  assert.equal(findingsOf(both(noCni, assoc('kube-system', 'aws-node')))[1]!.status, 'pass')
  assert.equal(findingsOf(both(noCni, assoc('default', 'aws-node')))[1]!.status, 'fail')
  assert.equal(findingsOf(both(noCni, assoc('kube-system', 'karpenter')))[1]!.status, 'fail')
  assert.equal(findingsOf(both(noCni, awsNodeIrsa()))[1]!.status, 'pass')
  // Its own role excuses only the CNI policy.
  const f = findingsOf(
    both(withoutPolicies('AmazonEKSWorkerNodePolicy'), assoc('kube-system', 'aws-node')),
  )[1]!
  assert.deepEqual(f.evidence?.missing, ['AmazonEKSWorkerNodePolicy'])
})

test('whether aws-node has its own role cannot be read: a node role without the CNI policy is unknown for it, never fail or pass', () => {
  const noCni = withoutPolicies('AmazonEKS_CNI_Policy')
  for (const unread of [
    (f: Facts) => (f.eks.podIdentityAssociations = failed('eks:ListPodIdentityAssociations demo')),
    (f: Facts) => (f.kube.awsNodeServiceAccount = failed('kubernetes: kube-system/aws-node ServiceAccount')),
  ]) {
    const f = findingsOf(both(noCni, unread))
    assert.ok(!f.some((x) => x.status === 'fail'), JSON.stringify(f))
    const unknown = f.find((x) => x.status === 'unknown')!
    assert.match(
      unknown.message,
      /lacks AmazonEKS_CNI_Policy, and whether aws-node \(the VPC CNI\) has its own role is not known: could not read/,
    )
  }
})

test('missing SSM core: the exact warning, beside the pass', () => {
  const f = findingsOf(withoutPolicies('AmazonSSMManagedInstanceCore'))
  assert.equal(f[1]!.status, 'pass')
  assert.deepEqual(f[2], {
    status: 'warn',
    subject: NODE_ROLE,
    message: `node role ${NODE_ROLE} lacks AmazonSSMManagedInstanceCore: nodes join, but Session Manager access to them will not work`,
    code: 'missing-policies',
    evidence: {
      attached: [
        'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
        'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
        'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
      ],
      missing: ['AmazonSSMManagedInstanceCore'],
    },
    fix: {
      summary: `attach AmazonSSMManagedInstanceCore to ${NODE_ROLE}`,
      commands: [
        `aws iam attach-role-policy --role-name ${NODE_ROLE} --policy-arn arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore`,
      ],
    },
  })
})

test('unreadable attached policies: unknown for them, trust and access still judged', () => {
  const f = findingsOf(
    (f) => (role(f).attached = failed('iam:ListAttachedRolePolicies KarpenterNodeRole-demo')),
  )
  assert.deepEqual(
    f.map((x) => x.status),
    ['pass', 'unknown', 'pass'],
  )
  assert.match(f[1]!.message, /^attached policies of KarpenterNodeRole-demo: could not read/)
})

// ---- cluster access ----

test('the cluster unreadable: unknown for access only', () => {
  const f = findingsOf((f) => (f.eks.cluster = failed('eks:DescribeCluster demo')))
  assert.equal(f.length, 3)
  assert.equal(f[2]!.status, 'unknown')
  assert.equal(f[2]!.subject, 'demo')
  assert.match(f[2]!.message, /^EKS cluster demo: could not read eks:DescribeCluster demo/)
})

test('a cluster that reports no authentication mode is judged as CONFIG_MAP', () => {
  assert.equal(
    access(mode(undefined)).message,
    `aws-auth maps ${NODE_ROLE} to system:bootstrappers + system:nodes (mode CONFIG_MAP)`,
  )
  assert.equal(
    access(both(mode(undefined), (f) => (f.kube.awsAuth = ok(null)))).message,
    `node role ${NODE_ROLE} (${USED}) has no cluster access: no aws-auth mapping (authentication mode CONFIG_MAP); its nodes never become Ready`,
  )
})

test('CONFIG_MAP mode: an access entry does not count', () => {
  const f = access((f) => {
    f.kube.awsAuth = ok([])
    f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type: 'EC2_LINUX', kubernetesGroups: [] }])
  })
  assert.deepEqual(f, {
    status: 'fail',
    subject: NODE_ROLE_ARN,
    message: `node role ${NODE_ROLE} (${USED}) has no cluster access: no aws-auth mapping (authentication mode CONFIG_MAP); its nodes never become Ready`,
    code: 'no-cluster-access',
    evidence: { authenticationMode: 'CONFIG_MAP', roleArn: NODE_ROLE_ARN },
    fix: AWS_AUTH_FIX,
  })
})

test('API mode without an entry: the exact fail, fixed with an access entry', () => {
  assert.deepEqual(access(mode('API')), {
    status: 'fail',
    subject: NODE_ROLE_ARN,
    message: `node role ${NODE_ROLE} (${USED}) has no cluster access: no EC2_LINUX access entry (authentication mode API); its nodes never become Ready`,
    code: 'no-cluster-access',
    evidence: { authenticationMode: 'API', roleArn: NODE_ROLE_ARN },
    fix: ENTRY_FIX,
  })
})

test('API_AND_CONFIG_MAP without entry or mapping: both named, fixed with an access entry', () => {
  const f = access(both(mode('API_AND_CONFIG_MAP'), (f) => (f.kube.awsAuth = ok([]))))
  assert.equal(
    f.message,
    `node role ${NODE_ROLE} (${USED}) has no cluster access: no EC2_LINUX access entry and no aws-auth mapping (authentication mode API_AND_CONFIG_MAP); its nodes never become Ready`,
  )
  assert.deepEqual(f.fix, ENTRY_FIX)
})

test('API_AND_CONFIG_MAP: an EC2_LINUX entry passes before aws-auth is read', () => {
  assert.deepEqual(
    access(
      both(mode('API_AND_CONFIG_MAP'), (f) => {
        f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type: 'EC2_LINUX', kubernetesGroups: [] }])
        f.kube.awsAuth = failed('get configmap aws-auth')
      }),
    ),
    {
      status: 'pass',
      subject: NODE_ROLE_ARN,
      message: `${NODE_ROLE} has an EC2_LINUX access entry (mode API_AND_CONFIG_MAP)`,
    },
  )
})

test('the wrong entry type: the exact fail', () => {
  assert.deepEqual(
    access(
      both(mode('API'), (f) => {
        f.eks.accessEntries = ok([
          { principalArn: NODE_ROLE_ARN, type: 'FARGATE_LINUX', kubernetesGroups: [] },
        ])
      }),
    ),
    {
      status: 'fail',
      subject: NODE_ROLE_ARN,
      message: `node role ${NODE_ROLE} (${USED}) has a FARGATE_LINUX access entry, not EC2_LINUX: nodes are not put in system:nodes and cannot register`,
      evidence: { type: 'FARGATE_LINUX' },
      fix: {
        summary: 'an access entry type cannot be changed: replace it',
        commands: [
          `aws eks delete-access-entry --cluster-name demo --principal-arn ${NODE_ROLE_ARN} --region us-west-2`,
          `aws eks create-access-entry --cluster-name demo --principal-arn ${NODE_ROLE_ARN} --type EC2_LINUX --region us-west-2`,
        ],
      },
    },
  )
})

test('the same role is matched by account and name: a role path in the ARN counts, another account does not', () => {
  const entry = (principalArn: string) =>
    both(
      mode('API'),
      (f) => (f.eks.accessEntries = ok([{ principalArn, type: 'EC2_LINUX', kubernetesGroups: [] }])),
    )
  assert.equal(access(entry(`arn:aws:iam::${ACCOUNT}:role/nodes/${NODE_ROLE}`)).status, 'pass')
  assert.equal(access(entry(`arn:aws:iam::210987654321:role/${NODE_ROLE}`)).status, 'fail')
  assert.equal(access(entry(`arn:aws:iam::${ACCOUNT}:role/${NODE_ROLE}-other`)).status, 'fail')
})

test('the fixes name the role without its path', () => {
  const f = access(
    both(mode('API'), (f) => {
      role(f).role.arn = `arn:aws:iam::${ACCOUNT}:role/nodes/${NODE_ROLE}`
      role(f).role.path = '/nodes/'
    }),
  )
  assert.equal(f.subject, `arn:aws:iam::${ACCOUNT}:role/nodes/${NODE_ROLE}`)
  assert.deepEqual(f.fix, ENTRY_FIX)
})

test('aws-auth maps the role without both groups: the exact fail, plural', () => {
  assert.deepEqual(
    access((f) => (f.kube.awsAuth = ok([{ rolearn: NODE_ROLE_ARN, groups: [] }]))),
    {
      status: 'fail',
      subject: NODE_ROLE_ARN,
      message: `aws-auth maps node role ${NODE_ROLE} without groups system:bootstrappers, system:nodes: its nodes cannot register`,
      code: 'aws-auth-mapping',
      evidence: { mapping: { rolearn: NODE_ROLE_ARN, groups: [] } },
      fix: AWS_AUTH_FIX,
    },
  )
})

test('aws-auth maps the role without a group while the entries are unreadable: unknown, not fail', () => {
  const f = access(
    both(mode('API_AND_CONFIG_MAP'), (f) => {
      f.eks.accessEntries = failed('eks:ListAccessEntries demo')
      f.kube.awsAuth = ok([{ rolearn: NODE_ROLE_ARN, groups: ['system:nodes'] }])
    }),
  )
  assert.deepEqual(f, {
    status: 'unknown',
    subject: NODE_ROLE_ARN,
    message: `cannot verify that nodes with ${NODE_ROLE} may join (mode API_AND_CONFIG_MAP): could not read eks:ListAccessEntries demo (permission denied: AccessDenied — AccessDenied for eks:ListAccessEntries demo); aws-auth does not map the role`,
    evidence: { authenticationMode: 'API_AND_CONFIG_MAP', reads: ['eks:ListAccessEntries demo'] },
  })
})

test('aws-auth unreadable in CONFIG_MAP mode: unknown naming it, without saying it does not map the role', () => {
  const f = access((f) => (f.kube.awsAuth = failed('get configmap aws-auth')))
  assert.deepEqual(f, {
    status: 'unknown',
    subject: NODE_ROLE_ARN,
    message: `cannot verify that nodes with ${NODE_ROLE} may join (mode CONFIG_MAP): could not read get configmap aws-auth (permission denied: AccessDenied — AccessDenied for get configmap aws-auth)`,
    evidence: { authenticationMode: 'CONFIG_MAP', reads: ['get configmap aws-auth'] },
  })
})

test('both unreadable: both reads named, joined', () => {
  const f = access(
    both(mode('API_AND_CONFIG_MAP'), (f) => {
      f.eks.accessEntries = failed('eks:ListAccessEntries demo')
      f.kube.awsAuth = failed('get configmap aws-auth')
    }),
  )
  assert.equal(f.status, 'unknown')
  assert.deepEqual(f.evidence?.reads, ['eks:ListAccessEntries demo', 'get configmap aws-auth'])
  assert.match(
    f.message,
    /\(mode API_AND_CONFIG_MAP\): could not read eks:ListAccessEntries demo .*; could not read get configmap aws-auth [^;]*$/,
  )
})

test('API mode: aws-auth is not read at all, even when unreadable', () => {
  const f = access(
    both(mode('API'), (f) => {
      f.kube.awsAuth = failed('get configmap aws-auth')
    }),
  )
  assert.equal(f.status, 'fail')
  assert.match(f.message, /no EC2_LINUX access entry \(authentication mode API\)/)
})

test('a cluster EKS does not describe (read, but null) is judged as CONFIG_MAP', () => {
  assert.equal(
    access((f) => (f.eks.cluster = ok(null))).message,
    `aws-auth maps ${NODE_ROLE} to system:bootstrappers + system:nodes (mode CONFIG_MAP)`,
  )
})

test('a missing or empty instance profile: the fix is manual, and the finding says why in its data', () => {
  for (const profile of [
    ok(null),
    ok({ name: 'acme-profile', arn: `arn:aws:iam::${ACCOUNT}:instance-profile/acme-profile`, roles: [] }),
  ]) {
    const [f] = findingsOf(withProfile(profile))
    assert.match(String(f!.evidence?.manualBecause), /^which role an instance profile holds is a choice/)
  }
})
