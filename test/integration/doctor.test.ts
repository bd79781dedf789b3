// doctor end to end against the HTTP-level mock of the healthy `demo` cluster (test/helpers/mock-cluster.ts):
// the real collector, the real AWS SDK clients and Kubernetes client, the real catalog. Each test breaks
// one thing on the wire and checks that the checks that need it say so — and that nothing passes on
// data that was never read.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import nock from 'nock'
import type { CheckResult, Status } from '../../src/checks/types.js'
import type { PolicyStatement } from '../../src/policy/types.js'
import { CallLog } from '../../src/context/limiter.js'
import { createRunContext } from '../../src/context/run-context.js'
import { doctor, type DoctorOutcome } from '../../src/doctor/doctor.js'
import { findExisting } from '../../src/install/existing.js'
import { EnvironmentError } from '../../src/errors.js'
import {
  CLUSTER,
  CONTROLLER_ROLE,
  CONTROLLER_ROLE_ARN,
  NODE_ROLE,
  NODE_ROLE_ARN,
  QUEUE_ARN,
  clusterAutoscalerDeployment,
  healthyFacts,
  irsaTrust,
  kmsUseStatements,
  withoutHelm,
} from '../helpers/facts.js'
import {
  defaultReleaseValues,
  helmReleaseSecret,
  KUBE_TOKEN,
  kubeconfigYaml,
  startMockCluster,
  usePodIdentity,
  type MockCluster,
  type MockOptions,
  type MockState,
} from '../helpers/mock-cluster.js'
import { catalog } from '../../src/checks/catalog.js'
import { runChecks } from '../../src/checks/run.js'

/**
 * Checks that may be `unknown` on the healthy mock, each with the reason. Empty: everything doctor
 * needs for `demo` is readable, so an unknown here is a collector or mock regression.
 */
const DOCUMENTED_UNKNOWN: Record<string, string> = {}

function mock(t: TestContext, options: MockOptions = {}): MockCluster {
  const m = startMockCluster(options)
  t.after(() => m.stop())
  return m
}

function result(outcome: DoctorOutcome, id: string): CheckResult {
  const r = outcome.results.find((x) => x.meta.id === id)
  assert.ok(r, `check ${id} is in the catalog`)
  return r
}

const describe = (r: CheckResult) =>
  `${r.meta.id}: ${r.status}\n${r.findings.map((f) => `  - ${f.status}: ${f.message}`).join('\n')}`

const summary = (outcome: DoctorOutcome) => outcome.results.map(describe).join('\n')

/** Every finding message of a check, for `includes` assertions with a readable failure. */
const messages = (r: CheckResult) => r.findings.map((f) => f.message).join('\n')

const live = (m: MockCluster, maxAttempts = 1) => ({ live: m.runOptions({ maxAttempts }) })

test('healthy cluster: no check fails, every check passes or is skipped (or a documented unknown)', async (t) => {
  const m = mock(t)
  const outcome = await doctor(live(m))

  const failing = outcome.results.filter((r) => r.status === 'fail' || r.status === 'warn')
  assert.deepEqual(
    failing.map(describe),
    [],
    `failing checks on the healthy cluster:\n${failing.map(describe).join('\n')}`,
  )
  const allowed: Status[] = ['pass', 'skipped']
  const odd = outcome.results.filter(
    (r) => !allowed.includes(r.status) && !(r.status === 'unknown' && DOCUMENTED_UNKNOWN[r.meta.id]),
  )
  assert.deepEqual(odd.map(describe), [], `checks neither pass nor skipped:\n${summary(outcome)}`)
  assert.equal(outcome.results.length, catalog.length)

  // The mock is the cluster healthyFacts() describes: the catalog judges both the same way.
  const fromFacts = runChecks(catalog, healthyFacts())
  assert.deepEqual(
    outcome.results.map((r) => [r.meta.id, r.status]),
    fromFacts.map((r) => [r.meta.id, r.status]),
  )
  // The core checks actually proved something on wire data (not skipped for want of it).
  for (const id of [
    'irsa-trust-policy',
    'passrole-node-role',
    'controller-policy',
    'discovery-tags',
    'node-role',
  ]) {
    assert.equal(result(outcome, id).status, 'pass', describe(result(outcome, id)))
  }
  // IAM's URL-encoded, pretty-printed documents were decoded: the trust names the running ServiceAccount.
  const role = outcome.facts.iam.roles[CONTROLLER_ROLE]
  assert.ok(role?.ok && role.value)
  assert.deepEqual(role.value.role.trust, irsaTrust())
  assert.equal(outcome.facts.meta.notes.length, 0, outcome.facts.meta.notes.join('\n'))
  // The simulator answered (not the local fallback).
  const pass = outcome.facts.iam.passRole[NODE_ROLE_ARN]
  assert.ok(pass?.ok)
  assert.equal(pass.value.method, 'simulator')
})

test('every distinct read happens once, and every read the cluster needs is made', async (t) => {
  const m = mock(t)
  const outcome = await doctor(live(m))

  const log = new CallLog()
  for (const c of outcome.calls ?? []) log.record(c)
  assert.deepEqual(log.duplicates(), [], 'CallLog: an operation + input was read twice')
  assert.deepEqual(m.duplicates(), [], 'wire: the same request reached the API twice')
  assert.deepEqual(m.unexpected(), [], 'wire: reads the mock did not expect')
  assert.ok(m.isDone(), `expected reads never made:\n${m.pending().join('\n')}`)
  // The CallLog (what the collector asked for) and the wire (what reached the mock) agree, per service.
  assert.equal(m.calls().length, outcome.calls?.length)
  assert.deepEqual(outcome.facts.meta.calls, { ...m.countsByService() })
  assert.equal(m.count('iam:GetPolicyVersion'), 6, 'one GetPolicyVersion per controller policy')
  assert.equal(m.count('iam:GetPolicy'), 6)
  assert.equal(m.count('eks:ListAccessEntries'), 0, 'a CONFIG_MAP cluster has no access entries to list')
  // 17 reads, plus the cluster-wide Deployment listing that finds a cluster-autoscaler and the VPC
  // CNI's ServiceAccount (kube-system/aws-node).
  assert.equal(m.count('kube:GET'), 19)
})

