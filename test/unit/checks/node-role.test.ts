import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeRole } from '../../../src/checks/node-role.js'
import { catalog } from '../../../src/checks/catalog.js'
import { runCheck, runChecks } from '../../../src/checks/run.js'
import { fixSet } from '../../../src/fix/fixes.js'
import type { Facts, RoleFacts } from '../../../src/facts/types.js'
import {
  failed,
  healthyFacts,
  NODE_ROLE,
  NODE_ROLE_ARN,
  nodeRole as nodeRoleFacts,
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

const apiMode = (mode: string) => (f: Facts) => {
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = mode
}

test('healthy: trust, policies and aws-auth mapping pass', () => {
  const r = runCheck(nodeRole, healthyFacts())
  assert.equal(r.status, 'pass')
  assert.equal(r.findings.length, 3)
  assert.ok(r.findings.every((x) => x.status === 'pass'))
})

test('no EC2NodeClass: skipped, saying why', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (f.kube.nodeClasses = ok([]))),
  )
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no EC2NodeClass/)
})

test('missing worker-node and ECR policies fail with attach-role-policy commands', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts(withoutPolicies('AmazonEKSWorkerNodePolicy', 'AmazonEC2ContainerRegistryPullOnly')),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, NODE_ROLE)
  assert.deepEqual(fail.evidence?.missing, [
    'AmazonEKSWorkerNodePolicy',
    'AmazonEC2ContainerRegistryPullOnly',
  ])
  assert.deepEqual(fail.fix!.commands, [
    'aws iam attach-role-policy --role-name KarpenterNodeRole-demo --policy-arn arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
    'aws iam attach-role-policy --role-name KarpenterNodeRole-demo --policy-arn arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
  ])
})

test('ECR ReadOnly instead of PullOnly is accepted', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      const attached = role(f).attached
      if (attached.ok) {
        for (const p of attached.value) {
          if (p.name === 'AmazonEC2ContainerRegistryPullOnly') {
            p.name = 'AmazonEC2ContainerRegistryReadOnly'
            p.arn = 'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly'
          }
        }
      }
    }),
  )
  assert.equal(r.status, 'pass')
})

test('a customer policy that only shares a managed policy name does not count', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      const attached = role(f).attached
      if (attached.ok) {
        const cni = attached.value.find((p) => p.name === 'AmazonEKS_CNI_Policy')!
        cni.arn = 'arn:aws:iam::123456789012:policy/AmazonEKS_CNI_Policy'
      }
    }),
  )
  assert.equal(r.status, 'fail')
  assert.deepEqual(r.findings.find((x) => x.status === 'fail')!.evidence?.missing, ['AmazonEKS_CNI_Policy'])
})

test('CNI policy may be missing when aws-node has its own Pod Identity association', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      withoutPolicies('AmazonEKS_CNI_Policy')(f)
      f.eks.podIdentityAssociations = ok([
        {
          associationId: 'a-cni',
          namespace: 'kube-system',
          serviceAccount: 'aws-node',
          roleArn: CNI_ROLE_ARN,
        },
      ])
      f.iam.roles[CNI_ROLE] = ok(cniRole())
    }),
  )
  assert.equal(r.status, 'pass')
  assert.match(
    r.findings.at(-1)!.message,
    /VPC CNI \(kube-system\/aws-node\) gets its permissions from its own role AmazonEKSVPCCNIRole-demo \(EKS Pod Identity association\), which has AmazonEKS_CNI_Policy/,
  )
})

// ---- issue 21 item 2: aws-node with its own IRSA role ----

test('aws-node with its own IRSA role that has the CNI policy: a node role without it passes, saying where CNI permissions come from', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      withoutPolicies('AmazonEKS_CNI_Policy')(f)
      awsNodeIrsa()(f)
    }),
  )
  assert.equal(r.status, 'pass', JSON.stringify(r.findings, null, 1))
  const policies = r.findings.find((x) => x.subject === NODE_ROLE && /policies/.test(x.message))!
  assert.match(policies.message, /the VPC CNI's permissions come from aws-node's own role/)
  const cni = r.findings.find((x) => x.subject === CNI_ROLE_ARN)!
  assert.equal(cni.status, 'pass')
  assert.match(
    cni.message,
    /own role AmazonEKSVPCCNIRole-demo \(IRSA annotation\), which has AmazonEKS_CNI_Policy: the node roles need not carry it/,
  )
  // No fix anywhere attaches the CNI policy to the node role.
  assert.ok(
    !r.findings.some((x) =>
      x.fix?.commands?.some((c) => c.includes(`--role-name ${NODE_ROLE} `) && c.includes('CNI')),
    ),
  )
})

