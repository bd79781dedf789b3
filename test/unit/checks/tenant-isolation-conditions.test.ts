// The conditions tenant-isolation judges, one at a time (issue 12, item 8: mutation testing): which
// NodePools are tenants (label, or a NoSchedule taint with a tenant key), which taint and label
// isolate them (blocking effect, tenant key, the tenant's value), how a node role is resolved
// (role, instance profile, neither), and the exact findings and fixes for marking and sharing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { awsAuthMappingCommands } from '../../../src/checks/lib/node-access.js'
import { runCheck } from '../../../src/checks/run.js'
import { tenantIsolation } from '../../../src/checks/tenant-isolation.js'
import { evaluate } from '../../../src/policy/evaluate.js'
import { parsePolicyDocument } from '../../../src/facts/policy-document.js'
import type { Facts, Taint } from '../../../src/facts/types.js'
import { tenantPool, withTenants, type TenantOpts } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, failed, NODE_ROLE, NODE_ROLE_ARN, ok } from '../../helpers/facts.js'

const KEY = 'karpctl.io/tenant'
const taint = (value: string | undefined, effect = 'NoSchedule', key = KEY): Taint => ({
  key,
  ...(value === undefined ? {} : { value }),
  effect,
})
const GPU = taint('true', 'NoSchedule', 'nvidia.com/gpu')
const findings = (tenants: [string, TenantOpts?][], mutate?: (f: Facts) => void) =>
  runCheck(tenantIsolation, withTenants(tenants, mutate)).findings
/** The marking finding of NodePool acme. */
const marking = (o: TenantOpts, mutate?: (f: Facts) => void) => {
  const f = findings([['acme', o]], mutate).find((x) => x.subject === 'nodepool/acme')
  assert.ok(f)
  return f
}
const NO_TAINT = 'no NoSchedule taint keeps other workloads off its nodes'
const NO_LABEL = `its nodes carry no ${KEY}=acme label for the tenant's workloads to select`
const notIsolated = (...problems: string[]) =>
  `tenant acme: NodePool acme is not isolated: ${problems.join('; ')}`
/** The tenant-role finding(s), by subject. */
const roleFinding = (all: ReturnType<typeof findings>, role: string) => {
  const f = all.find((x) => x.subject === role)
  assert.ok(f, all.map((x) => x.subject).join(', '))
  return f
}
const setMode = (mode: string) => (f: Facts) => {
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = mode
}

test('tenant-isolation is an error-severity tenancy check', () => {
  assert.equal(tenantIsolation.meta.id, 'tenant-isolation')
  assert.equal(tenantIsolation.meta.severity, 'error')
  assert.equal(tenantIsolation.meta.category, 'tenancy')
})

test('an isolated tenant: the exact pass, for marking and for the role', () => {
  assert.deepEqual(findings([['acme']]), [
    {
      status: 'pass',
      subject: 'nodepool/acme',
      message: `tenant acme: NodePool acme taints its nodes ${KEY}=acme:NoSchedule and labels them ${KEY}=acme`,
      evidence: {
        tenant: 'acme',
        taints: [taint('acme')],
        labels: { [KEY]: 'acme' },
      },
    },
    {
      status: 'pass',
      subject: 'KarpenterNodeRole-demo-acme',
      message: 'tenant acme has its own node role KarpenterNodeRole-demo-acme',
      evidence: {
        role: 'KarpenterNodeRole-demo-acme',
        nodePools: [{ tenant: 'acme', pool: 'acme', nodeClass: 'acme' }],
      },
    },
  ])
})

