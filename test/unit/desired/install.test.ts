import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import { parse, parseAllDocuments } from 'yaml'
import { installResources } from '../../../src/install/resources.js'
import {
  controllerPolicies,
  DEFAULT_NODEPOOL,
  hasWebhooks,
  installNames,
  type InstallSpec,
} from '../../../src/desired/install.js'
import { interruptionRules, queuePolicy } from '../../../src/desired/interruption.js'
import { defaultNodeClass, defaultNodePool, helmValues } from '../../../src/desired/karpenter.js'
import { shortenName } from '../../../src/desired/names.js'
import { irsaTrust } from '../../../src/desired/trust.js'
import { fixturePath } from '../../helpers/fixtures.js'

import { ISSUER, spec } from '../../helpers/install-spec.js'

const addresses = (s: InstallSpec) => installResources(s).map((r) => r.address)

test('names follow the getting-started conventions and are shortened deterministically past IAM limits', () => {
  const n = installNames(spec())
  assert.equal(n.controllerRoleName, 'KarpenterControllerRole-demo')
  assert.equal(n.nodeRoleArn, 'arn:aws:iam::123456789012:role/KarpenterNodeRole-demo')
  assert.equal(n.queueArn, 'arn:aws:sqs:us-west-2:123456789012:demo')
  assert.equal(
    n.oidcProviderArn,
    'arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABC',
  )
  const long = installNames(spec({ clusterName: 'c'.repeat(60) }))
  assert.equal(long.controllerRoleName.length, 64)
  assert.equal(
    long.controllerRoleName,
    installNames(spec({ clusterName: 'c'.repeat(60) })).controllerRoleName,
  )
  assert.match(long.controllerRoleName, /^KarpenterControllerRole-c+-[0-9a-f]{8}$/)
  assert.notEqual(shortenName('x'.repeat(70), 64), shortenName(`${'x'.repeat(69)}y`, 64))
  for (const r of interruptionRules('c'.repeat(60))) assert.ok(r.name.length <= 64, r.name)
})

test('IRSA install: OIDC provider, controller role, node role, aws-auth, queue + 5 rules, tags, two charts, NodeClass, NodePool', () => {
  assert.deepEqual(addresses(spec()), [
    'iam-oidc-provider.cluster',
    'iam-role.controller',
    'iam-role.node',
    'aws-auth.node',
    'iam-service-linked-role.spot',
    'sqs-queue.interruption',
    'events-rule.ScheduledChangeRule',
    'events-rule.SpotInterruptionRule',
    'events-rule.RebalanceRule',
    'events-rule.InstanceStateChangeRule',
    'events-rule.CapacityReservationInterruptionRule',
    'ec2-tags.discovery',
    'crd-handover.karpenter-crd',
    'helm.karpenter-crd',
    'helm.karpenter',
    'kube.ec2nodeclass.default',
    'kube.nodepool.default',
  ])
})

test('the CRD handover runs before the karpenter-crd release, for the CRDs the target chart holds', () => {
  const of = (s: InstallSpec) => {
    const rs = installResources(s)
    const handover = rs.find((r) => r.address === 'crd-handover.karpenter-crd')
    const crdRelease = rs.find((r) => r.address === 'helm.karpenter-crd')
    assert.deepEqual(crdRelease?.dependsOn, ['crd-handover.karpenter-crd'])
    return (handover?.desired.crds as string[]).slice().sort()
  }
  assert.ok(of(spec()).includes('capacitybuffers.autoscaling.x-k8s.io'))
  assert.deepEqual(of(spec({ chartDir: fixturePath('v1.0.14/charts'), karpenterVersion: '1.0.14' })), [
    'ec2nodeclasses.karpenter.k8s.aws',
    'nodeclaims.karpenter.sh',
    'nodepools.karpenter.sh',
  ])
})