test("aws-node's own role lacks the CNI policy: fail naming it, the fix attaches it to aws-node's role, not the node role", () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      withoutPolicies('AmazonEKS_CNI_Policy')(f)
      awsNodeIrsa(CNI_ROLE_ARN, cniRole(false))(f)
    }),
  )
  assert.equal(r.status, 'fail')
  const fails = r.findings.filter((x) => x.status === 'fail')
  assert.equal(fails.length, 1)
  assert.equal(fails[0]!.subject, CNI_ROLE)
  assert.equal(fails[0]!.code, 'missing-policies')
  assert.deepEqual(fails[0]!.evidence?.missing, ['AmazonEKS_CNI_Policy'])
  assert.match(
    fails[0]!.message,
    /aws-node \(the VPC CNI\) uses its own role AmazonEKSVPCCNIRole-demo \(IRSA annotation\), which lacks AmazonEKS_CNI_Policy/,
  )
  assert.deepEqual(fails[0]!.fix!.commands, [
    `aws iam attach-role-policy --role-name ${CNI_ROLE} --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy`,
  ])
})

test("aws-node's role is a stack's: the fix is made in the stack", () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      awsNodeIrsa(CNI_ROLE_ARN, cniRole(false))(f)
      f.cloudformation = {
        owners: {
          [CNI_ROLE]: ok({
            stackName: 'eksctl-demo-addon-vpc-cni',
            stackId: 'id',
            logicalId: 'Role1',
            resourceType: 'AWS::IAM::Role',
            resourceStatus: 'CREATE_COMPLETE',
          }),
        },
        stacks: {},
      }
    }),
  )
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.match(fail.fix!.summary, /belongs to CloudFormation stack eksctl-demo-addon-vpc-cni/)
  assert.ok(fail.fix!.commands!.every((c) => c.startsWith('aws cloudformation')))
})

test("aws-node's role is in another account or does not exist: unknown or fail, never pass", () => {
  const foreign = runCheck(
    nodeRole,
    healthyFacts(awsNodeIrsa('arn:aws:iam::999999999999:role/cni', undefined)),
  )
  assert.equal(foreign.status, 'unknown')
  assert.match(
    foreign.findings.at(-1)!.message,
    /of account 999999999999 .*cannot be read from account 123456789012/,
  )
  const gone = runCheck(nodeRole, healthyFacts(awsNodeIrsa(CNI_ROLE_ARN, null)))
  assert.equal(gone.status, 'fail')
  assert.equal(gone.findings.at(-1)!.code, 'cni-role-missing')
  const unread = runCheck(
    nodeRole,
    healthyFacts((f) => {
      awsNodeIrsa()(f)
      delete f.iam.roles[CNI_ROLE]
    }),
  )
  assert.equal(unread.status, 'unknown')
})

test('missing SSM core policy is advice (warn), not a failure', () => {
  const r = runCheck(nodeRole, healthyFacts(withoutPolicies('AmazonSSMManagedInstanceCore')))
  assert.equal(r.status, 'warn')
  const warn = r.findings.find((x) => x.status === 'warn')!
  assert.match(warn.message, /AmazonSSMManagedInstanceCore/)
  assert.match(warn.fix!.commands![0]!, /attach-role-policy .*AmazonSSMManagedInstanceCore/)
})

test('trust without ec2.amazonaws.com fails', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      role(f).role.trust = {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, NODE_ROLE_ARN)
  assert.match(
    fail.fix!.commands![0]!,
    /update-assume-role-policy --role-name KarpenterNodeRole-demo .*ec2\.amazonaws\.com/,
  )
})

