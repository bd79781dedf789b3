import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ebsKmsKey } from '../../../src/checks/ebs-kms-key.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Facts, RoleFacts } from '../../../src/facts/types.js'
import type { PolicyDocument, PolicyStatement } from '../../../src/policy/types.js'
import {
  ACCOUNT,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  failed,
  healthyFacts,
  kmsUseStatements,
  NODE_ROLE,
  NODE_ROLE_ARN,
  ok,
  REGION,
} from '../../helpers/facts.js'
import {
  ACCOUNT_ROOT as ROOT,
  bySubject,
  customerKey,
  KEY_ALIAS as ALIAS,
  KEY_ARN,
  KEY_ID,
  keyAdmin as admin,
  policyDoc as doc,
  rootStatement,
  VIA_EC2,
  withKey,
} from '../../helpers/check-fixtures.js'

/** What Karpenter's troubleshooting guide puts on the key: any principal of the account, through EC2. */
const throughEc2: PolicyStatement = {
  Sid: 'Allow access through EBS for all principals in the account that are authorized to use EBS',
  Effect: 'Allow',
  Principal: { AWS: '*' },
  Action: [
    'kms:Encrypt',
    'kms:Decrypt',
    'kms:ReEncrypt*',
    'kms:GenerateDataKey*',
    'kms:CreateGrant',
    'kms:DescribeKey',
  ],
  Resource: '*',
  Condition: { StringEquals: { 'kms:CallerAccount': ACCOUNT, 'kms:ViaService': VIA_EC2 } },
}

/** Both roles named, with the actions and conditions ebs-kms-key's fix writes. */
const named = (principals: string[]) => kmsUseStatements(principals)

const role = (f: Facts, name: string): RoleFacts => {
  const r = f.iam.roles[name]
  assert.ok(r?.ok && r.value)
  return r.value
}

const grantInline = (name: string, statements: PolicyStatement[]) => (f: Facts) => {
  const r = role(f, name)
  assert.ok(r.inline.ok)
  r.inline = ok([...r.inline.value, { name: 'kms', document: doc(...statements) }])
}

const iamKmsStatement: PolicyStatement = {
  Effect: 'Allow',
  Action: ['kms:CreateGrant', 'kms:GenerateDataKeyWithoutPlaintext', 'kms:Decrypt'],
  Resource: KEY_ARN,
}

const run = (f: Facts) => runCheck(ebsKmsKey, f)

test('no kmsKeyID in any EC2NodeClass: skipped, saying why', () => {
  const r = run(healthyFacts())
  assert.equal(r.status, 'skipped')
  assert.match(r.findings[0]!.message, /no EC2NodeClass sets blockDeviceMappings\[\]\.ebs\.kmsKeyID/)
})

test('a blockDeviceMapping without kmsKeyID (encrypted with the default key) is skipped too', () => {
  const r = run(
    healthyFacts((f) => {
      if (f.kube.nodeClasses.ok)
        f.kube.nodeClasses.value[0]!.spec.blockDeviceMappings = [
          { deviceName: '/dev/xvda', ebs: { encrypted: true } },
        ]
    }),
  )
  assert.equal(r.status, 'skipped')
})

test('a snapshot without KMS facts: unknown, never pass', () => {
  const r = run(withKey(customerKey(doc(throughEc2)), (f) => delete f.kms))
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /KMS keys were not collected/)
})

test("the key policy of Karpenter's guide (any principal of the account, through EC2): both roles pass", () => {
  const r = run(withKey(customerKey(doc(rootStatement, throughEc2))))
  assert.equal(r.status, 'pass', JSON.stringify(r.findings, null, 1))
  assert.equal(r.findings.length, 2)
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.match(c.message, /controller role .* may use KMS key .* allowed by the key policy/)
  assert.ok(c.caveats?.some((x) => /grants on the key .* are not read/.test(x)))
  bySubject(r.findings, NODE_ROLE_ARN)
})

test('kms:ViaService of another service: the EC2 launch does not match, the controller fails', () => {
  const other = {
    ...throughEc2,
    Condition: {
      StringEquals: { 'kms:CallerAccount': ACCOUNT, 'kms:ViaService': `rds.${REGION}.amazonaws.com` },
    },
  }
  const r = run(withKey(customerKey(doc(admin, other))))
  assert.equal(r.status, 'fail')
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'fail')
})

