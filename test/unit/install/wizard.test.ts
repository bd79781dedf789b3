import assert from 'node:assert/strict'
import { test } from 'node:test'
import { discovery } from '../../helpers/discovery.js'
import { simulationArn } from '../../../src/plan/preflight.js'
import type { Prompter } from '../../../src/context/prompter.js'
import { installChoices } from '../../../src/install/wizard.js'

/** Answers questions in order, and records each question with its default. */
function scripted(answers: unknown[]): Prompter & { asked: { message: string; default?: unknown }[] } {
  const asked: { message: string; default?: unknown }[] = []
  const next = async (q: { message: string; default?: unknown }) => {
    asked.push({ message: q.message, default: q.default })
    if (answers.length === 0) throw new Error(`unexpected question: ${q.message}`)
    return answers.shift() as never
  }
  return { asked, select: next, checkbox: next, input: next, confirm: next }
}

test('without a terminal the defaults come from the cluster: Pod Identity with its agent, access entries when allowed', async () => {
  const c = await installChoices({}, discovery(), { prompter: null })
  assert.equal(c.identity, 'pod-identity')
  assert.equal(c.access, 'access-entry')
  assert.equal(c.karpenterVersion, '1.14.1')
  assert.equal(c.namespace, 'kube-system')
  assert.deepEqual(c.nodeRole, { create: true })
  assert.equal(c.interruption, true)
  assert.deepEqual(c.securityGroupIds, ['sg-cluster'])
  const old = await installChoices(
    {},
    discovery({
      podIdentityAgent: false,
      accessEntriesAllowed: false,
      cluster: { ...discovery().cluster, authenticationMode: 'CONFIG_MAP' },
    }),
    { prompter: null },
  )
  assert.equal(old.identity, 'irsa')
  assert.equal(old.access, 'aws-auth')
})

test('the wizard asks each question with the cluster-derived default, and takes the answers', async () => {
  const p = scripted([
    '1.13.0',
    'karpenter',
    'irsa',
    'arn:aws:iam::123456789012:role/ng-role',
    false,
    ['spot'],
    'm,c',
    ['arm64'],
    '64',
    '',
  ])
  const c = await installChoices({}, discovery(), { prompter: p })
  assert.deepEqual(
    p.asked.map((q) => [q.message.split(' (')[0], q.default]),
    [
      ['Karpenter version', '1.14.1'],
      ['Namespace for the controller', 'kube-system'],
      ['Controller identity', 'pod-identity'],
      ['Node IAM role', 'create'],
      ['Handle spot interruptions and health events', true],
      ['Default NodePool: capacity types', undefined],
      ['Default NodePool: instance categories', 'c,m,r'],
      ['Default NodePool: architectures', undefined],
      ['Default NodePool: CPU limit', '1000'],
      ['Extra Helm values file', ''],
    ],
  )
  assert.equal(c.karpenterVersion, '1.13.0')
  assert.equal(c.namespace, 'karpenter')
  assert.equal(c.identity, 'irsa')
  assert.deepEqual(c.nodeRole, { create: false, arn: 'arn:aws:iam::123456789012:role/ng-role' })
  assert.equal(c.access, 'aws-auth', 'a reused node group role already has access: not asked')
  assert.deepEqual(c.nodePool, {
    capacityTypes: ['spot'],
    instanceCategories: ['m', 'c'],
    architectures: ['arm64'],
    cpuLimit: 64,
  })
})

test('a flag answers its question: nothing is asked for what the flags give', async () => {
  const p = scripted([])
  await installChoices(
    {
      'karpenter-version': '1.14.1',
      namespace: 'kube-system',
      identity: 'irsa',
      'node-role': 'create',
      'node-access': 'aws-auth',
      interruption: true,
      'capacity-types': ['on-demand'],
      'instance-categories': ['c'],
      architectures: ['amd64'],
      'cpu-limit': 10,
      values: '',
    },
    discovery(),
    { prompter: p },
  )
  assert.equal(p.asked.length, 0)
})

test('bad flags are one clear error naming the flag', async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ 'karpenter-version': '0.37.0' }, /karpctl installs Karpenter v1.*--karpenter-version/],
    [{ 'karpenter-version': 'latest' }, /not a Karpenter version.*--karpenter-version/],
    [{ namespace: 'Kube_System' }, /not a Kubernetes namespace name.*--namespace/],
    [{ 'capacity-types': ['cheap'] }, /--capacity-types must be one of on-demand, spot, reserved/],
    [{ 'node-role': 'not a role!' }, /--node-role must be "create", a role name or a role ARN/],
    [{ 'cpu-limit': 0 }, /--cpu-limit 0 is not a whole number of cores from 1 to 1000000/],
    [
      { 'cpu-limit': 1180591620717411303424 },
      /--cpu-limit 1\.1805916207174113e\+21 is not a whole number of cores/,
    ],
    [{ 'instance-categories': ['M5'] }, /not an EC2 instance category/],
  ]
  for (const [flags, re] of bad)
    await assert.rejects(installChoices(flags, discovery(), { prompter: null }), re)
  await assert.rejects(
    installChoices(
      { identity: 'irsa' },
      discovery({ cluster: { ...discovery().cluster, oidcIssuer: undefined } }),
      { prompter: null },
    ),
    /has no OIDC issuer, which IRSA needs: use --identity pod-identity/,
  )
  await assert.rejects(
    installChoices(
      { 'node-access': 'access-entry' },
      discovery({
        accessEntriesAllowed: false,
        cluster: { ...discovery().cluster, authenticationMode: 'CONFIG_MAP' },
      }),
      { prompter: null },
    ),
    /authentication mode is CONFIG_MAP.*--node-access aws-auth/,
  )
  await assert.rejects(
    installChoices({}, discovery({ privateSubnetIds: [] }), { prompter: null }),
    /no private subnets.*--subnet-ids/,
  )
})

test('a running cluster-autoscaler: asked in a terminal, recorded in the choices', async () => {
  const d = discovery({
    clusterAutoscalers: [
      { namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 2, annotations: {}, args: [] },
    ],
  })
  const c = await installChoices(
    {
      'karpenter-version': '1.14.1',
      namespace: 'kube-system',
      identity: 'irsa',
      'node-role': 'create',
      'node-access': 'aws-auth',
      interruption: true,
      'capacity-types': ['spot'],
      'instance-categories': ['c'],
      architectures: ['amd64'],
      'cpu-limit': 1,
      values: '',
    },
    d,
    { prompter: scripted([true]) },
  )
  assert.deepEqual(c.scaleDownClusterAutoscaler, { namespace: 'kube-system', name: 'cluster-autoscaler' })
  const none = await installChoices({}, d, { prompter: null })
  assert.equal(none.scaleDownClusterAutoscaler, undefined, 'never without asking or the flag')
})

test('preflight simulates an assumed-role session as its role, skips root', () => {
  assert.equal(
    simulationArn('arn:aws:sts::123456789012:assumed-role/Admin/me@example.com'),
    'arn:aws:iam::123456789012:role/Admin',
  )
  assert.equal(simulationArn('arn:aws:iam::123456789012:user/ci'), 'arn:aws:iam::123456789012:user/ci')
  assert.equal(simulationArn('arn:aws:iam::123456789012:root'), null)
})