test('a node role that does not exist fails with create-role', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (f.iam.roles[NODE_ROLE] = ok(null))),
  )
  assert.equal(r.status, 'fail')
  assert.equal(r.findings[0]!.subject, NODE_ROLE)
  assert.match(r.findings[0]!.fix!.commands![0]!, /aws iam create-role --role-name KarpenterNodeRole-demo/)
})

test('CONFIG_MAP mode without an aws-auth mapping fails with a mapRoles snippet', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (f.kube.awsAuth = ok([]))),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(fail.subject, NODE_ROLE_ARN)
  assert.match(fail.message, /no aws-auth mapping/)
  assert.match(
    fail.fix!.snippet!.text,
    /rolearn: arn:aws:iam::123456789012:role\/KarpenterNodeRole-demo\n.*\n.*\n +- system:bootstrappers\n +- system:nodes/,
  )
})

test('an aws-auth mapping without system:bootstrappers fails', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (f.kube.awsAuth = ok([{ rolearn: NODE_ROLE_ARN, groups: ['system:nodes'] }]))),
  )
  assert.equal(r.status, 'fail')
  assert.match(r.findings.find((x) => x.status === 'fail')!.message, /without group system:bootstrappers/)
})

test('API mode: an EC2_LINUX access entry passes', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API')(f)
      f.kube.awsAuth = ok(null)
      f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type: 'EC2_LINUX', kubernetesGroups: [] }])
    }),
  )
  assert.equal(r.status, 'pass')
  assert.ok(r.findings.some((x) => /EC2_LINUX access entry/.test(x.message)))
})

test('API mode: no access entry fails with create-access-entry, even if aws-auth maps the role', () => {
  const r = runCheck(nodeRole, healthyFacts(apiMode('API')))
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.equal(
    fail.fix!.commands![0],
    'aws eks create-access-entry --cluster-name demo --principal-arn arn:aws:iam::123456789012:role/KarpenterNodeRole-demo --type EC2_LINUX --region us-west-2',
  )
})

test('API mode: a STANDARD entry for the node role fails and the fix replaces it', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API')(f)
      f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type: 'STANDARD', kubernetesGroups: [] }])
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.deepEqual(fail.evidence, { type: 'STANDARD' })
  assert.match(fail.fix!.commands![0]!, /delete-access-entry/)
})

test('API_AND_CONFIG_MAP: no entry but an aws-auth mapping passes', () => {
  const r = runCheck(nodeRole, healthyFacts(apiMode('API_AND_CONFIG_MAP')))
  assert.equal(r.status, 'pass')
})

test('access entries unreadable (moto: 404) and aws-auth does not map the role: unknown, not fail', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API_AND_CONFIG_MAP')(f)
      f.eks.accessEntries = failed('eks:ListAccessEntries demo', 'NotFound', 'unsupported')
      f.kube.awsAuth = ok([])
    }),
  )
  assert.equal(r.status, 'unknown')
  const unknown = r.findings.find((x) => x.status === 'unknown')!
  assert.equal(unknown.subject, NODE_ROLE_ARN)
  assert.match(unknown.message, /not supported by this endpoint.*aws-auth does not map the role/)
})

test('access entries unreadable but aws-auth maps the role: pass', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API_AND_CONFIG_MAP')(f)
      f.eks.accessEntries = failed('eks:ListAccessEntries demo', 'NotFound', 'unsupported')
    }),
  )
  assert.equal(r.status, 'pass')
})

test('a failed EC2NodeClass list makes the check unknown', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (f.kube.nodeClasses = failed('list ec2nodeclasses', 'Forbidden'))),
  )
  assert.equal(r.status, 'unknown')
})

test('unreadable attached policies make that part unknown, never pass', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => (role(f).attached = failed('iam:ListAttachedRolePolicies KarpenterNodeRole-demo'))),
  )
  assert.equal(r.status, 'unknown')
  assert.ok(!r.findings.some((x) => x.status === 'pass' && /policies/.test(x.message)))
})