test('kms:CallerAccount of another account: fails', () => {
  const other = {
    ...throughEc2,
    Condition: { StringEquals: { 'kms:CallerAccount': '999999999999', 'kms:ViaService': VIA_EC2 } },
  }
  const r = run(withKey(customerKey(doc(admin, other))))
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'fail')
})

test('CreateGrant only when the grant is NOT for an AWS resource: CreateGrant is missing', () => {
  const statements = named([CONTROLLER_ROLE_ARN, NODE_ROLE_ARN])
  statements[1]!.Condition = { Bool: { 'kms:GrantIsForAWSResource': 'false' } }
  const r = run(withKey(customerKey(doc(admin, ...statements))))
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'fail')
  assert.match(c.message, /for kms:CreateGrant:/)
  assert.doesNotMatch(c.message, /kms:Decrypt/)
})

test('key policy names the controller only: controller passes, the node role is a warning (with a fix)', () => {
  const r = run(withKey(customerKey(doc(admin, ...named([CONTROLLER_ROLE_ARN])))))
  assert.equal(r.status, 'warn')
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'pass')
  const n = bySubject(r.findings, NODE_ROLE_ARN)
  assert.equal(n.status, 'warn')
  assert.match(
    n.message,
    /node role KarpenterNodeRole-demo \(EC2NodeClass default\) may not use KMS key .* for kms:CreateGrant, kms:GenerateDataKeyWithoutPlaintext, kms:Decrypt/,
  )
  assert.match(
    n.fix!.commands![0]!,
    /^aws kms put-key-policy --key-id arn:aws:kms:us-west-2:123456789012:key\/1234abcd/,
  )
})

test('key policy names neither role and does not defer to IAM: the controller fails; the fix, applied, passes', () => {
  const policy = doc(admin)
  const r = run(withKey(customerKey(policy)))
  assert.equal(r.status, 'fail')
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.match(c.message, /the key policy does not allow it and does not let IAM policies grant it/)
  assert.match(c.message, /terminates each one at launch/)
  const command = c.fix!.commands![0]!
  // The same command on both findings: running one or both ends with the same policy.
  assert.equal(bySubject(r.findings, NODE_ROLE_ARN).fix!.commands![0], command)
  const fixed = JSON.parse(/--policy '(.*)' --region/.exec(command)![1]!) as PolicyDocument
  assert.deepEqual(fixed.Statement[0], admin, 'existing statements are kept')
  const after = run(withKey(customerKey(fixed)))
  assert.equal(after.status, 'pass', JSON.stringify(after.findings, null, 1))
})

test('default key policy (root kms:*): IAM decides; the controller policy grants no KMS, so it fails with an IAM fix that works', () => {
  const r = run(withKey(customerKey(doc(rootStatement))))
  assert.equal(r.status, 'fail')
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.match(c.message, /neither the key policy nor its IAM policies allow it/)
  const command = c.fix!.commands![0]!
  assert.match(
    command,
    /^aws iam put-role-policy --role-name KarpenterControllerRole-demo --policy-name KarpenterEbsKmsKey-1234abcd --policy-document '/,
  )
  const statements = (JSON.parse(/--policy-document '(.*)'$/.exec(command)![1]!) as PolicyDocument).Statement
  assert.ok(
    statements.every((s) => s.Resource === KEY_ARN),
    'scoped to the key',
  )
  const after = run(
    withKey(customerKey(doc(rootStatement)), (f) => {
      grantInline(CONTROLLER_ROLE, statements)(f)
      grantInline(NODE_ROLE, statements)(f)
    }),
  )
  assert.equal(after.status, 'pass', JSON.stringify(after.findings, null, 1))
  assert.match(bySubject(after.findings, CONTROLLER_ROLE_ARN).message, /allowed by its IAM policies/)
})

test('IAM grants the key but the key policy does not defer to IAM: still fails (the key policy decides)', () => {
  const r = run(withKey(customerKey(doc(admin)), grantInline(CONTROLLER_ROLE, [iamKmsStatement])))
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'fail')
})

test('the root statement grants only kms:Describe*: IAM cannot grant Decrypt, fails', () => {
  const narrowRoot = { ...rootStatement, Action: 'kms:Describe*' }
  const r = run(withKey(customerKey(doc(narrowRoot)), grantInline(CONTROLLER_ROLE, [iamKmsStatement])))
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'fail')
})