test('Pod Identity instead of IRSA: the same cluster stays green and the association is found', async (t) => {
  const m = mock(t, { mutate: usePodIdentity })
  const outcome = await doctor(live(m))
  assert.equal(outcome.facts.iam.controllerIdentity, 'pod-identity')
  assert.equal(outcome.facts.iam.controllerRoleName, CONTROLLER_ROLE)
  assert.equal(result(outcome, 'pod-identity').status, 'pass', describe(result(outcome, 'pod-identity')))
  assert.equal(result(outcome, 'irsa-trust-policy').status, 'skipped')
  const failing = outcome.results.filter((r) => r.status === 'fail')
  assert.deepEqual(failing.map(describe), [])
  assert.deepEqual(m.duplicates(), [])
  assert.ok(m.isDone(), m.pending().join('\n'))
})

// Argo CD renders the chart with `helm template` and applies the objects (argoproj/argo-cd#3867): no
// Helm release, its tracking annotation on each object. EKS Blueprints' GitOps Bridge installs Karpenter so.
const appliedByArgo = (s: MockState) => {
  s.kube.helmSecrets = s.kube.helmSecrets.filter((x) => x.metadata.labels?.name !== 'karpenter')
  const d = s.kube.deployments.find((x) => x.metadata.name === 'karpenter')!
  d.metadata.labels = { ...d.metadata.labels, 'helm.sh/chart': 'karpenter-1.14.1' }
  d.metadata.annotations = {
    'argocd.argoproj.io/tracking-id': 'karpenter:apps/Deployment:kube-system/karpenter',
  }
}

test('Karpenter applied by Argo CD (no Helm release): judged from the live objects, green as the Helm install, each read once', async (t) => {
  const m = mock(t, { mutate: appliedByArgo })
  const outcome = await doctor(live(m))
  const rendered = outcome.facts.kube.rendered
  assert.ok(rendered?.ok && rendered.value)
  assert.deepEqual(rendered.value.renderedBy, { tool: 'argocd', name: 'karpenter' })
  assert.equal(rendered.value.chartVersion, '1.14.1')
  const failing = outcome.results.filter((r) => r.status === 'fail' || r.status === 'warn')
  assert.deepEqual(failing.map(describe), [])
  // The checks that read the install ran on wire data: the ServiceAccount and its role were found.
  for (const id of ['irsa-trust-policy', 'controller-policy', 'interruption-queue', 'karpenter-version'])
    assert.equal(result(outcome, id).status, 'pass', describe(result(outcome, id)))
  assert.equal(result(outcome, 'toleration-value-types').status, 'skipped')
  assert.match(
    messages(result(outcome, 'karpenter-version')),
    /no Helm release: Argo CD application "karpenter"/,
  )
  assert.deepEqual(m.duplicates(), [], 'wire: the same request reached the API twice')
  // The same facts, made by hand, judge the same way.
  const fromFacts = runChecks(catalog, healthyFacts(withoutHelm()))
  assert.deepEqual(
    outcome.results.map((r) => [r.meta.id, r.status]),
    fromFacts.map((r) => [r.meta.id, r.status]),
  )
})

test('Argo CD puts the controller on tainted system nodes by its values: controller-ready reads the live pod template', async (t) => {
  // aws-samples/cdk-eks-karpenter#99: the controller on the bootstrap nodes by tolerations and a selector.
  const m = mock(t, {
    mutate: (s) => {
      appliedByArgo(s)
      const d = s.kube.deployments.find((x) => x.metadata.name === 'karpenter')!
      const pod = (d.spec as { template: { spec: Record<string, unknown> } }).template.spec
      pod.tolerations = [{ key: 'karpenter.sh/controller', operator: 'Exists', effect: 'NoSchedule' }]
      pod.nodeSelector = { 'eks.amazonaws.com/nodegroup': 'system' }
      pod.affinity = {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }],
        },
      }
      for (const n of s.kube.nodes)
        (n as unknown as { spec: Record<string, unknown> }).spec.taints = [
          { key: 'karpenter.sh/controller', value: 'true', effect: 'NoSchedule' },
        ]
    },
  })
  const outcome = await doctor(live(m))
  const d = outcome.facts.kube.deployment
  assert.ok(d.ok && d.value?.placement)
  assert.deepEqual(d.value.placement.requiredAntiAffinityTopologyKeys, ['kubernetes.io/hostname'])
  const ready = result(outcome, 'controller-ready')
  assert.equal(ready.status, 'pass', describe(ready))
  assert.match(messages(ready), /2 ready nodes outside Karpenter's management for 2 controller replicas/)
})

test('install on a cluster where Argo CD runs Karpenter: refused, naming the Deployment and the Application', async (t) => {
  const m = mock(t, { mutate: appliedByArgo })
  const ctx = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  await assert.rejects(
    findExisting(ctx),
    (err: unknown) =>
      err instanceof EnvironmentError &&
      err.code === 'INSTALLED_BY_OTHER_TOOL' &&
      err.message ===
        'Karpenter already runs in cluster demo as Deployment kube-system/karpenter with no Helm release (Argo CD application "karpenter"): installing would start a second controller beside it; manage it where it is applied, and check it with `karpctl doctor`',
  )
})