test('neither taint nor label: both problems, and the fix taints and labels exactly', () => {
  const f = marking({ taints: [], labels: {} })
  assert.equal(f.message, notIsolated(NO_TAINT, NO_LABEL))
  const patch = {
    spec: {
      template: {
        metadata: { labels: { [KEY]: 'acme' } },
        spec: { taints: [taint('acme')] },
      },
    },
  }
  assert.deepEqual(f.fix, {
    summary: `taint and label the nodes of NodePool acme for tenant acme (existing nodes are replaced through drift); the tenant's pods then need nodeSelector ${KEY}: acme and a toleration for the taint`,
    commands: [`kubectl patch nodepool acme --type merge -p '${JSON.stringify(patch)}'`],
    snippet: {
      language: 'yaml',
      text: [
        'spec:',
        '  template:',
        '    metadata:',
        '      labels:',
        `        ${KEY}: acme`,
        '    spec:',
        '      taints:',
        `        - key: ${KEY}`,
        '          value: acme',
        '          effect: NoSchedule',
        '',
      ].join('\n'),
    },
  })
})

test('labelled but not tainted: only the taint problem; tainted but not labelled: only the label problem', () => {
  assert.equal(marking({ taints: [GPU] }).message, notIsolated(NO_TAINT))
  const unlabelled = marking({ labels: { team: 'x' } })
  assert.equal(unlabelled.message, notIsolated(NO_LABEL))
  const patch = JSON.parse(/-p '(.*)'$/.exec(unlabelled.fix!.commands![0]!)![1]!)
  assert.deepEqual(patch.spec.template, {
    metadata: { labels: { team: 'x', [KEY]: 'acme' } },
    spec: { taints: [taint('acme')] },
  })
})

test('a NoExecute tenant taint isolates too; PreferNoSchedule does not (and is not a "wrong tenant")', () => {
  assert.equal(marking({ taints: [taint('acme', 'NoExecute')] }).status, 'pass')
  assert.equal(marking({ taints: [taint('acme', 'PreferNoSchedule')] }).message, notIsolated(NO_TAINT))
})

test('a blocking taint that is not a tenant key, or a tenant key without the tenant value, does not isolate', () => {
  assert.equal(marking({ taints: [GPU] }).status, 'fail')
  assert.equal(marking({ taints: [taint('acme', 'NoSchedule', 'team')] }).message, notIsolated(NO_TAINT))
  // a tenant taint with no value: named as it is, with an empty value
  assert.equal(
    marking({ taints: [taint(undefined)] }).message,
    notIsolated(`its tenant taint ${KEY}=:NoSchedule does not name tenant acme`),
  )
})

test('only a tenant-key label with the tenant value counts', () => {
  const f = marking({ labels: { [KEY]: 'globex', team: 'acme' } })
  assert.equal(f.message, notIsolated(NO_LABEL))
})

test('the patch drops a wrong tenant taint and keeps the others', () => {
  const f = marking({ taints: [taint('globex'), GPU] })
  const patch = JSON.parse(/-p '(.*)'$/.exec(f.fix!.commands![0]!)![1]!)
  assert.deepEqual(patch.spec.template.spec.taints, [GPU, taint('acme')])
})

test('a tenant NodePool without taints or template metadata: judged, not crashed', () => {
  const f = marking({}, (facts) => {
    assert.ok(facts.kube.nodePools.ok)
    const np = facts.kube.nodePools.value.find((p) => p.metadata.name === 'acme')!
    delete np.spec.template.spec.taints
    delete np.spec.template.metadata
  })
  assert.equal(f.message, notIsolated(NO_TAINT, NO_LABEL))
})

test('which NodePools are tenants: not one with only a non-tenant taint or a PreferNoSchedule tenant taint', () => {
  const notTenants = (taints: Taint[]) => (f: Facts) => {
    assert.ok(f.kube.nodePools.ok)
    f.kube.nodePools.value.push({
      ...tenantPool('other', { poolLabel: false, taints }),
      metadata: { name: 'other' },
    })
  }
  for (const taints of [[GPU], [taint('x', 'PreferNoSchedule')]]) {
    const all = findings([['acme']], notTenants(taints))
    assert.ok(!all.some((x) => x.subject === 'nodepool/other'), JSON.stringify(taints))
  }
})