test('the role behind spec.instanceProfile is checked; a missing instance profile fails', () => {
  const tenant = 'KarpenterNodeRole-demo-acme'
  const withProfile = (profile: Facts['iam']['instanceProfiles'][string]) => (f: Facts) => {
    if (f.kube.nodeClasses.ok) {
      f.kube.nodeClasses.value[0]!.spec = {
        ...f.kube.nodeClasses.value[0]!.spec,
        role: undefined,
        instanceProfile: 'acme-profile',
      }
    }
    f.iam.instanceProfiles['acme-profile'] = profile
    f.iam.roles[tenant] = ok(nodeRoleFacts(tenant))
  }
  const good = runCheck(
    nodeRole,
    healthyFacts((f) => {
      withProfile(
        ok({
          name: 'acme-profile',
          arn: 'arn:aws:iam::123456789012:instance-profile/acme-profile',
          roles: [tenant],
        }),
      )(f)
      f.kube.awsAuth = ok([
        {
          rolearn: `arn:aws:iam::123456789012:role/${tenant}`,
          groups: ['system:bootstrappers', 'system:nodes'],
        },
      ])
    }),
  )
  assert.equal(good.status, 'pass')
  assert.ok(good.findings.some((x) => x.message.includes(tenant)))
  const missing = runCheck(nodeRole, healthyFacts(withProfile(ok(null))))
  assert.equal(missing.status, 'fail')
  assert.equal(missing.findings[0]!.subject, 'acme-profile')
})

test('API_AND_CONFIG_MAP: a STANDARD entry fails even when aws-auth maps the role (EKS uses the entry first)', () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API_AND_CONFIG_MAP')(f)
      f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type: 'STANDARD', kubernetesGroups: [] }])
    }),
  )
  assert.equal(r.status, 'fail')
  const fail = r.findings.find((x) => x.status === 'fail')!
  assert.match(fail.message, /has a STANDARD access entry, not EC2_LINUX: nodes are not put in system:nodes/)
  assert.deepEqual(fail.fix!.commands, [
    'aws eks delete-access-entry --cluster-name demo --principal-arn arn:aws:iam::123456789012:role/KarpenterNodeRole-demo --region us-west-2',
    'aws eks create-access-entry --cluster-name demo --principal-arn arn:aws:iam::123456789012:role/KarpenterNodeRole-demo --type EC2_LINUX --region us-west-2',
  ])
})

test('API mode: EC2_LINUX and EC2_WINDOWS entries pass; an entry without a type is judged STANDARD', () => {
  for (const type of ['EC2_LINUX', 'EC2_WINDOWS']) {
    const r = runCheck(
      nodeRole,
      healthyFacts((f) => {
        apiMode('API')(f)
        f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, type, kubernetesGroups: [] }])
      }),
    )
    assert.equal(r.status, 'pass', type)
    assert.ok(r.findings.some((x) => x.message === `${NODE_ROLE} has an ${type} access entry (mode API)`))
  }
  const untyped = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API')(f)
      f.eks.accessEntries = ok([{ principalArn: NODE_ROLE_ARN, kubernetesGroups: [] }])
    }),
  )
  assert.equal(untyped.status, 'fail')
  assert.deepEqual(untyped.findings.find((x) => x.status === 'fail')!.evidence, { type: 'STANDARD' })
})

test("API mode: another principal's STANDARD entry does not count for the node role", () => {
  const r = runCheck(
    nodeRole,
    healthyFacts((f) => {
      apiMode('API')(f)
      f.eks.accessEntries = ok([
        { principalArn: 'arn:aws:iam::123456789012:role/Admin', type: 'STANDARD', kubernetesGroups: [] },
      ])
    }),
  )
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings.find((x) => x.status === 'fail')!.message,
    /has no cluster access: no EC2_LINUX access entry/,
  )
})

test("doctor --fix attaches the CNI policy to aws-node's own role, never to the node role", () => {
  const facts = healthyFacts((f) => {
    withoutPolicies('AmazonEKS_CNI_Policy')(f)
    awsNodeIrsa(CNI_ROLE_ARN, cniRole(false))(f)
  })
  const fs = fixSet(facts, runChecks(catalog, facts))
  assert.deepEqual(
    fs.resources.map((r) => r.address),
    [`iam-role-policies.${CNI_ROLE}`],
  )
})
