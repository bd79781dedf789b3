// The PassRole grant a tenant adds to the controller role: exactly the tenant's node role, passed to
// EC2 only; nothing wider (another tenant's role, one whose name begins with it, the install's node
// role, another service, another action). Pinned on the document, on the plan step that writes it,
// and on what IAM's logic (the local evaluator) makes of it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PolicyDocument } from '../../../src/policy/types.js'
import { evaluate } from '../../../src/policy/evaluate.js'
import { EC2_SERVICES } from '../../../src/desired/controller-policy.js'
import { tenantNames, tenantPassRolePolicy, type TenantSpec } from '../../../src/desired/tenant.js'
import { tenantAddResources } from '../../../src/tenant/tenant.js'
import { tenantSpec } from '../../helpers/tenant-spec.js'

// A tenant of an eksctl-style install (controller role demo-karpenter) reached through access entries.
const spec = (over: Partial<TenantSpec> = {}): TenantSpec =>
  tenantSpec({
    nodePool: {
      capacityTypes: ['on-demand'],
      architectures: ['amd64'],
      consolidationPolicy: 'WhenEmpty',
      consolidateAfter: '5m',
    },
    access: 'access-entry',
    controllerRoleName: 'demo-karpenter',
    base: { subnetSelectorTerms: [], securityGroupSelectorTerms: [], amiSelectorTerms: [] },
    ...over,
  })

const role = (name: string, partition = 'aws') => `arn:${partition}:iam::123456789012:role/${name}`

test("the grant is one Allow of iam:PassRole on exactly the tenant role's ARN, with iam:PassedToService EC2 only", () => {
  // Kills: a list or a wildcard as the Resource; the condition dropped or widened; another action.
  const arn = role('KarpenterNodeRole-demo-acme')
  const doc = tenantPassRolePolicy(arn)
  assert.deepEqual(doc, {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPassingTenantInstanceRole',
        Effect: 'Allow',
        Resource: arn,
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
      },
    ],
  })
  assert.deepEqual(EC2_SERVICES, ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'])
})

function grantOf(s: TenantSpec): {
  doc: PolicyDocument
  roleName: unknown
  permissionOn: string | undefined
} {
  const step = tenantAddResources(s).find((r) => r.address === 'iam-policy.tenant-passrole')
  assert.ok(step)
  const docs = step.documents ?? {}
  assert.deepEqual(Object.keys(docs), [`KarpctlTenantPassRole-${s.tenant}`])
  return {
    doc: docs[`KarpctlTenantPassRole-${s.tenant}`] as PolicyDocument,
    roleName: step.desired.role,
    permissionOn: step.permissions[0]?.resource,
  }
}

test("tenant add writes that grant for the tenant's own role, on the install's controller role", () => {
  // Kills: the grant built from the controller's or the install node role's ARN instead of the tenant's.
  for (const partition of ['aws', 'aws-cn']) {
    const s = spec({ partition })
    const g = grantOf(s)
    assert.equal(tenantNames(s).roleArn, role('KarpenterNodeRole-demo-acme', partition))
    assert.deepEqual(g.doc, tenantPassRolePolicy(role('KarpenterNodeRole-demo-acme', partition)))
    assert.equal(g.roleName, 'demo-karpenter')
    assert.equal(g.permissionOn, role('demo-karpenter', partition))
  }
})

test('IAM logic on the grant: the tenant role to EC2 is allowed; any other role, service or action is not', () => {
  const doc = grantOf(spec()).doc
  const decide = (action: string, resource: string, service?: string) =>
    evaluate([doc], {
      action,
      resource,
      context: service ? { 'iam:PassedToService': service } : {},
    }).decision
  const acme = role('KarpenterNodeRole-demo-acme')
  assert.equal(decide('iam:PassRole', acme, 'ec2.amazonaws.com'), 'allowed')
  const refused: [string, string, string | undefined][] = [
    ['iam:PassRole', acme, 'eks.amazonaws.com'],
    ['iam:PassRole', acme, 'lambda.amazonaws.com'],
    ['iam:PassRole', acme, 'ssm.amazonaws.com'],
    ['iam:PassRole', acme, undefined],
    ['iam:PassRole', role('KarpenterNodeRole-demo-acme-eu'), 'ec2.amazonaws.com'],
    ['iam:PassRole', role('KarpenterNodeRole-demo-beta'), 'ec2.amazonaws.com'],
    ['iam:PassRole', role('KarpenterNodeRole-demo'), 'ec2.amazonaws.com'],
    ['iam:PassRole', role('demo-karpenter'), 'ec2.amazonaws.com'],
    ['iam:PassRole', 'arn:aws:iam::210987654321:role/KarpenterNodeRole-demo-acme', 'ec2.amazonaws.com'],
    ['iam:CreateRole', acme, 'ec2.amazonaws.com'],
    ['iam:AttachRolePolicy', acme, undefined],
  ]
  for (const [action, resource, service] of refused)
    assert.equal(
      decide(action, resource, service),
      'implicitDeny',
      `${action} ${resource} ${service ?? '(no service)'}`,
    )
})
