// node-role with a misspelt role (issue 35, items 5 and 6): terraform-aws-eks modules/karpenter names
// the node role `Karpenter-<cluster>-<suffix>` (name_prefix, `node_iam_role_use_name_prefix` default)
// and gives it an EC2_LINUX access entry; an EC2NodeClass written `role: Karpenter-demo` names a role
// that does not exist. The role meant is the one with node access whose name it prefixes: the fix
// patches the EC2NodeClass, never creates a second role without cluster access, and --fix grants no
// PassRole on a role that does not exist.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeRole } from '../../../src/checks/node-role.js'
import { passroleNodeRole } from '../../../src/checks/passrole-node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts } from '../../../src/facts/types.js'
import { fixSet } from '../../../src/fix/fixes.js'
import { nodeClass } from '../../helpers/check-fixtures.js'
import { ACCOUNT, healthyFacts, nodeRole as nodeRoleFacts, ok } from '../../helpers/facts.js'

const MODULE_ROLE = 'Karpenter-demo-20250101000000000000000001'
const arnOf = (n: string) => `arn:aws:iam::${ACCOUNT}:role/${n}`

/** API mode, the module's role with its EC2_LINUX entry, and the EC2NodeClass naming `role`. */
const install = (role: string, more?: (f: Facts) => void) =>
  healthyFacts((f) => {
    if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.authenticationMode = 'API'
    f.eks.accessEntries = ok([{ principalArn: arnOf(MODULE_ROLE), type: 'EC2_LINUX', kubernetesGroups: [] }])
    f.iam.roles[MODULE_ROLE] = ok(nodeRoleFacts(MODULE_ROLE))
    nodeClass(f).spec.role = role
    f.iam.roles[role] ??= ok(null)
    more?.(f)
  })
const roleFinding = (facts: Facts, name: string) =>
  runCheck(nodeRole, facts).findings.find((x) => x.subject === name)

test('a prefix of the role with node access: named, and the fix patches the EC2NodeClass', () => {
  const f = roleFinding(install('Karpenter-demo'), 'Karpenter-demo')!
  assert.equal(f.status, 'fail')
  assert.equal(f.code, 'role-misnamed')
  assert.match(f.message, new RegExp(`does not exist; ${MODULE_ROLE} has node access to this cluster`))
  assert.deepEqual(f.fix!.commands, [
    `kubectl patch ec2nodeclass default --type merge -p '{"spec":{"role":"${MODULE_ROLE}"}}'`,
  ])
  assert.ok(!f.fix!.commands!.some((c) => c.includes('create-role')))
})

test('the same through aws-auth (CONFIG_MAP): a node mapping names the role meant', () => {
  const f = roleFinding(
    install('Karpenter-demo', (x) => {
      if (x.eks.cluster.ok && x.eks.cluster.value) x.eks.cluster.value.authenticationMode = 'CONFIG_MAP'
      x.kube.awsAuth = ok([
        {
          rolearn: arnOf(MODULE_ROLE),
          username: 'system:node:{{EC2PrivateDNSName}}',
          groups: ['system:bootstrappers', 'system:nodes'],
        },
      ])
    }),
    'Karpenter-demo',
  )!
  assert.equal(f.code, 'role-misnamed')
})

test('no or two candidates: the old finding (create the role), no guess', () => {
  assert.equal(
    roleFinding(install('Unrelated-role'), 'Unrelated-role')!.fix!.commands![0]!.startsWith(
      'aws iam create-role',
    ),
    true,
  )
  const two = install('Karpenter-demo', (x) => {
    if (x.eks.accessEntries.ok)
      x.eks.accessEntries.value.push({
        principalArn: arnOf('Karpenter-demo-other'),
        type: 'EC2_LINUX',
        kubernetesGroups: [],
      })
  })
  assert.equal(roleFinding(two, 'Karpenter-demo')!.code, undefined)
})

test('healthy: the module role named right is clean', () => {
  const r = runCheck(nodeRole, install(MODULE_ROLE))
  assert.equal(r.status, 'pass', JSON.stringify(r.findings.filter((x) => x.status !== 'pass')))
})

test('--fix: no role created, no PassRole granted on the role that does not exist (item 6)', () => {
  const facts = install('Karpenter-demo')
  const fs = fixSet(facts, [runCheck(nodeRole, facts), runCheck(passroleNodeRole, facts)])
  assert.deepEqual(fs.resources, [])
  assert.ok(
    fs.manual.some((m) => m.check === 'node-role' && m.commands[0]!.startsWith('kubectl patch ec2nodeclass')),
  )
})
