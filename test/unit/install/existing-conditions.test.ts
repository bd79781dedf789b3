// What install finds of an install karpctl did not make, one condition at a time (issue 18): when there
// is one at all, which checks judge its controller role, which rules count as delivering to its queue,
// the service account it runs as, and the summary the plan opens with. Each assertion fails when the
// condition it names is changed.
import { EnvironmentError } from '../../../src/errors.js'
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RunContext } from '../../../src/context/run-context.js'
import { existingFrom, findExisting } from '../../../src/install/existing.js'
import type { Facts } from '../../../src/facts/types.js'
import { OWNERSHIP } from '../../../src/desired/ownership.js'
import { podIdentityFacts } from '../../helpers/check-fixtures.js'
import { CONTROLLER_ROLE, failed, healthyFacts, ok, QUEUE_ARN } from '../../helpers/facts.js'
import { helmReleaseSecret } from '../../helpers/mock-cluster.js'

test('no existing install without a release, a controller role, or an identity the controller runs as', () => {
  assert.ok(existingFrom(healthyFacts()))
  assert.equal(existingFrom(healthyFacts((f) => (f.kube.release = failed('helm release')))), null)
  assert.equal(existingFrom(healthyFacts((f) => (f.iam.controllerRoleName = null))), null)
  assert.equal(existingFrom(healthyFacts((f) => (f.iam.controllerRoleName = ''))), null)
  assert.equal(existingFrom(healthyFacts((f) => (f.iam.controllerIdentity = 'none'))), null)
})

test('an IRSA role is judged by the IRSA trust check, a Pod Identity role by the Pod Identity check', () => {
  const pi = existingFrom(podIdentityFacts())!
  assert.equal(pi.identity, 'pod-identity')
  assert.deepEqual(pi.controllerProblems, [])
  assert.match(pi.summary, /; controller role KarpenterControllerRole-demo \(Pod Identity\); /)
  // The healthy IRSA install declared Pod Identity: the association is missing, and only that check says so.
  const noAssociation = existingFrom(healthyFacts((f) => (f.iam.controllerIdentity = 'pod-identity')))!
  assert.ok(noAssociation.controllerProblems.length > 0)
  assert.ok(noAssociation.controllerProblems.every((p) => p.startsWith('pod-identity: ')))
  // A Pod Identity role declared IRSA: its trust has no web-identity statement, and the IRSA check says so.
  const noWebIdentity = existingFrom(podIdentityFacts((f) => (f.iam.controllerIdentity = 'irsa')))!
  assert.ok(noWebIdentity.controllerProblems.length > 0)
  assert.ok(noWebIdentity.controllerProblems.every((p) => p.startsWith('irsa-trust-policy: ')))
})

test('only failing findings are problems, each as <check id>: <message>', () => {
  const e = existingFrom(
    healthyFacts((f) => {
      const r = f.iam.roles[CONTROLLER_ROLE]
      if (r?.ok && r.value) r.value.attached = ok([])
      if (r?.ok && r.value && r.value.inline.ok) r.value.inline = ok([])
    }),
  )!
  assert.ok(e.controllerProblems.length > 0)
  for (const p of e.controllerProblems) assert.match(p, /^controller-policy: \S/)
  // The healthy role passes (its warnings and passes are not problems).
  assert.deepEqual(existingFrom(healthyFacts())!.controllerProblems, [])
})

test('no queue found (or unreadable): no rules looked for, and the summary says so', () => {
  for (const queue of [ok(null), failed<null>('queue')]) {
    const e = existingFrom(healthyFacts((f) => (f.sqs.queue = queue as Facts['sqs']['queue'])))!
    assert.equal(e.queueName, undefined)
    assert.deepEqual(e.ruleNames, {})
    assert.match(e.summary, /; no interruption queue$/)
  }
})

test('rules unreadable: none delivering; a rule to the queue with another pattern is not the one wanted', () => {
  const unreadable = existingFrom(healthyFacts((f) => (f.events.rules = failed('rules'))))!
  assert.deepEqual(unreadable.ruleNames, {})
  assert.match(unreadable.summary, /; queue demo, 0 of 5 rules delivering to it$/)
  const otherPattern = existingFrom(
    healthyFacts((f) => {
      if (f.events.rules.ok) {
        const r = f.events.rules.value[0]!
        r.eventPattern = { source: ['aws.ec2'], 'detail-type': ['Something Else'] }
        assert.ok(r.targetArns.includes(QUEUE_ARN))
      }
    }),
  )!
  assert.equal(Object.keys(otherPattern.ruleNames).length, 4)
  assert.match(otherPattern.summary, /; queue demo, 4 of 5 rules delivering to it$/)
})