test('a NodePool found by its tenant taint: the tenant is the taint value, else the NodePool name', () => {
  const byTaint = (value: string | undefined) =>
    findings([['pool-a', { poolLabel: false, taints: [taint(value)] }]])[0]!.message
  assert.match(byTaint('globex'), /^tenant globex: NodePool pool-a is not isolated: /)
  assert.match(byTaint(undefined), /^tenant pool-a: NodePool pool-a is not isolated: /)
})

test('a node role through an instance profile not collected, or not found: named by the profile', () => {
  const viaProfile = (read?: Facts['iam']['instanceProfiles'][string]) => (f: Facts) => {
    assert.ok(f.kube.nodeClasses.ok)
    const nc = f.kube.nodeClasses.value.find((c) => c.metadata.name === 'acme')!
    delete nc.spec.role
    nc.spec.instanceProfile = 'acme-nodes'
    if (read) f.iam.instanceProfiles['acme-nodes'] = read
  }
  for (const read of [undefined, ok(null), failed<never>('iam:GetInstanceProfile acme-nodes')]) {
    const all = findings([['acme']], viaProfile(read))
    assert.equal(roleFinding(all, 'instance-profile/acme-nodes').status, 'pass')
  }
})

test('an EC2NodeClass with neither role nor instance profile, or none at all: no role finding', () => {
  const noIdentity = (f: Facts) => {
    assert.ok(f.kube.nodeClasses.ok)
    delete f.kube.nodeClasses.value.find((c) => c.metadata.name === 'acme')!.spec.role
  }
  const noClass = (f: Facts) => {
    assert.ok(f.kube.nodeClasses.ok)
    f.kube.nodeClasses = ok(f.kube.nodeClasses.value.filter((c) => c.metadata.name !== 'acme'))
  }
  for (const fn of [noIdentity, noClass]) {
    assert.deepEqual(
      findings([['acme']], fn).map((x) => x.subject),
      ['nodepool/acme'],
    )
  }
})

test('a tenant sharing its role and class with two non-tenant pools: the exact warning and fix', () => {
  const all = findings([['acme', { nodeClass: 'default' }]], (f) => {
    assert.ok(f.kube.nodePools.ok)
    const second = f.kube.nodePools.value[0]!
    f.kube.nodePools.value.push({ ...second, metadata: { name: 'batch' } })
  })
  const role = 'KarpenterNodeRole-demo-acme'
  const f = roleFinding(all, 'KarpenterNodeRole-demo')
  assert.equal(
    f.message,
    'tenant acme shares node role KarpenterNodeRole-demo with non-tenant NodePools default, batch: its policies reach nodes outside the tenant',
  )
  const trust =
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}'
  const roleArn = `arn:aws:iam::123456789012:role/${role}`
  const made = [
    `aws iam create-role --role-name ${role} --assume-role-policy-document '${trust}' --tags Key=karpctl.io/cluster,Value=demo Key=karpctl.io/tenant,Value=acme`,
    ...[
      'AmazonEKS_CNI_Policy',
      'AmazonEKSWorkerNodePolicy',
      'AmazonEC2ContainerRegistryPullOnly',
      'AmazonSSMManagedInstanceCore',
    ].map((p) => `aws iam attach-role-policy --role-name ${role} --policy-arn arn:aws:iam::aws:policy/${p}`),
  ]
  // The controller may pass the new role (else its nodes never launch and passrole-node-role fails),
  // in the policy passrole-node-role's fix writes, which names every role in use: it replaces it whole.
  const grant = `aws iam put-role-policy --role-name ${CONTROLLER_ROLE} --policy-name KarpctlPassNodeRoles --policy-document '${JSON.stringify(
    {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'AllowPassingInstanceRole',
          Effect: 'Allow',
          Resource: [NODE_ROLE_ARN, roleArn],
          Action: 'iam:PassRole',
          Condition: {
            StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] },
          },
        },
      ],
    },
  )}'`
  assert.deepEqual(f.fix?.commands, [
    ...made,
    `eksctl create iamidentitymapping --cluster demo --region us-west-2 --arn ${roleArn} --username 'system:node:{{EC2PrivateDNSName}}' --group system:bootstrappers --group system:nodes`,
    grant,
  ])
  // eksctl is often not installed: the same steps with the aws-auth mapping made by kubectl alone.
  assert.deepEqual(f.fix?.alternative, {
    label: 'without eksctl (aws and kubectl only)',
    commands: [
      ...made,
      // the kubectl-only mapping: its edit is proven on every mapRoles shape in lib/aws-auth-edit.test.ts
      ...awsAuthMappingCommands(roleArn),
      grant,
    ],
  })
})

