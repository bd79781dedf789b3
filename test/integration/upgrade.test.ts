// karpctl upgrade --dry-run on the HTTP-level mock of the `demo` cluster (test/helpers/mock-cluster.ts),
// run as a user runs it: a 1.0.14 install (its role holding 1.0.14's reference policy, webhook values)
// plans IAM first, then the CRDs, then the controller with its values migrated, and writes nothing; a
// cluster the target does not support is refused before any change, with the way out.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Config } from '@oclif/core'
import Upgrade from '../../src/commands/upgrade.js'
import { referencePolicies } from '../../src/desired/reference-policy.js'
import { repoRoot } from '../helpers/fixtures.js'
import {
  defaultReleaseValues,
  helmReleaseSecret,
  startMockCluster,
  type MockCluster,
  type MockState,
} from '../helpers/mock-cluster.js'

const CONTROLLER_ROLE = 'KarpenterControllerRole-demo'
let mock: MockCluster | undefined
after(() => mock?.stop())

/** The healthy mock made a getting-started 1.0.14 install (its role holds 1.0.14's policy inline). */
function v1014(s: MockState) {
  s.kube.helmSecrets = [
    helmReleaseSecret({
      chartVersion: '1.0.14',
      values: { ...defaultReleaseValues(), webhook: { enabled: true, port: 8443 } },
    }),
  ]
  const role = s.roles[CONTROLLER_ROLE]!
  role.attached = []
  const [policy] = referencePolicies('1.0.14', {
    partition: 'aws',
    region: 'us-west-2',
    accountId: '123456789012',
    clusterName: 'demo',
    nodeRoleArns: ['arn:aws:iam::123456789012:role/KarpenterNodeRole-demo'],
    queueArn: 'arn:aws:sqs:us-west-2:123456789012:demo',
  })
  role.inline = { [policy!.name]: policy!.document }
}

async function upgrade(mutate: (s: MockState) => void, extra: string[]) {
  mock?.stop()
  mock = startMockCluster({ mutate })
  const config = await Config.load(repoRoot)
  const out: string[] = []
  const err: string[] = []
  const write = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
  }
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write
  const exitCode = process.exitCode
  let error: (Error & { oclif?: { exit?: number } }) | undefined
  try {
    await Upgrade.run(['--cluster', 'demo', '--region', 'us-west-2', ...extra], config)
  } catch (e) {
    error = e as Error
  } finally {
    process.stdout.write = write.out
    process.stderr.write = write.err
  }
  const code = process.exitCode
  process.exitCode = exitCode
  // A run that ended in an error exits the process 250 ms later (base-command: queued reads must not
  // keep it alive); in this process that would end the test file, so that one exit is held here.
  if (code !== undefined && code !== 0) {
    const exit = process.exit
    process.exit = (() => undefined) as typeof process.exit
    await new Promise((resolve) => setTimeout(resolve, 400))
    process.exit = exit
  }
  const writes = mock
    .calls()
    .filter((c) => !/^(\w+:(Get|List|Describe|Simulate)|kube:GET|sts:GetCallerIdentity)/.test(c.op))
  return { stdout: out.join(''), stderr: err.join(''), code, error, writes: writes.map((c) => c.key) }
}

interface JsonStep {
  address: string
  action: string
  changes: { field: string; from: unknown; to: unknown }[]
  note?: string
  blocked?: string
}