test('IAM throttles GetRole of the controller role (maxAttempts 1): dependent checks are unknown, never pass', async (t) => {
  const m = mock(t, {
    faults: [{ op: 'iam:GetRole', match: (c) => c.params.RoleName === CONTROLLER_ROLE, error: 'throttle' }],
  })
  const outcome = await doctor(live(m, 1))

  assert.equal(m.count('iam:GetRole'), 2, 'one GetRole per role, the throttled one not retried')
  for (const id of ['irsa-trust-policy', 'controller-policy']) {
    const r = result(outcome, id)
    assert.equal(r.status, 'unknown', describe(r))
    assert.ok(!r.findings.some((f) => f.status === 'pass'), describe(r))
    assert.match(messages(r), /throttled/, describe(r))
    assert.match(messages(r), /Throttling/, describe(r))
  }
  // The read failure is data in the facts, with IAM's code.
  const role = outcome.facts.iam.roles[CONTROLLER_ROLE]
  assert.ok(role && !role.ok)
  assert.equal(role.error.kind, 'throttled')
  assert.equal(role.error.code, 'Throttling')
  // Node role reads were not affected.
  assert.equal(result(outcome, 'node-role').status, 'pass', describe(result(outcome, 'node-role')))
})

test('one IAM Throttling with the SDK default retries: retried once on the wire, read once by the collector', async (t) => {
  const m = mock(t, {
    faults: [
      { op: 'iam:GetRole', match: (c) => c.params.RoleName === CONTROLLER_ROLE, error: 'throttle', times: 1 },
    ],
  })
  const outcome = await doctor({ live: m.runOptions() })
  const key = `iam:GetRole:${JSON.stringify({ RoleName: CONTROLLER_ROLE })}`
  assert.equal(outcome.calls?.filter((c) => c === key).length, 1)
  assert.equal(m.calls().filter((c) => c.op === 'iam:GetRole' && c.key.includes(CONTROLLER_ROLE)).length, 2)
  assert.equal(
    result(outcome, 'irsa-trust-policy').status,
    'pass',
    describe(result(outcome, 'irsa-trust-policy')),
  )
  assert.ok(m.isDone(), m.pending().join('\n'))
})

test('AccessDenied on ec2:DescribeSubnets: discovery-tags is unknown and says permission denied', async (t) => {
  const m = mock(t, { faults: [{ op: 'ec2:DescribeSubnets', error: 'denied', times: Infinity }] })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'discovery-tags')
  assert.equal(r.status, 'unknown', describe(r))
  assert.match(messages(r), /permission denied/, describe(r))
  assert.match(messages(r), /UnauthorizedOperation/, describe(r))
  assert.ok(!r.findings.some((f) => f.status === 'pass'), describe(r))
  const subnets = outcome.facts.ec2.subnetsByNodeClass.default
  assert.ok(subnets && !subnets.ok)
  assert.equal(subnets.error.kind, 'denied')
})

test('SimulatePrincipalPolicy answers 500: passrole falls back to the local evaluator and says so', async (t) => {
  const m = mock(t, { faults: [{ op: 'iam:SimulatePrincipalPolicy', error: 'server', times: Infinity }] })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'passrole-node-role')
  assert.equal(r.status, 'pass', describe(r))
  assert.match(messages(r), /local evaluator/, describe(r))
  assert.match(messages(r), /simulator unavailable: ServiceFailure/, describe(r))
  const e = outcome.facts.iam.passRole[NODE_ROLE_ARN]
  assert.ok(e?.ok)
  assert.equal(e.value.method, 'local')
  assert.equal(e.value.decision, 'allowed')
  assert.equal(m.count('iam:SimulatePrincipalPolicy'), 1)
})

