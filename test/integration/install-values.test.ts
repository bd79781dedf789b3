// install --values on the HTTP-level mock of the `demo` cluster (test/helpers/mock-cluster.ts), the
// command run as a user runs it: the user's values file holds secrets, and none of them reaches what
// install prints — the human plan, --show-policies, --json, or --debug's stack — while the plan still
// shows every value key (the secrets as [REDACTED]).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { Config } from '@oclif/core'
import Install from '../../src/commands/install.js'
import { repoRoot } from '../helpers/fixtures.js'
import { startMockCluster, usePodIdentity, type MockCluster } from '../helpers/mock-cluster.js'

const SECRETS = {
  password: 'hunter2-never-shown',
  token: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  awsKey: 'zXcVbNmAsDfGhJkLqWeRtYuIoP1234567890abcd',
}

const VALUES = `controller:
  resources:
    requests:
      cpu: 500m
  env:
    - name: AWS_SECRET_ACCESS_KEY
      value: ${SECRETS.awsKey}
webhook:
  password: ${SECRETS.password}
gitToken: ${SECRETS.token}
`

let mock: MockCluster
let dir: string
let valuesFile: string

before(() => {
  // The healthy cluster runs on Pod Identity, installed without karpctl: --adopt uses it as it is.
  mock = startMockCluster({ mutate: usePodIdentity })
  dir = mkdtempSync(join(tmpdir(), 'karpctl-values-'))
  valuesFile = join(dir, 'values.yaml')
  writeFileSync(valuesFile, VALUES)
})

after(() => {
  mock.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** karpctl install in this process, its stdout and stderr captured (the mock is nock, in-process). */
async function install(extra: string[]) {
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
  try {
    await Install.run(
      [
        '--cluster',
        'demo',
        '--region',
        'us-west-2',
        '--identity',
        'pod-identity',
        '--adopt',
        '--values',
        valuesFile,
        ...extra,
      ],
      config,
    )
  } finally {
    process.stdout.write = write.out
    process.stderr.write = write.err
  }
  const code = process.exitCode
  process.exitCode = exitCode
  return { stdout: out.join(''), stderr: err.join(''), code }
}

function assertNoSecret(text: string, what: string) {
  for (const [name, secret] of Object.entries(SECRETS))
    assert.ok(!text.includes(secret), `${what} shows the ${name}`)
}

test('the human plan shows every value key of --values, the secrets as [REDACTED]', async () => {
  const r = await install(['--dry-run'])
  assert.equal(r.code, undefined, r.stderr)
  assert.match(r.stdout, /\+ create {4}Helm release kube-system\/karpenter\n/)
  assert.match(r.stdout, /\n {8}values\.controller\.resources\.requests\.cpu: 500m\n/)
  assert.match(r.stdout, /\n {8}values\.webhook\.password: \[REDACTED\]\n/)
  assert.match(r.stdout, /\n {8}values\.gitToken: \[REDACTED\]\n/)
  assert.match(
    r.stdout,
    /\n {8}values\.controller\.env\.0: \{name: AWS_SECRET_ACCESS_KEY, value: \[REDACTED\]\}\n/,
  )
  assertNoSecret(r.stdout + r.stderr, 'the plan')
})

test('--show-policies prints the values and the Kubernetes objects, the secrets redacted', async () => {
  const r = await install(['--dry-run', '--show-policies'])
  assert.match(r.stdout, /\n {14}"password": "\[REDACTED\]"/)
  assert.match(r.stdout, /\n {8}NodePool:\n {10}\{\n {12}"apiVersion": "karpenter\.sh\/v1",/)
  assertNoSecret(r.stdout + r.stderr, '--show-policies')
})

test('--json carries each value change with from and to, the secrets redacted', async () => {
  const r = await install(['--dry-run', '--json'])
  assertNoSecret(r.stdout + r.stderr, '--json')
  const plan = (
    JSON.parse(r.stdout) as { plan: { steps: { address: string; changes: unknown[]; desired: unknown }[] } }
  ).plan
  const helm = plan.steps.find((s) => s.address === 'helm.karpenter')
  assert.ok(helm)
  assert.deepEqual(
    helm.changes.find((c) => (c as { field: string }).field === 'values.webhook.password'),
    { field: 'values.webhook.password', from: null, to: '[REDACTED]' },
  )
  assert.deepEqual(
    helm.changes.find((c) => (c as { field: string }).field === 'values.controller.resources.requests.cpu'),
    { field: 'values.controller.resources.requests.cpu', from: null, to: '500m' },
  )
})

test('--debug: the plan and the error with its stack (no terminal to confirm on) show no secret', async () => {
  const r = await install(['--debug'])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /pass --yes to apply it without a terminal/)
  assert.match(r.stderr, /\n\s+at /, 'the stack --debug promises')
  assert.match(r.stdout, /values\.webhook\.password: \[REDACTED\]/)
  assertNoSecret(r.stdout + r.stderr, '--debug')
})
