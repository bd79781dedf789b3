// node-role and the aws-auth entry of a node role (issue 35, items 8 and 9): an entry that names the
// role is not enough — nodes register only as `system:node:{{EC2PrivateDNSName}}`
// (aws/karpenter-provider-aws#7508: `system:node:{{SessionName}}` keeps them out), and the
// authenticator matches path-less role ARNs only (kubernetes-sigs/aws-iam-authenticator#153,
// terraform-aws-modules/terraform-aws-eks#893, #2221). A role that has a path, mapped by its
// path-less ARN (what terraform-aws-eks writes), is healthy.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { nodeRole } from '../../../src/checks/node-role.js'
import { runCheck } from '../../../src/checks/run.js'
import type { AwsAuthMapping, Facts } from '../../../src/facts/types.js'
import { roleOf } from '../../helpers/check-fixtures.js'
import { failed, healthyFacts, NODE_ROLE, NODE_ROLE_ARN, ok } from '../../helpers/facts.js'

const GROUPS = ['system:bootstrappers', 'system:nodes']
const NODE_USER = 'system:node:{{EC2PrivateDNSName}}'
const PATH_ARN = `arn:aws:iam::123456789012:role/karpenter/${NODE_ROLE}`

const mapped =
  (...m: AwsAuthMapping[]) =>
  (f: Facts) =>
    (f.kube.awsAuth = ok(m))
const access = (fn: (f: Facts) => void) => runCheck(nodeRole, healthyFacts(fn)).findings.at(-1)!

test('a username other than the node one fails, and the fix corrects that entry in place', () => {
  const f = access(
    mapped({ rolearn: NODE_ROLE_ARN, username: 'system:node:{{SessionName}}', groups: GROUPS }),
  )
  assert.equal(f.status, 'fail')
  assert.equal(f.code, 'aws-auth-mapping')
  assert.equal(
    f.message,
    `aws-auth maps node role ${NODE_ROLE} with username system:node:{{SessionName}} instead of ${NODE_USER}: its nodes cannot register`,
  )
  assert.equal(f.fix!.commands!.length, 3)
  assert.match(f.fix!.commands![1]!, /^awk /)
})

test('the printed awk edits only the entry of the role, keeping every other entry', () => {
  const f = access(
    mapped({ rolearn: NODE_ROLE_ARN, username: 'system:node:{{SessionName}}', groups: GROUPS }),
  )
  const dir = mkdtempSync(join(tmpdir(), 'aws-auth-'))
  const text = [
    '- groups:',
    '  - system:masters',
    '  rolearn: arn:aws:iam::123456789012:role/Admin',
    '  username: admin:{{SessionName}}',
    '- groups:',
    '  - system:bootstrappers',
    '  - system:nodes',
    `  rolearn: ${NODE_ROLE_ARN}`,
    '  username: system:node:{{SessionName}}',
    '- groups:',
    '  - system:masters',
    '  rolearn: arn:aws:iam::123456789012:role/Ops',
    '  username: ops:{{SessionName}}',
  ].join('\n')
  writeFileSync(join(dir, 'aws-auth-mapRoles.yaml'), text)
  execFileSync('bash', ['-c', f.fix!.commands![1]!], { cwd: dir })
  assert.equal(
    readFileSync(join(dir, 'aws-auth-mapRoles.new.yaml'), 'utf8'),
    `${text.replace('  username: system:node:{{SessionName}}', `  username: ${NODE_USER}`)}\n`,
  )
})

test("the role's path in rolearn fails; the fix adds the path-less entry", () => {
  const f = access(mapped({ rolearn: PATH_ARN, username: NODE_USER, groups: GROUPS }))
  assert.equal(f.status, 'fail')
  assert.match(f.message, /with the role's path in rolearn \(arn:aws:iam::123456789012:role\/karpenter\//)
  assert.ok(f.fix!.alternative!.commands.some((c) => c.includes(`"- rolearn: ${NODE_ROLE_ARN}"`)))
})

test('healthy: a role with an IAM path mapped by its path-less ARN (terraform-aws-eks) passes', () => {
  const f = access((x) => {
    const role = roleOf(x, NODE_ROLE).role
    role.path = '/karpenter/'
    role.arn = PATH_ARN
    mapped({ rolearn: NODE_ROLE_ARN, username: NODE_USER, groups: GROUPS })(x)
  })
  assert.equal(f.status, 'pass', f.message)
})

test('healthy: a second, right entry beside a wrong one passes; no username written is not judged', () => {
  assert.equal(
    access(
      mapped(
        { rolearn: PATH_ARN, username: NODE_USER, groups: GROUPS },
        { rolearn: NODE_ROLE_ARN, username: NODE_USER, groups: GROUPS },
      ),
    ).status,
    'pass',
  )
  assert.equal(access(mapped({ rolearn: NODE_ROLE_ARN, groups: GROUPS })).status, 'pass')
})

test('aws-auth unreadable: unknown, never passed', () => {
  assert.equal(access((f) => (f.kube.awsAuth = failed('get configmap aws-auth'))).status, 'unknown')
})