test('Pod Identity, access entry, on-demand only, no interruption, reused node role: only what that needs', () => {
  const a = addresses(
    spec({
      identity: 'pod-identity',
      access: 'access-entry',
      interruption: false,
      nodePool: { ...DEFAULT_NODEPOOL, capacityTypes: ['on-demand'] },
    }),
  )
  assert.ok(a.includes('eks-pod-identity.controller') && a.includes('eks-access-entry.node'))
  for (const gone of [
    'iam-oidc-provider.cluster',
    'sqs-queue.interruption',
    'iam-service-linked-role.spot',
    'aws-auth.node',
  ])
    assert.ok(!a.includes(gone), gone)
  const reused = addresses(spec({ nodeRole: { create: false, arn: 'arn:aws:iam::123456789012:role/ng' } }))
  assert.ok(!reused.includes('iam-role.node') && !reused.includes('aws-auth.node'))
  const controller = installResources(spec({ interruption: false })).find(
    (r) => r.address === 'iam-role.controller',
  )
  assert.ok(!JSON.stringify(controller?.documents).includes('sqs:'), 'no queue permissions without a queue')
})

test('the 8443 rule only for webhook versions (v1.0.x), from the cluster SG to other node SGs', () => {
  assert.ok(hasWebhooks('1.0.14') && !hasWebhooks('1.1.0') && !hasWebhooks('1.14.1'))
  const s = spec({ karpenterVersion: '1.0.14', securityGroupIds: ['sg-cluster', 'sg-node'] })
  const rules = installResources(s).filter((r) => r.address.startsWith('ec2-ingress'))
  assert.deepEqual(
    rules.map((r) => r.desired),
    [{ groupId: 'sg-node', protocol: 'tcp', port: 8443, source: 'sg-cluster' }],
  )
  assert.ok(
    !addresses(spec({ securityGroupIds: ['sg-cluster', 'sg-node'] })).some((a) =>
      a.startsWith('ec2-ingress'),
    ),
  )
})

test('IRSA trust: StringEquals on the exact :sub and :aud, the one provider', () => {
  const t = irsaTrust('arn:p', ISSUER, 'karpenter', 'karpenter')
  assert.deepEqual(t.Statement[0]?.Condition, {
    StringEquals: {
      'oidc.eks.us-west-2.amazonaws.com/id/ABC:aud': 'sts.amazonaws.com',
      'oidc.eks.us-west-2.amazonaws.com/id/ABC:sub': 'system:serviceaccount:karpenter:karpenter',
    },
  })
  assert.deepEqual(t.Statement[0]?.Principal, { Federated: 'arn:p' })
})

test('Helm values: every annotation a string, the queue by name, the role by ARN only for IRSA', () => {
  const v = helmValues(spec()) as {
    serviceAccount: { annotations: Record<string, unknown> }
    settings: Record<string, unknown>
  }
  for (const [k, val] of Object.entries(v.serviceAccount.annotations)) assert.equal(typeof val, 'string', k)
  assert.equal(v.serviceAccount.annotations['eks.amazonaws.com/sts-regional-endpoints'], 'true')
  assert.deepEqual(v.settings, { clusterName: 'demo', interruptionQueue: 'demo' })
  const pi = helmValues(spec({ identity: 'pod-identity', interruption: false })) as Record<
    string,
    Record<string, unknown>
  >
  assert.equal(pi.serviceAccount?.annotations, undefined)
  assert.deepEqual(pi.settings, { clusterName: 'demo' })
})

test('the queue policy equals the reference template (EventBridge + SQS may send; DenyHTTP)', () => {
  const customTags = ['Sub', 'GetAtt', 'Ref'].map((t) => ({ tag: `!${t}`, resolve: (s: string) => s }))
  const tpl = parse(readFileSync(fixturePath('v1.14.1/cloudformation.yaml'), 'utf8'), { customTags }) as {
    Resources: Record<string, { Properties: { PolicyDocument: { Statement: Record<string, unknown>[] } } }>
  }
  const ref = tpl.Resources.KarpenterInterruptionQueuePolicy!.Properties.PolicyDocument
  const ours = queuePolicy('arn:aws:sqs:us-west-2:1:demo')
  assert.equal(ours.Statement.length, ref.Statement.length)
  for (const [i, s] of ref.Statement.entries()) {
    const mine = ours.Statement[i] as unknown as Record<string, unknown>
    assert.deepEqual(mine.Effect, s.Effect)
    assert.deepEqual(mine.Action, s.Action)
    assert.deepEqual(mine.Condition, s.Condition)
  }
})