test('three tenants on one role, two classes shared: the fix is for the second and third, naming both classes', () => {
  const shared = 'KarpenterNodeRole-demo-shared'
  const all = findings(
    [
      ['acme', { nodeClass: 'x', role: shared }],
      ['globex', { nodeClass: 'x' }],
      ['initech', { nodeClass: 'y', role: shared }],
      ['acme2', { nodeClass: 'y' }],
    ],
    (f) => {
      // acme2 is acme's second pool: tenant acme uses both classes
      assert.ok(f.kube.nodePools.ok)
      const p = f.kube.nodePools.value.find((np) => np.metadata.name === 'acme2')!
      p.metadata.labels = { [KEY]: 'acme' }
    },
  )
  const f = roleFinding(all, shared)
  assert.equal(f.status, 'fail')
  assert.equal(
    f.fix?.summary,
    `give globex, initech their own node role instead of ${shared}, with the tenant's own policies attached, cluster access (access entry, or aws-auth on CONFIG_MAP clusters) and iam:PassRole for ${CONTROLLER_ROLE} on every node role in use (the KarpctlPassNodeRoles policy passrole-node-role's fix writes), granted before the EC2NodeClass names the role; EC2NodeClass x, y serves several tenants: copy it once per tenant and point each tenant's NodePool at its own copy; aws-auth with eksctl, or without it (below)`,
  )
  assert.ok(!f.fix?.commands?.some((c) => c.includes('KarpenterNodeRole-demo-shared-acme')))
})

test('two tenants on two classes of one role: only the second tenant is moved, its own class patched', () => {
  const shared = 'KarpenterNodeRole-demo-shared'
  const f = roleFinding(
    findings([
      ['acme', { role: shared }],
      ['globex', { role: shared }],
    ]),
    shared,
  )
  assert.equal(
    f.fix?.summary,
    `give globex their own node role instead of ${shared}, with the tenant's own policies attached, cluster access (access entry, or aws-auth on CONFIG_MAP clusters) and iam:PassRole for ${CONTROLLER_ROLE} on every node role in use (the KarpctlPassNodeRoles policy passrole-node-role's fix writes), granted before the EC2NodeClass names the role; aws-auth with eksctl, or without it (below)`,
  )
  // The class names the new role only once the controller may pass it.
  assert.deepEqual(f.fix?.commands?.slice(-2), [
    `aws iam put-role-policy --role-name ${CONTROLLER_ROLE} --policy-name KarpctlPassNodeRoles --policy-document '${JSON.stringify(
      {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'AllowPassingInstanceRole',
            Effect: 'Allow',
            Resource: [
              NODE_ROLE_ARN,
              'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo-globex',
              'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo-shared',
            ],
            Action: 'iam:PassRole',
            Condition: {
              StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] },
            },
          },
        ],
      },
    )}'`,
    `kubectl patch ec2nodeclass globex --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo-globex"}}'`,
  ])
  assert.ok(!f.fix?.commands?.some((c) => c.includes('KarpenterNodeRole-demo-acme')))
})

