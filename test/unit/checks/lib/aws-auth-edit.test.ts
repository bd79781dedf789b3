// The printed aws-auth edits (issue 35, A): the awk line of each runs through `sh -c` on every shape
// mapRoles takes in the field, and the result is parsed as YAML. Appending after `[]` (Terraform's
// yamlencode of no roles) used to write invalid YAML, which locks every node out of the cluster.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { awsAuthMappingCommands, awsAuthUsernameCommands } from '../../../../src/checks/lib/node-access.js'
import { MAP_ROLES_EDITED, MAP_ROLES_FILE } from '../../../../src/checks/lib/aws-auth-edit.js'

const NODE = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'
const USER = 'system:node:{{EC2PrivateDNSName}}'
const GROUPS = ['system:bootstrappers', 'system:nodes']
const WANTED = { rolearn: NODE, username: USER, groups: GROUPS }
const ADMIN = {
  rolearn: 'arn:aws:iam::123456789012:role/Admin',
  username: 'admin',
  groups: ['system:masters'],
}

/** The edit line of `commands` (the second) run on `text` as the read file; the edited text, or null. */
function edit(commands: string[], text: string | null): { out: string | null; err: string } {
  const dir = mkdtempSync(join(tmpdir(), 'aws-auth-edit-'))
  if (text !== null) writeFileSync(join(dir, MAP_ROLES_FILE), text)
  else writeFileSync(join(dir, MAP_ROLES_FILE), '') // --ignore-not-found prints nothing
  let err = ''
  try {
    execFileSync('sh', ['-c', commands[1]!], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (e) {
    err = String((e as { stderr?: Buffer }).stderr ?? '')
  }
  const file = join(dir, MAP_ROLES_EDITED)
  return { out: existsSync(file) ? readFileSync(file, 'utf8') : null, err }
}
const append = (text: string | null) => edit(awsAuthMappingCommands(NODE), text)

const SHAPES: [string, string | null, unknown[]][] = [
  ['absent ConfigMap (nothing read)', null, []],
  ['empty mapRoles ""', '', []],
  ['"[]" (terraform yamlencode of no roles)', '[]', []],
  ['"[]\\n" with spaces and a comment', '  [ ]  # none yet\n', []],
  [
    "eksctl's block list, no final newline",
    '- groups:\n  - system:masters\n  rolearn: arn:aws:iam::123456789012:role/Admin\n  username: admin',
    [ADMIN],
  ],
  [
    "terraform's quoted keys",
    '- "groups":\n  - "system:masters"\n  "rolearn": "arn:aws:iam::123456789012:role/Admin"\n  "username": "admin"\n',
    [ADMIN],
  ],
  [
    'a block string with comments and an indented list (AWS docs style)',
    '# managed by hand\n    - rolearn: arn:aws:iam::123456789012:role/Admin\n      username: admin\n      groups:\n        - system:masters\n# end\n',
    [ADMIN],
  ],
  [
    'a document start line',
    '---\n- rolearn: arn:aws:iam::123456789012:role/Admin\n  username: admin\n  groups: [system:masters]\n',
    [ADMIN],
  ],
]

for (const [name, text, before] of SHAPES) {
  test(`append the node mapping: ${name} → valid YAML, every entry kept, the node entry last`, () => {
    const { out, err } = append(text)
    assert.ok(out !== null, err)
    assert.deepEqual(parse(out), [...before, WANTED], out)
  })
}

test('a flow list with entries is refused in one line; no edited file is left to apply', () => {
  const { out, err } = append('[{rolearn: arn:aws:iam::123456789012:role/Admin, username: admin}]')
  assert.equal(out, null)
  assert.match(
    err,
    /^aws-auth mapRoles is not a block list: add the entry with kubectl -n kube-system edit configmap aws-auth\n$/,
  )
})

test('the read line drops an edited file an earlier run left, so a refused edit never applies', () => {
  assert.match(awsAuthMappingCommands(NODE)[0]!, new RegExp(`^rm -f ${MAP_ROLES_EDITED}; kubectl `))
  assert.match(awsAuthMappingCommands(NODE)[2]!, new RegExp(`--from-file=mapRoles=${MAP_ROLES_EDITED} `))
})

const setUser = (text: string) => edit(awsAuthUsernameCommands(NODE), text)

test('username: eksctl order (groups, rolearn, username), only that entry changes', () => {
  const text = [
    '- groups:',
    '  - system:masters',
    '  rolearn: arn:aws:iam::123456789012:role/Admin',
    '  username: admin:{{SessionName}}',
    '- groups:',
    '  - system:bootstrappers',
    '  - system:nodes',
    `  rolearn: ${NODE}`,
    '  username: system:node:{{SessionName}}',
    '- username: ops',
    '  rolearn: arn:aws:iam::123456789012:role/Ops',
    '  groups:',
    '  - system:masters',
  ].join('\n')
  const { out, err } = setUser(text)
  assert.equal(
    out,
    `${text.replace('  username: system:node:{{SessionName}}', `  username: ${USER}`)}\n`,
    err,
  )
})

test('username: written before the rolearn, and quoted (terraform), is found; the next entry is not touched', () => {
  const text = [
    `- "username": "system:node:{{SessionName}}"`,
    `  "rolearn": "${NODE}"`,
    '  "groups":',
    '  - "system:bootstrappers"',
    '  - "system:nodes"',
    '- "username": "ops"',
    '  "rolearn": "arn:aws:iam::123456789012:role/Ops"',
    '  "groups": ["system:masters"]',
    '',
  ].join('\n')
  const { out, err } = setUser(text)
  assert.ok(out !== null, err)
  assert.deepEqual(parse(out), [
    WANTED,
    { username: 'ops', rolearn: 'arn:aws:iam::123456789012:role/Ops', groups: ['system:masters'] },
  ])
})

test('username: no username line for the role is refused, no edited file', () => {
  const { out, err } = setUser(`- rolearn: ${NODE}\n  groups:\n  - system:nodes\n`)
  assert.equal(out, null)
  assert.match(
    err,
    /^no username of arn:aws:iam::123456789012:role\/KarpenterNodeRole-demo in aws-auth mapRoles: set it with kubectl/,
  )
})