function crdSchema(file: string) {
  const docs = parseAllDocuments(
    readFileSync(fixturePath(`v1.14.1/charts/karpenter-crd/templates/${file}`), 'utf8'),
  )
  const crd = docs.map((d) => d.toJS()).find((d) => d?.kind === 'CustomResourceDefinition') as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: object } }[] }
  }
  return crd.spec.versions.find((v) => v.name === 'v1')!.schema.openAPIV3Schema
}

test('the default EC2NodeClass and NodePool are valid against the real v1.14.1 CRD schemas', () => {
  const ajv = new Ajv({ strict: false, allErrors: true })
  for (const [file, obj] of [
    ['karpenter.k8s.aws_ec2nodeclasses.yaml', defaultNodeClass(spec())],
    [
      'karpenter.sh_nodepools.yaml',
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
    ],
  ] as const) {
    const validate = ajv.compile(crdSchema(file))
    assert.ok(validate(obj), `${file}: ${JSON.stringify(validate.errors)}`)
  }
  // …and the schema does catch a wrong object.
  const bad = defaultNodePool(spec()) as unknown as {
    spec: { template: { spec: { requirements: unknown[] } } }
  }
  bad.spec.template.spec.requirements.push({ key: 'x', operator: 'Sometimes' })
  assert.ok(!new Ajv({ strict: false }).compile(crdSchema('karpenter.sh_nodepools.yaml'))(bad))
})

test('install writes the controller policies of the version it installs: 1.0.14’s one policy, 1.14.1’s six', () => {
  const old = controllerPolicies(spec({ karpenterVersion: '1.0.14' }))
  assert.deepEqual(
    old.map((p) => p.name),
    [`KarpenterControllerPolicy-${spec().clusterName}`],
  )
  const actions = old.flatMap((p) => p.document.Statement).flatMap((s) => [s.Action ?? []].flat())
  assert.ok(actions.includes('ec2:DescribeAvailabilityZones'))
  assert.equal(controllerPolicies(spec({ karpenterVersion: '1.14.1' })).length, 6)
  assert.equal(controllerPolicies(spec({ karpenterVersion: '1.14.1', interruption: false })).length, 5)
})

test('the OIDC provider ARN drops only a leading https:// of the issuer', () => {
  // Kills: the https:// prefix removed anywhere in the issuer.
  assert.equal(
    installNames(spec({ oidcIssuer: 'oidc.example.com/https://x' })).oidcProviderArn,
    'arn:aws:iam::123456789012:oidc-provider/oidc.example.com/https://x',
  )
  assert.equal(installNames(spec({ oidcIssuer: undefined })).oidcProviderArn, undefined)
})

test("the controller may pass exactly the install's node role, plus the extra roles it is given", () => {
  // Kills: a default of extra node roles that is not empty.
  const passable = (extra?: string[]) =>
    controllerPolicies(spec(), extra)
      .flatMap((p) => p.document.Statement)
      .filter((s) => s.Action === 'iam:PassRole')
      .map((s) => s.Resource)
  assert.deepEqual(passable(), ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'])
  assert.deepEqual(passable(['arn:aws:iam::123456789012:role/other']), [
    ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo', 'arn:aws:iam::123456789012:role/other'],
  ])
})

test('a version no template matches gets the newest reference template instead of failing', () => {
  // Kills: `referenceFor(...)?.version` without the optional chain (a TypeError on null).
  assert.deepEqual(
    controllerPolicies(spec({ karpenterVersion: 'not-a-version' })),
    controllerPolicies(spec({ karpenterVersion: '1.14.1' })),
  )
})

test('webhooks: exactly major 1, minor 0, read as numbers from the start of the version', () => {
  // Kills: the version pattern unanchored; major or minor read as one digit.
  assert.equal(hasWebhooks('v1.0.5'), true)
  assert.equal(hasWebhooks('01.0.0'), true)
  assert.equal(hasWebhooks('1.00.0'), true)
  assert.equal(hasWebhooks('1.01.0'), false)
  assert.equal(hasWebhooks('x1.0.0'), false)
  assert.equal(hasWebhooks('11.0.0'), false)
})

test('the default NodePool: on-demand and spot, categories c, m, r, amd64, 1000 cores', () => {
  // Kills: any default choice emptied.
  assert.deepEqual(DEFAULT_NODEPOOL, {
    capacityTypes: ['on-demand', 'spot'],
    instanceCategories: ['c', 'm', 'r'],
    architectures: ['amd64'],
    cpuLimit: 1000,
  })
})