test('the service account: the one found, else the release values name, else karpenter', () => {
  const found = existingFrom(
    healthyFacts((f) => {
      if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
        f.kube.serviceAccount.value.metadata.name = 'found-sa'
      if (f.kube.release.ok && f.kube.release.value)
        f.kube.release.value.values.serviceAccount = { name: 'values-sa' }
    }),
  )!
  assert.equal(found.serviceAccount, 'found-sa')
  const fromValues = existingFrom(
    healthyFacts((f) => {
      f.kube.serviceAccount = ok(null)
      if (f.kube.release.ok && f.kube.release.value)
        f.kube.release.value.values.serviceAccount = { name: 'values-sa' }
    }),
  )!
  assert.equal(fromValues.serviceAccount, 'values-sa')
  const unreadable = existingFrom(
    healthyFacts((f) => {
      f.kube.serviceAccount = failed('sa')
      if (f.kube.release.ok && f.kube.release.value)
        f.kube.release.value.values.serviceAccount = { name: 'values-sa' }
    }),
  )!
  assert.equal(unreadable.serviceAccount, 'values-sa')
  const fallback = existingFrom(
    healthyFacts((f) => {
      f.kube.serviceAccount = ok(null)
      if (f.kube.release.ok && f.kube.release.value) delete f.kube.release.value.values.serviceAccount
    }),
  )!
  assert.equal(fallback.serviceAccount, 'karpenter')
})

/**
 * A RunContext whose Kubernetes client answers the Helm secret lists (cluster-wide, and the release's
 * namespace); reaching the fact collection (its options) rejects with "collect reached".
 */
function kubeCtx(
  secrets: ReturnType<typeof helmReleaseSecret>[],
  inNamespace: ReturnType<typeof helmReleaseSecret>[] = secrets,
  deployments: object[] = [],
): RunContext {
  const kube = {
    get: async (path: string) => {
      if (path.startsWith('/api/v1/secrets?labelSelector=')) return { items: secrets }
      if (path.startsWith('/api/v1/namespaces/kube-system/secrets?labelSelector='))
        return { items: inNamespace }
      if (path.startsWith('/apis/apps/v1/deployments?labelSelector=')) return { items: deployments }
      throw new Error(`unexpected read ${path}`)
    },
  }
  return {
    kube,
    // Only the refusal of a controller with no release names the cluster; anything else is collect's.
    get options(): { clusterName: string } {
      if (deployments.length) return { clusterName: 'demo' }
      throw new Error('collect reached')
    },
  } as unknown as RunContext
}

test("findExisting: none without a Karpenter release, none when the release is karpctl's", async () => {
  assert.equal(await findExisting(kubeCtx([])), null)
  const ours = helmReleaseSecret()
  ours.metadata.labels = { ...ours.metadata.labels, [OWNERSHIP.managedBy]: 'karpctl' }
  assert.equal(await findExisting(kubeCtx([ours])), null)
})

test('findExisting: a controller Flux applied with no Helm release is refused (a Helm install would be a second one)', async () => {
  const deployment = {
    metadata: {
      name: 'karpenter',
      namespace: 'karpenter',
      labels: {
        'app.kubernetes.io/name': 'karpenter',
        'kustomize.toolkit.fluxcd.io/name': 'infra',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    },
  }
  await assert.rejects(
    findExisting(kubeCtx([], [], [deployment])),
    (err: unknown) =>
      err instanceof EnvironmentError &&
      err.code === 'INSTALLED_BY_OTHER_TOOL' &&
      err.message.startsWith(
        'Karpenter already runs in cluster demo as Deployment karpenter/karpenter with no Helm release (Flux Kustomization "flux-system/infra")',
      ),
  )
})

test('findExisting: a release another tool made is looked into (the facts are collected)', async () => {
  await assert.rejects(findExisting(kubeCtx([helmReleaseSecret()])), /^Error: collect reached$/)
  const other = helmReleaseSecret()
  other.metadata.labels = { ...other.metadata.labels, [OWNERSHIP.managedBy]: 'terraform' }
  await assert.rejects(findExisting(kubeCtx([other])), /^Error: collect reached$/)
  // Its revision not found by name in its namespace: still not karpctl's.
  await assert.rejects(findExisting(kubeCtx([helmReleaseSecret()], [])), /^Error: collect reached$/)
})