test('the account id as principal enables IAM like the root ARN', () => {
  const byId = { ...rootStatement, Principal: { AWS: ACCOUNT } }
  const r = run(withKey(customerKey(doc(byId)), grantInline(CONTROLLER_ROLE, [iamKmsStatement])))
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'pass')
})

test('a permissions boundary without kms: the IAM allow is void, fails', () => {
  const r = run(
    withKey(customerKey(doc(rootStatement)), (f) => {
      grantInline(CONTROLLER_ROLE, [iamKmsStatement])(f)
      const c = role(f, CONTROLLER_ROLE)
      c.role.permissionsBoundaryArn = `arn:aws:iam::${ACCOUNT}:policy/Boundary`
      c.boundary = {
        arn: c.role.permissionsBoundaryArn,
        name: 'Boundary',
        document: doc({ Effect: 'Allow', Action: 'ec2:*', Resource: '*' }),
      }
    }),
  )
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'fail')
})

test('an IAM Deny wins over the key policy that names the role', () => {
  const deny: PolicyStatement = { Sid: 'NoKms', Effect: 'Deny', Action: 'kms:CreateGrant', Resource: '*' }
  const r = run(
    withKey(
      customerKey(doc(admin, ...named([CONTROLLER_ROLE_ARN, NODE_ROLE_ARN]))),
      grantInline(CONTROLLER_ROLE, [deny]),
    ),
  )
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'fail')
  assert.match(c.message, /explicitly denied by NoKms/)
  assert.equal(c.fix, undefined, 'no statement to add fixes an explicit deny')
})

test('a key policy Deny on the account covers the role', () => {
  const deny: PolicyStatement = {
    Sid: 'DenyDecrypt',
    Effect: 'Deny',
    Principal: { AWS: ROOT },
    Action: 'kms:Decrypt',
    Resource: '*',
  }
  const r = run(withKey(customerKey(doc(rootStatement, throughEc2, deny))))
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'fail')
  assert.match(c.message, /for kms:Decrypt: explicitly denied by DenyDecrypt/)
})

test('a condition on a key karpctl does not know (aws:PrincipalOrgID): unknown, not pass and not fail', () => {
  const org = { ...throughEc2, Condition: { StringEquals: { 'aws:PrincipalOrgID': 'o-abc123' } } }
  const r = run(withKey(customerKey(doc(admin, org))))
  assert.equal(r.status, 'unknown')
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'unknown')
  assert.match(c.message, /aws:PrincipalOrgID/)
})

test('a Deny on an encryption-context key karpctl cannot know: unknown, not fail', () => {
  const deny: PolicyStatement = {
    Sid: 'OnlyEbs',
    Effect: 'Deny',
    Principal: '*',
    Action: 'kms:Decrypt',
    Resource: '*',
    Condition: { StringNotLike: { 'kms:EncryptionContext:aws:ebs:id': 'vol-*' } },
  }
  const r = run(withKey(customerKey(doc(rootStatement, throughEc2, deny))))
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'unknown')
})

test('NotPrincipal is not evaluated: unknown when nothing else allows', () => {
  const np: PolicyStatement = { Effect: 'Allow', NotPrincipal: { AWS: ROOT }, Action: 'kms:*', Resource: '*' }
  const r = run(withKey(customerKey(doc(admin, np))))
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'unknown')
  assert.match(c.message, /NotPrincipal/)
})

test('the node role policies could not be read and the key policy defers to IAM: unknown for the node role', () => {
  const r = run(
    withKey(customerKey(doc(rootStatement)), (f) => {
      grantInline(CONTROLLER_ROLE, [iamKmsStatement])(f)
      role(f, NODE_ROLE).attached = failed('iam:ListAttachedRolePolicies KarpenterNodeRole-demo')
    }),
  )
  assert.equal(bySubject(r.findings, CONTROLLER_ROLE_ARN).status, 'pass')
  assert.equal(bySubject(r.findings, NODE_ROLE_ARN).status, 'unknown')
})