test('1.0.14 → 1.14.1 --dry-run: IAM first, then the CRDs, then the controller with its values migrated; nothing written', async () => {
  const r = await upgrade(v1014, ['--dry-run', '--json'])
  assert.equal(r.error, undefined, `${r.error?.message}\n${r.stderr}`)
  assert.equal(r.code, undefined, r.stderr)
  assert.deepEqual(r.writes, [])
  const report = JSON.parse(r.stdout) as {
    from: string
    to: string
    plan: { steps: JsonStep[] }
    removableActions: string[]
  }
  assert.equal(report.from, '1.0.14')
  assert.equal(report.to, '1.14.1')
  const steps = report.plan.steps
  assert.deepEqual(
    steps.map((s) => s.address),
    [
      'precondition.version',
      'precondition.release',
      'precondition.kubernetes',
      'precondition.storage',
      'iam-role.controller',
      'crd-handover.karpenter-crd',
      'helm.karpenter-crd',
      'helm.karpenter',
      'ec2-ingress.webhook-8443',
    ],
  )
  for (const s of steps.filter((x) => x.address.startsWith('precondition.')))
    assert.equal(s.action, 'unchanged')
  const iam = steps.find((s) => s.address === 'iam-role.controller')!
  // A role karpctl did not create: one inline policy of karpctl's put, recorded as a repair.
  assert.equal(iam.action, 'create')
  assert.deepEqual(
    iam.changes.map((c) => [c.field, c.to]),
    [['policy', 'KarpctlUpgrade-1.14']],
  )
  assert.match(iam.note ?? '', /recorded as the karpctl\.io\/repaired-inline-policies tag/)
  assert.deepEqual(report.removableActions, ['ec2:DescribeAvailabilityZones'])
  // The mock answers no namespaced Secret list, so the release step observes no release of its own
  // (it reads as a create); the desired chart and values are what this test pins.
  const controller = steps.find((s) => s.address === 'helm.karpenter')! as JsonStep & {
    desired: { version: string; values: Record<string, unknown> }
  }
  assert.ok(controller.changes.some((c) => c.field === 'chart' && c.to === 'karpenter-1.14.1'))
  assert.equal(controller.desired.version, '1.14.1')
  assert.equal(controller.desired.values.webhook, undefined)
  assert.deepEqual(
    controller.desired.values.settings,
    (defaultReleaseValues() as { settings: unknown }).settings,
  )
  assert.match(controller.note ?? '', /values migrated from 1\.0\.14: webhook removed/)
})

test('the human plan names each precondition, and the statements only 1.0 needed', async () => {
  const r = await upgrade(v1014, ['--dry-run'])
  assert.equal(r.error, undefined, r.error?.message)
  assert.match(r.stdout, /^karpctl upgrade — cluster demo .*Karpenter 1\.0\.14 → 1\.14\.1/m)
  assert.match(r.stdout, /Preconditions\n {2}= unchanged precondition Karpenter 1\.0\.14 → 1\.14\.1/)
  assert.match(r.stdout, /note: .*nothing still writes v1beta1/)
  assert.match(r.stdout, /ec2:DescribeAvailabilityZones only Karpenter 1\.0\.14's template grants/)
  assert.deepEqual(r.writes, [])
})

test('a Kubernetes version the target does not support is refused before any change, with the way out', async () => {
  const r = await upgrade(
    (s) => {
      v1014(s)
      ;(s.cluster as { version: string }).version = '1.24'
      s.kube.version = { ...s.kube.version, minor: '24', gitVersion: 'v1.24.17-eks-1' }
    },
    ['--dry-run'],
  )
  assert.equal(r.code, 2)
  assert.match(
    r.stderr,
    /^Error: precondition Kubernetes 1\.24: Kubernetes 1\.24 is older than Karpenter 1\.14\.1 supports \(1\.25 – 1\.34\): upgrade the cluster first/,
  )
  assert.deepEqual(r.writes, [])
})

test('--to older than what runs is refused; a bad --to is an input error', async () => {
  const back = await upgrade(() => {}, ['--dry-run', '--to', '1.5.0'])
  assert.equal(back.code, 2)
  assert.match(back.stderr, /Karpenter 1\.14\.1 runs, newer than --to 1\.5\.0/)
  const bad = await upgrade(() => {}, ['--dry-run', '--to', '3.0.0'])
  assert.match(bad.stderr, /^Error: --to: /)
  assert.deepEqual([...back.writes, ...bad.writes], [])
})