test('the local evaluator still catches a missing PassRole when the simulator is down', async (t) => {
  const m = mock(t, {
    faults: [{ op: 'iam:SimulatePrincipalPolicy', error: 'server', times: Infinity }],
    mutate: (s) => {
      for (const p of Object.values(s.managedPolicies)) {
        p.document = {
          ...p.document,
          Statement: p.document.Statement.filter((st) => ![st.Action].flat().includes('iam:PassRole')),
        }
      }
    },
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'passrole-node-role')
  assert.equal(r.status, 'fail', describe(r))
  assert.match(messages(r), /local evaluator/, describe(r))
})

test('IRSA trust names another service account (:sub): irsa-trust-policy fails with the expected subject', async (t) => {
  const m = mock(t, {
    mutate: (s) => {
      const role = s.roles[CONTROLLER_ROLE]
      assert.ok(role)
      role.trust = irsaTrust('karpenter', 'karpenter')
    },
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'irsa-trust-policy')
  assert.equal(r.status, 'fail', describe(r))
  assert.match(messages(r), /system:serviceaccount:karpenter:karpenter/, describe(r))
  assert.match(messages(r), /system:serviceaccount:kube-system:karpenter/, describe(r))
  const fix = r.findings.find((f) => f.status === 'fail')?.fix
  assert.ok(fix?.commands?.some((c) => c.includes(`--role-name ${CONTROLLER_ROLE}`)))
})

test('cluster not found: EnvironmentError CLUSTER_NOT_FOUND listing the clusters in the region', async (t) => {
  const m = mock(t, {
    mutate: (s) => {
      s.cluster = null
      s.clusters = ['prod', 'staging']
    },
  })
  await assert.rejects(doctor(live(m)), (err: unknown) => {
    assert.ok(err instanceof EnvironmentError, String(err))
    assert.equal(err.code, 'CLUSTER_NOT_FOUND')
    assert.match(err.message, /"demo" not found in us-west-2/)
    assert.match(err.message, /prod, staging/)
    return true
  })
  assert.equal(m.count('eks:ListClusters'), 1)
})

test('no credentials anywhere: EnvironmentError NO_CREDENTIALS, nothing sent', async (t) => {
  const m = mock(t)
  // The mock's AWS config and credentials files exist and are empty; no env credentials, no profile, no IMDS.
  assert.equal(readFileSync(join(m.dir, 'aws-config'), 'utf8'), '')
  assert.equal(readFileSync(join(m.dir, 'aws-credentials'), 'utf8'), '')
  m.isolateEnv({
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_CONFIG_FILE: join(m.dir, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(m.dir, 'aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  })
  await assert.rejects(doctor(live(m)), (err: unknown) => {
    assert.ok(err instanceof EnvironmentError, String(err))
    assert.equal(err.code, 'NO_CREDENTIALS')
    assert.match(err.message, /no AWS credentials found/)
    return true
  })
  const aws = m.calls().filter((c) => !c.op.startsWith('kube:'))
  assert.deepEqual(aws, [], 'no AWS request can be signed without credentials')
})

test('the credential chain is walked once per run, not once per AWS client (a credential_process profile)', async (t) => {
  const m = mock(t)
  // A profile whose credentials come from a program, as `aws configure sso` or a vault helper set up:
  // each walk of the chain runs it (the SDK caches its answer per provider, not per process).
  const counter = join(m.dir, 'credential-process-runs')
  const helper = join(m.dir, 'credential-process.sh')
  writeFileSync(
    helper,
    `#!/bin/sh\necho run >> '${counter}'\necho '{"Version":1,"AccessKeyId":"AKIAIOSFODNN7EXAMPLE","SecretAccessKey":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}'\n`,
    { mode: 0o700 },
  )
  writeFileSync(join(m.dir, 'aws-config'), `[profile helper]\ncredential_process = ${helper}\n`)
  m.isolateEnv({
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: 'helper',
    AWS_CONFIG_FILE: join(m.dir, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(m.dir, 'aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  })
  const outcome = await doctor(live(m))
  assert.ok(outcome.results.some((r) => r.status === 'pass'))
  const services = new Set(
    m
      .calls()
      .filter((c) => !c.op.startsWith('kube:'))
      .map((c) => c.op.split(':')[0]),
  )
  assert.ok(services.size >= 5, `doctor used ${[...services].join(', ')}`)
  assert.equal(
    readFileSync(counter, 'utf8').trim().split('\n').length,
    1,
    `${services.size} clients, one walk`,
  )
})

test('expired credentials (STS says ExpiredToken): EnvironmentError EXPIRED_CREDENTIALS', async (t) => {
  const m = mock(t, { faults: [{ op: '*', error: 'expired', times: Infinity }] })
  await assert.rejects(doctor(live(m)), (err: unknown) => {
    assert.ok(err instanceof EnvironmentError, String(err))
    assert.equal(err.code, 'EXPIRED_CREDENTIALS')
    assert.match(err.message, /expired/)
    return true
  })
  assert.equal(m.count('sts:GetCallerIdentity'), 1)
})

test('credentials expiring mid-run (only IAM says ExpiredToken): one clean rejection, no unhandled rejection', async (t) => {
  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown) => unhandled.push(err)
  process.on('unhandledRejection', onUnhandled)
  t.after(() => process.off('unhandledRejection', onUnhandled))
  const m = mock(t, { faults: [{ op: 'iam:ListOpenIDConnectProviders', error: 'expired' }], latencyMs: 5 })
  await assert.rejects(doctor(live(m)), (err: unknown) => {
    assert.ok(err instanceof EnvironmentError, String(err))
    assert.equal(err.code, 'EXPIRED_CREDENTIALS')
    return true
  })
  // Let any stray rejection surface before judging.
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual(unhandled.map(String), [])
})

test('a saved snapshot carries no secret and judges exactly like the live run', async (t) => {
  const m = mock(t)
  const path = join(m.dir, 'snapshot.json')
  const liveOutcome = await doctor({ ...live(m), saveSnapshot: path })
  const text = readFileSync(path, 'utf8')
  assert.ok(!text.includes(KUBE_TOKEN), 'the kube token is not in the snapshot')
  assert.ok(
    !text.includes(process.env.AWS_SECRET_ACCESS_KEY ?? 'never'),
    'the AWS secret key is not in the snapshot',
  )
  assert.ok(
    !text.includes(process.env.AWS_ACCESS_KEY_ID ?? 'never'),
    'the AWS access key id is not in the snapshot',
  )
  const fromSnapshot = await doctor({ snapshot: path })
  assert.deepEqual(
    fromSnapshot.results.map((r) => [r.meta.id, r.status]),
    liveOutcome.results.map((r) => [r.meta.id, r.status]),
  )
  assert.equal(fromSnapshot.facts.iam.controllerRoleName, CONTROLLER_ROLE)
  assert.equal(
    fromSnapshot.facts.kube.serviceAccount.ok &&
      fromSnapshot.facts.kube.serviceAccount.value?.metadata.annotations?.['eks.amazonaws.com/role-arn'],
    CONTROLLER_ROLE_ARN,
  )
})

/** A mock cluster whose Kubernetes API fails every connection with `code`. */
function kubeDown(t: TestContext, code: string, message: string) {
  const m = mock(t, { expectations: false })
  const down = 'https://kube-down.test'
  writeFileSync(m.kubeconfig, kubeconfigYaml(down, KUBE_TOKEN))
  nock(down)
    .persist()
    .get(/.*/)
    .replyWithError(Object.assign(new Error(message), { code }))
  return { m, down }
}

test('the Kubernetes API refuses every connection: one error naming the server, not a report of unknowns', async (t) => {
  const { m } = kubeDown(t, 'ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.9:443')
  await assert.rejects(doctor(live(m)), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'KUBE_UNREACHABLE')
    assert.match(
      err.message,
      /^the Kubernetes API at https:\/\/kube-down\.test \(kube context "[^"]+"\) refused the connection/,
    )
    return true
  })
})

test('the Kubernetes API resets every connection: a note says so, every check that needs it is unknown, none passes', async (t) => {
  const { m, down } = kubeDown(t, 'ECONNRESET', 'socket hang up')
  const outcome = await doctor(live(m))
  assert.ok(
    outcome.facts.meta.notes.some((n) =>
      n.includes(`the Kubernetes API at ${down} did not answer (ECONNRESET)`),
    ),
    outcome.facts.meta.notes.join('\n'),
  )
  const kubeDependent = outcome.results.filter((r) => r.meta.id !== 'helm-registry-auth')
  for (const r of kubeDependent) assert.equal(r.status, 'unknown', describe(r))
  assert.match(messages(result(outcome, 'irsa-trust-policy')), /network error: ECONNRESET/)
})

test('a prepared run context is used as given: its clock stamps the snapshot', async (t) => {
  const m = mock(t)
  const context = await createRunContext(m.runOptions({ maxAttempts: 1 }))
  context.clock = () => new Date('2030-01-02T03:04:05.000Z')
  const outcome = await doctor({ context })
  assert.equal(outcome.facts.meta.collectedAt, '2030-01-02T03:04:05.000Z')
  assert.deepEqual(context.log.duplicates(), [])
  assert.equal(outcome.calls?.length, context.log.calls.length)
})

// ---- issue 12: the queue derived once; rules found by pattern ----

/** The checks that fail, by id. */
const failingIds = (outcome: DoctorOutcome) =>
  outcome.results.filter((r) => r.status === 'fail').map((r) => r.meta.id)

const wireIsClean = (m: MockCluster) => {
  assert.deepEqual(m.duplicates(), [], 'wire: the same request reached the API twice')
  assert.deepEqual(m.unexpected(), [], 'wire: reads the mock did not expect')
  assert.ok(m.isDone(), `expected reads never made:\n${m.pending().join('\n')}`)
}

test("settings.interruptionQueue set to the queue's ARN: the queue meant is read by name, and only interruption-queue fails", async (t) => {
  const m = mock(t, {
    mutate: (s) => {
      s.kube.helmSecrets[0] = helmReleaseSecret({
        values: {
          ...defaultReleaseValues(),
          settings: { clusterName: CLUSTER, interruptionQueue: QUEUE_ARN },
        },
      })
    },
  })
  const outcome = await doctor(live(m))
  assert.deepEqual(failingIds(outcome), ['interruption-queue'], summary(outcome))
  assert.equal(
    result(outcome, 'controller-policy').status,
    'pass',
    describe(result(outcome, 'controller-policy')),
  )
  assert.equal(
    result(outcome, 'interruption-rules').status,
    'pass',
    describe(result(outcome, 'interruption-rules')),
  )
  const f = result(outcome, 'interruption-queue').findings[0]!
  assert.match(f.message, /is a queue ARN/)
  assert.match(f.fix!.commands![0]!, /--set settings.interruptionQueue=demo$/)
  // GetQueueUrl asked for the name, never for the ARN.
  assert.ok(m.calls().some((c) => c.op === 'sqs:GetQueueUrl' && c.key.includes('"QueueName":"demo"')))
  wireIsClean(m)
})

test('the rules sending to an old queue are found by their pattern, named with that queue, and re-targeted in place (the capacity-reservation one not needed: no reservation in use)', async (t) => {
  const old = `arn:aws:sqs:us-west-2:123456789012:${CLUSTER}-old`
  const m = mock(t, {
    mutate: (s) => {
      for (const r of s.rules) {
        r.targets = [old]
        r.targetIds = ['OldQueue']
      }
    },
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'interruption-rules')
  assert.equal(r.status, 'fail', describe(r))
  assert.equal(r.findings.length, 5, describe(r))
  const notNeeded = r.findings.filter((f) => f.code === 'rule-not-needed')
  assert.deepEqual(
    notNeeded.map((f) => f.status),
    ['pass'],
    describe(r),
  )
  for (const f of r.findings.filter((x) => !notNeeded.includes(x))) {
    assert.equal(f.status, 'fail', describe(r))
    assert.match(
      f.message,
      new RegExp(`sends to queue ${CLUSTER}-old \\(${old}\\), not to the interruption queue`),
    )
    const rule = String(f.evidence?.rule)
    assert.deepEqual(f.fix!.commands, [
      `aws events put-targets --rule ${rule} --targets Id=KarpenterInterruptionQueueTarget,Arn=${QUEUE_ARN} --region us-west-2`,
      `aws events remove-targets --rule ${rule} --ids OldQueue --region us-west-2`,
    ])
  }
  assert.deepEqual(failingIds(outcome), ['interruption-rules'], summary(outcome))
  assert.equal(m.count('eventbridge:ListRules'), 1)
  assert.equal(m.count('eventbridge:DescribeRule'), 0, 'ListRules carries the pattern and state')
  wireIsClean(m)
})

test('ListRules denied: the rules on the queue are still judged (pass), and the facts say the pattern search failed', async (t) => {
  const m = mock(t, {
    faults: [{ op: 'eventbridge:ListRules', error: 'denied', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  assert.equal(
    result(outcome, 'interruption-rules').status,
    'pass',
    describe(result(outcome, 'interruption-rules')),
  )
  assert.deepEqual(
    outcome.facts.events.partial?.map((p) => [p.read, p.kind]),
    [['events:ListRules', 'denied']],
  )
  // The rules came from ListRuleNamesByTarget: DescribeRule once each (ListRules said nothing).
  assert.equal(m.count('eventbridge:DescribeRule'), 5)
  assert.deepEqual(m.duplicates(), [])
})

// ---- issue 12: the permissions boundary ----

const BOUNDARY_ARN = 'arn:aws:iam::123456789012:policy/KarpenterBoundary'

/** The controller role gets a boundary that allows everything but `without`. */
const boundaryWithout =
  (...without: string[]) =>
  (s: MockState) => {
    s.managedPolicies[BOUNDARY_ARN] = {
      name: 'KarpenterBoundary',
      defaultVersionId: 'v3',
      document: {
        Version: '2012-10-17',
        Statement: [{ Sid: 'Ceiling', Effect: 'Allow', NotAction: without, Resource: '*' }],
      },
    }
    s.roles[CONTROLLER_ROLE]!.permissionsBoundary = BOUNDARY_ARN
  }

test('a permissions boundary without iam:PassRole, simulator down: the local evaluator reads it and passrole fails', async (t) => {
  const m = mock(t, {
    faults: [{ op: 'iam:SimulatePrincipalPolicy', error: 'server', times: Infinity }],
    mutate: boundaryWithout('iam:PassRole'),
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'passrole-node-role')
  assert.equal(r.status, 'fail', describe(r))
  assert.match(
    messages(r),
    /its permissions boundary KarpenterBoundary does not allow iam:PassRole on it, though its policies do/,
  )
  assert.match(messages(r), /local evaluator/)
  assert.match(
    r.findings[0]!.fix!.commands![0]!,
    /^aws iam create-policy-version --policy-arn arn:aws:iam::123456789012:policy\/KarpenterBoundary --set-as-default/,
  )
  const e = outcome.facts.iam.passRole[NODE_ROLE_ARN]
  assert.ok(e?.ok)
  assert.deepEqual(
    [e.value.identityDecision, e.value.permissionsBoundary?.decision, e.value.decision],
    ['allowed', 'implicitDeny', 'implicitDeny'],
  )
  // controller-policy does not judge PassRole (passrole-node-role does): it passes, naming the boundary.
  const c = result(outcome, 'controller-policy')
  assert.equal(c.status, 'pass', describe(c))
  assert.match(messages(c), /and its permissions boundary KarpenterBoundary allows them/)
  assert.deepEqual(failingIds(outcome), ['passrole-node-role'], summary(outcome))
  // The boundary was read once (GetPolicy + GetPolicyVersion), nothing twice, nothing unforeseen
  // (the simulator's expectation is left: the fault answered it).
  assert.equal(m.count('iam:GetPolicyVersion'), 7)
  assert.deepEqual(m.duplicates(), [])
  assert.deepEqual(m.unexpected(), [])
  assert.equal(m.pending().length, 1, m.pending().join('\n'))
})

test('a permissions boundary without ec2:CreateFleet: controller-policy fails naming the boundary, with the simulator up too', async (t) => {
  const m = mock(t, { mutate: boundaryWithout('ec2:CreateFleet') })
  const outcome = await doctor(live(m))
  const c = result(outcome, 'controller-policy')
  assert.equal(c.status, 'fail', describe(c))
  const f = c.findings.find((x) => x.status === 'fail')!
  assert.equal(f.subject, BOUNDARY_ARN)
  assert.match(
    f.message,
    /does not allow 1 action\(s\) Karpenter 1\.14\.1 needs, so the role's grants of them are void: ec2:CreateFleet$/,
  )
  assert.equal(result(outcome, 'passrole-node-role').status, 'pass')
  wireIsClean(m)
})

test('the permissions boundary cannot be read: passrole (local) and controller-policy are unknown, neither passes', async (t) => {
  const m = mock(t, {
    faults: [
      { op: 'iam:SimulatePrincipalPolicy', error: 'server', times: Infinity },
      {
        op: 'iam:GetPolicy',
        match: (c) => c.params.PolicyArn === BOUNDARY_ARN,
        error: 'denied',
        times: Infinity,
      },
    ],
    mutate: boundaryWithout(),
    expectations: false,
  })
  const outcome = await doctor(live(m))
  for (const id of ['passrole-node-role', 'controller-policy']) {
    const r = result(outcome, id)
    assert.equal(r.status, 'unknown', describe(r))
    assert.match(messages(r), /permissions boundary KarpenterBoundary .*could not be read/, describe(r))
  }
})

// ---- issue 12 item 5: EBS KMS keys, STANDARD access entries, a cluster-autoscaler beside Karpenter ----

const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab'
const KEY_ARN = `arn:aws:kms:us-west-2:123456789012:key/${KEY_ID}`
const keyAdmin = {
  Sid: 'KeyAdmins',
  Effect: 'Allow' as const,
  Principal: { AWS: 'arn:aws:iam::123456789012:role/Admin' },
  Action: 'kms:*',
  Resource: '*',
}

/** The `default` EC2NodeClass encrypts its root volume with a customer managed key, named by alias. */
const encryptedWith =
  (policyStatements: PolicyStatement[], id = 'alias/karpenter-ebs') =>
  (s: MockState) => {
    s.kmsKeys.push({
      keyId: KEY_ID,
      aliases: ['alias/karpenter-ebs'],
      keyManager: 'CUSTOMER',
      keyState: 'Enabled',
      policy: { Version: '2012-10-17', Statement: policyStatements },
    })
    const nc = s.kube.nodeClasses[0] as unknown as { spec: Record<string, unknown> }
    nc.spec.blockDeviceMappings = [
      { deviceName: '/dev/xvda', ebs: { encrypted: true, kmsKeyID: id, volumeSize: '20Gi' } },
    ]
  }

const controllerOnly: PolicyStatement[] = [keyAdmin, ...kmsUseStatements(CONTROLLER_ROLE_ARN)]

test('a customer managed key whose policy names only the controller: the alias is resolved, the node role warns, each KMS read once', async (t) => {
  const m = mock(t, { mutate: encryptedWith(controllerOnly) })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'ebs-kms-key')
  assert.equal(r.status, 'warn', describe(r))
  const byRole = (arn: string) => r.findings.find((f) => f.subject === arn)!
  assert.equal(byRole(CONTROLLER_ROLE_ARN).status, 'pass', describe(r))
  assert.equal(byRole(NODE_ROLE_ARN).status, 'warn', describe(r))
  assert.match(byRole(NODE_ROLE_ARN).message, new RegExp(`may not use KMS key ${KEY_ARN}`))
  // The key policy came off the wire (JSON string in GetKeyPolicy) and was decoded.
  const key = outcome.facts.kms?.keys['alias/karpenter-ebs']
  assert.ok(key?.ok && key.value?.policy?.ok)
  assert.equal(key.value.arn, KEY_ARN)
  assert.equal(m.count('kms:DescribeKey'), 1)
  assert.equal(m.count('kms:GetKeyPolicy'), 1)
  // The other checks are as green as on the healthy cluster.
  assert.deepEqual(failingIds(outcome), [], summary(outcome))
  wireIsClean(m)
})

test('the default key policy (root kms:*): the node role managed policies are read and the controller fails with an IAM fix', async (t) => {
  const root = {
    Sid: 'Enable IAM User Permissions',
    Effect: 'Allow' as const,
    Principal: { AWS: 'arn:aws:iam::123456789012:root' },
    Action: 'kms:*',
    Resource: '*',
  }
  const m = mock(t, { mutate: encryptedWith([root], KEY_ARN) })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'ebs-kms-key')
  assert.equal(r.status, 'fail', describe(r))
  const c = r.findings.find((f) => f.subject === CONTROLLER_ROLE_ARN)!
  assert.match(c.message, /neither the key policy nor its IAM policies allow it/)
  assert.match(c.fix!.commands![0]!, /^aws iam put-role-policy --role-name KarpenterControllerRole-demo /)
  // Node role documents were needed: 4 AWS managed policies read, plus the controller's 6.
  assert.equal(m.count('iam:GetPolicyVersion'), 10)
  wireIsClean(m)
})

test('DescribeKey denied: ebs-kms-key is unknown with the reason, never pass', async (t) => {
  const m = mock(t, {
    mutate: encryptedWith(controllerOnly),
    faults: [{ op: 'kms:DescribeKey', error: 'denied', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'ebs-kms-key')
  assert.equal(r.status, 'unknown', describe(r))
  assert.match(messages(r), /kms:DescribeKey alias\/karpenter-ebs \(permission denied: AccessDeniedException/)
})

test('GetKeyPolicy throttled (maxAttempts 1): unknown, never pass', async (t) => {
  const m = mock(t, {
    mutate: encryptedWith(controllerOnly),
    faults: [{ op: 'kms:GetKeyPolicy', error: 'throttle', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'ebs-kms-key')
  assert.equal(r.status, 'unknown', describe(r))
  assert.match(messages(r), /key policy of .*\(throttled: ThrottlingException/)
})

test('API mode with a STANDARD access entry for the node role: node-role fails with delete + create, read once', async (t) => {
  const m = mock(t, {
    mutate: (s) => {
      ;(s.cluster as { accessConfig: { authenticationMode: string } }).accessConfig.authenticationMode = 'API'
      s.accessEntries = [{ principalArn: NODE_ROLE_ARN, type: 'STANDARD', kubernetesGroups: [] }]
    },
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'node-role')
  assert.equal(r.status, 'fail', describe(r))
  const f = r.findings.find((x) => x.status === 'fail')!
  assert.match(f.message, /has a STANDARD access entry, not EC2_LINUX/)
  assert.deepEqual(f.fix!.commands, [
    `aws eks delete-access-entry --cluster-name demo --principal-arn ${NODE_ROLE_ARN} --region us-west-2`,
    `aws eks create-access-entry --cluster-name demo --principal-arn ${NODE_ROLE_ARN} --type EC2_LINUX --region us-west-2`,
  ])
  assert.equal(m.count('eks:DescribeAccessEntry'), 1)
  wireIsClean(m)
})

test('DescribeAccessEntry denied in API mode: node-role is unknown, not pass', async (t) => {
  const m = mock(t, {
    mutate: (s) => {
      ;(s.cluster as { accessConfig: { authenticationMode: string } }).accessConfig.authenticationMode = 'API'
      s.accessEntries = [{ principalArn: NODE_ROLE_ARN, type: 'EC2_LINUX', kubernetesGroups: [] }]
    },
    faults: [{ op: 'eks:DescribeAccessEntry', error: 'denied', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'node-role')
  assert.equal(r.status, 'unknown', describe(r))
})

const withAutoscaler = (replicas: number) => (s: MockState) => {
  s.kube.deployments.push(clusterAutoscalerDeployment(replicas))
  s.nodegroups = [
    {
      name: 'system',
      nodeRole: 'arn:aws:iam::123456789012:role/system-ng',
      autoScalingGroups: ['eks-system-0a1b'],
    },
  ]
}

test('a cluster-autoscaler discovering the managed node groups: warn naming the group the controller runs on; node groups read once', async (t) => {
  const m = mock(t, { mutate: withAutoscaler(1) })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'cluster-autoscaler')
  assert.equal(r.status, 'warn', describe(r))
  const f = r.findings[0]!
  assert.equal(f.subject, 'kube-system/cluster-autoscaler-aws-cluster-autoscaler')
  assert.match(
    f.message,
    /scales eks-system-0a1b \(node group system\) while Karpenter provisions for NodePool default/,
  )
  // The mock's nodes carry eks.amazonaws.com/nodegroup=system and run the controller pods.
  assert.match(f.message, /node group system runs the Karpenter controller/)
  assert.equal(
    f.fix!.commands![1],
    'kubectl -n kube-system scale deployment cluster-autoscaler-aws-cluster-autoscaler --replicas=0',
  )
  assert.equal(m.count('eks:ListNodegroups'), 1)
  assert.equal(m.count('eks:DescribeNodegroup'), 1)
  assert.deepEqual(failingIds(outcome), [], summary(outcome))
  wireIsClean(m)
})

test('a cluster-autoscaler scaled to 0: pass, and the node groups are not read', async (t) => {
  const m = mock(t, { mutate: withAutoscaler(0) })
  const outcome = await doctor(live(m))
  assert.equal(result(outcome, 'cluster-autoscaler').status, 'pass')
  assert.equal(m.count('eks:ListNodegroups'), 0)
  wireIsClean(m)
})

test('ListNodegroups denied with auto-discovery: cluster-autoscaler is unknown, not pass', async (t) => {
  const m = mock(t, {
    mutate: withAutoscaler(2),
    faults: [{ op: 'eks:ListNodegroups', error: 'denied', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'cluster-autoscaler')
  assert.equal(r.status, 'unknown', describe(r))
  assert.match(messages(r), /permission denied/)
})

test('listing Deployments forbidden: cluster-autoscaler is unknown, not pass', async (t) => {
  const m = mock(t, {
    faults: [
      {
        op: 'kube:GET',
        match: (c) => c.path === '/apis/apps/v1/deployments',
        error: 'denied',
        times: Infinity,
      },
    ],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  assert.equal(result(outcome, 'cluster-autoscaler').status, 'unknown')
})

// ---- issue 21 item 1: an SSE-KMS interruption queue ----

const QUEUE_KEY_ID = '5678abcd-12ab-34cd-56ef-1234567890ab'
const QUEUE_KEY_ARN = `arn:aws:kms:us-west-2:123456789012:key/${QUEUE_KEY_ID}`

/** The `demo` queue encrypted with a customer managed key (named by alias) whose policy has `statements`. */
const queueEncryptedWith = (statements: PolicyStatement[]) => (s: MockState) => {
  s.kmsKeys.push({
    keyId: QUEUE_KEY_ID,
    aliases: ['alias/karpenter-queue'],
    keyManager: 'CUSTOMER',
    keyState: 'Enabled',
    policy: { Version: '2012-10-17', Statement: statements },
  })
  s.queues[CLUSTER]!.KmsMasterKeyId = 'alias/karpenter-queue'
}

test('an SSE-KMS queue whose key policy names neither EventBridge nor the controller: both checks fail, the key read once', async (t) => {
  const m = mock(t, { mutate: queueEncryptedWith([keyAdmin]) })
  const outcome = await doctor(live(m))
  const q = result(outcome, 'interruption-queue')
  assert.equal(q.status, 'fail', describe(q))
  assert.match(
    messages(q),
    new RegExp(`key policy of ${QUEUE_KEY_ARN} .*does not let events\\.amazonaws\\.com use it`),
  )
  const c = result(outcome, 'controller-policy')
  assert.equal(c.status, 'fail', describe(c))
  assert.match(messages(c), /may not use KMS key .* for kms:Decrypt/)
  // The attribute came off the wire; DescribeKey resolved the alias and GetKeyPolicy read it, once each.
  const queue = outcome.facts.sqs.queue
  assert.ok(queue.ok && queue.value)
  assert.equal(queue.value.kmsMasterKeyId, 'alias/karpenter-queue')
  assert.equal(m.count('kms:DescribeKey'), 1)
  assert.equal(m.count('kms:GetKeyPolicy'), 1)
  assert.deepEqual(failingIds(outcome), ['controller-policy', 'interruption-queue'], summary(outcome))
  wireIsClean(m)
})

test('an SSE-KMS queue whose key policy lets EventBridge and the controller use it: both stay green', async (t) => {
  const m = mock(t, {
    mutate: queueEncryptedWith([
      keyAdmin,
      {
        Sid: 'EventBridge',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
        Resource: '*',
      },
      {
        Sid: 'Controller',
        Effect: 'Allow',
        Principal: { AWS: CONTROLLER_ROLE_ARN },
        Action: 'kms:Decrypt',
        Resource: '*',
      },
    ]),
  })
  const outcome = await doctor(live(m))
  assert.deepEqual(failingIds(outcome), [], summary(outcome))
  assert.equal(result(outcome, 'interruption-queue').status, 'pass')
  assert.equal(result(outcome, 'controller-policy').status, 'pass')
  wireIsClean(m)
})

test('GetKeyPolicy of the queue key denied: interruption-queue and controller-policy are unknown, never pass', async (t) => {
  const m = mock(t, {
    mutate: queueEncryptedWith([keyAdmin]),
    faults: [{ op: 'kms:GetKeyPolicy', error: 'denied', times: Infinity }],
    expectations: false,
  })
  const outcome = await doctor(live(m))
  for (const id of ['interruption-queue', 'controller-policy']) {
    const r = result(outcome, id)
    assert.equal(r.status, 'unknown', describe(r))
    assert.match(messages(r), /key policy of .*\(permission denied: AccessDeniedException/, describe(r))
  }
})

// ---- issue 21 item 2: the VPC CNI with its own IRSA role ----

/** kube-system/aws-node annotated for IRSA with `AmazonEKSVPCCNIRole-demo`, the node role without the CNI policy. */
const cniOwnRole = (attached: string[]) => (s: MockState) => {
  s.kube.serviceAccounts.push({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: 'aws-node',
      namespace: 'kube-system',
      annotations: {
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/AmazonEKSVPCCNIRole-demo',
      },
    },
  })
  s.roles['AmazonEKSVPCCNIRole-demo'] = { ...s.roles[NODE_ROLE]!, name: 'AmazonEKSVPCCNIRole-demo', attached }
  s.roles[NODE_ROLE]!.attached = s.roles[NODE_ROLE]!.attached.filter(
    (a) => !a.endsWith('/AmazonEKS_CNI_Policy'),
  )
}

test("aws-node's own IRSA role has the CNI policy: node-role passes without it on the node role; the role is read once", async (t) => {
  const m = mock(t, { mutate: cniOwnRole(['arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy']) })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'node-role')
  assert.equal(r.status, 'pass', describe(r))
  assert.match(
    messages(r),
    /gets its permissions from its own role AmazonEKSVPCCNIRole-demo \(IRSA annotation\)/,
  )
  assert.equal(m.count('iam:GetRole'), 3, 'controller, node and aws-node roles')
  assert.deepEqual(failingIds(outcome), [], summary(outcome))
  wireIsClean(m)
})

test("aws-node's own IRSA role lacks the CNI policy: node-role fails on that role, not on the node role", async (t) => {
  const m = mock(t, { mutate: cniOwnRole([]) })
  const outcome = await doctor(live(m))
  const r = result(outcome, 'node-role')
  assert.equal(r.status, 'fail', describe(r))
  const fails = r.findings.filter((f) => f.status === 'fail')
  assert.deepEqual(
    fails.map((f) => f.subject),
    ['AmazonEKSVPCCNIRole-demo'],
  )
  assert.deepEqual(fails[0]!.fix!.commands, [
    'aws iam attach-role-policy --role-name AmazonEKSVPCCNIRole-demo --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
  ])
  wireIsClean(m)
})