test('cluster access for the new role: an access entry on API_AND_CONFIG_MAP; aws-auth when the cluster is unread; no account id', () => {
  const access = (mutate: (f: Facts) => void) =>
    roleFinding(
      findings([['acme', { nodeClass: 'default' }]], mutate),
      'KarpenterNodeRole-demo',
    ).fix!.commands!.find((c) => !c.startsWith('aws iam '))!
  assert.match(access(setMode('API_AND_CONFIG_MAP')), /^aws eks create-access-entry --cluster-name demo /)
  assert.match(
    access((f) => (f.eks.cluster = failed('eks:DescribeCluster demo'))),
    /^eksctl create iamidentitymapping /,
  )
  assert.match(
    access((f) => delete f.meta.accountId),
    /--arn 'arn:aws:iam::<account-id>:role\/KarpenterNodeRole-demo-acme' /,
  )
})

test("the own-role fix's grant, as printed, lets the controller pass the new role to EC2 and keeps every role in use", () => {
  const shared = 'KarpenterNodeRole-demo-shared'
  const f = roleFinding(
    findings([
      ['acme', { role: shared }],
      ['globex', { role: shared }],
    ]),
    shared,
  )
  const grant = f.fix!.commands!.find((c) => c.startsWith('aws iam put-role-policy '))!
  const doc = parsePolicyDocument(/--policy-document '(.+)'$/.exec(grant)![1]!)
  const may = (role: string) =>
    evaluate([doc], {
      action: 'iam:PassRole',
      resource: `arn:aws:iam::123456789012:role/${role}`,
      context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
    }).decision
  assert.equal(may('KarpenterNodeRole-demo-globex'), 'allowed')
  assert.equal(may(shared), 'allowed', 'acme keeps its grant: put-role-policy replaces the policy')
  assert.equal(may('KarpenterNodeRole-demo'), 'allowed', 'the default pool keeps its grant')
  assert.equal(may('SomeOtherRole'), 'implicitDeny')
})

test('two tenants on the role a non-tenant NodePool uses too: both get their own role (moving one leaves the other sharing)', () => {
  const all = findings([
    ['acme', { role: NODE_ROLE }],
    ['globex', { role: NODE_ROLE }],
  ])
  const f = roleFinding(all, NODE_ROLE)
  assert.equal(f.status, 'fail')
  assert.match(f.fix!.summary, /^give acme, globex their own node role instead of KarpenterNodeRole-demo,/)
  const patches = f.fix!.commands!.filter((c) => c.startsWith('kubectl patch ec2nodeclass '))
  assert.deepEqual(patches, [
    `kubectl patch ec2nodeclass acme --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo-acme"}}'`,
    `kubectl patch ec2nodeclass globex --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo-globex"}}'`,
  ])
})

test("a shared tenant role's fix is manual, and the finding says why in its data", () => {
  const shared = findings([
    ['acme', { role: NODE_ROLE }],
    ['globex', { role: NODE_ROLE }],
  ])
  const warned = findings([['acme', { role: NODE_ROLE }]])
  for (const f of [roleFinding(shared, NODE_ROLE), roleFinding(warned, NODE_ROLE)])
    assert.match(String(f.evidence?.manualBecause), /^a tenant's own node role is a design change/)
})

test("a tenant's class that launches through an instance profile: the patch sets spec.role and removes spec.instanceProfile (the CRD allows exactly one)", () => {
  const shared = 'KarpenterNodeRole-demo-shared'
  const f = roleFinding(
    findings(
      [
        ['acme', { role: shared }],
        ['globex', { role: shared }],
      ],
      (facts) => {
        if (!facts.kube.nodeClasses.ok) throw new Error('fixture')
        const globex = facts.kube.nodeClasses.value.find((c) => c.metadata.name === 'globex')!
        delete globex.spec.role
        globex.spec.instanceProfile = 'shared-profile'
        facts.iam.instanceProfiles['shared-profile'] = {
          ok: true,
          value: {
            name: 'shared-profile',
            arn: 'arn:aws:iam::123456789012:instance-profile/shared-profile',
            roles: [shared],
          },
        }
      },
    ),
    shared,
  )
  assert.equal(
    f.fix?.commands?.at(-1),
    `kubectl patch ec2nodeclass globex --type merge -p '{"spec":{"role":"KarpenterNodeRole-demo-globex","instanceProfile":null}}'`,
  )
})
