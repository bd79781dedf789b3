import assert from 'node:assert/strict'
import { test } from 'node:test'
import { accessOf, nodePoolChoices, releaseChoices, wholeCores } from '../../../src/install/current.js'
import { installChoices } from '../../../src/install/wizard.js'
import { equivalentCommand, shellWord } from '../../../src/install/command-line.js'
import type { HelmRelease } from '../../../src/facts/types.js'
import { discovery } from '../../helpers/discovery.js'

const release = (values: Record<string, unknown>): HelmRelease => ({
  name: 'karpenter',
  namespace: 'karpenter',
  revision: 3,
  status: 'deployed',
  chartName: 'karpenter',
  chartVersion: '1.12.0',
  values,
  computedValues: values,
})

test('CPU limits read back in whole cores; anything else is no answer', () => {
  assert.equal(wholeCores('200'), 200)
  assert.equal(wholeCores(64), 64)
  assert.equal(wholeCores('8000m'), 8)
  assert.equal(wholeCores('1500m'), undefined)
  assert.equal(wholeCores('2Ki'), undefined)
  assert.equal(wholeCores('0'), undefined)
  assert.equal(wholeCores(undefined), undefined)
})

test("the default NodePool's requirements and limit are its choices; an Exists or empty requirement is not", () => {
  assert.deepEqual(
    nodePoolChoices({
      spec: {
        template: {
          spec: {
            requirements: [
              { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
              { key: 'karpenter.k8s.aws/instance-category', operator: 'Exists' },
              { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['2'] },
            ],
          },
        },
        limits: { cpu: '200' },
      },
    }),
    { capacityTypes: ['spot'], architectures: ['arm64'], cpuLimit: 200 },
  )
  assert.deepEqual(nodePoolChoices(null), {})
})

test('identity and interruption as the release runs them', () => {
  assert.deepEqual(
    releaseChoices(
      release({
        serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' } },
        settings: { interruptionQueue: 'demo' },
      }),
    ),
    { identity: 'irsa', interruption: true },
  )
  assert.deepEqual(releaseChoices(release({ settings: { interruptionQueue: '' } })), {
    identity: 'pod-identity',
    interruption: false,
  })
})

test('a node role mapped in aws-auth joins through it; another role of the same prefix does not count', () => {
  const mapRoles =
    '- rolearn: arn:aws:iam::1:role/KarpenterNodeRole-demo\n  username: system:node:{{EC2PrivateDNSName}}\n'
  assert.equal(accessOf(mapRoles, 'KarpenterNodeRole-demo'), 'aws-auth')
  assert.equal(accessOf(mapRoles, 'KarpenterNodeRole-dem'), 'access-entry')
  assert.equal(
    accessOf('- rolearn: "arn:aws:iam::1:role/path/KarpenterNodeRole-demo"', 'KarpenterNodeRole-demo'),
    'aws-auth',
  )
  assert.equal(accessOf(undefined, 'KarpenterNodeRole-demo'), 'access-entry')
})

test("a re-run's defaults are the running install's settings, and flags still win", async () => {
  const d = discovery({
    current: {
      karpenterVersion: '1.12.0',
      namespace: 'karpenter',
      identity: 'irsa',
      interruption: false,
      nodeRole: 'create',
      access: 'aws-auth',
      nodePool: { cpuLimit: 200, capacityTypes: ['spot'] },
    },
  })
  const c = await installChoices({}, d, { prompter: null })
  assert.equal(c.karpenterVersion, '1.12.0')
  assert.equal(c.namespace, 'karpenter')
  assert.equal(c.identity, 'irsa')
  assert.equal(c.interruption, false)
  assert.equal(c.access, 'aws-auth')
  assert.deepEqual(c.nodePool, {
    capacityTypes: ['spot'],
    instanceCategories: ['c', 'm', 'r'],
    architectures: ['amd64'],
    cpuLimit: 200,
  })
  const flagged = await installChoices({ 'cpu-limit': 300, identity: 'pod-identity' }, d, { prompter: null })
  assert.equal(flagged.nodePool.cpuLimit, 300)
  assert.equal(flagged.identity, 'pod-identity')
  // A role the default EC2NodeClass uses that is not karpctl's own stays the default.
  const reused = await installChoices({}, discovery({ current: { ...d.current!, nodeRole: 'ng-role' } }), {
    prompter: null,
  })
  assert.deepEqual(reused.nodeRole, { create: false, arn: 'arn:aws:iam::123456789012:role/ng-role' })
})

test("a Karpenter version that does not run on the cluster's Kubernetes is refused before any change", async () => {
  await assert.rejects(installChoices({ 'karpenter-version': '1.0.14' }, discovery(), { prompter: null }), {
    code: 'UNSUPPORTED_VERSION',
    message:
      'Karpenter 1.0.14 supports Kubernetes 1.25–1.31, and cluster demo runs 1.34: choose 1.7.0 or newer (https://karpenter.sh/docs/upgrading/compatibility/) — nothing was changed',
  })
  const ok = await installChoices({ 'karpenter-version': '1.7.0' }, discovery(), { prompter: null })
  assert.equal(ok.karpenterVersion, '1.7.0')
})

test('no identity the cluster can take: refused with the add-on to add', async () => {
  await assert.rejects(
    installChoices(
      {},
      discovery({ podIdentityAgent: false, cluster: { ...discovery().cluster, oidcIssuer: undefined } }),
      { prompter: null },
    ),
    {
      code: 'NO_IDENTITY',
      message: /aws eks create-addon --cluster-name demo --addon-name eks-pod-identity-agent/,
    },
  )
})

test('the equivalent command spells out every answer and reads back in a shell', () => {
  const c = {
    karpenterVersion: '1.14.1',
    namespace: 'kube-system',
    serviceAccount: 'karpenter',
    identity: 'irsa' as const,
    nodeRole: { create: true as const },
    access: 'aws-auth' as const,
    interruption: false,
    nodePool: {
      capacityTypes: ['spot'],
      instanceCategories: ['c', 'm'],
      architectures: ['arm64'],
      cpuLimit: 200,
    },
    subnetIds: ['subnet-a', 'subnet-b'],
    securityGroupIds: ['sg-1'],
    extraValuesFile: 'my values.yaml',
    adopt: false,
  }
  assert.equal(
    equivalentCommand(
      'karpctl',
      { clusterName: 'demo', region: 'us-west-2', kubeContext: 'arn:aws:eks:us-west-2:1:cluster/demo' },
      c,
      {
        'subnet-ids': ['subnet-a', 'subnet-b'],
      },
    ),
    "karpctl install --cluster demo --region us-west-2 --kube-context arn:aws:eks:us-west-2:1:cluster/demo --karpenter-version 1.14.1 --namespace kube-system --identity irsa --node-role create --node-access aws-auth --no-interruption --capacity-types spot --instance-categories c,m --architectures arm64 --cpu-limit 200 --subnet-ids subnet-a,subnet-b --values 'my values.yaml' --yes",
  )
  assert.equal(shellWord("it's"), `'it'\\''s'`)
})

test('the wizard offers no choice the cluster cannot take, and checks a values file as it is typed', async () => {
  const selects: { message: string; choices: { value: unknown; disabled?: string }[] }[] = []
  const validations: (true | string)[] = []
  const answers: unknown[] = [
    '1.14.1',
    'kube-system',
    'irsa',
    'create',
    'aws-auth',
    true,
    ['spot'],
    'c',
    ['amd64'],
    '10',
    '',
  ]
  const next = async (_q: { message: string }) => answers.shift() as never
  const prompter = {
    select: async (q: { message: string; choices: { value: unknown; disabled?: string }[] }) => {
      selects.push(q)
      return next(q)
    },
    checkbox: next,
    confirm: next,
    input: async (q: {
      message: string
      validate?: (v: string) => true | string | Promise<true | string>
    }) => {
      if (q.message.startsWith('Extra Helm values')) {
        validations.push(await q.validate!('/nonexistent/values.yaml'), await q.validate!(''))
      }
      return next(q)
    },
  }
  await installChoices(
    {},
    discovery({
      podIdentityAgent: false,
      accessEntriesAllowed: false,
      cluster: { ...discovery().cluster, authenticationMode: 'CONFIG_MAP' },
      nodegroupRoles: [{ nodegroup: 'ng', roleArn: 'arn:aws:iam::123456789012:role/ng-role' }],
    }),
    { prompter },
  )
  const disabled = (m: RegExp) =>
    Object.fromEntries(
      (selects.find((s) => m.test(s.message))?.choices ?? []).map((c) => [
        String(c.value),
        c.disabled ?? null,
      ]),
    )
  assert.deepEqual(disabled(/identity/), {
    'pod-identity': '(install the eks-pod-identity-agent add-on first)',
    irsa: null,
  })
  assert.deepEqual(disabled(/cluster access/), {
    'access-entry': '(authentication mode CONFIG_MAP does not allow it)',
    'aws-auth': null,
  })
  assert.deepEqual(validations, [
    'values file "/nonexistent/values.yaml" does not exist: check the path',
    true,
  ])
})