test("another account's key: its policy naming the role is not enough, IAM must allow too", () => {
  const arn = `arn:aws:kms:${REGION}:999999999999:key/${KEY_ID}`
  const key = customerKey(doc(...named([CONTROLLER_ROLE_ARN, NODE_ROLE_ARN])), {
    arn,
    accountId: '999999999999',
  })
  const r = run(withKey(key))
  const c = bySubject(r.findings, CONTROLLER_ROLE_ARN)
  assert.equal(c.status, 'fail')
  assert.match(c.fix!.summary, /the key is in account 999999999999/)
  const withIam = run(withKey(key, grantInline(CONTROLLER_ROLE, [{ ...iamKmsStatement, Resource: arn }])))
  assert.equal(bySubject(withIam.findings, CONTROLLER_ROLE_ARN).status, 'pass')
})

test('an AWS managed key (aws/ebs): pass without reading a key policy', () => {
  const r = run(
    withKey(
      { arn: KEY_ARN, keyId: KEY_ID, accountId: ACCOUNT, keyManager: 'AWS', keyState: 'Enabled' },
      undefined,
      'alias/aws/ebs',
    ),
  )
  assert.equal(r.status, 'pass')
  assert.match(r.findings[0]!.message, /AWS managed key/)
})

test('the key does not exist: fail', () => {
  const r = run(withKey(null))
  assert.equal(r.status, 'fail')
  assert.match(
    r.findings[0]!.message,
    /KMS key alias\/karpenter-ebs \(kmsKeyID of EC2NodeClass default\) does not exist/,
  )
})

test('a disabled key fails with enable-key; one pending deletion with cancel-key-deletion first', () => {
  const disabled = run(withKey(customerKey(doc(throughEc2), { keyState: 'Disabled' })))
  assert.equal(disabled.status, 'fail')
  assert.deepEqual(disabled.findings[0]!.fix!.commands, [
    `aws kms enable-key --key-id ${KEY_ARN} --region ${REGION}`,
  ])
  const pending = run(withKey(customerKey(doc(throughEc2), { keyState: 'PendingDeletion' })))
  assert.equal(pending.status, 'fail')
  assert.match(pending.findings[0]!.fix!.commands![0]!, /^aws kms cancel-key-deletion/)
  // An AWS managed key that is not Enabled is judged on its state too.
  const aws = run(
    withKey({ arn: KEY_ARN, keyId: KEY_ID, accountId: ACCOUNT, keyManager: 'AWS', keyState: 'Disabled' }),
  )
  assert.equal(aws.status, 'fail')
})

test('DescribeKey or GetKeyPolicy denied: unknown with the reason', () => {
  const r = run(
    healthyFacts((f) => {
      if (f.kube.nodeClasses.ok)
        f.kube.nodeClasses.value[0]!.spec.blockDeviceMappings = [{ ebs: { kmsKeyID: ALIAS } }]
      f.kms = { keys: { [ALIAS]: failed(`kms:DescribeKey ${ALIAS}`) } }
    }),
  )
  assert.equal(r.status, 'unknown')
  assert.match(r.findings[0]!.message, /permission denied/)
  const p = run(withKey(customerKey(doc(), { policy: failed(`kms:GetKeyPolicy ${KEY_ARN}`) })))
  assert.equal(p.status, 'unknown')
  assert.match(p.findings[0]!.message, /key policy of .*permission denied/)
})

test('the controller role was not discovered: unknown for it, the node role still judged', () => {
  const r = run(withKey(customerKey(doc(throughEc2)), (f) => (f.iam.controllerRoleName = null)))
  assert.equal(r.status, 'unknown')
  assert.equal(bySubject(r.findings, NODE_ROLE_ARN).status, 'pass')
})

test('an alias and the ARN of one key in two NodeClasses: judged once, naming both', () => {
  const r = run(
    withKey(customerKey(doc(throughEc2)), (f) => {
      assert.ok(f.kube.nodeClasses.ok)
      const first = f.kube.nodeClasses.value[0]!
      f.kube.nodeClasses.value.push({
        ...first,
        metadata: { name: 'gpu' },
        spec: { ...first.spec, blockDeviceMappings: [{ ebs: { kmsKeyID: KEY_ARN } }] },
      })
      f.kms!.keys[KEY_ARN] = ok(customerKey(doc(throughEc2)))
    }),
  )
  assert.equal(r.findings.length, 2)
  assert.match(bySubject(r.findings, NODE_ROLE_ARN).message, /EC2NodeClass default, gpu/)
})
